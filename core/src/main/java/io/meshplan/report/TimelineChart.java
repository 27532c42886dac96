package io.meshplan.report;

import static io.meshplan.report.HtmlWriter.fmt;

import io.meshplan.sim.Event;
import io.meshplan.sim.EventKind;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.Timeline;

/**
 * Draws the simulator's own events as a Gantt chart: one row per device group (pipeline stage),
 * forward and backward passes as boxes labelled with their microbatch, pipeline sends as a thin
 * bar under the sender's row, gradient reduction, parameter gathers and optimizer steps in their
 * own colours. The hatched row background shows through wherever the group is idle: the bubble.
 *
 * <p>Long timelines are capped so that the page stays small and quick to render: the first
 * microbatches are drawn event by event as long as their events number at most {@link
 * #MAX_DETAILED_EVENTS} (always at least microbatch 0), with every per-iteration event; the events
 * of later microbatches are summarised per group as one grey band from the first such event's start
 * to the last one's end, drawn under the detailed events, and the page says so.
 */
final class TimelineChart {
  /** Events of microbatches drawn one by one, at most (about 250 bytes of HTML each). */
  static final int MAX_DETAILED_EVENTS = 6000;
  private static final int WIDTH = 1200;
  private static final int LEFT = 90;
  private static final int ROW = 22;
  /** The width of the time axis, in SVG units. */
  private static final double PLOT = WIDTH - LEFT - 10;

  private TimelineChart() {}

  /**
   * How many microbatches are drawn one by one.
   *
   * @param t the timeline
   * @param microbatches microbatches per iteration
   * @return the largest m whose microbatches 0..m-1 have at most {@link #MAX_DETAILED_EVENTS}
   *     events, at least 1
   */
  static int detailedMicrobatches(Timeline t, int microbatches) {
    long[] perMicrobatch = new long[Math.max(1, microbatches)];
    for (Event e : t.events()) {
      if (e.microbatch() >= 0 && e.microbatch() < perMicrobatch.length) {
        perMicrobatch[e.microbatch()]++;
      }
    }
    long sum = 0;
    for (int m = 0; m < perMicrobatch.length; m++) {
      sum += perMicrobatch[m];
      if (sum > MAX_DETAILED_EVENTS) {
        return Math.max(1, m);
      }
    }
    return perMicrobatch.length;
  }

  static void draw(HtmlWriter w, SimulationResult sim, String id) {
    Timeline t = sim.timeline();
    int groups = sim.stages().size();
    double total = t.iterationSeconds() > 0 ? t.iterationSeconds() : 1;
    int height = groups * ROW + 34;
    int detailed = detailedMicrobatches(t, sim.microbatches());
    w.open("svg", "id", id, "class", "chart", "xmlns", "http://www.w3.org/2000/svg",
        "viewBox", fmt("0 0 %d %d", WIDTH, height), "role", "img",
        "aria-label", "pipeline timeline");
    drawRows(w, groups, id);
    int aggregated = drawSummaries(w, t, groups, detailed, total);
    int drawn = 0;
    for (Event e : t.events()) {
      if (e.group() < groups && e.microbatch() < detailed) {
        drawEvent(w, e, total);
        drawn++;
      }
    }
    drawAxis(w, groups, total);
    w.close("svg");
    w.open("p", "class", "note");
    w.text("Drawn from the simulator's " + t.events().size() + " events (" + sim.schedule()
        + ", " + sim.microbatches() + " microbatches). Blue: forward, green: backward, orange"
        + " bar: pipeline send, red: gradient reduction, pink: parameter all-gather, purple:"
        + " optimizer; hatched: idle (bubble). Tensor-parallel communication is inside the"
        + " passes.");
    if (aggregated > 0) {
      w.text(" Only microbatches 0-" + (detailed - 1) + " are drawn one by one ("
          + drawn + " events); the " + aggregated + " events of later microbatches are"
          + " summarised as one grey band per stage.");
    }
    w.close("p");
  }

