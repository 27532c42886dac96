package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/**
 * Key/value heads over more tensor ranks than groups (issue 36: 8 key/value heads with {@code
 * --tp 16}), exported where the framework runs it and refused by its own rule where it does not:
 *
 * <ul>
 *   <li>Megatron-LM at d98e8a6 (Megatron-Core 0.20) accepts a group count that is a multiple or
 *       a divisor of the tensor size ({@code megatron/core/transformer/transformer_config.py:
 *       1461-1468}; before core_v0.16 it had to be a multiple), and repeats each group's keys and
 *       values over its ranks (priced so: {@code KvReplicasPricingTest}); meshplan's {@link
 *       ParallelConfig#check} asks the same.
 *   <li>Megatron-DeepSpeed at 4efb479 divides the key/value heads by the tensor size ({@code
 *       megatron/model/transformer.py:566-567}, {@code core.utils.divide} asserts).
 *   <li>torchtitan main at b5bcd76 raises unless the tensor degree divides them ({@code
 *       models/common/decoder.py:195-199}).
 * </ul>
 */
class KvHeadsOverTensorRanksExportTest {
  private static final ClusterSpec TWO_NODES = ClusterSpec.parse("2x8:h100-80gb");

  /** Llama 3 70B: 64 query heads, 8 key/value heads, on 16 GPUs, all tensor-parallel. */
  private static ExportInput tp16() {
    return new ExportInput(Plans.LLAMA70B, TWO_NODES,
        new ParallelConfig(16, 1, 1, 1, 1, 8, Recompute.FULL, true, 0));
  }

  @Test
  void megatronWritesTheGroupsOverMoreRanksAndTheOthersRefuseThem() {
    ExportResult m = new Exporter().export(ExportTarget.MEGATRON, tp16());
    assertThat(m).isInstanceOf(ExportResult.Exported.class);
    assertThat(((ExportResult.Exported) m).text()).contains("  --tensor-model-parallel-size 16\n",
        "  --group-query-attention\n  --num-query-groups 8\n");
    ExportResult d = new Exporter().export(ExportTarget.DEEPSPEED, tp16());
    assertThat(((ExportResult.NotExpressible) d).missing()).isEqualTo("Megatron-DeepSpeed"
        + " divides the 8 key/value heads by tensor-parallel size 16"
        + " (megatron/model/transformer.py:566-567); it does not replicate them over more ranks"
        + " than groups as Megatron-Core does");
    ExportInput titan = Plans.titan(tp16());
    ExportResult t = new Exporter().export(ExportTarget.TORCHTITAN, titan.withConfig(
        titan.config().withZeroStage(3)));
    assertThat(((ExportResult.NotExpressible) t).missing()).contains("tensor degree 16 to"
        + " divide the 8 key/value heads", "it does not replicate them");
  }

  @Test
  void groupsThatNeitherDivideNorAreAMultipleOfTheTensorSizeAreRefusedAsMegatronCoreDoes() {
    // Mixtral 8x22B: 48 query heads, 8 groups; tp 12 divides the heads, but 8 % 12 and 12 % 8
    // are both non-zero: Megatron-Core's ValueError, meshplan's InputException.
    assertThatThrownBy(() -> new ExportInput(Presets.get("mixtral-8x22b").withSequence(4096),
        ClusterSpec.parse("3x8:h100-80gb"), new ParallelConfig(12, 1, 2, 1, 1, 8,
            Recompute.FULL, true, 1))).isInstanceOf(InputException.class)
        .hasMessageContaining("does not divide the model's 48 attention heads and 8 key/value"
            + " heads");
  }
}
