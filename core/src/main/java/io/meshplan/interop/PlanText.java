package io.meshplan.interop;

import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.SimulationText;
import java.util.Locale;

/**
 * Writes a plan for people: one line per stage (layers, submesh, logical mesh, time, memory; under
 * the interleaved schedule the layer ranges of all the stage's chunks and their summed times), the
 * layouts of each stage's largest weights in words and in XLA notation, then the simulation.
 */
public final class PlanText {
  private static final double GIB = 1024.0 * 1024 * 1024;

  private PlanText() {}

  /**
   * Renders a plan and its simulation.
   *
   * @param plan the plan
   * @param sim the simulation of the plan
   * @return lines ending with a newline
   */
  public static String write(PipelinePlan plan, SimulationResult sim) {
    StringBuilder out = new StringBuilder();
    var m = plan.model();
    line(out, "plan for %s (%.1fB parameters, %d layers, seq %d) on %s, %d GPUs", m.name(),
        m.parameterCount() / 1e9, m.layers(), m.seq(), plan.cluster(), plan.gpus());
    line(out, "global batch %d = %d microbatches of %d sequences", plan.globalBatchSize(),
        plan.microbatches(), plan.microbatchSequences());
    if (plan.virtualStages() > 1) {
      line(out, "interleaved 1F1B: each stage runs %d model chunks (the layer ranges below)",
          plan.virtualStages());
    }
    out.append('\n');
    int width = 9;
    for (int i = 0; i < plan.pipelineStages(); i++) {
      width = Math.max(width, plan.layersOf(i).length());
    }
    String head = "%-5s %-" + width + "s %-7s %-9s %-6s %-3s %-9s %-3s %-4s %-9s %-9s %-8s";
    line(out, head, "stage", "layers", "submesh", "devices", "mesh", "mb", "recompute", "sp",
        "zero", "fwd ms", "bwd ms", "peak GiB");
    String row = "%-5d %-" + width + "s %-7s %-9s %-6s %-3d %-9s %-3s %-4d %-9.2f %-9.2f %-8.2f";
    for (int i = 0; i < plan.pipelineStages(); i++) {
      StagePlan s = plan.stages().get(i);
      double fwd = 0;
      double bwd = 0;
      for (StagePlan c : plan.chunksOf(i)) {
        fwd += c.forwardSeconds();
        bwd += c.backwardSeconds();
      }
      line(out, row, i, plan.layersOf(i), s.submeshNodes() + "x" + s.submeshGpus(),
          s.firstDevice() + "-" + (s.firstDevice() + s.devices() - 1),
          s.dataParallel() + "x" + s.tensorParallel(), plan.microBatchSize(s),
          s.recompute().label(), s.sequenceParallel() ? "on" : "off", s.zeroStage(),
          1e3 * fwd, 1e3 * bwd, s.peakMemoryBytes() / GIB);
    }
    line(out, "(mesh: data-parallel x tensor-parallel; mb: sequences per microbatch per replica; "
        + "fwd/bwd: one microbatch; zero: ZeRO stage over the data-parallel group)");
    out.append('\n');
    line(out, "largest weights of one replica and their layouts over its %s:", "tensor-parallel "
        + "GPUs");
    String last = null;
    for (int i = 0; i < plan.pipelineStages(); i++) {
      StagePlan s = plan.stages().get(i);
      String text = tensorLines(s);
      if (text.equals(last)) {
        continue;
      }
      line(out, "stage %d (%dx%d):", i, s.dataParallel(), s.tensorParallel());
      out.append(text);
      last = text;
    }
    out.append('\n');
    out.append(SimulationText.write(sim));
    return out.toString();
  }

  private static String tensorLines(StagePlan s) {
    StringBuilder b = new StringBuilder();
    for (TensorSharding t : s.tensors()) {
      line(b, "  %-30s %-22s %-32s %s", t.name(), t.shape(), t.words(), t.sharding());
    }
    return b.toString();
  }

  private static void line(StringBuilder out, String format, Object... args) {
    out.append(String.format(Locale.ROOT, format, args)).append('\n');
  }
}
