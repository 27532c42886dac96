package io.meshplan.export;

import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.plan.ParallelConfig;
import java.util.Optional;

/**
 * The expert-parallel rules torchtitan's main branch applies to every mixture-of-experts model it
 * builds from {@code models/common} (its Qwen3 flavors, {@link TorchtitanQwen3Moe}, and its
 * DeepSeek-V3 flavor, {@link TorchtitanDeepseekV3}), restated from the snapshot at {@link
 * TorchtitanMain#COMMIT}; file names and lines are that commit's.
 *
 * <ul>
 *   <li>{@code num_experts % ep == 0} ({@code models/common/decoder.py:201-208}); {@code ep}
 *       divides {@code dp_shard x cp x tp} ({@code distributed/parallel_dims.py:187-192}); the
 *       experts' FSDP group is {@code efsdp = dp_shard x cp x tp / ep} ({@code
 *       config/configs.py:282-290}), kept even at size 1 ({@code parallel_dims.py:205-208}).
 *   <li>expert tensor parallelism: with {@code ep > 1} the routed experts are whole experts
 *       sharded over the EP ranks, and without EP they are tensor-parallel like the dense layers
 *       ({@code models/common/MOE_SHARDING.md}, table "Configurations"); main has no {@code
 *       expert_tensor_parallel_degree}. So meshplan's expert tensor size is 1 with EP and the
 *       tensor size without it.
 *   <li>the training sequence is at most the flavor's RoPE cache ({@code
 *       models/common/decoder.py:216-225}).
 * </ul>
 */
final class TorchtitanExperts {
  private TorchtitanExperts() {}

  /**
   * What torchtitan cannot run of a mixture-of-experts input's experts and sequence.
   *
   * @param input an input whose model has a torchtitan flavor
   * @param shard the {@code data_parallel_shard_degree} written
   * @param family the model family in words, for example {@code Qwen3}
   * @param flavors how many flavors the family has
   * @param dropless where the flavors leave {@code non_blocking_capacity_factor} unset
   * @param maxContext the flavors' RoPE cache, tokens
   * @return the reason, or empty
   */
  static Optional<String> missing(ExportInput input, int shard, String family, int flavors,
      String dropless, int maxContext) {
    ParallelConfig c = input.config();
    MoeShape moe = input.model().arch().moe();
    String at = " (torchtitan " + TorchtitanMain.VERSION + " ";
    if (moe.capacityFactor() > 0) {
      return Optional.of("torchtitan's " + family + " experts are dropless (no capacity factor"
          + " is set in " + dropless + "); it has no capacity factor " + moe.capacityFactor());
    }
    if (input.model().seq() > maxContext) {
      return Optional.of("torchtitan's " + family + (flavors == 1 ? " flavor holds"
          : " flavors hold") + " RoPE for " + maxContext + " tokens" + at
          + "models/common/decoder.py:216-225); the sequence is " + input.model().seq());
    }
    long sparse = (long) shard * c.contextParallel() * c.tensorParallel();
    if (moe.experts() % c.expertParallel() != 0 || sparse % c.expertParallel() != 0) {
      return Optional.of("torchtitan needs expert_parallel_degree " + c.expertParallel()
          + " to divide the " + moe.experts() + " experts and dp_shard x cp x tp = " + sparse
          + at + "models/common/decoder.py:201-208, distributed/parallel_dims.py:187-192)");
    }
    int etp = expertTensor(c);
    if (c.expertTensorParallel() != etp) {
      return Optional.of("torchtitan has no expert tensor-parallel degree" + at
          + "models/common/MOE_SHARDING.md): its experts are "
          + (c.expertParallel() > 1 ? "whole on each of the " + c.expertParallel()
              + " expert-parallel ranks" : "tensor-parallel over the " + c.tensorParallel()
              + " tensor ranks") + ", which is expert tensor size " + etp + ", not "
          + c.expertTensorParallel());
    }
    return Optional.empty();
  }

  /**
   * The expert tensor-parallel size torchtitan has for a layout.
   *
   * @param c the configuration
   * @return 1 with expert parallelism, the tensor size without it
   */
  static int expertTensor(ParallelConfig c) {
    return c.expertParallel() > 1 ? 1 : c.tensorParallel();
  }

  /**
   * The model with its experts dropless (its dense blocks kept), and the configuration with the
   * expert tensor size torchtitan has, for the nearest input.
   *
   * @param input the input
   * @return the input torchtitan's experts can run, or the input itself
   */
  static ExportInput nearest(ExportInput input) {
    ModelSpec m = input.model();
    MoeShape moe = m.arch().moe();
    ModelSpec dropless = moe.capacityFactor() == 0 ? m : new ModelSpec(m.name(), m.family(),
        m.layers(), m.hidden(), m.heads(), m.kvHeads(), m.ffn(), m.vocab(), m.seq(), m.batch(),
        m.dtype(), m.arch().withMoe(moe.withRouting(0, moe.imbalance())));
    ParallelConfig c = input.config();
    return new ExportInput(dropless, input.cluster(), c.withExperts(c.expertParallel(),
        expertTensor(c)), input.attention(), input.overlaps(), input.gpipe());
  }
}
