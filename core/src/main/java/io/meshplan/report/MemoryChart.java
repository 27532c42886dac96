package io.meshplan.report;

import static io.meshplan.report.HtmlWriter.fmt;

import io.meshplan.sim.MemoryUse;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageResult;

/**
 * Draws peak memory per GPU of every stage as a stacked bar (weights, gradients, optimizer state,
 * activations, temporaries, from the bottom) against the GPU's capacity (dashed line). Every part
 * carries its size in bytes in {@code data-bytes}, and its height is {@code bytes * scale} with one
 * scale for the chart, so the heights of a bar add up to the stage's peak.
 */
final class MemoryChart {
  static final String[] PARTS = {"weights", "gradients", "optimizer state", "activations",
      "temporaries"};
  private static final int WIDTH = 1200;
  private static final int LEFT = 60;
  private static final int PLOT_H = 240;
  private static final double GIB = 1024.0 * 1024 * 1024;

  private MemoryChart() {}

  static double[] parts(MemoryUse m) {
    return new double[] {m.weightsBytes(), m.gradientsBytes(), m.optimizerStateBytes(),
        m.activationsBytes(), m.temporariesBytes()};
  }

  static void draw(HtmlWriter w, SimulationResult sim, double capacityBytes, String id) {
    int groups = sim.stages().size();
    double top = capacityBytes;
    for (StageResult s : sim.stages()) {
      top = Math.max(top, s.memory().totalBytes());
    }
    double scale = PLOT_H / (top * 1.05);
    double plot = WIDTH - LEFT - 10;
    double slot = plot / groups;
    double bar = Math.min(60, slot * 0.7);
    int height = PLOT_H + 60;
    double base = PLOT_H + 10;
    w.open("svg", "id", id, "class", "chart", "xmlns", "http://www.w3.org/2000/svg",
        "viewBox", fmt("0 0 %d %d", WIDTH, height), "role", "img",
        "aria-label", "peak memory per GPU by stage", "data-scale", fmt("%.6e", scale));
    drawGrid(w, top, scale, base);
    for (StageResult s : sim.stages()) {
      drawBar(w, s, slot, bar, scale, base);
    }
    drawCapacity(w, capacityBytes, scale, base);
    drawLegend(w, base);
    w.close("svg");
  }

  /** Five horizontal grid lines from 0 to the top of the plot, labelled in GiB. */
  private static void drawGrid(HtmlWriter w, double top, double scale, double base) {
    for (int i = 0; i <= 4; i++) {
      double bytes = top * 1.05 * i / 4;
      double y = base - bytes * scale;
      w.empty("line", "x1", Integer.toString(LEFT), "x2", Integer.toString(WIDTH - 10), "y1",
          fmt("%.2f", y), "y2", fmt("%.2f", y), "class", "grid");
      w.element("text", fmt("%.0f GiB", bytes / GIB), "x", Integer.toString(LEFT - 4), "y",
          fmt("%.2f", y + 4), "class", "small", "text-anchor", "end");
    }
  }

  /** One stage's stacked bar, labelled with its total and stage when the slot is wide enough. */
  private static void drawBar(HtmlWriter w, StageResult s, double slot, double bar, double scale,
      double base) {
    double x = LEFT + s.group() * slot + (slot - bar) / 2;
    double[] parts = parts(s.memory());
    double y = base;
    w.open("g", "class", "membar", "data-group", Integer.toString(s.group()), "data-total",
        fmt("%.1f", s.memory().totalBytes()));
    for (int p = 0; p < parts.length; p++) {
      double h = parts[p] * scale;
      y -= h;
      w.empty("rect", "x", fmt("%.2f", x), "y", fmt("%.4f", y), "width", fmt("%.2f", bar),
          "height", fmt("%.4f", h), "fill", Palette.MEMORY[p], "class", "mem",
          "data-part", PARTS[p], "data-bytes", fmt("%.1f", parts[p]), "data-tip",
          "stage " + s.group() + " " + PARTS[p] + ": " + fmt("%.2f GiB", parts[p] / GIB));
    }
    w.close("g");
    if (slot >= 28) {
      w.element("text", fmt("%.1f", s.memory().totalBytes() / GIB), "x",
          fmt("%.2f", x + bar / 2), "y", fmt("%.2f", y - 3), "class", "small", "text-anchor",
          "middle");
      w.element("text", "stage " + s.group(), "x", fmt("%.2f", x + bar / 2), "y",
          fmt("%.1f", base + 14), "class", "small", "text-anchor", "middle");
    }
  }

  /** The dashed capacity line and its label. */
  private static void drawCapacity(HtmlWriter w, double capacityBytes, double scale,
      double base) {
    double cy = base - capacityBytes * scale;
    w.empty("line", "x1", Integer.toString(LEFT), "x2", Integer.toString(WIDTH - 10), "y1",
        fmt("%.2f", cy), "y2", fmt("%.2f", cy), "class", "capacity", "data-bytes",
        fmt("%.1f", capacityBytes));
    w.element("text", fmt("capacity %.1f GiB", capacityBytes / GIB), "x",
        Integer.toString(WIDTH - 12), "y", fmt("%.2f", cy - 4), "class", "small", "text-anchor",
        "end");
  }

  /** A swatch and name per part, in one row under the plot. */
  private static void drawLegend(HtmlWriter w, double base) {
    double lx = LEFT;
    for (int p = 0; p < PARTS.length; p++) {
      w.empty("rect", "x", fmt("%.0f", lx), "y", fmt("%.0f", base + 26), "width", "12",
          "height", "12", "fill", Palette.MEMORY[p]);
      w.element("text", PARTS[p], "x", fmt("%.0f", lx + 16), "y", fmt("%.0f", base + 36),
          "class", "small");
      lx += 130;
    }
  }
}
