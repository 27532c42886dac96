package io.meshplan.interop;


import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.plan.StagePlan;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.SimulationText;
import io.meshplan.util.Words;
import java.util.Locale;

/**
 * Writes a plan for people: one line per stage (layers, submesh, logical mesh, time, memory; under
 * the interleaved schedule the layer ranges of all the stage's chunks and their summed times), the
 * layouts of each stage's largest weights in words and in XLA notation, then the simulation. A
 * plan of an HLO module also lists the module's layers, and counts its throughput in microbatches.
 */
public final class PlanText {
  private static final double GIB = 1024.0 * 1024 * 1024;
  /** Layers of a module named one per line; a longer stack shows its first and last halves. */
  private static final int LISTED_LAYERS = 16;

  private PlanText() {}

  /**
   * Renders a plan and its simulation.
   *
   * @param plan the plan
   * @param sim the simulation of the plan
   * @return lines ending with a newline
   */
  public static String write(PipelinePlan plan, SimulationResult sim) {
    return write(plan, sim, java.util.Optional.empty());
  }

  /**
   * Renders a plan and its simulation, with the 90% interval of its predicted iteration time.
   *
   * @param plan the plan
   * @param sim the simulation of the plan
   * @param band the interval, or empty where the prices give none
   * @return lines ending with a newline
   */
  public static String write(PipelinePlan plan, SimulationResult sim,
      java.util.Optional<io.meshplan.sim.PredictionBand> band) {
    if (plan.source() instanceof PlanSource.HloModule h) {
      return writeModule(plan, h, sim, band);
    }
    StringBuilder out = new StringBuilder();
    var m = plan.model();
    line(out, "plan for %s (%.1fB parameters, %s%s, seq %d) on %s, %s", m.name(),
        m.parameterCount() / 1e9, m.arch().moe().routed() ? String.format(Locale.ROOT,
        "%.1fB active, ", m.activeParameterCount() / 1e9) : "",
        Words.count(m.layers(), "layer"), m.seq(), plan.cluster(),
        Words.count(plan.gpus(), "GPU"));
    line(out, "global batch %d = %s of %s; %s attention", plan.globalBatchSize(),
        Words.count(plan.microbatches(), "microbatch"),
        Words.count(plan.microbatchSequences(), "sequence"), plan.attention().label());
    if (plan.virtualStages() > 1) {
      line(out, "interleaved 1F1B: each stage runs %s (the layer ranges below)",
          Words.count(plan.virtualStages(), "model chunk"));
    }
    out.append('\n');
    int width = layersWidth(plan);
    String head = "%-5s %-" + width + "s %-7s %-9s %-6s %-3s %-9s %-3s %-4s %-9s %-9s %-8s";
    line(out, head, "stage", "layers", "submesh", "devices", "mesh", "mb", "recompute", "sp",
        "zero", "fwd ms", "bwd ms", "peak GiB");
    String row = "%-5d %-" + width + "s %-7s %-9s %-6s %-3d %-9s %-3s %-4s %-9.2f %-9.2f %-8.2f";
    for (int i = 0; i < plan.pipelineStages(); i++) {
      StagePlan s = plan.stages().get(i);
      double[] fb = forwardBackward(plan, i);
      line(out, row, i, plan.layersOf(i), s.submeshNodes() + "x" + s.submeshGpus(),
          devices(s), mesh(s), plan.microBatchSize(s),
          s.recomputeLabel(), s.sequenceParallel() ? "on" : "off",
          s.zeroStage() + (s.shardGroup() > 0 ? "/" + s.shardGroup() : ""),
          1e3 * fb[0], 1e3 * fb[1], s.peakMemoryBytes() / GIB);
    }
    StagePlan s0 = plan.stages().get(0);
    line(out, "(mesh: data-parallel x %stensor-parallel; mb: sequences per microbatch per replica;",
        s0.contextParallel() > 1 ? "context-parallel x " : "");
    boolean hybrid = plan.stages().stream().anyMatch(st -> st.shardGroup() > 0);
    boolean partial = plan.stages().stream().anyMatch(st -> st.recomputeLayers() > 0);
    line(out, " fwd/bwd: one microbatch; zero: ZeRO stage over the data-parallel group%s%s)",
        hybrid ? ";\n 3/G: sharded inside groups of G replicas, replicated across them (HSDP)" : "",
        partial ? ";\n full K/N: the first K of the stage's N layers recomputed, the rest keeping"
            + " their activations" : "");
    if (s0.contextParallel() > 1) {
      line(out, "context parallelism: each sequence split over %d GPUs, %s",
          s0.contextParallel(), switch (s0.cpExchange()) {
            case ALL_GATHER -> "keys and values all-gathered before the attention";
            case ALL_TO_ALL -> "all-to-alls trading sequence shares for heads around the "
                + "attention (Ulysses)";
            case P2P -> "keys and values passed round a ring under the attention";
          });
    }
    if (s0.expertParallel() > 1 || s0.expertTensorParallel() > 1
        || m.arch().moe().routed()) {
      long gpus = (long) s0.dataParallel() * s0.contextParallel() * s0.tensorParallel();
      line(out, "experts: %d per GPU (expert-parallel %d x expert tensor-parallel %d; expert"
          + " gradients reduced over %d GPUs)", m.arch().moe().experts() / s0.expertParallel(),
          s0.expertParallel(), s0.expertTensorParallel(),
          gpus / ((long) s0.expertParallel() * s0.expertTensorParallel()));
    }
    out.append('\n');
    line(out, "largest weights of one replica and their layouts over its %s:", "tensor-parallel "
        + "GPUs");
    weights(out, plan, "  %-30s %-22s %-32s %s");
    out.append('\n');
    out.append(SimulationText.write(sim, "tokens", java.util.Optional.empty(), band));
    return out.toString();
  }

