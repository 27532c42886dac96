package io.meshplan.interop.hlo;

import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.MemoryBreakdown;
import io.meshplan.sim.SimulationText;
import java.util.Locale;

/**
 * Writes the pipeline plan of an HLO training step for people: the layers found, one line per
 * stage (layers, submesh, devices, logical mesh, time and memory), the layouts of each stage's
 * largest weights, then the simulation with the throughput in microbatches.
 */
public final class HloPlanText {
  private static final double GIB = 1024.0 * 1024 * 1024;
  private static final double MIB = 1024.0 * 1024;
  /** Layers named one per line; a longer stack shows its first and last halves of these. */
  private static final int LISTED_LAYERS = 16;

  private HloPlanText() {}

  /**
   * Renders a plan.
   *
   * @param plan the plan
   * @return lines ending with a newline
   */
  public static String write(HloPipelinePlan plan) {
    StringBuilder out = new StringBuilder();
    int gpus = 0;
    for (HloPipelinePlan.Stage s : plan.stages()) {
      gpus += s.cost().devices();
    }
    line(out, "plan for HLO module %s (%d layers) on %s, %d GPUs", plan.module(),
        plan.layerNames().size(), plan.cluster(), gpus);
    line(out, "one microbatch per call of the module, %d microbatches per iteration",
        plan.microbatches());
    int layers = plan.layerNames().size();
    for (int k = 0; k < layers; k++) {
      if (layers > LISTED_LAYERS && k == LISTED_LAYERS / 2) {
        // Long stacks: the first and last layers; --json lists them all.
        line(out, "... %d more layers ...", layers - 2 * (LISTED_LAYERS / 2));
        k = layers - LISTED_LAYERS / 2 - 1;
        continue;
      }
      line(out, "layer %d: %s", k, plan.layerNames().get(k));
    }
    out.append('\n');
    line(out, "%-5s %-9s %-7s %-9s %-6s %-9s %-9s %-11s %-11s %-8s", "stage", "layers", "submesh",
        "devices", "mesh", "fwd ms", "bwd ms", "state MiB", "act MiB", "peak GiB");
    for (int i = 0; i < plan.stages().size(); i++) {
      HloPipelinePlan.Stage s = plan.stages().get(i);
      MemoryBreakdown m = s.cost().memory();
      line(out, "%-5d %-9s %-7s %-9s %-6s %-9.3f %-9.3f %-11.2f %-11.2f %-8.2f", i,
          s.firstLayer() + "-" + s.lastLayer(), s.submesh(),
          s.firstDevice() + "-" + (s.firstDevice() + s.cost().devices() - 1),
          s.dataParallel() + "x" + s.tensorParallel(), 1e3 * s.cost().forwardSeconds(),
          1e3 * s.cost().backwardSeconds(), (m.weightsBytes() + m.gradientsBytes()
              + m.optimizerStateBytes()) / MIB, m.activationBytesPerMicrobatch() / MIB,
          plan.simulation().stages().get(i).memory().totalBytes() / GIB);
    }
    line(out, "(mesh: data-parallel x tensor-parallel; fwd/bwd: one microbatch; state: weights, "
        + "gradients and optimizer state per GPU; act: activations one microbatch keeps per GPU)");
    out.append('\n');
    line(out, "largest weights and their layouts over each stage's mesh:");
    for (int i = 0; i < plan.stages().size(); i++) {
      HloPipelinePlan.Stage s = plan.stages().get(i);
      line(out, "stage %d (%dx%d):", i, s.dataParallel(), s.tensorParallel());
      for (TensorSharding t : s.tensors()) {
        line(out, "  %-36s %-18s %-48s %s", t.name(), t.shape(), t.words(), t.sharding());
      }
    }
    out.append('\n');
    out.append(SimulationText.write(plan.simulation(), "microbatches"));
    HloPipelinePlan.Stats st = plan.stats();
    line(out, "search: %d layer solves (%d distinct layers on %d logical meshes), 1 stage DP "
        + "run (%d values of t_max)", st.layerSolves(), st.distinctLayers(), st.meshes(),
        st.latenciesTried());
    return out.toString();
  }

  private static void line(StringBuilder out, String format, Object... args) {
    out.append(String.format(Locale.ROOT, format, args)).append('\n');
  }
}
