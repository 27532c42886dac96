package io.meshplan.intraop;

import io.meshplan.cluster.LogicalMesh;
import java.util.Locale;

/**
 * Writes an {@link IntraOpPlan} for people: one row per instruction (id, name, opcode, shape,
 * strategy, XLA sharding), then the model, mesh, memory, objective and timing lines. With costs,
 * each row also shows its compute, communication and resharding costs in the plan's unit and the
 * bytes one GPU sends per mesh axis. Numbers use {@link Locale#ROOT}.
 */
public final class IntraOpPlanText {
  private static final double GIB = 1L << 30;

  private IntraOpPlanText() {}

  /**
   * Renders a plan.
   *
   * @param model the model or module name
   * @param plan the plan
   * @param totalSeconds wall time of the whole command, seconds
   * @param costs whether to add the per-instruction cost and byte columns
   * @return lines ending with a newline
   */
  public static String write(String model, IntraOpPlan plan, double totalSeconds,
      boolean costs) {
    StringBuilder out = new StringBuilder();
    if (costs) {
      line(out, "%-6s %-22s %-18s %-22s %-48s %-11s %-11s %-11s %-23s %s", "id", "name", "op",
          "shape", "strategy", "compute", "comm", "reshard", "bytes/axis", "sharding");
    } else {
      line(out, "%-6s %-22s %-18s %-22s %-48s %s", "id", "name", "op", "shape", "strategy",
          "sharding");
    }
    for (InstructionCost c : plan.instructions()) {
      if (costs) {
        line(out, "%-6d %-22s %-18s %-22s %-48s %-11.4g %-11.4g %-11.4g %-23s %s", c.id(),
            c.name(), c.op(), c.shape(), c.strategy(), c.compute(), c.communication(),
            c.resharding(), bytes(c.commBytesPerAxis()), c.sharding());
      } else {
        line(out, "%-6d %-22s %-18s %-22s %-48s %s", c.id(), c.name(), c.op(), c.shape(),
            c.strategy(), c.sharding());
      }
    }
    out.append('\n');
    line(out, "model %s: %d instructions, %d decision nodes, %d in the solver core", model,
        plan.instructions().size(), plan.decisionNodes(), plan.coreNodes());
    line(out, "mesh %s, memory %.2f GiB per device, peak %.2f GiB", new LogicalMesh(plan.mesh()),
        plan.memoryPerDeviceBytes() / GIB, plan.peakMemoryBytes() / GIB);
    line(out, "status %s, objective %.6g (compute+communication %.6g, resharding %.6g), lower bound"
        + " %.6g (%s)", plan.status(), plan.objective(), plan.nodeCost(), plan.edgeCost(),
        plan.bound(), plan.unit().label());
    if (costs) {
      line(out, "costs: compute %.6g, communication %.6g, resharding %.6g (%s); bytes sent per "
          + "GPU by mesh axis: %s", plan.computeCost(), plan.communicationCost(),
          plan.reshardingCost(), plan.unit().label(), bytes(plan.commBytesPerAxis()));
    }
    line(out, "time: strategies %.3f s, solve %.3f s, total %.3f s", plan.strategySeconds(),
        plan.solveSeconds(), totalSeconds);
    return out.toString();
  }

  private static String bytes(double[] perAxis) {
    StringBuilder sb = new StringBuilder();
    for (int a = 0; a < perAxis.length; a++) {
      sb.append(a > 0 ? "," : "").append(String.format(Locale.ROOT, "%.4g", perAxis[a]));
    }
    return sb.toString();
  }

  private static void line(StringBuilder out, String format, Object... args) {
    out.append(String.format(Locale.ROOT, format, args)).append('\n');
  }
}
