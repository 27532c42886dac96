package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.Architecture;
import io.meshplan.model.ExpertLayout;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Recompute;
import io.meshplan.model.RecomputeModule;
import io.meshplan.model.TrainingGraph;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.model.TrainingOptions;
import io.meshplan.plan.ContextExchange;
import org.junit.jupiter.api.Test;

/** A mixture-of-experts block priced on one replica: expert FLOPs, weights and exchange. */
class MoeLayerCostTest {
  /** h = 256, 8 heads, 16 experts of f_e = 512, top-2, vocabulary 1000, sequence 128. */
  static ModelSpec model(double capacity) {
    MoeShape moe = new MoeShape(16, 2, 512, 0, false, capacity, 1);
    return new ModelSpec("moe-small", ModelSpec.Family.LLAMA, 4, 256, 8, 8, 512, 1000, 128, 8,
        DType.BF16, Architecture.llama().withMoe(moe));
  }

  private static double expertFlops(ModelSpec m, ExpertLayout e) {
    TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.oneBlock(m, 2, 128)
        .withExperts(e).withOptimizer(false));
    Graph g = tg.graph();
    java.util.BitSet local = tg.deviceLocal();
    double flops = 0;
    for (Instruction ins : g.instructions()) {
      if (local.get(ins.id()) && ins.opcode() == Opcode.DOT) {
        flops += OpCost.modelFlops(g, ins);
      }
    }
    return flops;
  }

  /**
   * The grouped GEMMs of one GPU, forward and backward: T = 2 x 128 = 256 tokens, k = 2 copies
   * each, 3 matrices of h x f_e = 256 x 512, 2 FLOPs per multiply-add, 3 passes (forward, input
   * and weight gradients): 256 * 2 * 3 * 256 * 512 * 2 * 3 = 1,207,959,552 on one GPU. Under EP 4
   * and t = 1 the GPU holds 4 experts of 128 rows each (256 * 2 * 4 / 16): the same rows in
   * total, the same FLOPs; with t = 2 and ETP 2 each GPU runs twice the rows at half the width.
   */
  @Test
  void expertFlopsAreTokensTimesTopKWhateverTheLayout() {
    double expected = 256.0 * 2 * 3 * 256 * 512 * 2 * 3;
    assertThat(expertFlops(model(0), ExpertLayout.NONE)).isEqualTo(expected);
    assertThat(expertFlops(model(0), new ExpertLayout(4, 1, 1))).isEqualTo(expected);
    assertThat(expertFlops(model(0), new ExpertLayout(2, 2, 2))).isEqualTo(expected / 2 * 2 / 2);
    // Capacity factor 1.0 under uniform routing keeps every token: as dropless.
    assertThat(expertFlops(model(1.0), new ExpertLayout(4, 1, 1))).isEqualTo(expected);
    // Capacity 0.5 drops half the copies.
    assertThat(expertFlops(model(0.5), new ExpertLayout(4, 1, 1))).isEqualTo(expected / 2);
  }

  /**
   * The exchange of one block: the buffer is T k / t rows of h bf16 elements, 256 * 2 * 256 * 2 =
   * 262,144 bytes on one GPU; the expert weights one GPU holds are E / EP = 4 experts of 3 * 256
   * * 512 = 393,216 elements: 1,572,864.
   */
  @Test
  void exchangeBytesAndExpertWeights() {
    ModelSpec m = model(0);
    PlanRequest req = Requests.of(m, "1x8:h100-80gb", 64, false);
    IlpLayerCostModel layers = Requests.layers(req);
    LayerCost c = layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(1, 2, Recompute.NONE, false, false, 4, 1));
    assertThat(c).isNotNull();
    assertThat(c.experts().exchangeBytes()).isEqualTo(262_144.0);
    assertThat(c.experts().expertParameters()).isEqualTo(1_572_864.0);
    assertThat(c.experts().forwardExchanges()).isEqualTo(2);
    assertThat(c.experts().backwardExchanges()).isEqualTo(2);
    // The experts' compute between dispatch and combine is part of the block's, and its backward
    // (data and weight gradients of the three GEMMs) is longer than its forward.
    assertThat(c.experts().expertForwardSeconds()).isPositive()
        .isLessThan(c.forwardSeconds());
    assertThat(c.experts().expertBackwardSeconds())
        .isGreaterThan(c.experts().expertForwardSeconds()).isLessThan(c.backwardSeconds());
    // With CP 2 the GPU's share of each sequence is 64 tokens: half the rows, 131,072 bytes.
    IlpLayerCostModel flash = new IlpLayerCostModel(m, req.cluster(), req.comm(), DType.BF16,
        io.meshplan.model.Attention.FLASH, io.meshplan.intraop.SolverOptions.defaults(),
        io.meshplan.exec.LocalExecutor.perProcessor());
    LayerCost cp2 = flash.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(1, 2, Recompute.NONE, false, false, 4, 1)
            .withContext(2, ContextExchange.P2P));
    assertThat(cp2.experts().exchangeBytes()).isEqualTo(131_072.0);
    LayerCost full = layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(1, 2, Recompute.FULL, false, false, 4, 1));
    assertThat(full.experts().backwardExchanges()).isEqualTo(4);
    // torchtitan's per-op checkpointing keeps the all-to-alls' outputs: its replay recomputes
    // the experts' GEMMs but exchanges nothing again.
    LayerCost op = layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(1, 2, Recompute.OP, false, false, 4, 1));
    assertThat(op.experts().backwardExchanges()).isEqualTo(2);
    assertThat(op.recomputeSeconds()).isPositive().isLessThan(full.recomputeSeconds());
    assertThat(op.experts().expertBackwardSeconds())
        .isGreaterThan(c.experts().expertBackwardSeconds());
    // Dense weights of the block: attention 4 h^2 = 262,144, router h E = 4,096, two norms 512.
    assertThat(c.parameters() - c.experts().expertParameters()).isEqualTo(266_752.0);
  }

  /**
   * A replica's FLOPs do not depend on how many GPUs share it. The block's own graph holds one
   * GPU's experts; a replica of t tensor-parallel GPUs runs t such shares, each on its own 1/t of
   * the tokens (sequence parallelism, ETP 1), so the layer counts them t times. Once they were
   * counted once, and Qwen3-30B-A3B at TP 4 reported 34% fewer model FLOPs per token than at TP
   * 1 (3.00e9 against 1.98e9 per GPU on 8 GPUs: its dense part plus a quarter of its experts).
   * Here: at t = 1 the block's model FLOPs are its dense part plus the experts'
   * 1,207,959,552 (the first test's count, T = 256 tokens); at t = 2 and 4 the same.
   */
  @Test
  void aReplicasFlopsCountEveryGpusExperts() {
    ModelSpec m = model(0);
    IlpLayerCostModel layers = Requests.layers(Requests.of(m, "1x8:h100-80gb", 64, false));
    LayerCost one = layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(1, 2, Recompute.NONE, false, false, 4, 1));
    double experts = 256.0 * 2 * 3 * 256 * 512 * 2 * 3;
    assertThat(one.modelFlops()).isGreaterThan(experts);
    for (int t : new int[] {2, 4}) {
      LayerCost c = layers.cost(LayerCostModel.Kind.BLOCK,
          new LayerSetting(t, 2, Recompute.NONE, true, false, 4, 1));
      assertThat(c).as("t = " + t).isNotNull();
      assertThat(c.modelFlops()).as("t = " + t).isCloseTo(one.modelFlops(),
          org.assertj.core.data.Percentage.withPercentage(1e-9));
      assertThat(c.hardwareFlops()).as("t = " + t).isCloseTo(one.hardwareFlops(),
          org.assertj.core.data.Percentage.withPercentage(1e-9));
    }
  }

  /**
   * Megatron-Core's recompute modules drop what they recompute from the saved activations: with
   * T = 2 x 128 = 256 tokens, top-2 (512 rows) and f_e = 512, the experts' activation
   * ({@code moe_act}) is 512 x 512 bf16 values, 524,288 bytes; the two norms' outputs
   * ({@code layernorm}) are 2 x 256 x 256 bf16 values, 262,144 bytes; the whole layer
   * ({@code moe}) drops more and dispatches and combines again in the backward.
   */
  @Test
  void recomputedModulesLeaveTheSavedActivations() {
    ModelSpec m = model(0);
    PlanRequest req = Requests.of(m, "1x8:h100-80gb", 64, false);
    IlpLayerCostModel layers = Requests.layers(req);
    LayerSetting base = new LayerSetting(1, 2, Recompute.SELECTIVE, false, false, 1, 1);
    LayerCost core = layers.cost(LayerCostModel.Kind.BLOCK, base);
    LayerCost act = layers.cost(LayerCostModel.Kind.BLOCK, base.withRecomputeModules(
        java.util.Set.of(RecomputeModule.CORE_ATTN, RecomputeModule.MOE_ACT)));
    LayerCost norms = layers.cost(LayerCostModel.Kind.BLOCK, base.withRecomputeModules(
        java.util.Set.of(RecomputeModule.CORE_ATTN, RecomputeModule.LAYERNORM)));
    LayerCost moe = layers.cost(LayerCostModel.Kind.BLOCK, base.withRecomputeModules(
        java.util.Set.of(RecomputeModule.CORE_ATTN, RecomputeModule.MOE)));
    assertThat(core.savedActivationBytes() - act.savedActivationBytes()).isEqualTo(524_288.0);
    assertThat(core.savedActivationBytes() - norms.savedActivationBytes())
        .isEqualTo(262_144.0);
    assertThat(moe.savedActivationBytes()).isLessThan(act.savedActivationBytes());
    // Recomputing costs time: the backward runs the dropped forward values again.
    assertThat(act.backwardSeconds()).isGreaterThan(core.backwardSeconds());
    assertThat(moe.recomputeSeconds()).isGreaterThan(act.recomputeSeconds());
    assertThat(core.experts().backwardExchanges()).isEqualTo(2);
    assertThat(moe.experts().backwardExchanges()).isEqualTo(4);
  }
}
