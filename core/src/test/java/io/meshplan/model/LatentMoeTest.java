package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Nemotron 3's LatentMoE ({@link MoeShape#latent}): counts, graph, FLOPs and the reader. */
class LatentMoeTest {
  private static final Path SUPER = Path.of("core/src/test/resources/hf/"
      + "nemotron-3-super-120b-a12b.json");

  @Test
  void nemotron3SuperHasItsExactParameterCounts() {
    ModelSpec m = Presets.get("nemotron-3-super-120b-a12b");
    // Mamba-2 (inner 128 x 64 = 8192, 2 G N = 2048): in_proj 4096 x (2 x 8192 + 2048 + 128) =
    // 4096 x 18,560 = 76,021,760; conv 10,240 x 4 + 10,240 = 51,200; A_log, D, dt_bias 3 x 128;
    // gated norm 8192; out_proj 8192 x 4096 = 33,554,432; pre-norm 4096: 109,640,064.
    assertThat(m.blockParameterCount(0)).isEqualTo(109_640_064L);
    // LatentMoE: router 4096 x 512 = 2,097,152; 512 experts of 2 x 1024 x 2688 = 5,505,024
    // (2,818,572,288); shared 2 x 4096 x 5376 = 44,040,192; latent projections 2 x 4096 x 1024 =
    // 8,388,608; pre-norm 4096: 2,873,102,336 (the router's fp32 correction bias is a buffer).
    assertThat(m.blockParameterCount(1)).isEqualTo(2_873_102_336L);
    // Attention: q and o 2 x 4096 x 4096, k and v 2 x 4096 x 256, pre-norm 4096: 35,655,680.
    assertThat(m.blockParameterCount(7)).isEqualTo(35_655_680L);
    // 40 x 109,640,064 + 40 x 2,873,102,336 + 8 x 35,655,680 + 2 x 131072 x 4096 + 4096 =
    // 120,668,687,360, and the multi-token prediction module: 2 input norms and the final norm 3
    // x 4096, the projection 8192 x 4096 = 33,554,432, an attention and an expert layer
    // 35,655,680 + 2,873,102,336: 2,942,324,736. Total 123,611,012,096, the release's bf16
    // parameters (the Megatron-Bridge card counts 123,611,033,088 elements with the 41 fp32
    // router correction biases of 512: + 20,992, buffers, not trained).
    assertThat(m.mtpParameterCount()).isEqualTo(2_942_324_736L);
    assertThat(m.parameterCount()).isEqualTo(123_611_012_096L);
    // Active: each of the 41 expert layers (40 and the module's) idles 490 experts of 5,505,024:
    // 110,595,932,160 fewer, 13,015,079,936 (the name's A12B; 12,770,216,960 without the module).
    assertThat(m.activeParameterCount()).isEqualTo(13_015_079_936L);
  }

  @Test
  void theReleasedConfigReadsAsThePresetAndBadPredictionLayersAreRefused(@TempDir Path dir)
      throws Exception {
    ModelSpec released = HfConfigReader.read(SUPER);
    ModelSpec preset = Presets.get("nemotron-3-super-120b-a12b");
    assertThat(released.arch().moe()).isEqualTo(preset.arch().moe());
    assertThat(released.arch().hybrid()).isEqualTo(preset.arch().hybrid());
    assertThat(released.arch().mtpDepth()).isEqualTo(1);
    assertThat(released.parameterCount()).isEqualTo(123_611_012_096L);
    assertThat(HfConfigReader.readConfig(SUPER).warnings()).isEmpty();
    ObjectMapper json = new ObjectMapper();
    ObjectNode c = (ObjectNode) json.readTree(SUPER.toFile());
    Path bad = dir.resolve("config.json");
    // Without the module: the backbone alone.
    c.put("num_nextn_predict_layers", 0);
    Files.writeString(bad, json.writeValueAsString(c));
    assertThat(HfConfigReader.read(bad).parameterCount()).isEqualTo(120_668_687_360L);
    String[][] refused = {{"mtp_hybrid_override_pattern", "*-", "layer 1 is '-', a kind"},
        {"mtp_hybrid_override_pattern", "", "1 to 64 layers"},
        {"mtp_hybrid_override_pattern", "*x", "'x'"},
        {"mtp_hybrid_override_pattern", "*\u001bE", "layer 1 is U+001B"},
        {"moe_latent_size", "0", "moe_latent_size"}};
    for (String[] r : refused) {
      ObjectNode d = (ObjectNode) json.readTree(SUPER.toFile());
      if (r[0].equals("moe_latent_size")) {
        d.put(r[0], Integer.parseInt(r[1]));
      } else {
        d.put(r[0], r[1]);
      }
      Files.writeString(bad, json.writeValueAsString(d));
      assertThatThrownBy(() -> HfConfigReader.read(bad)).as(r[1])
          .isInstanceOf(InputException.class).hasMessageContaining(r[2])
          .hasMessageNotContaining("\n");
    }
    ObjectNode d = (ObjectNode) json.readTree(SUPER.toFile());
    d.remove("mtp_hybrid_override_pattern");
    Files.writeString(bad, json.writeValueAsString(d));
    assertThatThrownBy(() -> HfConfigReader.read(bad)).isInstanceOf(InputException.class)
        .hasMessageContaining("mtp_hybrid_override_pattern, the prediction module's layers, is "
            + "absent");
  }

