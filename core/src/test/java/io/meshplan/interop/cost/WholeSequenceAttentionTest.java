package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ComputeModel;
import io.meshplan.cluster.GpuCatalog;
import io.meshplan.cluster.KernelTimeModel;
import io.meshplan.cluster.Precision;
import org.junit.jupiter.api.Test;

/**
 * Under Ulysses' all-to-alls a GPU's attention runs over the whole sequence: a share of 2,048
 * tokens of an 8,192-token sequence over CP 4 is priced at the kernel's 8,192-token speed, and
 * every other kernel as the GPU's model prices it.
 */
class WholeSequenceAttentionTest {
  @Test
  void theAttentionRunsAtTheWholeSequencesSpeed() {
    KernelTimeModel k = KernelTimeModel.of(GpuCatalog.find("h200-141gb").orElseThrow(), 2);
    ComputeModel u = new WholeSequenceAttention(k, 4);
    double flops = 1e12;
    for (boolean backward : new boolean[] {false, true}) {
      assertThat(u.attentionCost(flops, 0, backward, 128, 2048))
          .isEqualTo(k.attentionCost(flops, 0, backward, 128, 8192))
          // cuDNN's H200 table: 644 / 484 forward and 541 / 370 backward, 8,192 over 2,048.
          .isLessThan(k.attentionCost(flops, 0, backward, 128, 2048));
    }
    assertThat(u.dotCost(flops, 1e9, Precision.BF16)).isEqualTo(k.dotCost(flops, 1e9,
        Precision.BF16));
    assertThat(u.cost(1e9, 1e9)).isEqualTo(k.cost(1e9, 1e9));
    assertThat(u.fp8GemmsHoldTheirCasts()).isEqualTo(k.fp8GemmsHoldTheirCasts());
    // A span that times CP would pass 2^31 - 1 tokens is held there.
    assertThat(new WholeSequenceAttention(k, 1 << 20).attentionCost(flops, 0, false, 128,
        1 << 20)).isEqualTo(k.attentionCost(flops, 0, false, 128, Integer.MAX_VALUE));
  }
}
