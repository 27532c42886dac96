package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.util.AsciiDigits;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the lines printed by Alpa's {@code benchmark/cupy/profile_communication.py}:
 *
 * <pre>
 * AllReduce: [[0, 1, 2, 3], [4, 5, 6, 7]]&lt;TAB&gt;Bytes: 2.00000 GB&lt;TAB&gt;Time: 0.01406 s&lt;TAB&gt;Bandwidth: 213.31 GB/s
 * </pre>
 *
 * <p>In that script {@code GB = 1 << 30}: "Bytes" is the per-device buffer in GiB, and "Bandwidth" is
 * bus bandwidth in GiB/s (all-reduce: 2(n-1)/n * bytes / time; all-gather (n-1)/n; send/recv
 * bytes / time times the number of pairs). meshplan recomputes algbw and busbw per group from bytes
 * and time, in 10^9 bytes/s, and ignores the printed bandwidth.
 *
 * <p>The group size is the length of one inner list; the nodes a group spans come from its device
 * ids and the cluster's GPUs per node (Ray hands out GPUs node by node).
 */
public final class AlpaProfileParser implements LogParser {
  private static final Pattern LINE = Pattern.compile(
      "^\\s*(AllReduce|AllGather|ReduceScatter|AllToAll|SendRecv):\\s*(\\[.*\\])\\s+"
          + "Bytes:\\s*(\\S+)\\s*GB\\s+Time:\\s*(\\S+)\\s*s\\s+Bandwidth:\\s*(\\S+)\\s*GB/s\\s*$");
  private static final Pattern PREFIX =
      Pattern.compile("^\\s*(AllReduce|AllGather|ReduceScatter|AllToAll|SendRecv):.*");
  private static final Pattern GROUP = Pattern.compile("\\[([0-9,\\s]*)\\]");
  private static final double GIB = 1L << 30;

  /** Creates the parser. */
  public AlpaProfileParser() {}

  @Override
  public boolean accepts(List<String> lines) {
    for (String l : lines) {
      if (LINE.matcher(l).matches()) {
        return true;
      }
    }
    return false;
  }

  @Override
  public ParseResult parse(String file, List<String> lines, int gpusPerNode) {
    List<MeasuredPoint> points = new ArrayList<>();
    List<ParseWarning> warnings = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      int lineNo = i + 1;
      Matcher m = LINE.matcher(l);
      if (!m.matches()) {
        if (PREFIX.matcher(l).matches()) {
          warnings.add(new ParseWarning(file, lineNo, "Alpa profile line without 'Bytes: ... GB"
              + "  Time: ... s  Bandwidth: ... GB/s' (truncated?); skipped"));
        }
        continue;
      }
      List<List<Integer>> groups = groups(m.group(2));
      if (groups == null) {
        warnings.add(new ParseWarning(file, lineNo, "device groups '" + m.group(2)
            + "' are not a list of equal-sized lists of device ids; skipped"));
        continue;
      }
      double gib = parse(m.group(3));
      double seconds = parse(m.group(4));
      if (!(gib >= 0) || !(seconds > 0)) {
        warnings.add(new ParseWarning(file, lineNo, "Bytes '" + m.group(3) + "' or Time '"
            + m.group(4) + "' is not a usable number (time must be > 0); skipped"));
        continue;
      }
      Collective c = CollectiveNames.of(m.group(1));
      int n = groups.get(0).size();
      String implausible = MeasurementBounds.implausible(gib * GIB, seconds, gib * GIB / seconds,
          Double.NaN);
      if (implausible != null) {
        warnings.add(new ParseWarning(file, lineNo, "implausible measurement with " + implausible
            + "; skipped"));
        continue;
      }
      int nodes = 1;
      for (List<Integer> g : groups) {
        nodes = Math.max(nodes, (int) g.stream().map(d -> d / gpusPerNode).distinct().count());
      }
      long bytes = Math.round(gib * GIB);
      double alg = bytes / seconds;
      points.add(new MeasuredPoint(file, lineNo, c, n, groups.size(), nodes, bytes, seconds, alg,
          alg * c.busFactor(n)));
    }
    return new ParseResult(points, warnings);
  }

  private static double parse(String s) {
    try {
      double v = io.meshplan.util.AsciiDigits.parseDecimal(s);
      return Double.isFinite(v) ? v : Double.NaN;
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }

  /** Parses [[0, 1], [2, 3]]; null unless every inner list is non-empty and all have one size. */
  private static List<List<Integer>> groups(String text) {
    String inner = text.strip();
    if (!inner.startsWith("[") || !inner.endsWith("]")) {
      return null;
    }
    inner = inner.substring(1, inner.length() - 1);
    Matcher m = GROUP.matcher(inner);
    List<List<Integer>> out = new ArrayList<>();
    int end = 0;
    while (m.find()) {
      if (!inner.substring(end, m.start()).replace(",", "").isBlank()) {
        return null;
      }
      end = m.end();
      List<Integer> g = new ArrayList<>();
      for (String t : m.group(1).split(",")) {
        String s = t.strip();
        if (s.isEmpty()) {
          return null;
        }
        try {
          g.add(AsciiDigits.parseInt(s));
        } catch (NumberFormatException e) {
          return null;
        }
      }
      out.add(g);
    }
    if (out.isEmpty() || !inner.substring(end).isBlank()) {
      return null;
    }
    Map<Integer, Boolean> seen = new HashMap<>();
    for (List<Integer> g : out) {
      if (g.size() != out.get(0).size()) {
        return null;
      }
      for (int d : g) {
        if (seen.put(d, true) != null) {
          return null;
        }
      }
    }
    return out;
  }
}
