package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.TrainingJob;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Llama 3.1 70B block (hidden 8192, 64 query and 8 key/value heads, ffn 28672; sequence 8192,
 * bf16) at tensor parallelism 8 with sequence parallelism, under Megatron-LM's layouts, moves the
 * bytes Megatron-LM moves (Korthikanti et al., MLSys'23, section 4.2.2) at every micro-batch: the
 * weights stay split (they are never gathered, however small beside the activations), the fused
 * projections reduce their input gradient once, and a row-parallel layer's output gradient is
 * gathered once for its input and weight gradients.
 *
 * <p>One unit u = 7/8 x b x 8192 x 8192 x 2 bytes is an all-gather or reduce-scatter of the
 * block's activation (nccl-tests bus bytes per GPU): 117,440,512 at b = 1, 1,879,048,192 at
 * b = 16. Forward: all-gather before attention and before the MLP, reduce-scatter after each,
 * 4u, and the gather of the first norm's per-token scale, 7/8 x b x 8192 x 4 bytes (28,672 at
 * b = 1). Backward: the output gradients of the two row-parallel layers gathered (2u), the input
 * gradients of the fused query-key-value and gate-up projections reduce-scattered (2u), and the
 * all-reduce of the two norm weights' gradients, 2 x 7/8 x 2 x 8192 x 2 = 57,344 bytes.
 *
 * <p>Before, the layer solver gathered the split weights wherever they weighed less than the
 * activations (at b = 16 the block sent 5.3 GiB forward and backward instead of 14.0), reduced
 * the query, key and value input gradients one by one, and reduced partial weight gradients.
 */
class MegatronLayoutsPricingTest {
  private static LayerCost block(int microBatch) {
    ModelSpec m = Presets.get("llama3.1-70b").withSequence(8192);
    var priced = Planner.price(TrainingJob.of(m, ClusterSpec.parse("1x8:h100-80gb"))
        .withGlobalBatch(16), Pricing.catalog(), PlannerOptions.defaults());
    return priced.layers().cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(8, microBatch, Recompute.NONE, true, true));
  }

  @ParameterizedTest(name = "b = {0}")
  @ValueSource(ints = {1, 2, 8, 16})
  void theBlockMovesMegatronLmsBytesAtEveryMicroBatch(int b) {
    LayerCost c = block(b);
    double u = 7.0 / 8 * b * 8192 * 8192 * 2;
    double scale = 7.0 / 8 * b * 8192 * 4;
    double norms = 2 * 7.0 / 8 * 2 * 8192 * 2;
    assertThat(c.forwardCommBytes()).isEqualTo(4 * u + scale);
    assertThat(c.tensorCommBytes() - c.forwardCommBytes()).isEqualTo(4 * u + norms);
  }
}
