package io.meshplan.intraop;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.util.Words;
import java.util.Locale;

/**
 * Writes an {@link IntraOpPlan} for people: one row per instruction (id, name, opcode, shape,
 * strategy, XLA sharding), then the model, mesh, memory, objective and timing lines. With costs,
 * each row also shows its compute, communication and resharding costs in the plan's unit and the
 * bytes one GPU sends per mesh axis. Numbers use {@link Locale#ROOT}.
 */
public final class IntraOpPlanText {
  private static final double GIB = 1L << 30;
  /** The widest line of the table without costs, characters. */
  private static final int WIDTH = 120;

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
      for (InstructionCost c : plan.instructions()) {
        line(out, "%-6d %-22s %-18s %-22s %-48s %-11.4g %-11.4g %-11.4g %-23s %s", c.id(),
            c.name(), c.op(), c.shape(), c.strategy(), c.compute(), c.communication(),
            c.resharding(), bytes(c.commBytesPerAxis()), c.sharding());
      }
    } else {
      narrowTable(out, plan);
    }
    out.append('\n');
    line(out, "model %s: %s, %s, %d in the solver core", model,
        Words.count(plan.instructions().size(), "instruction"),
        Words.count(plan.decisionNodes(), "decision node"), plan.coreNodes());
    line(out, "mesh %s, memory %.2f GiB per device, peak %.2f GiB", new LogicalMesh(plan.mesh()),
        plan.memoryPerDeviceBytes() / GIB, plan.peakMemoryBytes() / GIB);
    line(out, "status %s, objective %.6g (%s), lower bound %.6g", plan.status(),
        plan.objective(), plan.unit().label(), plan.bound());
    line(out, "objective = compute+communication %.6g + resharding %.6g", plan.nodeCost(),
        plan.edgeCost());
    if (costs) {
      line(out, "costs: compute %.6g, communication %.6g, resharding %.6g (%s); bytes sent per "
          + "GPU by mesh axis: %s", plan.computeCost(), plan.communicationCost(),
          plan.reshardingCost(), plan.unit().label(), bytes(plan.commBytesPerAxis()));
    }
    line(out, "time: strategies %.3f s, solve %.3f s, total %.3f s", plan.strategySeconds(),
        plan.solveSeconds(), totalSeconds);
    return out.toString();
  }

  /**
   * The instruction table without costs, its columns as wide as their longest entry. A row whose
   * sharding would pass {@link #WIDTH} characters gets it on the lines below, one tuple element
   * per line, so the table stays readable in a terminal.
   */
  private static void narrowTable(StringBuilder out, IntraOpPlan plan) {
    int[] w = {"id".length(), "name".length(), "op".length(), "shape".length(),
        "strategy".length()};
    for (InstructionCost c : plan.instructions()) {
      String[] cells = cells(c);
      for (int i = 0; i < w.length; i++) {
        w[i] = Math.max(w[i], cells[i].length());
      }
    }
    String format = "%-" + w[0] + "s %-" + w[1] + "s %-" + w[2] + "s %-" + w[3] + "s %-" + w[4]
        + "s %s";
    line(out, format, "id", "name", "op", "shape", "strategy", "sharding");
    String indent = " ".repeat(w[0] + 1);
    for (InstructionCost c : plan.instructions()) {
      String[] cells = cells(c);
      String row = String.format(Locale.ROOT, format, cells[0], cells[1], cells[2], cells[3],
          cells[4], c.sharding());
      if (row.length() <= WIDTH) {
        out.append(row).append('\n');
        continue;
      }
      out.append(String.format(Locale.ROOT, format, cells[0], cells[1], cells[2], cells[3],
          cells[4], "").stripTrailing()).append('\n');
      for (String part : tupleParts(c.sharding())) {
        out.append(indent).append("sharding ").append(part).append('\n');
      }
    }
  }

  private static String[] cells(InstructionCost c) {
    return new String[] {Integer.toString(c.id()), c.name(), c.op(), c.shape(), c.strategy()};
  }

  /**
   * A sharding split after each top-level comma of a tuple sharding ({@code {{a}, {b}}} into
   * {@code {{a},} and {@code {b}}}), or whole.
   */
  private static java.util.List<String> tupleParts(String sharding) {
    java.util.List<String> parts = new java.util.ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < sharding.length(); i++) {
      char ch = sharding.charAt(i);
      depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
      if (ch == ',' && depth == 1 && i > 0 && sharding.charAt(i - 1) == '}') {
        parts.add(sharding.substring(start, i + 1));
        start = i + 1;
        while (start < sharding.length() && sharding.charAt(start) == ' ') {
          start++;
        }
      }
    }
    parts.add(sharding.substring(start));
    return parts;
  }

  private static String bytes(double[] perAxis) {
    StringBuilder sb = new StringBuilder();
    for (int a = 0; a < perAxis.length; a++) {
      sb.append(a > 0 ? "," : "").append(String.format(Locale.ROOT, "%.4g", perAxis[a]));
    }
    return sb.toString();
  }

  private static void line(StringBuilder out, String format, Object... args) {
    out.append(String.format(Locale.ROOT, format, args).stripTrailing()).append('\n');
  }
}
