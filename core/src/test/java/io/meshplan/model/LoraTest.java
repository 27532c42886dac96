package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LoraTest {
  private static final ModelSpec LLAMA31_8B = Presets.get("llama3.1-8b");

  /**
   * Llama 3.1 8B (h 4096, 32 heads and 8 key/value heads of 128, f 14336, 32 blocks), rank 16 on
   * every projection, each its own adapter (PEFT's all-linear): per block q 16 (4096 + 4096) =
   * 131,072, k and v 16 (4096 + 1024) = 81,920 each, o 131,072, gate, up and down 16 (4096 +
   * 14336) = 294,912 each: 1,310,720; x 32 = 41,943,040, the "trainable params: 41,943,040 ||
   * all params: 8,072,204,288" PEFT prints for this model (8,030,261,248 base weights).
   */
  @Test
  void llama31EightBAllLinearRankSixteenTrainsItsPublishedCount() {
    ModelSpec m = LLAMA31_8B.withLora(Lora.of(16, 32, "all-linear", true));
    assertThat(LLAMA31_8B.parameterCount()).isEqualTo(8_030_261_248L);
    assertThat(m.trainableParameterCount()).isEqualTo(41_943_040L);
    assertThat(m.parameterCount() + m.trainableParameterCount()).isEqualTo(8_072_204_288L);
    // The same adapters named as torchtitan or as PEFT's groups.
    assertThat(LLAMA31_8B.withLora(Lora.of(16, 32, "attention,mlp", true))
        .trainableParameterCount()).isEqualTo(41_943_040L);
    assertThat(LLAMA31_8B.withLora(Lora.of(16, 32, "wq,wkv,wo,w1,w3,w2", true))
        .trainableParameterCount()).isEqualTo(41_943_040L);
  }

  /**
   * Megatron-Core's fused adapters (Megatron-Bridge's default targets): linear_qkv 16 (4096 +
   * 4096 + 2 x 1024) = 163,840, linear_proj 131,072, linear_fc1 16 (4096 + 2 x 14336) = 524,288,
   * linear_fc2 294,912: 1,114,112 per block, x 32 = 35,651,584. torchtune's single-GPU default
   * (q and v, rank 8): 32 x 8 (4096 + 4096 + 4096 + 1024) = 3,407,872.
   */
  @Test
  void fusedAdaptersShareTheirDownProjection() {
    assertThat(LLAMA31_8B.withLora(Lora.of(16, 32,
        "linear_qkv,linear_proj,linear_fc1,linear_fc2", true)).trainableParameterCount())
        .isEqualTo(35_651_584L);
    assertThat(LLAMA31_8B.withLora(Lora.of(8, 16, "q_proj,v_proj", true))
        .trainableParameterCount()).isEqualTo(3_407_872L);
  }

  @Test
  void targetsRoundTripThroughTheirWords() {
    for (String t : List.of("all-linear", "q_proj,v_proj", "linear_qkv,linear_fc1",
        "wqkv,wo,w1,w3,w2", "mlp", "wkv")) {
      Lora l = Lora.of(8, 16, t, true);
      assertThat(Lora.of(8, 16, l.targets(), true)).isEqualTo(l);
    }
    Lora gpt = Lora.of(4, 8, "all-linear", false);
    assertThat(gpt.targets()).isEqualTo("q_proj,k_proj,v_proj,o_proj,up_proj,down_proj");
    assertThat(Lora.of(4, 8, gpt.targets(), false)).isEqualTo(gpt);
  }

  @Test
  void badAdaptersAreRefusedInOneSentence() {
    assertThatThrownBy(() -> Lora.of(0, 1, "q_proj", true)).hasMessageContaining("at least 1");
    assertThatThrownBy(() -> LLAMA31_8B.withLora(Lora.of(4097, 1, "q_proj", true)))
        .hasMessage("LoRA rank 4097 exceeds the model's hidden width 4096");
    assertThatThrownBy(() -> Lora.of(8, 16, "q_proj,lm_head", true))
        .hasMessageStartingWith("unknown LoRA target 'lm_head'");
    assertThatThrownBy(() -> Lora.of(8, 16, "q_proj,wqkv", true))
        .hasMessage("LoRA targets adapt q_proj twice");
    assertThatThrownBy(() -> Lora.of(8, 16, "gate_proj", false))
        .hasMessageContaining("no gate projection");
    assertThatThrownBy(() -> Lora.of(8, 16, "q_proj,,v_proj", true))
        .hasMessageContaining("empty name");
    assertThatThrownBy(() -> Presets.get("mixtral-8x7b").withLora(Lora.of(8, 16, "q_proj", true)))
        .hasMessageContaining("mixture-of-experts");
    assertThatThrownBy(() -> new Lora(8, Double.NaN, List.of(new Lora.Adapter("q_proj",
        List.of("wq"))))).hasMessageContaining("alpha");
  }

  /**
   * Seeded random small decoders and targets: the trained weights of the whole training graph
   * are exactly the adapters, their elements {@link ModelSpec#trainableParameterCount}; every
   * other weight is frozen (no gradient, accumulator or Adam state) and the frozen weights are
   * the model's parameters.
   */
  @Test
  void theGraphTrainsExactlyTheAdapters() {
    Random rnd = new Random(20261129L);
    List<String> words = List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
        "down_proj", "linear_qkv", "linear_fc1", "wkv");
    for (int c = 0; c < 12; c++) {
      boolean gpt = rnd.nextBoolean();
      int kv = gpt ? 4 : 1 + rnd.nextInt(2);
      ModelSpec base = new ModelSpec("m" + c, gpt ? ModelSpec.Family.GPT : ModelSpec.Family.LLAMA,
          1 + rnd.nextInt(3), 64, 4, kv, 96 + 32 * rnd.nextInt(3), 200, 32, 2, DType.BF16);
      List<String> picked = new ArrayList<>();
      for (String w : words) {
        if (rnd.nextInt(3) == 0 && !(gpt && (w.equals("gate_proj")))) {
          picked.add(w);
        }
      }
      String targets = picked.isEmpty() ? "all-linear" : String.join(",", picked);
      Lora lora;
      try {
        lora = Lora.of(1 + rnd.nextInt(8), 16, targets, !gpt);
      } catch (IllegalArgumentException overlapping) {
        lora = Lora.of(1 + rnd.nextInt(8), 16, "all-linear", !gpt);
      }
      ModelSpec m = base.withLora(lora);
      TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m));
      Graph g = tg.graph();
      long trained = 0;
      long frozen = 0;
      for (WeightTensors w : tg.weights()) {
        long n = g.get(w.weight()).tensorShape().elementCount();
        if (w.trained()) {
          assertThat(w.name()).as(targets).contains("_lora_");
          assertThat(w.accumulator()).isNotNegative();
          assertThat(w.adamM()).isNotNegative();
          trained += n;
        } else {
          assertThat(w.name()).doesNotContain("_lora_");
          assertThat(w.accumulator()).isEqualTo(-1);
          frozen += n;
        }
      }
      assertThat(trained).as(m + " " + targets).isEqualTo(m.trainableParameterCount());
      assertThat(frozen).as(m.name()).isEqualTo(m.parameterCount());
    }
  }

  private static double dotFlops(TrainingGraph tg, Phase phase) {
    return TrainingGraphBuilderTest.dotFlops(tg, phase);
  }

  /**
   * One LLaMA block (h 256, 8 heads, 2 key/value heads of 32, f 688), b = 2, s = 128, so T = 256
   * tokens, rank 4 on q_proj alone. The forward pass adds the adapter's two GEMMs, {@code 2T(h r
   * + r h)} = 2 x 256 x 2,048 = 1,048,576 FLOPs. The backward pass drops every frozen weight's
   * gradient GEMM, {@code 2T in out} summed over q (256 x 256), k and v (256 x 64 each), o (256 x
   * 256), gate, up and down (256 x 688 each): 2 x 256 x (65,536 x 2 + 16,384 x 2 + 528,384) =
   * 354,418,688, and adds the adapter's four: the gradients of A and B and the inputs' through
   * each, {@code 4 x 2 T r h} = 2,097,152.
   */
  @Test
  void frozenWeightsLoseTheirWeightGradientGemms() {
    // The same under the FP8 recipe, whose linear layers have their own backward (the adapters
    // stay bf16 GEMMs).
    for (DType t : List.of(DType.BF16, Fp8Training.RECIPE)) {
      ModelSpec base = new ModelSpec("llama-small", ModelSpec.Family.LLAMA, 2, 256, 8, 2, 688,
          1000, 128, 2, DType.BF16);
      ModelSpec lora = base.withLora(Lora.of(4, 8, "q_proj", true));
      TrainingGraph full = TrainingGraphBuilder.build(base,
          TrainingOptions.oneBlock(base, 2, 128).withComputeDtype(t));
      TrainingGraph adapted = TrainingGraphBuilder.build(lora,
          TrainingOptions.oneBlock(lora, 2, 128).withComputeDtype(t));
      assertThat(dotFlops(adapted, Phase.FORWARD) - dotFlops(full, Phase.FORWARD)).as(t.name())
          .isEqualTo(1_048_576.0);
      assertThat(dotFlops(full, Phase.BACKWARD) - dotFlops(adapted, Phase.BACKWARD)).as(t.name())
          .isEqualTo(354_418_688.0 - 2_097_152.0);
    }
  }
}
