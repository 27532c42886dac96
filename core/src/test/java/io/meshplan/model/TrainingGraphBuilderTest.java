package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.AliasPair;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.LayerKey;
import io.meshplan.graph.LayerScopes;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Structure, FLOPs and bookkeeping of training graphs. */
class TrainingGraphBuilderTest {
  /** h = 256, a = 8, ffn 4h, V = 1000, 2 blocks; workload b = 2, s = 128. */
  private static final ModelSpec GPT = new ModelSpec("gpt-small", ModelSpec.Family.GPT, 2, 256,
      8, 8, 1024, 1000, 128, 2, DType.BF16);
  /** A LLaMA-style model with grouped-query attention (8 heads, 2 key/value heads) and SwiGLU. */
  private static final ModelSpec LLAMA = new ModelSpec("llama-small", ModelSpec.Family.LLAMA, 2,
      256, 8, 2, 688, 1000, 128, 2, DType.BF16);

  static double dotFlops(TrainingGraph tg, Phase phase) {
    double f = 0;
    Graph g = tg.graph();
    for (Instruction ins : g.instructions()) {
      if (ins.opcode() == Opcode.DOT && tg.phase(ins.id()) == phase) {
        f += OpCost.flops(g, ins);
      }
    }
    return f;
  }

  /**
   * One GPT block's dots, per micro-batch: forward QKV 6bsh^2, QK^T 2bs^2h, attention over V
   * 2bs^2h, projection 2bsh^2, MLP 16bsh^2 = 24bsh^2 + 4bs^2h; the backward twice that, so forward
   * plus backward is 72 b s h^2 (1 + s/(6h)), the per-layer part of Narayanan et al.'s formula.
   * b = 2, s = 128, h = 256: 72 * 2 * 128 * 65,536 * (1 + 128/1536) = 1,308,622,848.
   */
  @Test
  void gptBlockFlopsMatchTheMegatronFormula() {
    TrainingGraph tg = TrainingGraphBuilder.build(GPT, TrainingOptions.oneBlock(GPT, 2, 128));
    double fwd = dotFlops(tg, Phase.FORWARD);
    double bwd = dotFlops(tg, Phase.BACKWARD);
    assertThat(fwd).isEqualTo(24.0 * 2 * 128 * 256 * 256 + 4.0 * 2 * 128 * 128 * 256);
    assertThat(bwd).isEqualTo(2 * fwd);
    assertThat(fwd + bwd).isEqualTo(1_308_622_848.0);
    assertThat(fwd + bwd).isCloseTo(ModelFlops.megatronModelFlops(2, 128, 1, 256, 1000)
        - 6.0 * 2 * 128 * 256 * 1000, org.assertj.core.api.Assertions.withinPercentage(1e-12));
    assertThat(dotFlops(tg, Phase.RECOMPUTE)).isZero();
  }

  /**
   * The whole 2-block GPT with embedding and tied head: forward plus backward dots equal 72 B s l
   * h^2 (1 + s/(6h) + V/(12lh)) exactly (the lookup is a gather, no FLOPs; the head 6BshV).
   */
  @Test
  void wholeGptMatchesTheMegatronFormula() {
    TrainingGraph tg = TrainingGraphBuilder.build(GPT, TrainingOptions.of(GPT));
    double total = dotFlops(tg, Phase.FORWARD) + dotFlops(tg, Phase.BACKWARD);
    assertThat(total).isCloseTo(ModelFlops.megatronModelFlops(2, 128, 2, 256, 1000),
        org.assertj.core.api.Assertions.withinPercentage(1e-12));
    assertThat(total / (2 * 128)).isCloseTo(ModelFlops.trainingFlopsPerToken(GPT, 128),
        org.assertj.core.api.Assertions.withinPercentage(1e-12));
  }

