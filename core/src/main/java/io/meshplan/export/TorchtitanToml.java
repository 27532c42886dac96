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
 * [activation_checkpoint]}) for a parallel configuration. torchtitan composes FSDP2/DDP, tensor
 * parallelism (always with sequence parallelism on the norms and dropouts) and pipeline
 * parallelism, so two Megatron-LM options have no torchtitan form: tensor parallelism without
 * sequence parallelism, and a distributed optimizer that shards only optimizer state (ZeRO-1;
 * torchtitan's data-parallel sharding is FSDP, which shards parameters and gradients too). Its
 * mixed precision is bf16 or f32.
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
    if (c.distributedOptimizer()) {
      return Optional.of("torchtitan has no optimizer-only sharding (Megatron-LM's distributed"
          + " optimizer, ZeRO-1): its data-parallel sharding (FSDP) also shards parameters and"
          + " gradients");
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
    ParallelConfig n = new ParallelConfig(c.tensorParallel(), c.pipelineParallel(),
        c.dataParallel(), c.virtualStages(), c.microBatchSize(), c.globalBatchSize(),
        c.recompute(), c.tensorParallel() > 1, false);
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
    p.put("data_parallel_replicate_degree", c.dataParallel());
    p.put("data_parallel_shard_degree", 1);
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
