package io.meshplan.report;

import static io.meshplan.report.HtmlWriter.fmt;

import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageResult;
import io.meshplan.sim.TimeBreakdown;

/**
 * Draws where each stage's iteration goes, as one horizontal bar per stage: compute (without
 * recomputation), recomputation, exposed communication, bubble and optimizer. The parts of a bar
 * add up to the iteration time ({@link TimeBreakdown}).
 */
final class BreakdownChart {
  static final String[] PARTS = {"compute", "recompute", "exposed communication", "bubble",
      "optimizer"};
  private static final int WIDTH = 1200;
  private static final int LEFT = 90;
  private static final int ROW = 18;

  private BreakdownChart() {}

  static double[] parts(TimeBreakdown b) {
    return new double[] {Math.max(0, b.computeSeconds() - b.recomputeSeconds()),
        b.recomputeSeconds(), b.exposedCommunicationSeconds(), b.bubbleSeconds(),
        b.optimizerSeconds()};
  }

  static void draw(HtmlWriter w, SimulationResult sim, String id) {
    int groups = sim.stages().size();
    double total = sim.iterationSeconds() > 0 ? sim.iterationSeconds() : 1;
    double plot = WIDTH - LEFT - 10;
    int height = groups * ROW + 30;
    w.open("svg", "id", id, "class", "chart", "xmlns", "http://www.w3.org/2000/svg",
        "viewBox", fmt("0 0 %d %d", WIDTH, height), "role", "img",
        "aria-label", "time breakdown by stage");
    for (StageResult s : sim.stages()) {
      int y = s.group() * ROW + 2;
      w.element("text", "stage " + s.group(), "x", "4", "y", Integer.toString(y + 12), "class",
          "label");
      double[] parts = parts(s.timing().breakdown());
      double x = LEFT;
      for (int p = 0; p < parts.length; p++) {
        double wd = parts[p] / total * plot;
        w.empty("rect", "x", fmt("%.2f", x), "y", Integer.toString(y), "width", fmt("%.2f", wd),
            "height", Integer.toString(ROW - 4), "fill", Palette.TIME[p], "class", "time",
            "data-part", PARTS[p], "data-seconds", fmt("%.6e", parts[p]), "data-tip",
            "stage " + s.group() + " " + PARTS[p] + ": " + fmt("%.4f s (%.1f%%)", parts[p],
                100 * parts[p] / total));
        x += wd;
      }
    }
    double lx = LEFT;
    int ly = groups * ROW + 10;
    for (int p = 0; p < PARTS.length; p++) {
      w.empty("rect", "x", fmt("%.0f", lx), "y", Integer.toString(ly), "width", "12", "height",
          "12", "fill", Palette.TIME[p]);
      w.element("text", PARTS[p], "x", fmt("%.0f", lx + 16), "y", Integer.toString(ly + 10),
          "class", "small");
      lx += 180;
    }
    w.close("svg");
  }
}
