package io.meshplan.report;

import static io.meshplan.report.HtmlWriter.fmt;

/**
 * Draws the effective training time ratio against cluster size: the plan's run ({@link
 * TrainingRun#ettrAt}) on 1/16 to 16 times its GPUs, in powers of two, the plan's own point
 * marked. The other sizes assume the iteration time scales ideally with the GPUs, which a plan
 * of that size may not reach; the curve shows what interruptions alone cost.
 */
final class EttrChart {
  private static final int WIDTH = 720;
  private static final int HEIGHT = 260;
  private static final int LEFT = 60;
  private static final int BOTTOM = 40;

  private EttrChart() {}

  static void draw(HtmlWriter w, TrainingRun run, String id) {
    double[] factors = {1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1, 2, 4, 8, 16};
    java.util.List<double[]> points = new java.util.ArrayList<>();
    for (double f : factors) {
      double gpus = run.gpus() * f;
      if (gpus >= 1) {
        double e = run.ettrAt(f);
        if (Double.isFinite(e)) {
          points.add(new double[] {gpus, e});
        }
      }
    }
    double plotW = WIDTH - LEFT - 20;
    double plotH = HEIGHT - BOTTOM - 20;
    double minLog = Math.log(points.get(0)[0]);
    double maxLog = Math.log(points.get(points.size() - 1)[0]);
    double span = Math.max(maxLog - minLog, 1e-9);
    w.open("svg", "id", id, "class", "chart", "xmlns", "http://www.w3.org/2000/svg",
        "viewBox", fmt("0 0 %d %d", WIDTH, HEIGHT), "role", "img",
        "aria-label", "effective training time ratio against GPUs");
    for (int pct = 0; pct <= 100; pct += 25) {
      double y = 10 + plotH * (1 - pct / 100.0);
      w.empty("line", "x1", Integer.toString(LEFT), "x2", fmt("%.1f", LEFT + plotW), "y1",
          fmt("%.1f", y), "y2", fmt("%.1f", y), "stroke", "#ddd");
      w.element("text", pct + "%", "x", "8", "y", fmt("%.1f", y + 4), "class", "small");
    }
    StringBuilder line = new StringBuilder();
    for (double[] p : points) {
      double x = LEFT + plotW * (Math.log(p[0]) - minLog) / span;
      double y = 10 + plotH * (1 - p[1]);
      line.append(fmt("%.1f,%.1f ", x, y));
      boolean own = Math.abs(p[0] - run.gpus()) < 0.5;
      w.empty("circle", "cx", fmt("%.1f", x), "cy", fmt("%.1f", y), "r", own ? "6" : "4",
          "fill", own ? Palette.TIME[0] : "#555", "class", "ettr", "data-gpus",
          fmt("%.0f", p[0]), "data-ettr", fmt("%.6f", p[1]), "data-tip",
          fmt("%.0f GPUs: ETTR %.1f%%", p[0], 100 * p[1]) + (own ? " (this plan)" : ""));
      w.element("text", fmt("%.0f", p[0]), "x", fmt("%.1f", x - 10), "y",
          Integer.toString(HEIGHT - BOTTOM + 18), "class", "small");
    }
    w.empty("polyline", "points", line.toString().trim(), "fill", "none", "stroke", "#555");
    w.element("text", "GPUs (log scale); ETTR = productive / expected wall-clock time", "x",
        Integer.toString(LEFT), "y", Integer.toString(HEIGHT - 4), "class", "small");
    w.close("svg");
  }
}
