package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads bus-bandwidth tables written for people rather than machines:
 *
 * <ul>
 *   <li>the markdown table of Stas Bekman's {@code all_reduce_bench.py} ({@code
 *       stas00/ml-engineering}, {@code network/benchmarks}): {@code | payload | busbw | algbw |}
 *       with rows such as {@code |   32KiB |   0.92GBps |   0.48GBps |}, preceded by "The average
 *       bandwidth of all_reduce over N ranks". Versions from January 2025 meant {@code GBps} as
 *       2^30 bytes/s and say so in a legend ({@code 1GB = 2**30Bytes}); later ones 10^9;
 *   <li>a {@code GPUs | busbw | algbw} table, as markdown or as an HTML {@code <table>} like the RunAI
 *       RDMA/RoCE guide's, where the payload is not stated. Its points carry bandwidths only ({@link
 *       MeasuredPoint#UNKNOWN_BYTES}). Bare numbers take the unit named in the text before the table
 *       ({@code Gbps} is bits, {@code GBps} or {@code GB/s} bytes). When the table has several
 *       busbw/algbw column pairs (e.g. "RDMA" and "NO RDMA"), the first pair is used.
 * </ul>
 *
 * <p>The collective is all-reduce unless the text names another. The rank count of a payload table
 * comes from "over N ranks", else from busbw/algbw = 2(n-1)/n. Groups of at most the cluster's GPUs
 * per node are taken as one node.
 */
public final class BandwidthTableParser implements LogParser {
  // Any token between "over" and "ranks": "-32" or "32.5" is a count that is wrong, refused as
  // such, not a line without one (whose rows would each guess their own count).
  private static final Pattern RANKS = Pattern.compile("over\\s+(\\S+)\\s+ranks");
  private static final Pattern OF_COLL = Pattern.compile("bandwidth of\\s+(\\w+)\\s+over");
  private static final Pattern CELL = Pattern.compile("<t[dh][^>]*>(.*?)</t[dh]>",
      Pattern.CASE_INSENSITIVE);
  private static final Pattern TR_OPEN = Pattern.compile("<tr[\\s>]", Pattern.CASE_INSENSITIVE);
  private static final Pattern TR_CLOSE = Pattern.compile("</tr>", Pattern.CASE_INSENSITIVE);

  /** Creates the parser. */
  public BandwidthTableParser() {}

  /** One table row: its cells and the line where it starts. */
  private record Row(int line, List<String> cells) {}

  @Override
  public boolean accepts(List<String> lines) {
    for (Row r : rows(lines)) {
      if (headerKind(r) != null) {
        return true;
      }
    }
    return false;
  }

  private static String headerKind(Row r) {
    List<String> c = lower(r.cells());
    if (c.contains("busbw") && c.contains("algbw")) {
      if (c.contains("payload")) {
        return "payload";
      }
      if (c.contains("gpus")) {
        return "gpus";
      }
    }
    return null;
  }

  private static List<String> lower(List<String> cells) {
    return cells.stream().map(s -> s.strip().toLowerCase(Locale.ROOT)).toList();
  }

