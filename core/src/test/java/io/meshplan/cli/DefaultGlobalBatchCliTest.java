package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.interop.SharedBatch;
import org.junit.jupiter.api.Test;

/**
 * {@code plan} without {@code --global-batch}: 1,024 sequences, and where no pipeline of the
 * cluster's GPUs has replicas that share 1,024 (racks of 72: 576 = 9 x 64 GPUs), the batch the
 * GPU count's odd factor allows nearest it, said in a warning. A batch the user gives is never
 * changed.
 */
class DefaultGlobalBatchCliTest {
  /**
   * The odd factor o of the GPU count times the power of two that brings o 2^k nearest 1,024 in
   * ratio: 576 = 9 x 64 gives 9 x 128 = 1,152 (1,152 / 1,024 = 1.125 against 1,024 / 576 =
   * 1.78); 24 = 3 x 8 gives 3 x 256 = 768 (1.33 against 1,536 / 1,024 = 1.5); 200 = 25 x 8 gives
   * 800 (1.28 against 1.5625); a power of two keeps 1,024 (2,048 is 2 above, 1,024 is 1);
   * an odd factor above 1,024 is the batch itself.
   */
  @Test
  void theBatchNearestTheDefaultThatTheGpusShare() {
    assertThat(SharedBatch.nearest(576, 1024)).isEqualTo(1152);
    assertThat(SharedBatch.nearest(24, 1024)).isEqualTo(768);
    assertThat(SharedBatch.nearest(200, 1024)).isEqualTo(800);
    assertThat(SharedBatch.nearest(64, 1024)).isEqualTo(1024);
    assertThat(SharedBatch.nearest(1, 1024)).isEqualTo(1024);
    assertThat(SharedBatch.nearest(2 * 1031, 1024)).isEqualTo(1031);
    // 2^30 GPUs: odd factor 1.
    assertThat(SharedBatch.nearest(1 << 30, 1024)).isEqualTo(1024);
  }

  /**
   * OPT-125M on 8 racks of 72 (576 GPUs): 1,024 sequences divide over no pipeline of them. Left
   * to the default, the plan is made at 1,152 and a warning says so; given, 1,024 is kept and
   * refused (exit 3) with the batch that would plan named.
   */
  @Test
  void theDefaultMovesWhereTheGpusCannotShareItAndAGivenBatchNever() {
    CliRun d = CliRun.of("plan", "--model", "opt-125m", "--cluster", "8xnvl72:gb200");
    assertThat(d.code()).as(d.err()).isZero();
    assertThat(d.out()).contains("global batch 1152 = ");
    assertThat(d.err()).contains("meshplan: warning: no pipeline covers the 576 GPUs with "
        + "replicas that share the default global batch of 1024 sequences; planned 1152 (the "
        + "GPU count's odd factor 9 times 128); give --global-batch to choose");
    CliRun given = CliRun.of("plan", "--model", "opt-125m", "--cluster", "8xnvl72:gb200",
        "--global-batch", "1024");
    given.refusedInOneLine(3, "meshplan: infeasible: no pipeline of opt-125m covers all 576 GPUs");
    assertThat(given.err()).contains("another global batch (e.g. 1152, the GPU count's odd "
        + "factor 9 times 128)");
    // A power-of-two cluster plans the default as before, without a word.
    CliRun pow = CliRun.of("plan", "--model", "opt-125m", "--cluster", "1x8:a100-80gb");
    assertThat(pow.code()).isZero();
    assertThat(pow.out()).contains("global batch 1024 = ");
    assertThat(pow.err()).doesNotContain("warning");
  }
}