  /**
   * Full recomputation runs each block's forward again: 96 B s l h^2 (1 + s/(6h) + V/(16lh))
   * (the head is not recomputed). Selective recomputes the two attention products, 4bs^2h per
   * block.
   */
  @Test
  void recomputationFlops() {
    TrainingGraph full = TrainingGraphBuilder.build(GPT,
        TrainingOptions.of(GPT).withRecompute(Recompute.FULL));
    double hw = dotFlops(full, Phase.FORWARD) + dotFlops(full, Phase.BACKWARD)
        + dotFlops(full, Phase.RECOMPUTE);
    assertThat(hw).isCloseTo(ModelFlops.megatronHardwareFlopsFullRecompute(2, 128, 2, 256, 1000),
        org.assertj.core.api.Assertions.withinPercentage(1e-12));
    assertThat(hw / (2 * 128)).isCloseTo(
        ModelFlops.trainingFlopsPerTokenFullRecompute(GPT, 128),
        org.assertj.core.api.Assertions.withinPercentage(1e-12));
    TrainingGraph sel = TrainingGraphBuilder.build(GPT,
        TrainingOptions.of(GPT).withRecompute(Recompute.SELECTIVE));
    // 2 blocks * 4 * b s^2 h = 2 * 4 * 2 * 128^2 * 256 = 67,108,864.
    assertThat(dotFlops(sel, Phase.RECOMPUTE)).isEqualTo(67_108_864.0);
  }

  /** GQA and SwiGLU: the per-token formula from the matrices, three times the forward. */
  @Test
  void llamaBlockFlopsMatchThePerTokenFormula() {
    TrainingGraph tg = TrainingGraphBuilder.build(LLAMA, TrainingOptions.oneBlock(LLAMA, 2,
        128));
    double fwd = dotFlops(tg, Phase.FORWARD);
    // 2 (2*256*256 + 2*256*64 + 3*256*688) + 4*128*256 = 2 * 692,224 + 131,072 = 1,515,520 per
    // token (K and V are 2 heads of 32); times b s = 256 tokens.
    assertThat(fwd).isEqualTo(1_515_520.0 * 256);
    assertThat(ModelFlops.blockForwardFlopsPerToken(LLAMA, 128)).isEqualTo(1_515_520.0);
    assertThat(dotFlops(tg, Phase.BACKWARD)).isEqualTo(2 * fwd);
  }

  /**
   * Every weight has its compute copy, fp32 master, m, v and accumulator as separate parameters,
   * each aliased to its update; the compute copy is re-cast from the new master.
   */
  @ParameterizedTest
  @EnumSource(Recompute.class)
  void everyWeightHasItsOptimizerState(Recompute r) {
    TrainingGraph tg = TrainingGraphBuilder.build(LLAMA, TrainingOptions.of(LLAMA)
        .withRecompute(r));
    Graph g = tg.graph();
    Set<AliasPair> aliases = new HashSet<>(g.aliases());
    // Per block: 7 matrices and 2 norm scales; plus embedding table, final norm, head table.
    assertThat(tg.weights()).hasSize(2 * 9 + 3);
    assertThat(tg.parameters(ParamRole.WEIGHT)).hasSize(21);
    for (ParamRole role : new ParamRole[] {ParamRole.MASTER_WEIGHT, ParamRole.ADAM_M,
        ParamRole.ADAM_V, ParamRole.GRADIENT_ACCUMULATOR}) {
      assertThat(tg.parameters(role)).as(role.name()).hasSize(21);
    }
    for (WeightTensors w : tg.weights()) {
      TensorShape ws = g.get(w.weight()).tensorShape();
      assertThat(ws.dtype()).isEqualTo(DType.BF16);
      for (int p : new int[] {w.master(), w.adamM(), w.adamV(), w.accumulator()}) {
        assertThat(g.get(p).tensorShape()).isEqualTo(ws.withDtype(DType.F32));
        assertThat(g.get(p).opcode()).isEqualTo(Opcode.PARAMETER);
      }
      assertThat(aliases).contains(new AliasPair(w.weight(), w.newWeight()),
          new AliasPair(w.master(), w.newMaster()), new AliasPair(w.adamM(), w.newAdamM()),
          new AliasPair(w.adamV(), w.newAdamV()),
          new AliasPair(w.accumulator(), w.newAccumulator()));
      assertThat(g.get(w.gradient()).tensorShape()).isEqualTo(ws);
      assertThat(tg.phase(w.newMaster())).isEqualTo(Phase.OPTIMIZER);
      // The new bf16 weight is an identity broadcast of the convert of the new master.
      Instruction nw = g.get(w.newWeight());
      assertThat(nw.opcode()).isEqualTo(Opcode.BROADCAST);
      assertThat(g.get(nw.operand(0)).opcode()).isEqualTo(Opcode.CONVERT);
      assertThat(g.get(nw.operand(0)).operand(0)).isEqualTo(w.newMaster());
    }
    assertThat(g.aliases()).hasSize(5 * 21);
    assertThat(g.root().opcode()).isEqualTo(Opcode.TUPLE);
    assertThat(tg.parameters(ParamRole.TOKENS)).containsExactly(tg.input());
    assertThat(tg.parameters(ParamRole.LABELS)).hasSize(1);
    assertThat(g.get(tg.output()).tensorShape().rank()).isZero();
  }

