package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.util.InputException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HybridModelsTest {
  @Test
  void nemotronH8bHasItsExactParameterCount() {
    ModelSpec m = Presets.get("nemotron-h-8b");
    // One Mamba-2 layer (inner 128 x 64 = 8192; x, B, C channels 8192 + 2 x 8 x 128 = 10240):
    // in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128) = 76,021,760; conv 10240 x 4 + 10240 bias =
    // 51,200; dt_bias, A_log, D 3 x 128 = 384; gated norm 8192; out_proj 8192 x 4096 =
    // 33,554,432; pre-norm 4096: 109,640,064.
    assertThat(m.blockParameterCount(0)).isEqualTo(109_640_064L);
    // One MLP layer: up and down 2 x 4096 x 21504 = 176,160,768, norm 4096: 176,164,864.
    assertThat(m.blockParameterCount(1)).isEqualTo(176_164_864L);
    // One attention layer (layer 7): q and o 2 x 4096 x 4096, k and v 2 x 4096 x 1024, norm
    // 4096: 41,947,136.
    assertThat(m.arch().hybrid().at(7)).isEqualTo('*');
    assertThat(m.blockParameterCount(7)).isEqualTo(41_947_136L);
    // 24 Mamba, 24 MLP and 4 attention layers: 2,631,361,536 + 4,227,956,736 + 167,788,544 =
    // 7,027,106,816; the token table and the untied head 2 x 131072 x 4096 = 1,073,741,824;
    // the final norm 4096. Total 8,100,852,736 (model card: "8B").
    assertThat(m.arch().hybrid().count('M', 0, 51)).isEqualTo(24);
    assertThat(m.arch().hybrid().count('-', 0, 51)).isEqualTo(24);
    assertThat(m.arch().hybrid().count('*', 0, 51)).isEqualTo(4);
    assertThat(m.parameterCount()).isEqualTo(8_100_852_736L);
    assertThat(m.activeParameterCount()).isEqualTo(m.parameterCount());
  }

  @Test
  void qwen3NextAndNemotron3NanoHaveTheirExactParameterCounts() {
    ModelSpec q = Presets.get("qwen3-next-80b-a3b");
    // Gated DeltaNet mixer (key width 16 x 128 = 2048, value width 32 x 128 = 4096):
    // in_proj_qkvz 2048 x 12288 = 25,165,824; in_proj_ba 2048 x 64 = 131,072; conv 8192 x 4 =
    // 32,768; dt_bias and A_log 64; norm 128; out_proj 4096 x 2048 = 8,388,608: 33,718,464.
    assertThat(q.arch().hybrid().gdn().parameters(2048)).isEqualTo(33_718_464L);
    // Gated attention: q with its gate 2048 x 8192, k and v 2 x 2048 x 512, o 4096 x 2048, q/k
    // norms 2 x 256: 27,263,488. Experts: router 2048 x 512 = 1,048,576; 512 x 3 x 2048 x 512 =
    // 1,610,612,736; shared 3 x 2048 x 512 = 3,145,728; its gate 2048: 1,614,809,088. With a
    // norm of 2048 per sublayer: 36 x 33,720,512 + 12 x 27,265,536 + 48 x 1,614,811,136 =
    // 79,052,059,392; the token table and the untied head 2 x 151936 x 2048 = 622,329,856; the
    // final norm 2048. Total 79,674,391,296 (the card: "80B total parameters").
    assertThat(q.parameterCount()).isEqualTo(79_674_391_296L);
    // Active: each of 48 layers idles 502 experts of 3,145,728: 75,799,461,888 fewer, 3,874,929,408
    // (the card: "only 3B active", without the table and head: 3,252,599,552).
    assertThat(q.activeParameterCount()).isEqualTo(3_874_929_408L);
    ModelSpec n = Presets.get("nemotron-3-nano-30b-a3b");
    // Mamba (inner 4096, 2 G N 2048): in_proj 2688 x 10304 = 27,697,152; conv 6144 x 4 + 6144;
    // 3 x 64; norm 4096; out_proj 4096 x 2688 = 11,010,048; pre-norm 2688: 38,744,896.
    assertThat(n.blockParameterCount(0)).isEqualTo(38_744_896L);
    // Squared-ReLU experts, two matrices each: router 2688 x 128 = 344,064; 128 x 2 x 2688 x
    // 1856 = 1,277,165,568; shared 2 x 2688 x 3712 = 19,955,712; norm 2688: 1,297,468,032.
    assertThat(n.blockParameterCount(1)).isEqualTo(1_297_468_032L);
    // 23 x 38,744,896 + 6 x 23,399,040 + 23 x 1,297,468,032 + 2 x 131072 x 2688 + 2688 =
    // 31,577,937,344 (Megatron-Bridge: "30B parameters in total"); active 3,580,073,408 ("3.5B").
    assertThat(n.parameterCount()).isEqualTo(31_577_937_344L);
    assertThat(n.activeParameterCount()).isEqualTo(3_580_073_408L);
    ModelSpec j = Presets.get("jamba-v0.1");
    // Mamba-1 (inner 8192, state 16, dt rank 256): in_proj 2 x 8192 x 4096 = 67,108,864; conv
    // 8192 x 4 + 8192 = 40,960; x_proj 8192 x 288 = 2,359,296; dt_proj 256 x 8192 + 8192 =
    // 2,105,344; A_log 8192 x 16 = 131,072; D 8192; out_proj 33,554,432; Jamba's norms 256 + 16 +
    // 16 = 288: 105,308,448 (+ its norm 4096).
    assertThat(j.arch().hybrid().mamba1().parameters(4096)).isEqualTo(105_308_448L);
    // 28 Mamba-1 layers of 105,312,544 with their norm (2,948,751,232), 4 attention layers of
    // 41,947,136 (167,788,544), 16 dense SwiGLU MLPs of 3 x 4096 x 14336 + 4096 = 176,164,864
    // (2,818,637,824) and 16 expert layers of 65,536 + 16 x 176,160,768 + 4096 = 2,818,641,920
    // (45,098,270,720): 51,033,448,320; the table and the untied head 2 x 65536 x 4096 =
    // 536,870,912 and the final norm 4096: 51,570,323,328 (AI21: "52B").
    assertThat(j.parameterCount()).isEqualTo(51_570_323_328L);
    // Active: 16 expert layers idle 14 experts of 176,160,768: 39,460,012,032 fewer,
    // 12,110,311,296 (AI21: "12B active").
    assertThat(j.activeParameterCount()).isEqualTo(12_110_311_296L);
    // 16 key heads and 32 value heads: TP 32 divides the value heads only.
    assertThatThrownBy(() -> q.checkHybridLayout(32, 1)).isInstanceOf(InputException.class)
        .hasMessageContaining("16 key heads and 32 value heads; tensor parallelism of 32");
    q.checkHybridLayout(16, 1);
    // TP x CP must divide the 16 key heads too.
    assertThatThrownBy(() -> q.checkHybridLayout(8, 4)).isInstanceOf(InputException.class)
        .hasMessageContaining("tensor x context parallelism of 8 x 4");
    q.checkHybridLayout(4, 4);
  }

  @Test
  void theConfigJsonFixturesReadAsThePresetsWithoutWarnings() throws Exception {
    java.nio.file.Path hf = java.nio.file.Path.of("core/src/test/resources/hf");
    ModelSpec next = HfConfigReader.read(hf.resolve("qwen3-next-80b-a3b.json"));
    assertThat(next.parameterCount()).isEqualTo(79_674_391_296L);
    assertThat(next.activeParameterCount()).isEqualTo(3_874_929_408L);
    assertThat(next.arch().hybrid()).isEqualTo(Presets.get("qwen3-next-80b-a3b").arch().hybrid());
    assertThat(HfConfigReader.readConfig(hf.resolve("qwen3-next-80b-a3b.json")).warnings())
        .isEmpty();
    ModelSpec jamba = HfConfigReader.read(hf.resolve("jamba-v0.1.json"));
    assertThat(jamba.parameterCount()).isEqualTo(51_570_323_328L);
    assertThat(jamba.arch().hybrid()).isEqualTo(Presets.get("jamba-v0.1").arch().hybrid());
    assertThat(HfConfigReader.readConfig(hf.resolve("jamba-v0.1.json")).warnings()).isEmpty();
    ModelSpec nano = HfConfigReader.read(hf.resolve("nemotron-3-nano-30b-a3b.json"));
    assertThat(nano.parameterCount()).isEqualTo(31_577_937_344L);
    assertThat(nano.activeParameterCount()).isEqualTo(3_580_073_408L);
    assertThat(nano.arch().moe()).isEqualTo(Presets.get("nemotron-3-nano-30b-a3b").arch().moe());
    assertThat(HfConfigReader.readConfig(hf.resolve("nemotron-3-nano-30b-a3b.json")).warnings())
        .isEmpty();
    ModelSpec h = HfConfigReader.read(hf.resolve("nemotron-h-8b-base-8k.json"));
    assertThat(h.parameterCount()).isEqualTo(8_100_852_736L);
    assertThat(h.arch().hybrid()).isEqualTo(Presets.get("nemotron-h-8b").arch().hybrid());
    assertThat(HfConfigReader.readConfig(hf.resolve("nemotron-h-8b-base-8k.json")).warnings())
        .isEmpty();
  }

  @Test
  void theTrainingGraphHoldsExactlyTheModelsParametersOnSeededRandomHybrids() {
    Random rnd = new Random(20261129L);
    String symbols = "M*-GS";
    for (int c = 0; c < 14; c++) {
      int layers = 1 + rnd.nextInt(5);
      StringBuilder pattern = new StringBuilder();
      for (int i = 0; i < layers; i++) {
        pattern.append(symbols.charAt(rnd.nextInt(5)));
      }
      int groups = 1 + rnd.nextInt(2);
      int heads = groups * (1 + rnd.nextInt(3));
      MambaShape mamba = new MambaShape(heads, 8 * (1 + rnd.nextInt(2)), 4 + 4 * rnd.nextInt(2),
          groups, 2 + rnd.nextInt(3), 8, groups, rnd.nextBoolean(), rnd.nextBoolean());
      String p = pattern.toString();
      GdnShape gdn = new GdnShape(1 + rnd.nextInt(2), 2, 8, 8 * (1 + rnd.nextInt(2)),
          2 + rnd.nextInt(3), 8);
      Mamba1Shape mamba1 = new Mamba1Shape(16 * (1 + rnd.nextInt(2)), 4, 2 + rnd.nextInt(3),
          4 + rnd.nextInt(4), rnd.nextBoolean(), rnd.nextBoolean(), rnd.nextBoolean());
      HybridPattern hp = HybridPattern.parse(p, layers, mamba, gdn, rnd.nextBoolean(), mamba1);
      Architecture a = new Architecture(Architecture.Mlp.RELU2, Architecture.Norm.RMS,
          Architecture.Positions.NONE, 0, false, rnd.nextBoolean(),
          new AttentionShape(16, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
          MoeShape.DENSE, 0, Numerics.rotary(10_000, 1e-5), hp);
      ModelSpec m = new ModelSpec("h" + c, ModelSpec.Family.GPT, layers, 64, 4, 2,
          96 + 32 * rnd.nextInt(3), 200, 32, 2, DType.BF16, a);
      TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m));
      Graph g = tg.graph();
      long held = 0;
      for (WeightTensors w : tg.weights()) {
        held += g.get(w.weight()).tensorShape().elementCount();
      }
      assertThat(held).as(p + " " + mamba).isEqualTo(m.parameterCount());
      // Each Mamba layer runs one SSD scan forward, each Gated DeltaNet layer one delta rule.
      long scans = g.instructions().stream().filter(i -> i.opcode() == Opcode.SSD_SCAN).count();
      assertThat(scans).as(p).isEqualTo(hp.count('M', 0, layers - 1));
      long deltas = g.instructions().stream().filter(i -> i.opcode() == Opcode.GDN_SCAN).count();
      assertThat(deltas).as(p).isEqualTo(hp.count('G', 0, layers - 1));
      long selective = g.instructions().stream()
          .filter(i -> i.opcode() == Opcode.SELECTIVE_SCAN).count();
      assertThat(selective).as(p).isEqualTo(hp.count('S', 0, layers - 1));
    }
  }

  @Test
  void theScanCountsTheSsdAlgorithmsMatrixProducts() {
    // Nemotron-H 8B's mixer on one sequence of 8192: b 1, s 8192, H 128, P 64, G 8, N 128, Q 128.
    // Inside the chunks 2 s (Q N G + H Q P) = 2 x 8192 x (131,072 + 1,048,576) = 19,327,352,832;
    // states and outputs 2 s H (2 N P) = 2 x 8192 x 128 x 16,384 = 34,359,738,368; between
    // chunks 2 (s/Q) H P N = 2 x 64 x 128 x 8192 = 134,217,728. Forward 53,821,308,928 FLOPs:
    // 6.57 MFLOP per token, 4% of the layer's 152 MFLOP in_proj.
    ModelSpec m = Presets.get("nemotron-h-8b").withLayers(1).withWorkload(8192, 1);
    TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m).withWorkload(1, 8192));
    Graph g = tg.graph();
    Instruction scan = g.instructions().stream().filter(i -> i.opcode() == Opcode.SSD_SCAN)
        .findFirst().orElseThrow();
    assertThat(OpCost.flops(g, scan)).isEqualTo(53_821_308_928.0);
    double backward = g.instructions().stream().filter(i -> i.opcode() == Opcode.SSD_SCAN_GRAD)
        .mapToDouble(i -> OpCost.flops(g, i)).sum();
    // X's gradient takes the forward's products, B's and C's half each: twice the forward.
    assertThat(backward).isEqualTo(2 * 53_821_308_928.0);
  }

  @Test
  void theScanMovesTheBytesOfMamba2sKernelChain() {
    // Nemotron-H 8B's mixer on one sequence of 8192 tokens in bf16 (e 2): H 128, P 64, G 8,
    // N 128, Q 128. Per token X = H P e = 16,384 bytes, BC = G N e = 2,048, the chunk states
    // H P N / Q = 8,192 elements (S32 32,768 bytes in fp32, S16 16,384 in bf16), the chunk
    // products CB32 = 4 G Q = 4,096. Forward 3 X + 4 BC + 2 S32 + 2 S16 + 2 CB32 + (e + 24) H
    // = 49,152 + 8,192 + 65,536 + 32,768 + 8,192 + 3,328 = 167,168 bytes a token, x 8192 =
    // 1,369,440,256: 4.5 times the 306,184,192 of its operands and output alone.
    // Backward 9 X + 15 BC + 6 S32 + 5 S16 + 5 CB32 + (e + 64) H = 147,456 + 30,720 + 196,608
    // + 81,920 + 20,480 + 8,448 = 485,632 a token, x 8192 = 3,978,297,344, shared by the
    // gradients of x (half), B and C (a quarter each).
    ModelSpec m = Presets.get("nemotron-h-8b").withLayers(1).withWorkload(8192, 1);
    TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m).withWorkload(1, 8192));
    Graph g = tg.graph();
    Instruction scan = g.instructions().stream().filter(i -> i.opcode() == Opcode.SSD_SCAN)
        .findFirst().orElseThrow();
    assertThat(OpCost.bytesAccessed(g, scan)).isEqualTo(1_369_440_256.0);
    double backward = g.instructions().stream().filter(i -> i.opcode() == Opcode.SSD_SCAN_GRAD)
        .mapToDouble(i -> OpCost.bytesAccessed(g, i)).sum();
    assertThat(backward).isEqualTo(3_978_297_344.0);
  }

  @Test
  void theDeltaRuleMovesTheBytesOfItsKernelChain() {
    // Qwen3-Next-80B-A3B's Gated DeltaNet on one sequence of 4096 tokens in bf16 (e 2): 32 value
    // heads (the 16 key heads repeated), d_k = d_v = 128, chunks C of 64. Per token and head
    // K = V = 256 bytes, A's row C e = 128, the states d_k d_v e / C = 512. Forward 6 K + 6 V +
    // C e + 2 h + 20 + e = 1,536 + 1,536 + 128 + 1,024 + 22 = 4,246, x 32 heads x 4096 tokens =
    // 556,531,712 bytes (its operands and output alone: 2 K + 2 V + 2 e = 1,028 a token and
    // head). Backward 21 K + 15 V + 2 C e + 4 h + 48 + 3 e = 5,376 + 3,840 + 256 + 2,048 + 54 =
    // 11,574, x 32 x 4096 = 1,517,027,328, shared by the gradients of V (half), Q and K.
    ModelSpec m = Presets.get("qwen3-next-80b-a3b").withLayers(1).withWorkload(4096, 1);
    TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m).withWorkload(1, 4096));
    Graph g = tg.graph();
    Instruction scan = g.instructions().stream().filter(i -> i.opcode() == Opcode.GDN_SCAN)
        .findFirst().orElseThrow();
    assertThat(OpCost.bytesAccessed(g, scan)).isEqualTo(556_531_712.0);
    double backward = g.instructions().stream().filter(i -> i.opcode() == Opcode.GDN_SCAN_GRAD)
        .mapToDouble(i -> OpCost.bytesAccessed(g, i)).sum();
    assertThat(backward).isEqualTo(1_517_027_328.0);
  }

  @Test
  void theClosedFormFlopsOfAHybridAreItsGraphsForwardProducts() {
    // A hybrid of every mixer without attention (whose closed form counts the whole score matrix
    // where the fused kernel computes its causal half): Mamba-2, experts, Gated DeltaNet, a dense
    // MLP, Mamba-1. Its training FLOPs per token are 3 x the forward's matrix products per token:
    // the graph's forward dots and scans (Mamba-1's elementwise scan aside) and the LM head.
    MambaShape mamba = new MambaShape(8, 16, 8, 2, 4, 16, 2, true, false);
    GdnShape gdn = new GdnShape(2, 4, 16, 16, 4, 16);
    Mamba1Shape mamba1 = new Mamba1Shape(128, 8, 4, 8, true, false, true);
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.NONE, 0, false, false,
        new AttentionShape(16, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
        new MoeShape(4, 2, 96, 64, false).withSharedGate(), 0, Numerics.rotary(10_000, 1e-5),
        HybridPattern.parse("MEG-S", 5, mamba, gdn, false, mamba1));
    ModelSpec m = new ModelSpec("h", ModelSpec.Family.GPT, 5, 64, 4, 2, 96, 200, 64, 2,
        DType.BF16, a);
    TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m));
    Graph g = tg.graph();
    double forward = 0;
    for (Instruction ins : g.instructions()) {
      if (tg.phase(ins.id()) == Phase.FORWARD) {
        forward += OpCost.modelFlops(g, ins);
      }
    }
    double tokens = 2.0 * 64;
    assertThat(ModelFlops.trainingFlopsPerToken(m, 64) / 3)
        .isCloseTo(forward / tokens, org.assertj.core.api.Assertions.withinPercentage(0.5));
  }

  @Test
  void badPatternsAndLayoutsAreRefusedInOneLine() {
    MambaShape mamba = new MambaShape(128, 64, 128, 8, 4, 128, 8, true, false);
    assertThatThrownBy(() -> HybridPattern.parse("M-*", 4, mamba))
        .isInstanceOf(InputException.class).hasMessageContaining("names 3 layers, not the model's 4");
    assertThatThrownBy(() -> HybridPattern.parse("M\u001b*", 3, mamba))
        .isInstanceOf(InputException.class).hasMessageContaining("U+001B");
    ModelSpec m = Presets.get("nemotron-h-8b");
    // 128 heads in 8 groups: tensor parallelism of 16 divides the heads but not the groups.
    assertThatThrownBy(() -> m.checkHybridLayout(16, 1)).isInstanceOf(InputException.class)
        .hasMessageContaining("128 heads in 8 groups; tensor parallelism of 16 must divide both");
    assertThatThrownBy(() -> m.checkHybridLayout(3, 1)).isInstanceOf(InputException.class);
    // Context parallelism splits each tensor rank's heads (128 / 8 = 16: CP 32 does not) and its
    // groups, or is a multiple of them (8 / 8 = 1 group: any CP), as mamba_context_parallel.py
    // asserts; CP 3 divides neither 128 heads nor 8 groups.
    assertThatThrownBy(() -> m.checkHybridLayout(8, 32)).isInstanceOf(InputException.class)
        .hasMessageContaining("context parallelism of 32 must divide the heads");
    assertThatThrownBy(() -> m.checkHybridLayout(1, 3)).isInstanceOf(InputException.class);
    m.checkHybridLayout(2, 2);
    m.checkHybridLayout(8, 16);
    m.checkHybridLayout(8, 1);
    // TP 2, CP 2: in, z and x 2 x 8192 / 2, B and C 2 x 128 x max(8 / 2, 2) groups, dt 128 / 2;
    // out, 8192 / 2: 8192 + 1024 + 64 + 4096 = 13,376 elements per token. TP 8, CP 16: B and C
    // repeated to 16 groups: 2048 + 2 x 128 x 16 + 16 + 1024 = 7,184.
    assertThat(m.arch().hybrid().mamba().swapElementsPerToken(2, 2)).isEqualTo(13_376.0);
    assertThat(m.arch().hybrid().mamba().swapElementsPerToken(8, 16)).isEqualTo(7_184.0);
    // Mamba-1 layers take no context parallelism (no framework implements it).
    assertThatThrownBy(() -> Presets.get("jamba-v0.1").checkHybridLayout(1, 2))
        .isInstanceOf(InputException.class).hasMessageContaining("Mamba-1");
    assertThatThrownBy(() -> m.withLayers(53)).isInstanceOf(InputException.class);
    assertThat(m.withLayers(8).arch().hybrid().symbols()).isEqualTo("M-M-M-M*");
    assertThatThrownBy(() -> new MambaShape(6, 64, 128, 4, 4, 128, 4, true, false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must divide its 6");
  }
}