  /** The hatched idle pattern and, per group, its label and idle background. */
  private static void drawRows(HtmlWriter w, int groups, String id) {
    w.raw("<defs><pattern id=\"" + id + "-idle\" width=\"6\" height=\"6\" "
        + "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
        + "<rect width=\"6\" height=\"6\" fill=\"#fbe3e3\"/>"
        + "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e8b4b4\" stroke-width=\"2\"/>"
        + "</pattern></defs>\n");
    for (int g = 0; g < groups; g++) {
      int y = g * ROW + 4;
      w.element("text", "stage " + g, "x", "4", "y", Integer.toString(y + 14), "class", "label");
      w.empty("rect", "x", Integer.toString(LEFT), "y", Integer.toString(y), "width",
          fmt("%.1f", PLOT), "height", Integer.toString(ROW - 4), "fill",
          "url(#" + id + "-idle)", "class", "idle", "data-tip", "stage " + g + ": idle (bubble)");
    }
  }

  /**
   * Draws, per group, one grey band from the first start to the last end of its events of
   * microbatches {@code detailed} and later.
   *
   * @return the number of events summarised
   */
  private static int drawSummaries(HtmlWriter w, Timeline t, int groups, int detailed,
      double total) {
    double[] aggStart = new double[groups];
    double[] aggEnd = new double[groups];
    int[] aggCount = new int[groups];
    java.util.Arrays.fill(aggStart, Double.POSITIVE_INFINITY);
    for (Event e : t.events()) {
      if (e.group() < groups && e.microbatch() >= detailed) {
        int g = e.group();
        aggStart[g] = Math.min(aggStart[g], e.startSeconds());
        aggEnd[g] = Math.max(aggEnd[g], e.endSeconds());
        aggCount[g]++;
      }
    }
    int aggregated = 0;
    for (int g = 0; g < groups; g++) {
      if (aggCount[g] > 0) {
        aggregated += aggCount[g];
        double x = LEFT + aggStart[g] / total * PLOT;
        double wd = Math.max(0.3, (aggEnd[g] - aggStart[g]) / total * PLOT);
        w.empty("rect", "x", fmt("%.2f", x), "y", Integer.toString(g * ROW + 8), "width",
            fmt("%.2f", wd), "height", Integer.toString(ROW - 12), "fill", "#9e9e9e",
            "class", "ev ev-aggregated", "data-tip", "stage " + g + ": " + aggCount[g]
                + " events of microbatches " + detailed + " and later, summarised");
      }
    }
    return aggregated;
  }

  /** One event as a box in its group's row (a send as a thin bar), labelled if wide enough. */
  private static void drawEvent(HtmlWriter w, Event e, double total) {
    double x = LEFT + e.startSeconds() / total * PLOT;
    double wd = Math.max(0.3, e.durationSeconds() / total * PLOT);
    int y = e.group() * ROW + 4;
    boolean send = e.kind() == EventKind.SEND;
    double top = send ? y + ROW - 7 : y;
    double h = send ? 3 : ROW - 4;
    String what = e.kind().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
    String tip = "stage " + e.group() + ", chunk " + e.virtualStage()
        + (e.microbatch() >= 0 ? ", microbatch " + e.microbatch() : "") + ": " + what + " "
        + fmt("%.3f", e.startSeconds() * 1e3) + "-" + fmt("%.3f", e.endSeconds() * 1e3) + " ms";
    w.empty("rect", "x", fmt("%.2f", x), "y", fmt("%.1f", top), "width", fmt("%.2f", wd),
        "height", fmt("%.1f", h), "fill", Palette.event(e.kind()), "class",
        "ev ev-" + e.kind().name().toLowerCase(java.util.Locale.ROOT), "data-tip", tip);
    if (e.isCompute() && e.microbatch() >= 0 && wd >= 14) {
      w.element("text", Integer.toString(e.microbatch()), "x", fmt("%.2f", x + wd / 2), "y",
          Integer.toString(y + 13), "class", "evlabel");
    }
  }

  /** Six time ticks from 0 to the iteration time, in seconds. */
  private static void drawAxis(HtmlWriter w, int groups, double total) {
    int axisY = groups * ROW + 8;
    for (int i = 0; i <= 5; i++) {
      double x = LEFT + PLOT * i / 5;
      w.empty("line", "x1", fmt("%.1f", x), "x2", fmt("%.1f", x), "y1", "2", "y2",
          Integer.toString(axisY), "class", "tick");
      w.element("text", fmt("%.3f s", total * i / 5), "x", fmt("%.1f", x), "y",
          Integer.toString(axisY + 14), "class", "small", "text-anchor",
          i == 0 ? "start" : i == 5 ? "end" : "middle");
    }
  }
}
