package io.meshplan.export;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.Require;
import io.meshplan.util.ShellQuote;
import java.util.Optional;

/**
 * A torchtitan job TOML ({@code [parallelism]}, {@code [training]}, {@code
 * [activation_checkpoint]}) for a parallel configuration, in the field names of torchtitan's
 * release v0.2.2 ({@code torchtitan/config/job_config.py}; its main branch has since replaced the
 * TOML job config). torchtitan composes FSDP2 or DDP, tensor parallelism (always with sequence
 * parallelism on the norms and dropouts) and pipeline parallelism.
 *
 * <p>The ZeRO stage maps to torchtitan's two data-parallel degrees as its {@code Parallelism}
 * docstrings define them:
 *
 * <ul>
 *   <li>ZeRO-3: FSDP, {@code data_parallel_shard_degree} = the data-parallel size and {@code
 *       data_parallel_replicate_degree} = 1, with {@code fsdp_reshard_after_forward = "always"}
 *       so that every microbatch gathers the weights for its forward and again for its backward,
 *       as the simulator prices ZeRO-3 (torchtitan's default keeps them gathered between the two
 *       under a pipeline, which needs more memory);
 *   <li>ZeRO-0: DDP, {@code data_parallel_replicate_degree} = the data-parallel size and {@code
 *       data_parallel_shard_degree} = 1; torchtitan applies DDP only when data parallelism is the
 *       only parallelism ({@code parallelize.py}: "DDP has not supported &gt; 1D parallelism"),
 *       so ZeRO-0 with tensor or pipeline parallelism is not expressible;
 *   <li>ZeRO-1 (Megatron-LM's distributed optimizer) is not expressible: torchtitan has no
 *       optimizer-only sharding. Both shard degrees above 1 is HSDP, FSDP inside each shard group
 *       and replication across groups, which still shards the weights.
 * </ul>
 *
 * The nearest expressible input of ZeRO-0 and ZeRO-1 is ZeRO-3 on the same layout: sharding more
 * never needs more memory per GPU. With a data-parallel size of 1 there is nothing to shard and
 * both degrees are 1. Tensor parallelism without sequence parallelism and f16 mixed precision
 * (torchtitan's is bf16 or f32) are not expressible either.
 */
public final class TorchtitanToml implements FrameworkWriter {
  private static final TomlMapper TOML = new TomlMapper();

