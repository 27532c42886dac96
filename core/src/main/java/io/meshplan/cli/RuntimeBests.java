package io.meshplan.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.interop.PlanResult;
import io.meshplan.interop.RuntimeBest;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.util.ShellQuote;
import java.util.List;
import java.util.Locale;

/**
 * {@code plan}'s comparison of its plan with the best plan each framework launches: the lines
 * under the text plan, and the {@code frameworks} object of the plan JSON (an object per
 * framework: {@code launchable}, and either {@code iterationSeconds}, {@code tokensPerSecond},
 * {@code mfu}, {@code peakMemoryBytesPerGpu}, {@code stages}, {@code attention}, {@code slowdown} (its iteration over
 * the plan's, minus 1) and {@code samePlan}, or the {@code reason} it has none).
 */
final class RuntimeBests {

  private RuntimeBests() {}

  /**
   * The text lines.
   *
   * @param plan the plan shown
   * @param bests each framework's best
   * @return the lines, each ending in a newline
   */
  static String text(PipelinePlan plan, List<RuntimeBest> bests) {
    double t = plan.prediction().iterationSeconds();
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "best plan each framework launches, against this plan's %.4f s:%n", t));
    int width = 0;
    for (RuntimeBest b : bests) {
      width = Math.max(width, b.label().length());
    }
    for (RuntimeBest b : bests) {
      String label = String.format(Locale.ROOT, "  %-" + width + "s  ", b.label());
      if (b.plan().isEmpty()) {
        wrap(sb, label + "none: " + ShellQuote.commentText(b.whyNone()), width + 4);
        continue;
      }
      PipelinePlan p = b.plan().get().plan();
      double s = p.prediction().iterationSeconds();
      sb.append(label).append(String.format(Locale.ROOT, "%.4f s, %+.1f%%", s,
          100 * (s / t - 1)));
      if (p.attention() != plan.attention()) {
        sb.append(", ").append(p.attention().label()).append(" attention");
      }
      sb.append(p == plan ? " (this plan) -- export --to " + b.label() + "\n"
          : " -- export with plan --for " + b.label() + "\n");
    }
    return sb.toString();
  }

  /** The most characters of a line before it wraps. */
  private static final int WIDTH = 100;

  /** Appends a line wrapped at spaces to {@link #WIDTH}, later lines indented. */
  private static void wrap(StringBuilder sb, String line, int indent) {
    String rest = line;
    while (rest.length() > WIDTH) {
      int cut = rest.lastIndexOf(' ', WIDTH);
      if (cut <= indent) {
        break;
      }
      sb.append(rest, 0, cut).append('\n');
      rest = " ".repeat(indent) + rest.substring(cut + 1);
    }
    sb.append(rest).append('\n');
  }

  /**
   * The plan JSON with the {@code frameworks} object added (and {@code for}, when the plan was
   * made for one framework).
   *
   * @param planJson the plan's JSON text
   * @param plan the plan
   * @param bests each framework's best, empty for none
   * @param forLabel the framework the plan was made for, or null
   * @return the JSON text, ending in a newline
   */
  static String json(String planJson, PipelinePlan plan, List<RuntimeBest> bests,
      String forLabel) {
    if (bests.isEmpty() && forLabel == null) {
      return planJson;
    }
    return JsonEdit.edit(planJson, root -> {
      if (forLabel != null) {
        root.put("for", forLabel);
      }
      if (!bests.isEmpty()) {
        ObjectNode fw = root.putObject("frameworks");
        for (RuntimeBest b : bests) {
          put(fw.putObject(b.label()), plan, b);
        }
      }
    });
  }

  private static void put(ObjectNode o, PipelinePlan plan, RuntimeBest b) {
    o.put("launchable", b.plan().isPresent());
    if (b.plan().isEmpty()) {
      o.put("reason", b.whyNone());
      return;
    }
    PlanResult.Planned planned = b.plan().get();
    PipelinePlan.Prediction p = planned.plan().prediction();
    o.put("iterationSeconds", p.iterationSeconds());
    o.put("tokensPerSecond", p.tokensPerSecond());
    o.put("mfu", p.mfu());
    o.put("peakMemoryBytesPerGpu", p.peakMemoryBytesPerGpu());
    o.put("stages", planned.plan().stages().size());
    o.put("attention", planned.plan().attention().label());
    o.put("slowdown", p.iterationSeconds() / plan.prediction().iterationSeconds() - 1);
    o.put("samePlan", planned.plan() == plan);
  }
}