  @Test
  void theGraphHoldsTheCountedParametersAndItsForwardProductsAreTheClosedForm() {
    Random rnd = new Random(20261130L);
    for (int c = 0; c < 12; c++) {
      int experts = 2 << rnd.nextInt(3);
      int topK = 1 + rnd.nextInt(experts);
      int latent = 8 * (1 + rnd.nextInt(6));
      int shared = rnd.nextBoolean() ? 32 : 0;
      MoeShape moe = new MoeShape(experts, topK, 16 * (1 + rnd.nextInt(4)), shared, false)
          .withLatent(latent);
      boolean hybrid = rnd.nextBoolean();
      ModelSpec m;
      if (hybrid) {
        MambaShape mamba = new MambaShape(4, 16, 8, 2, 4, 16, 2, true, false);
        Architecture a = new Architecture(Architecture.Mlp.RELU2, Architecture.Norm.RMS,
            Architecture.Positions.NONE, 0, false, false,
            new AttentionShape(16, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
            moe, 0, Numerics.rotary(10_000, 1e-5), HybridPattern.parse("MEME", 4, mamba));
        m = new ModelSpec("h" + c, ModelSpec.Family.GPT, 4, 64, 4, 2, moe.expertFfn(), 200, 64,
            2, DType.BF16, a);
      } else {
        m = new ModelSpec("l" + c, ModelSpec.Family.LLAMA, 2, 64, 4, 2, moe.expertFfn(), 200,
            64, 2, DType.BF16, Architecture.llama().withMoe(moe));
      }
      TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m));
      Graph g = tg.graph();
      long held = 0;
      for (WeightTensors w : tg.weights()) {
        held += g.get(w.weight()).tensorShape().elementCount();
      }
      assertThat(held).as(moe.toString()).isEqualTo(m.parameterCount());
      // The dispatched rows are of the latent width: [G, C, latent].
      Instruction dispatch = g.instructions().stream()
          .filter(i -> i.opcode() == Opcode.MOE_DISPATCH).findFirst().orElseThrow();
      int[] dims = dispatch.tensorShape().dims();
      assertThat(dims[dims.length - 1]).as(moe.toString()).isEqualTo(latent);
      if (hybrid) {
        // Without attention the closed form and the graph count the same products.
        double forward = 0;
        for (Instruction ins : g.instructions()) {
          if (tg.phase(ins.id()) == Phase.FORWARD) {
            forward += OpCost.modelFlops(g, ins);
          }
        }
        assertThat(ModelFlops.trainingFlopsPerToken(m, 64) / 3).as(moe.toString())
            .isCloseTo(forward / (2.0 * 64), org.assertj.core.api.Assertions.withinPercentage(0.5));
      }
    }
  }

  @Test
  void aLatentWidthNeedsExpertsAndABoundedSize() {
    assertThatThrownBy(() -> MoeShape.DENSE.withLatent(64))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only experts");
    assertThatThrownBy(() -> new MoeShape(8, 2, 64, 0, false).withLatent(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("latent width");
    // 2 h l more parameters than the same experts in the hidden width, less E (3 h - 3 l) f_e.
    MoeShape plain = new MoeShape(8, 2, 64, 0, false);
    long h = 128;
    assertThat(plain.withLatent(32).parameters(128) - plain.parameters(128))
        .isEqualTo(2 * h * 32 - 8 * 3 * (h - 32) * 64);
  }
}