  /** Creates the writer; it holds no state. */
  public TorchtitanToml() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    ParallelConfig c = input.config();
    if (input.model().family() != ModelSpec.Family.LLAMA) {
      return Optional.of("torchtitan trains transformer language models; "
          + input.model().name() + " is not one");
    }
    if (c.tensorParallel() > 1 && !c.sequenceParallel()) {
      return Optional.of("torchtitan always uses sequence parallelism with tensor parallelism;"
          + " it has no tensor parallelism without it");
    }
    if (c.dataParallel() > 1 && c.zeroStage() == 1) {
      return Optional.of("torchtitan has no optimizer-only sharding (ZeRO-1, Megatron-LM's"
          + " distributed optimizer): its data-parallel sharding (FSDP) also shards weights and"
          + " gradients");
    }
    if (c.dataParallel() > 1 && c.zeroStage() == 0
        && (c.tensorParallel() > 1 || c.pipelineParallel() > 1)) {
      return Optional.of("torchtitan replicates weights (DDP, ZeRO-0) only when data"
          + " parallelism is its only parallelism (\"DDP has not supported > 1D parallelism\");"
          + " with tensor or pipeline parallelism its data parallelism is FSDP (ZeRO-3)");
    }
    if (input.model().dtype() == DType.F16) {
      return Optional.of("torchtitan's mixed precision is bf16 or f32, not f16");
    }
    return Optional.empty();
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    if (input.model().family() != ModelSpec.Family.LLAMA) {
      return Optional.empty();
    }
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    boolean ddp = c.zeroStage() == 0 && c.tensorParallel() == 1 && c.pipelineParallel() == 1;
    ParallelConfig n = new ParallelConfig(c.tensorParallel(), c.pipelineParallel(),
        c.dataParallel(), c.virtualStages(), c.microBatchSize(), c.globalBatchSize(),
        c.recompute(), c.tensorParallel() > 1, c.dataParallel() == 1 || ddp ? c.zeroStage() : 3);
    ModelSpec nm = m.dtype() != DType.F16 ? m : new ModelSpec(m.name(), m.family(), m.layers(),
        m.hidden(), m.heads(), m.kvHeads(), m.ffn(), m.vocab(), m.seq(), m.batch(), DType.BF16,
        m.arch());
    return Optional.of(new ExportInput(nm, input.cluster(), n));
  }

  @Override
  public String write(ExportInput input) {
    Require.that(missing(input).isEmpty(), missing(input).orElse(""));
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    ObjectNode root = TOML.createObjectNode();
    ObjectNode p = root.putObject("parallelism");
    boolean fsdp = c.dataParallel() > 1 && c.zeroStage() == 3;
    p.put("data_parallel_replicate_degree", fsdp ? 1 : c.dataParallel());
    p.put("data_parallel_shard_degree", fsdp ? c.dataParallel() : 1);
    if (fsdp) {
      p.put("fsdp_reshard_after_forward", "always");
    }
    p.put("tensor_parallel_degree", c.tensorParallel());
    p.put("context_parallel_degree", 1);
    p.put("pipeline_parallel_degree", c.pipelineParallel());
    if (c.pipelineParallel() > 1) {
      p.put("pipeline_parallel_schedule", c.virtualStages() > 1 ? "Interleaved1F1B" : "1F1B");
      p.put("pipeline_parallel_layers_per_stage",
          m.layers() / (c.pipelineParallel() * c.virtualStages()));
      p.put("pipeline_parallel_microbatch_size", c.microBatchSize());
    }
    ObjectNode t = root.putObject("training");
    // torchtitan accumulates gradients over global / (local * dp) steps. With a pipeline, the
    // local batch is the rank's whole share, split into microbatches by the schedule; without
    // one, the local batch is the microbatch and accumulation supplies the rest.
    t.put("local_batch_size", c.pipelineParallel() > 1
        ? c.globalBatchSize() / c.dataParallel() : c.microBatchSize());
    t.put("global_batch_size", c.globalBatchSize());
    t.put("seq_len", m.seq());
    t.put("mixed_precision_param", m.dtype() == DType.BF16 ? "bfloat16" : "float32");
    ObjectNode ac = root.putObject("activation_checkpoint");
    ac.put("mode", c.recompute().label());
    if (c.recompute() == Recompute.SELECTIVE) {
      ac.put("selective_ac_option", "op");
    }
    StringBuilder sb = new StringBuilder();
    sb.append("# torchtitan job configuration written by meshplan export\n");
    sb.append("# model ").append(ShellQuote.commentText(m.name())).append(" (layers ")
        .append(m.layers()).append(", hidden ").append(m.hidden()).append(", heads ")
        .append(m.heads()).append(", kv heads ").append(m.kvHeads()).append(", ffn ")
        .append(m.ffn()).append(", vocab ").append(m.vocab()).append(") on ")
        .append(input.cluster().toShortString()).append(": choose the [model] flavor with these"
            + " dimensions\n");
    sb.append("# ").append(c.gpus()).append(" GPUs = tensor ").append(c.tensorParallel())
        .append(" x pipeline ").append(c.pipelineParallel()).append(" x data ")
        .append(c.dataParallel()).append("; launch with torchrun over all of them\n");
    if (c.dataParallel() > 1) {
      sb.append(fsdp ? "# data parallelism: FSDP (ZeRO-3) over " + c.dataParallel()
          + " ranks, weights gathered for every microbatch's forward and backward\n"
          : "# data parallelism: DDP (ZeRO-0) over " + c.dataParallel() + " replicas\n");
    }
    if (c.recompute() == Recompute.SELECTIVE) {
      sb.append("# selective: torchtitan's op-level policy keeps matmul outputs and recomputes"
          + " the rest, close to Megatron-LM's attention-core recompute\n");
    }
    // One table per section, written as [name] with its scalar keys below it; the TOML library
    // writes (and quotes) every key and value.
    for (var section : root.properties()) {
      sb.append('\n').append('[').append(section.getKey()).append("]\n");
      try {
        sb.append(TOML.writeValueAsString(section.getValue()));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("cannot write TOML", e);
      }
    }
    return sb.toString();
  }
}