  /** Without the optimizer only the fp32 accumulator is updated; fp32 compute has no masters. */
  @Test
  void optimizerOptions() {
    TrainingGraph acc = TrainingGraphBuilder.build(GPT, TrainingOptions.of(GPT)
        .withOptimizer(false));
    assertThat(acc.parameters(ParamRole.ADAM_M)).isEmpty();
    assertThat(acc.graph().aliases()).hasSize(acc.weights().size());
    TrainingGraph fp32 = TrainingGraphBuilder.build(GPT, TrainingOptions.of(GPT)
        .withComputeDtype(DType.F32));
    assertThat(fp32.parameters(ParamRole.MASTER_WEIGHT)).isEmpty();
    assertThat(fp32.graph().aliases()).hasSize(4 * fp32.weights().size());
    TrainingGraph fwd = TrainingGraphBuilder.build(GPT, TrainingOptions.of(GPT)
        .withBackward(false));
    assertThat(fwd.phases()).containsOnly(Phase.FORWARD);
    assertThat(fwd.graph().aliases()).isEmpty();
  }

  /**
   * One block alone: the input activation and output gradient are parameters; the input gradient
   * and block output are outputs; forward precedes backward, and no forward instruction reads a
   * backward one.
   */
  @ParameterizedTest
  @EnumSource(Recompute.class)
  void oneBlockInterface(Recompute r) {
    TrainingGraph tg = TrainingGraphBuilder.build(LLAMA,
        TrainingOptions.oneBlock(LLAMA, 2, 128).withRecompute(r).withBlocks(1, 1));
    Graph g = tg.graph();
    TensorShape bsh = TensorShape.of(DType.BF16, 2, 128, 256);
    assertThat(tg.role(tg.input())).contains(ParamRole.INPUT_ACTIVATION);
    assertThat(tg.role(tg.outputGradient())).contains(ParamRole.OUTPUT_GRADIENT);
    assertThat(g.get(tg.input()).tensorShape()).isEqualTo(bsh);
    assertThat(g.get(tg.output()).tensorShape()).isEqualTo(bsh);
    assertThat(g.get(tg.inputGradient()).tensorShape()).isEqualTo(bsh);
    assertThat(g.root().operands()).contains(tg.output(), tg.inputGradient());
    assertThat(tg.phase(tg.inputGradient())).isEqualTo(Phase.BACKWARD);
    for (Instruction ins : g.instructions()) {
      assertThat(tg.layer(ins.id())).isEqualTo(LayerRef.block(1));
      if (tg.phase(ins.id()) == Phase.FORWARD) {
        for (int op : ins.operands()) {
          assertThat(tg.phase(op)).isEqualTo(Phase.FORWARD);
        }
      }
    }
    assertThat(dotCount(tg, Phase.RECOMPUTE)).isEqualTo(switch (r) {
      case NONE -> 0;
      case SELECTIVE -> 2;
      case FULL -> 9;
      // torchtitan's per-op policy saves the 1st, 3rd, 5th and 7th of the block's 7 linear
      // products (wq, wv, w1, w2) and recomputes wk, wo and w3, plus the unfused attention's two
      // products, which are not linear layers: 3 + 2 = 5.
      case OP -> 5;
      // MaxText's policies (MaxTextRemat): the backward recomputes only the products whose
      // outputs it reads. It reads the scores' softmax and the context (the unfused attention's
      // two products), wo's output (the residual sum the MLP's norm reads), w1's and w3's (the
      // SwiGLU's inputs) and the rotated queries, keys and values (wq, wk, wv), never w2's
      // (it only feeds the residual add). Full: all of them, 3 + 2 + 1 + 2 = 8; minimal saves the
      // seven products: the 2 attention products; minimal_flash too (MaxText names the context
      // of fused attention only); save_dot_except_mlpwi, save_dot_except_mlp and
      // save_dot_with_context_except_mlp: the 2 attention products, w1, w3, 4; save_qkv_proj:
      // also wo, 5; save_out_proj: wq, wk, wv, the 2 attention products, w1, w3, 7.
      case MAXTEXT_FULL -> 8;
      case MAXTEXT_MINIMAL, MAXTEXT_MINIMAL_FLASH -> 2;
      case MAXTEXT_SAVE_DOT_WITH_CONTEXT_EXCEPT_MLP, MAXTEXT_SAVE_DOT_EXCEPT_MLPWI,
          MAXTEXT_SAVE_DOT_EXCEPT_MLP -> 4;
      case MAXTEXT_SAVE_QKV_PROJ -> 5;
      case MAXTEXT_SAVE_OUT_PROJ -> 7;
    });
    LayerScopes scopes = new LayerScopes(g);
    assertThat(scopes.layers()).containsExactly(new LayerKey("layer", 1));
  }

