package io.meshplan.interop;

import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.SimulationText;
import java.util.Locale;

/**
 * Writes a plan for people: one line per stage (layers, submesh, logical mesh, time, memory), the
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
    line(out, "global batch %d = %d microbatches x %d sequences per replica; recompute %s; "
        + "sequence parallel %s; %s", plan.globalBatchSize(), plan.microbatches(),
        plan.microBatchSize(), plan.recompute().label(), plan.sequenceParallel() ? "on" : "off",
        switch (plan.zeroStage()) {
          case 1 -> "optimizer state sharded over data-parallel groups (ZeRO-1)";
          case 3 -> "weights, gradients and optimizer state sharded (ZeRO-3/FSDP)";
          default -> "no ZeRO sharding";
        });
    out.append('\n');
    line(out, "%-6s %-11s %-8s %-9s %-7s %-12s %-12s %-9s", "stage", "layers", "submesh",
        "devices", "mesh", "fwd ms/mb", "bwd ms/mb", "peak GiB");
    for (int i = 0; i < plan.stages().size(); i++) {
      StagePlan s = plan.stages().get(i);
      line(out, "%-6d %-11s %-8s %-9s %-7s %-12.2f %-12.2f %-9.2f", i,
          s.firstLayer() + "-" + s.lastLayer(), s.submeshNodes() + "x" + s.submeshGpus(),
          s.firstDevice() + "-" + (s.firstDevice() + s.devices() - 1),
          s.dataParallel() + "x" + s.tensorParallel(), 1e3 * s.forwardSeconds(),
          1e3 * s.backwardSeconds(), s.peakMemoryBytes() / GIB);
    }
    out.append('\n');
    line(out, "layouts on each stage's %s mesh (data-parallel x tensor-parallel):",
        "d x t");
    String last = null;
    for (int i = 0; i < plan.stages().size(); i++) {
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
