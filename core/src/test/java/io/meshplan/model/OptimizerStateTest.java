package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link OptimizerState}: the bytes per trained parameter each precision holds and streams, and
 * the training graph that bf16 state builds (no master, bf16 moments and accumulator).
 */
class OptimizerStateTest {
  private static final ModelSpec LLAMA = new ModelSpec("llama-small", ModelSpec.Family.LLAMA, 2,
      256, 8, 2, 688, 1000, 128, 2, DType.BF16);

  @Test
  void bytesPerParameter() {
    // fp32 state: 4 master + 4 + 4 moments = 12 (the master is the weight in fp32 training: 8);
    // bf16: 2 + 2 moments, no master.
    assertThat(OptimizerState.FP32.stateBytes(2)).isEqualTo(12.0);
    assertThat(OptimizerState.FP32.stateBytes(4)).isEqualTo(8.0);
    assertThat(OptimizerState.BF16.stateBytes(2)).isEqualTo(4.0);
    // Kept gradients: the fp32 accumulator's 4 (or Megatron's bf16 buffer's 2); bf16 always 2.
    assertThat(OptimizerState.FP32.gradientBytes(4)).isEqualTo(4.0);
    assertThat(OptimizerState.FP32.gradientBytes(2)).isEqualTo(2.0);
    assertThat(OptimizerState.BF16.gradientBytes(4)).isEqualTo(2.0);
    // The step: fp32 reads g, master, m, v (16) and writes master, m, v and the bf16 copy
    // (12 + 2) = 30; bf16 reads g, w, m, v (8) and writes w, m, v (6) = 14.
    assertThat(OptimizerState.FP32.stepBytes()).isEqualTo(30.0);
    assertThat(OptimizerState.BF16.stepBytes()).isEqualTo(14.0);
    // Whole state with the weight: 2 + 4 + 12 = 18, 2 + 2 + 4 = 8; the least some GPU holds:
    // 2 + 2 + 12 = 16 (a gradient of at least 2 bytes), and 8.
    assertThat(OptimizerState.FP32.modelStateBytes()).isEqualTo(18.0);
    assertThat(OptimizerState.BF16.modelStateBytes()).isEqualTo(8.0);
    assertThat(OptimizerState.FP32.leastStateBytes()).isEqualTo(16.0);
    assertThat(OptimizerState.BF16.leastStateBytes()).isEqualTo(8.0);
  }

  @Test
  void wordsAndPrecisions() {
    assertThat(OptimizerState.parse("BF16")).contains(OptimizerState.BF16);
    assertThat(OptimizerState.parse("fp32")).contains(OptimizerState.FP32);
    for (String w : List.of("", "bf16 ", "fp16", "f32", "bf\n16")) {
      assertThat(OptimizerState.parse(w)).as(w).isEmpty();
    }
    assertThat(OptimizerState.BF16.heldBy(DType.BF16)).isTrue();
    assertThat(OptimizerState.BF16.heldBy(Fp8Training.RECIPE)).isTrue();
    assertThat(OptimizerState.BF16.heldBy(DType.F16)).isFalse();
    assertThat(OptimizerState.BF16.heldBy(DType.F32)).isFalse();
    assertThat(OptimizerState.FP32.heldBy(DType.F16)).isTrue();
    assertThatThrownBy(() -> LLAMA.withOptimizerState(OptimizerState.BF16)
        .withTraining(2, DType.F16)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bf16 optimizer state needs bf16 weights");
  }

  /**
   * Under bf16 state every weight is Adam's own: no master parameter, the moments and the
   * gradient accumulator bf16 like the weight, and the gradient added without a cast.
   */
  @Test
  void theGraphUpdatesTheBf16WeightsThemselves() {
    ModelSpec m = LLAMA.withOptimizerState(OptimizerState.BF16);
    TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m));
    Graph g = tg.graph();
    assertThat(tg.parameters(ParamRole.MASTER_WEIGHT)).isEmpty();
    assertThat(tg.parameters(ParamRole.ADAM_M)).hasSize(tg.weights().size());
    for (WeightTensors w : tg.weights()) {
      var ws = g.get(w.weight()).tensorShape();
      for (int p : new int[] {w.adamM(), w.adamV(), w.accumulator()}) {
        assertThat(g.get(p).tensorShape()).isEqualTo(ws);
      }
      assertThat(w.master()).isEqualTo(-1);
      assertThat(g.get(w.gradient()).tensorShape()).isEqualTo(ws);
    }
    // Weight, m, v and accumulator each aliased to its update: 4 per weight (fp32 state: 5).
    assertThat(g.aliases()).hasSize(4 * tg.weights().size());
    assertThat(TrainingGraphBuilder.build(LLAMA, TrainingOptions.of(LLAMA)).graph().aliases())
        .hasSize(5 * tg.weights().size());
  }
}