  private static int dotCount(TrainingGraph tg, Phase p) {
    int n = 0;
    for (Instruction ins : tg.graph().instructions()) {
      if (ins.opcode() == Opcode.DOT && tg.phase(ins.id()) == p) {
        n++;
      }
    }
    return n;
  }

  /**
   * One block of LLaMA2-70B at micro-batch 1, sequence 4096 stays small: a few hundred
   * instructions whatever the mode.
   */
  @Test
  void llama70bBlockIsSmall() {
    ModelSpec s = Presets.get("llama2-70b");
    for (Recompute r : Recompute.values()) {
      TrainingGraph tg = TrainingGraphBuilder.build(s,
          TrainingOptions.oneBlock(s, 1, 4096).withRecompute(r));
      assertThat(tg.graph().size()).as(r.name()).isBetween(200, 700);
      Map<Phase, Integer> counts = new EnumMap<>(Phase.class);
      for (Phase p : tg.phases()) {
        counts.merge(p, 1, Integer::sum);
      }
      assertThat(counts).containsKeys(Phase.FORWARD, Phase.BACKWARD, Phase.OPTIMIZER);
    }
  }

  /** Tied embeddings: one table, two uses, one gradient summing the lookup's and the head's. */
  @Test
  void tiedTableGetsBothGradients() {
    TrainingGraph tg = TrainingGraphBuilder.build(GPT, TrainingOptions.of(GPT));
    WeightTensors table = tg.weights().stream()
        .filter(w -> w.name().equals("embedding/tokens/table")).findFirst().orElseThrow();
    Instruction grad = tg.graph().get(table.gradient());
    assertThat(grad.opcode()).isEqualTo(Opcode.ADD);
    List<Opcode> parts = grad.operands().stream().map(i -> tg.graph().get(i).opcode()).toList();
    assertThat(parts).contains(Opcode.SCATTER);
    assertThat(tg.weights()).noneMatch(w -> w.name().startsWith("head/lm_head"));
  }

  @Test
  void badRangesAreRefused() {
    assertThatThrownBy(() -> TrainingGraphBuilder.build(GPT,
        TrainingOptions.of(GPT).withBlocks(1, 2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the 2 blocks");
    assertThatThrownBy(() -> TrainingGraphBuilder.build(GPT,
        TrainingOptions.of(GPT).withWorkload(1, 4096)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("exceeds the 128 rows");
    assertThatThrownBy(() -> TrainingGraphBuilder.build(Presets.get("alpa-mlp"),
        TrainingOptions.of(Presets.get("alpa-mlp"))))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
