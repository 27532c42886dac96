package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Korthikanti et al.'s activation formulas and Narayanan et al.'s FLOP formulas. */
class ClosedFormsTest {
  /**
   * Korthikanti et al. Table 2 for GPT-3 175B (s = 2048, h = 12288, a = 96) at b = 1, t = 8:
   * sbh = 25,165,824 and 5as/(ht) = 5 * 96 * 2048 / (12288 * 8) = 10.
   */
  @Test
  void table2RowsForGpt3() {
    double sbh = 25_165_824.0;
    // Tensor parallelism: sbh (10 + 24/8 + 10) = 23 sbh.
    assertThat(bytes(8, Recompute.NONE, false)).isEqualTo(23 * sbh);
    // Tensor + sequence parallelism: sbh (34/8 + 10) = 14.25 sbh.
    assertThat(bytes(8, Recompute.NONE, true)).isEqualTo(14.25 * sbh);
    // Tensor parallelism + selective: sbh (10 + 24/8) = 13 sbh.
    assertThat(bytes(8, Recompute.SELECTIVE, false)).isEqualTo(13 * sbh);
    // Tensor + sequence parallelism + selective: 34 sbh / 8 = 4.25 sbh.
    assertThat(bytes(8, Recompute.SELECTIVE, true)).isEqualTo(4.25 * sbh);
    // Full recomputation: 2 sbh; with sequence parallelism the input is split: 0.25 sbh.
    assertThat(bytes(8, Recompute.FULL, false)).isEqualTo(2 * sbh);
    assertThat(bytes(8, Recompute.FULL, true)).isEqualTo(0.25 * sbh);
    // No parallelism: sbh (34 + 5as/h) with 5as/h = 80: 114 sbh.
    assertThat(bytes(1, Recompute.NONE, false)).isEqualTo(114 * sbh);
    // Selective with sequence parallelism saves 23/4.25 = 5.4x over plain tensor parallelism
    // (the paper's headline "5x" reduction).
    assertThat(bytes(8, Recompute.NONE, false) / bytes(8, Recompute.SELECTIVE, true))
        .isCloseTo(5.41, withinPercentage(0.1));
  }

  private static double bytes(int t, Recompute r, boolean sp) {
    return KorthikantiActivations.bytesPerLayer(2048, 1, 12288, 96, t, r, sp);
  }

  /** The paper has no row for torchtitan's per-op checkpointing: asking for one is refused. */
  @org.junit.jupiter.api.Test
  void perOpCheckpointingHasNoClosedForm() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> KorthikantiActivations
        .bytesPerLayer(1024, 4, 4096, 32, 1, Recompute.OP, false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("per-op");
  }

  /** With t = 1 every row reduces to the no-parallelism formula. */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void oneWayTensorParallelismIsNoParallelism(boolean sp) {
    for (Recompute r : Recompute.SEARCHED) {
      assertThat(KorthikantiActivations.bytesPerLayer(1024, 4, 4096, 32, 1, r, sp))
          .isEqualTo(KorthikantiActivations.bytesPerLayer(1024, 4, 4096, 32, 1, r, false));
    }
  }

  /**
   * GPT-3 175B per token: 72 l h^2 (1 + s/(6h) + V/(12lh)) = 6 (12 l h^2 + V h) + 12 l s h
   * = 1,076,373,430,272 FLOPs; with full recomputation 96 l h^2 (1 + s/(6h) + V/(16lh)) =
   * 1,433,929,457,664.
   */
  @Test
  void gpt3FlopsPerToken() {
    ModelSpec s = Presets.get("gpt3-175b");
    assertThat(ModelFlops.megatronModelFlops(1, 2048, 96, 12288, 50257))
        .isCloseTo(1_076_373_430_272.0 * 2048, withinPercentage(1e-9));
    assertThat(ModelFlops.trainingFlopsPerToken(s, 2048))
        .isCloseTo(1_076_373_430_272.0, withinPercentage(1e-12));
    assertThat(ModelFlops.trainingFlopsPerTokenFullRecompute(s, 2048))
        .isCloseTo(1_433_929_457_664.0, withinPercentage(1e-12));
    assertThat(ModelFlops.megatronHardwareFlopsFullRecompute(1, 2048, 96, 12288, 50257))
        .isCloseTo(1_433_929_457_664.0 * 2048, withinPercentage(1e-12));
  }

  /** For every Megatron preset the per-token count from the matrices equals the 72-formula. */
  @ParameterizedTest
  @ValueSource(strings = {"gpt-1.7b", "gpt-18.4b", "gpt-145.6b", "gpt-1t"})
  void perTokenCountIsTheMegatronFormula(String preset) {
    ModelSpec s = Presets.get(preset);
    double formula = ModelFlops.megatronModelFlops(s.batch(), s.seq(), s.layers(), s.hidden(),
        s.vocab());
    assertThat(ModelFlops.trainingFlopsPerToken(s, s.seq()) * s.batch() * s.seq())
        .isCloseTo(formula, withinPercentage(1e-9));
  }
}
