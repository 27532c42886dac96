package io.meshplan.export;

import io.meshplan.plan.ContextExchange;
import io.meshplan.plan.ParallelConfig;
import java.util.Optional;

/**
 * torchtitan's context parallelism, as both its v0.2.2 release and its main branch at {@link
 * TorchtitanMain#COMMIT} run it, restated for the exporters. Line numbers name the file of each
 * version.
 *
 * <ul>
 *   <li>keys and values: a rank's query shard attends to the keys and values of the whole
 *       sequence, all-gathered over the context-parallel ranks. On main the llama3 and qwen3
 *       flavors run FlexAttention ({@code model_registry}'s default {@code attn_backend="flex"},
 *       {@code models/llama3/__init__.py:369-377}), the only attention it runs context parallel
 *       ({@code models/common/decoder.py:173-183}), and it all-gathers k/v ({@code
 *       models/common/attention.py:795-799}). v0.2.2 runs PyTorch's experimental SDPA context
 *       parallelism ({@code distributed/context_parallel.py:53-68}), whose key/value exchange is
 *       PyTorch's rotate method, {@code allgather} by default ({@code config/job_config.py:446};
 *       the release sets it only in its validator, {@code components/validate.py:207-213}). That
 *       is Megatron-Core's {@code all_gather} form, which meshplan prices; its {@code p2p} ring of
 *       key/value sends and receives has no torchtitan form.
 *   <li>load balance: the default {@code headtail} balancer ({@code config/configs.py:242} on
 *       main, {@code job_config.py:431} in v0.2.2) cuts a sequence into {@code 2 x cp} chunks and
 *       gives each rank a head and a tail chunk, as Megatron-Core does; so {@code 2 x cp} must
 *       divide a microbatch's tokens ({@code trainer.py:296-308} on main) or the sequence, times
 *       the tensor degree ({@code models/llama3/infra/parallelize.py:69-74} in v0.2.2).
 *   <li>weights: context parallelism always brings FSDP over {@code dp_shard x cp} ({@code
 *       fsdp_enabled}, {@code distributed/parallel_dims.py:644-645} on main, {@code 334-335} in
 *       v0.2.2; main's {@code distributed/fsdp.py:54-58} adds {@code cp} to the shard axes), the
 *       group meshplan's ZeRO stages shard over too: a stage's data-parallel GPUs include its
 *       context-parallel ones. So a context-parallel configuration is FSDP's ZeRO-3 (ZeRO-1 under
 *       a pipeline), never DDP.
 *   <li>batch: torchtitan's data-parallel ranks exclude {@code cp} ({@code parallel_dims.py:182}:
 *       {@code dp_replicate x dp_shard x cp x tp x pp} is the world), so the tokens per
 *       microbatch and step are those of the plan's data-parallel replicas, each sequence split
 *       over {@code cp} GPUs.
 * </ul>
 */
final class TorchtitanContext {
  private TorchtitanContext() {}

  /**
   * The GPUs FSDP shards a stage's weights over: {@code dp_shard x cp}, the plan's data-parallel
   * replicas times its context-parallel size.
   *
   * @param c the configuration
   * @return {@code DP x CP}
   */
  static int shardGroup(ParallelConfig c) {
    return Math.multiplyExact(c.dataParallel(), c.contextParallel());
  }

  /**
   * The ZeRO stage meshplan prices a configuration with: its own when the data x context-parallel
   * group has more than one GPU, and none otherwise ({@code PlanSimulator} shards over that
   * group).
   *
   * @param c the configuration
   * @return the ZeRO stage the simulation of {@code c} has
   */
  static int pricedZero(ParallelConfig c) {
    return shardGroup(c) > 1 ? c.zeroStage() : 0;
  }

  /**
   * The shard group in words, for a file's header.
   *
   * @param c the configuration
   * @return for example {@code 8 ranks} or {@code dp 2 x cp 4 = 8 ranks}
   */
  static String shardRanks(ParallelConfig c) {
    return c.contextParallel() == 1 ? c.dataParallel() + " ranks"
        : "dp " + c.dataParallel() + " x cp " + c.contextParallel() + " = " + shardGroup(c)
            + " ranks";
  }

  /**
   * The GPU split in words, the context degree named only where it is above 1.
   *
   * @param c the configuration
   * @return for example {@code tensor 2 x pipeline 1 x context 4 x data 2}
   */
  static String split(ParallelConfig c) {
    return "tensor " + c.tensorParallel() + " x pipeline " + c.pipelineParallel()
        + (c.contextParallel() > 1 ? " x context " + c.contextParallel() : "") + " x data "
        + c.dataParallel();
  }

  /**
   * Why the ring form has no torchtitan file.
   *
   * @return one sentence
   */
  /**
   * Why torchtitan cannot run head-parallel (Ulysses) context parallelism: its context
   * parallelism shards the sequence and exchanges keys and values only; its {@code alltoall}
   * rotation (v0.2.2) passes them round as the ring does, and never trades sequence shares for
   * heads.
   *
   * @param c the configuration
   * @return the reason, when it asks for it
   */
  static Optional<String> noHeadSplit(ParallelConfig c) {
    return c.contextParallel() > 1 && c.cpExchange() == ContextExchange.ALL_TO_ALL
        ? Optional.of("torchtitan's context parallelism shards the sequence and moves keys and "
            + "values; it has no head-parallel (Ulysses, --cp-comm-type a2a) exchange")
        : Optional.empty();
  }

  static String noRing() {
    return "torchtitan all-gathers a sequence's keys and values over its context-parallel ranks"
        + " (main: FlexAttention, models/common/attention.py:795-799; v0.2.2: PyTorch's"
        + " allgather rotation, config/job_config.py:446); it has no ring passing them from rank"
        + " to rank (the p2p form)";
  }

  /**
   * Why context parallelism with replicated weights has no torchtitan file.
   *
   * @param c the configuration
   * @return one sentence
   */
  static String noReplicas(ParallelConfig c) {
    return "torchtitan shards weights with FSDP over its " + shardRanks(c) + " whenever"
        + " context parallelism is on (fsdp_enabled, distributed/parallel_dims.py:644-645); it"
        + " has no context parallelism with replicated weights (ZeRO-0)";
  }
}
