package io.meshplan.calibrate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Renders a {@link Calibration} as text tables or JSON. Returns strings; prints nothing. */
public final class CalibrationReport {
  private CalibrationReport() {}

  /**
   * One line per profile entry: collective, level, group size, points, alpha, bus bandwidth.
   *
   * @param c the calibration
   * @return the table
   */
  public static String entries(Calibration c) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%-14s %-10s %5s %6s %10s %12s %7s%n", "collective",
        "level", "gpus", "points", "alpha(us)", "busbw(GB/s)", "curve"));
    for (ProfileEntry e : c.profile().entries()) {
      sb.append(String.format(Locale.ROOT, "%-14s %-10s %5d %6d %10.2f %12.2f %7s%n",
          CollectiveNames.label(e.collective()), e.level().label(), e.gpus(), e.points(),
          e.fit().alpha() * 1e6, e.fit().beta() > 0 ? 1e-9 / e.fit().beta() : Double.NaN,
          e.curve().map(cv -> cv.bytes().length + "pt").orElse("none")));
    }
    return sb.toString();
  }

  /**
   * Fitted against measured for every point, with relative errors, and a summary of the errors.
   *
   * @param c the calibration
   * @return the table
   */
  public static String points(Calibration c) {
    StringBuilder sb = new StringBuilder();
    List<String> files = c.points().stream().map(f -> f.point().file()).distinct().toList();
    boolean oneFile = files.size() == 1;
    if (oneFile) {
      sb.append("points of ").append(baseName(files.get(0))).append(":\n");
    }
    int w = oneFile ? LINE_WIDTH : WHERE_WIDTH;
    String text = "%-" + w + "s %-14s %-10s %5s %9s %12s %12s %7s %14s %7s%n";
    sb.append(String.format(Locale.ROOT, text, oneFile ? "line" : "where", "collective", "level",
        "gpus", "bytes", "measured(us)", "curve(us)", "err", "alpha-beta(us)", "err"));
    List<Double> curveErr = new ArrayList<>();
    List<Double> abErr = new ArrayList<>();
    for (FittedPoint f : c.points()) {
      MeasuredPoint p = f.point();
      String where = oneFile ? Integer.toString(p.line()) : shortWhere(p);
      if (!p.sized()) {
        sb.append(String.format(Locale.ROOT, text, where, CollectiveNames.label(p.collective()),
            p.level().label(), p.gpus(), "?", String.format(Locale.ROOT, "busbw %.1fGB/s",
                p.busbw() / 1e9), "-", "-", "-", "-"));
        continue;
      }
      curveErr.add(Math.abs(f.curveError()));
      abErr.add(Math.abs(f.alphaBetaError()));
      sb.append(String.format(Locale.ROOT,
          "%-" + w + "s %-14s %-10s %5d %9s %12.2f %12.2f %6.1f%% %14.2f %6.1f%%%n", where,
          CollectiveNames.label(p.collective()), p.level().label(), p.gpus(),
          Units.formatBytes(p.bytes()), p.seconds() * 1e6, f.curveSeconds() * 1e6,
          f.curveError() * 100, f.alphaBetaSeconds() * 1e6, f.alphaBetaError() * 100));
    }
    if (!curveErr.isEmpty()) {
      sb.append(String.format(Locale.ROOT,
          "|relative error| over %s: curve median %.2f%% max %.2f%%;"
              + " alpha-beta median %.2f%% max %.2f%%%n",
          io.meshplan.util.Words.count(curveErr.size(), "sized point"), median(curveErr) * 100,
          Collections.max(curveErr) * 100, median(abErr) * 100, Collections.max(abErr) * 100));
    }
    return sb.toString().lines().map(String::stripTrailing)
        .collect(java.util.stream.Collectors.joining("\n", "", "\n"));
  }

  /** The width of the line column when every point comes from one file. */
  private static final int LINE_WIDTH = 6;
  /** The width of the file:line column, so that a row stays within 120 characters. */
  private static final int WHERE_WIDTH = 20;

  private static String baseName(String f) {
    int slash = Math.max(f.lastIndexOf('/'), f.lastIndexOf('\\'));
    return f.substring(slash + 1);
  }

  /** file name without directories, and line; long names keep their end. */
  private static String shortWhere(MeasuredPoint p) {
    String w = baseName(p.file()) + ":" + p.line();
    return w.length() > WHERE_WIDTH ? "..." + w.substring(w.length() - (WHERE_WIDTH - 3)) : w;
  }

  private static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    Collections.sort(s);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  /**
   * The machine-readable form: {@code cluster}, {@code points[]} (one per measured row, with {@code
   * file}, {@code line}, {@code collective}, {@code gpus}, {@code groups}, {@code level}, {@code
   * bytes}, {@code measuredSeconds}, {@code fittedSeconds}, {@code alphaBetaSeconds}, {@code
   * algbwGBps}, {@code busbwGBps}; unknown values are null), {@code entries[]} and {@code
   * warnings[]}.
   *
   * @param c the calibration
   * @param warnings the parse warnings
   * @return pretty-printed JSON ending in a newline
   */
  public static String json(Calibration c, List<ParseWarning> warnings) {
    ObjectMapper m = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = m.createObjectNode();
    root.put("cluster", c.profile().cluster());
    ArrayNode pts = root.putArray("points");
    for (FittedPoint f : c.points()) {
      MeasuredPoint p = f.point();
      ObjectNode o = pts.addObject();
      o.put("file", p.file());
      o.put("line", p.line());
      o.put("collective", CollectiveNames.label(p.collective()));
      o.put("gpus", p.gpus());
      o.put("groups", p.groups());
      o.put("level", p.level().label());
      if (p.sized()) {
        o.put("bytes", p.bytes());
      } else {
        o.putNull("bytes");
      }
      put(o, "measuredSeconds", p.seconds());
      put(o, "fittedSeconds", f.curveSeconds());
      put(o, "alphaBetaSeconds", f.alphaBetaSeconds());
      put(o, "algbwGBps", p.algbw() / 1e9);
      put(o, "busbwGBps", p.busbw() / 1e9);
    }
    ArrayNode es = root.putArray("entries");
    for (ProfileEntry e : c.profile().entries()) {
      ObjectNode o = es.addObject();
      o.put("collective", CollectiveNames.label(e.collective()));
      o.put("level", e.level().label());
      o.put("gpus", e.gpus());
      o.put("points", e.points());
      o.put("alphaSeconds", e.fit().alpha());
      o.put("betaSecondsPerByte", e.fit().beta());
      put(o, "busbwGBps", e.fit().beta() > 0 ? 1e-9 / e.fit().beta() : Double.NaN);
    }
    ArrayNode ws = root.putArray("warnings");
    for (ParseWarning w : warnings) {
      ws.add(w.toString());
    }
    try {
      return m.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize the calibration", e);
    }
  }

  private static void put(ObjectNode o, String key, double v) {
    if (Double.isFinite(v)) {
      o.put(key, v);
    } else {
      o.putNull(key);
    }
  }
}