  /** Markdown rows (lines starting with '|') and HTML rows (<tr> ... </tr>), in line order. */
  private static List<Row> rows(List<String> lines) {
    List<Row> out = new ArrayList<>();
    List<String> html = null;
    int htmlLine = 0;
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      String s = l.strip();
      if (s.startsWith("|")) {
        String body = s.substring(1);
        if (body.endsWith("|")) {
          body = body.substring(0, body.length() - 1);
        }
        List<String> cells = new ArrayList<>();
        for (String c : body.split("\\|", -1)) {
          cells.add(c.strip());
        }
        out.add(new Row(i + 1, cells));
        continue;
      }
      if (TR_OPEN.matcher(s).find()) {
        html = new ArrayList<>();
        htmlLine = i + 1;
      }
      if (html != null) {
        Matcher m = CELL.matcher(s);
        while (m.find()) {
          html.add(m.group(1).replaceAll("<[^>]*>", "").strip());
        }
        if (TR_CLOSE.matcher(s).find()) {
          out.add(new Row(htmlLine, html));
          html = null;
        }
      }
    }
    return out;
  }

  /**
   * The layout of the table under a header row.
   *
   * @param kind "payload" or "gpus": what the key column holds
   * @param keyCol the index of the key column
   * @param busCol the index of the (first) busbw column
   * @param algCol the index of the (first) algbw column
   * @param ranksText the digits of "over N ranks" before the table, or null when there is none
   * @param unit bytes/s per unit of bare numbers
   */
  private record Table(String kind, int keyCol, int busCol, int algCol, String ranksText,
      double unit) {}

  /** What every table of one file shares. */
  private record Context(String file, Collective collective, boolean gibibytes, int gpusPerNode,
      List<ParseWarning> warnings) {
    void warn(Row r, String message) {
      warnings.add(new ParseWarning(file, r.line(), message));
    }
  }

  @Override
  public ParseResult parse(String file, List<String> lines, int gpusPerNode) {
    List<MeasuredPoint> points = new ArrayList<>();
    String text = String.join("\n", lines);
    Context cx = new Context(file, collective(text), text.contains("1GB = 2**30"), gpusPerNode,
        new ArrayList<>());
    Table table = null;
    for (Row r : rows(lines)) {
      String k = headerKind(r);
      if (k != null) {
        table = table(cx, lines, r, k);
      } else if (table != null && !r.cells().stream().allMatch(s -> s.matches("[-:\\s]*"))) {
        // rows before any table and markdown separator rows are skipped
        MeasuredPoint p = point(cx, table, r);
        if (p != null) {
          points.add(p);
        }
      }
    }
    return new ParseResult(points, cx.warnings());
  }

  /** The collective the text names ("bandwidth of X over"), else all-reduce. */
  private static Collective collective(String text) {
    Matcher oc = OF_COLL.matcher(text);
    if (oc.find()) {
      Optional<Collective> c = CollectiveNames.fromLooseName(oc.group(1));
      if (c.isPresent()) {
        return c.get();
      }
    }
    return Collective.ALL_REDUCE;
  }

  /** Reads a header row and the text before it. */
  private static Table table(Context cx, List<String> lines, Row r, String kind) {
    List<String> c = lower(r.cells());
    long pairs = c.stream().filter("busbw"::equals).count();
    if (pairs > 1) {
      cx.warn(r, "table has " + pairs + " busbw/algbw column pairs; only the first is used");
    }
    String before = beforeLine(lines, r.line());
    double unit = unitIn(before, cx.gibibytes());
    if (Double.isNaN(unit)) {
      unit = 1e9;
      if (kind.equals("gpus")) {
        cx.warn(r, "no bandwidth unit named before the"
            + " table; bare numbers taken as GB/s (10^9 bytes/s)");
      }
    }
    return new Table(kind, c.indexOf(kind), c.indexOf("busbw"), c.indexOf("algbw"),
        lastRanks(before), unit);
  }

  /** The point of one data row, or null (with a warning) when the row is not usable. */
  private static MeasuredPoint point(Context cx, Table t, Row r) {
    int need = Math.max(t.keyCol(), Math.max(t.busCol(), t.algCol()));
    if (r.cells().size() <= need) {
      cx.warn(r, "table row has " + r.cells().size()
          + " cells, expected " + (need + 1) + " (truncated?); skipped");
      return null;
    }
    String keyText = r.cells().get(t.keyCol());
    double bus = bandwidth(r.cells().get(t.busCol()), t.unit(), cx.gibibytes());
    double alg = bandwidth(r.cells().get(t.algCol()), t.unit(), cx.gibibytes());
    if (!(bus >= 0) || !(alg > 0)) {
      cx.warn(r, "busbw '" + r.cells().get(t.busCol())
          + "' / algbw '" + r.cells().get(t.algCol()) + "' not usable (need numbers > 0); skipped");
      return null;
    }
    String implausible = MeasurementBounds.implausible(Double.NaN, Double.NaN, alg, bus);
    if (implausible != null) {
      cx.warn(r, "implausible measurement with " + implausible + "; skipped");
      return null;
    }
    return t.kind().equals("payload") ? payloadPoint(cx, t, r, keyText, bus, alg)
        : gpusPoint(cx, r, keyText, bus, alg);
  }

  /** A row of a payload table: the rank count from the text, else from busbw/algbw. */
  private static MeasuredPoint payloadPoint(Context cx, Table t, Row r, String keyText, double bus,
      double alg) {
    OptionalDouble bytes = Units.parseBytes(keyText);
    if (bytes.isEmpty() || !(bytes.getAsDouble() > 0)) {
      cx.warn(r, "payload '" + keyText + "' is not a size such as 32KiB or 4GiB; skipped");
      return null;
    }
    int n;
    if (t.ranksText() != null) {
      OptionalInt stated = MeasurementBounds.count(t.ranksText(), 1, MeasurementBounds.MAX_GPUS);
      if (stated.isEmpty()) {
        cx.warn(r, "'over " + t.ranksText() + " ranks' is not 1 to "
            + MeasurementBounds.MAX_GPUS + " GPUs; skipped");
        return null;
      }
      n = stated.getAsInt();
    } else {
      n = ranksFromRatio(cx.collective(), bus / alg);
      if (n < 1) {
        cx.warn(r, "no 'over N ranks' line and busbw/algbw"
            + " does not give a rank count; skipped");
        return null;
      }
    }
    String implausible = MeasurementBounds.implausible(bytes.getAsDouble(),
        bytes.getAsDouble() / alg, alg, bus);
    if (implausible != null) {
      cx.warn(r, "implausible measurement with " + implausible + "; skipped");
      return null;
    }
    long b = Math.round(bytes.getAsDouble());
    return new MeasuredPoint(cx.file(), r.line(), cx.collective(), n, 1,
        nodes(n, cx.gpusPerNode()), b, b / alg, alg, bus);
  }

  /** A row of a GPUs table: bandwidths only, the payload unknown. */
  private static MeasuredPoint gpusPoint(Context cx, Row r, String keyText, double bus,
      double alg) {
    OptionalInt n = MeasurementBounds.count(keyText, 1, MeasurementBounds.MAX_GPUS);
    if (n.isEmpty()) {
      cx.warn(r, "GPUs '" + keyText + "' is not 1 to " + MeasurementBounds.MAX_GPUS + "; skipped");
      return null;
    }
    return new MeasuredPoint(cx.file(), r.line(), cx.collective(), n.getAsInt(), 1,
        nodes(n.getAsInt(), cx.gpusPerNode()), MeasuredPoint.UNKNOWN_BYTES, Double.NaN, alg, bus);
  }

  private static int nodes(int gpus, int gpusPerNode) {
    return (gpus + gpusPerNode - 1) / gpusPerNode;
  }

  private static String beforeLine(List<String> lines, int line) {
    return String.join("\n", lines.subList(0, Math.max(0, line - 1)));
  }

  /** The digits of the last "over N ranks" in a text, or null when there is none. */
  private static String lastRanks(String text) {
    Matcher m = RANKS.matcher(text);
    String r = null;
    while (m.find()) {
      r = m.group(1);
    }
    return r;
  }

  /** Bytes/s per unit of the bare numbers, from the last unit word before the table. */
  private static double unitIn(String text, boolean gibibytes) {
    int bits = Math.max(text.lastIndexOf("Gbps"), text.lastIndexOf("Gb/s"));
    int bytes = Math.max(text.lastIndexOf("GBps"), text.lastIndexOf("GB/s"));
    if (bits < 0 && bytes < 0) {
      return Double.NaN;
    }
    if (bits > bytes) {
      return 1e9 / 8;
    }
    return gibibytes ? (double) (1L << 30) : 1e9;
  }

  private static double bandwidth(String cell, double unit, boolean gibibytes) {
    String s = cell.strip();
    if (s.matches("[0-9]+(\\.[0-9]+)?")) {
      return io.meshplan.util.AsciiDigits.parseDecimal(s) * unit;
    }
    if (s.endsWith("GBps") && gibibytes) {
      OptionalDouble v = Units.parseBandwidth(s);
      return v.isPresent() ? v.getAsDouble() / 1e9 * (1L << 30) : Double.NaN;
    }
    OptionalDouble v = Units.parseBandwidth(s);
    return v.isPresent() ? v.getAsDouble() : Double.NaN;
  }

  /** Solves busbw/algbw = 2(n-1)/n for n; -1 if the ratio gives no integer n >= 2. */
  private static int ranksFromRatio(Collective c, double ratio) {
    if (c != Collective.ALL_REDUCE || !(ratio >= 1.0) || ratio >= 2.0) {
      return -1;
    }
    double n = 2.0 / (2.0 - ratio);
    long r = Math.round(n);
    return r >= 2 && r < 100000 && Math.abs(n - r) < 0.1 * r ? (int) r : -1;
  }
}
