package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.model.RecomputeModule;
import io.meshplan.plan.ContextExchange;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.TrainingJob;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Key/value heads over more tensor ranks than groups, priced as Megatron-Core runs them (issue
 * 36; {@code megatron/core/transformer/attention.py} at NVIDIA/Megatron-LM d98e8a6, lines 349-367
 * and 1850-1880, Megatron-Core 0.20, which accepts a group count that divides the tensor size,
 * {@code transformer_config.py:1461-1468}): the query/key/value projection is split evenly over
 * the tensor ranks, its whole output is all-gathered, and each rank keeps its {@code a / t} query
 * heads and its group's whole key and value head.
 *
 * <p>One LLaMA-3-8B block (hidden 4096, 32 query heads of 128, 8 key/value heads; 4,096 tokens,
 * micro batch 1, sequence parallelism, bf16) under Megatron-LM's layouts, beside its twin with 16
 * key/value heads, which 16 ranks split without repeating.
 */
class KvReplicasPricingTest {
  private static final ClusterSpec CLUSTER = ClusterSpec.parse("2x8:h100-80gb");

  private static LayerCost block(int kvHeads, int tp) {
    ModelSpec p = Presets.get("llama3-8b").withSequence(4096);
    ModelSpec m = new ModelSpec(p.name(), p.family(), p.layers(), p.hidden(), p.heads(), kvHeads,
        p.ffn(), p.vocab(), p.seq(), p.batch(), p.dtype(), p.arch());
    var priced = Planner.price(TrainingJob.of(m, CLUSTER).withGlobalBatch(16), Pricing.catalog(),
        PlannerOptions.defaults());
    return priced.layers().cost(LayerCostModel.Kind.BLOCK, new LayerSetting(tp, 1,
        Recompute.NONE, true, true, 1, 1, 1, ContextExchange.P2P,
        Set.of(RecomputeModule.CORE_ATTN)));
  }

  @Test
  void eightGroupsOnSixteenRanksArePricedAsMegatronCoreRunsThem() {
    LayerCost tp8 = block(8, 8);
    LayerCost tp16 = block(8, 16);
    LayerCost twin16 = block(16, 16);
    assertThat(KvReplicas.of(Presets.get("llama3-8b"), 16, true)).isEqualTo(2);
    assertThat(KvReplicas.of(Presets.get("llama3-8b"), 8, true)).isEqualTo(1);
    // Weights: the projection is column-parallel over all 16 ranks, nothing repeated, so a rank
    // holds half of what it holds at tp 8: 27,271,168 / 2 = 13,639,680 elements.
    assertThat(tp8.parameters()).isEqualTo(27_271_168);
    assertThat(tp16.parameters()).isEqualTo(13_639_680);
    // Activations: each rank keeps its group's whole key and value head, one each, where an even
    // split of 8 heads over 16 ranks would keep half of each: tp 8's 71,303,168 bytes / 2 +
    // 2 x 0.5 x 4096 tokens x 128 x 2 bytes = 35,651,584 + 1,048,576 = 36,700,160, exactly what
    // the 16-group twin keeps with its one head of each per rank.
    assertThat(tp8.savedActivationBytes()).isEqualTo(71_303_168);
    assertThat(tp16.savedActivationBytes()).isEqualTo(36_700_160)
        .isEqualTo(twin16.savedActivationBytes());
    // Communication: the all-gather of the whole projection output (queries, keys and values),
    // beyond the twin's: 4096 tokens x (32 + 2 x 8) heads x 128 x 2 bytes x 15/16 = 47,185,920
    // bytes sent per rank in the forward pass.
    assertThat(tp16.forwardCommBytes() - twin16.forwardCommBytes()).isEqualTo(47_185_920);
    // Compute: the attention core splits by query heads over the 16 ranks (it ran whole on
    // each before), so a rank computes about what the twin's does (0.294 ms against 0.266 ms
    // when written: the repeats and the keys' rotation before the repeat) and well under tp 8.
    double c16 = tp16.forwardSeconds() - tp16.forwardCommSeconds();
    double twin = twin16.forwardSeconds() - twin16.forwardCommSeconds();
    double c8 = tp8.forwardSeconds() - tp8.forwardCommSeconds();
    assertThat(c16).isLessThan(1.15 * twin).isLessThan(0.75 * c8);
  }
}