  /** A stage's mesh: data x tensor parallelism, with context parallelism between them. */
  private static String mesh(StagePlan s) {
    return s.dataParallel() + "x" + (s.contextParallel() > 1 ? s.contextParallel() + "x" : "")
        + s.tensorParallel();
  }

  /**
   * The plan of an HLO training step: the module's layers, one line per stage, the layouts of
   * each stage's largest weights over its whole mesh, and the simulation counted in microbatches
   * (calls of the module).
   */
  private static String writeModule(PipelinePlan plan, PlanSource.HloModule h,
      SimulationResult sim,
      java.util.Optional<io.meshplan.sim.PredictionBand> band) {
    StringBuilder out = new StringBuilder();
    line(out, "plan for HLO module %s (%s) on %s, %s", h.module(),
        Words.count(h.layers(), "layer"), plan.cluster(), Words.count(plan.gpus(), "GPU"));
    line(out, "module %s, SHA-256 %s", h.path(), h.sha256());
    line(out, "one microbatch per call of the module, %s per iteration",
        Words.count(plan.microbatches(), "microbatch"));
    int layers = h.layers();
    for (int k = 0; k < layers; k++) {
      if (layers > LISTED_LAYERS && k == LISTED_LAYERS / 2) {
        // Long stacks: the first and last layers; --json lists them all.
        line(out, "... %s more ...", Words.count(layers - 2 * (LISTED_LAYERS / 2), "layer"));
        k = layers - LISTED_LAYERS / 2 - 1;
        continue;
      }
      line(out, "layer %d: %s", k, h.layerNames().get(k));
    }
    out.append('\n');
    int width = layersWidth(plan);
    line(out, "%-5s %-" + width + "s %-7s %-9s %-6s %-9s %-9s %-8s", "stage", "layers",
        "submesh", "devices", "mesh", "fwd ms", "bwd ms", "peak GiB");
    for (int i = 0; i < plan.pipelineStages(); i++) {
      StagePlan s = plan.stages().get(i);
      double[] fb = forwardBackward(plan, i);
      line(out, "%-5d %-" + width + "s %-7s %-9s %-6s %-9.3f %-9.3f %-8.2f", i, plan.layersOf(i),
          s.submeshNodes() + "x" + s.submeshGpus(), devices(s),
          s.dataParallel() + "x" + s.tensorParallel(), 1e3 * fb[0], 1e3 * fb[1],
          s.peakMemoryBytes() / GIB);
    }
    line(out, "(mesh: data-parallel x tensor-parallel; fwd/bwd: one microbatch)");
    out.append('\n');
    line(out, "largest weights and their layouts over each stage's mesh:");
    weights(out, plan, "  %-36s %-18s %-48s %s");
    out.append('\n');
    out.append(SimulationText.write(sim, "microbatches", java.util.Optional.empty(), band));
    return out.toString();
  }

  private static int layersWidth(PipelinePlan plan) {
    int width = 9;
    for (int i = 0; i < plan.pipelineStages(); i++) {
      width = Math.max(width, plan.layersOf(i).length());
    }
    return width;
  }

  /** A pipeline stage's forward and backward seconds: the sums over its chunks. */
  private static double[] forwardBackward(PipelinePlan plan, int stage) {
    double fwd = 0;
    double bwd = 0;
    for (StagePlan c : plan.chunksOf(stage)) {
      fwd += c.forwardSeconds();
      bwd += c.backwardSeconds();
    }
    return new double[] {fwd, bwd};
  }

  private static String devices(StagePlan s) {
    return s.firstDevice() + "-" + (s.firstDevice() + s.devices() - 1);
  }

  /** Each stage's weights, a stage with the same lines as the one before left out. */
  private static void weights(StringBuilder out, PipelinePlan plan, String format) {
    String last = null;
    for (int i = 0; i < plan.pipelineStages(); i++) {
      StagePlan s = plan.stages().get(i);
      String text = tensorLines(s, format);
      if (text.equals(last)) {
        continue;
      }
      line(out, "stage %d (%dx%d):", i, s.dataParallel(), s.tensorParallel());
      out.append(text);
      last = text;
    }
  }

  private static String tensorLines(StagePlan s, String format) {
    StringBuilder b = new StringBuilder();
    for (TensorSharding t : s.tensors()) {
      line(b, format, t.name(), t.shape(), t.words(), t.sharding());
    }
    return b.toString();
  }

  private static void line(StringBuilder out, String format, Object... args) {
    out.append(String.format(Locale.ROOT, format, args).stripTrailing()).append('\n');
  }
}
