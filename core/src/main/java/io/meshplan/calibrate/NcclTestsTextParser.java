package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.util.AsciiDigits;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the text output of the NVIDIA nccl-tests binaries ({@code all_reduce_perf}, {@code
 * all_gather_perf}, {@code reduce_scatter_perf}, {@code alltoall_perf}, {@code sendrecv_perf}, ...),
 * as printed by {@code src/common.cu} and {@code src/util.cu} of {@code NVIDIA/nccl-tests}:
 *
 * <ul>
 *   <li>{@code # nThread 1 nGpus 8 minBytes 8 maxBytes ...}: threads and GPUs per process;
 *   <li>{@code #  Rank  0 Group  0 Pid 1234 on host device  0 [0000:07:00] NVIDIA A100...} (2.13
 *       and later) or {@code #   Rank  0 Pid 1234 on host device  0 [0x07] Tesla V100...}
 *       (earlier): one line per rank, whose host names tell how many nodes took part;
 *   <li>the column header, {@code size count type redop root time algbw busbw #wrong time algbw
 *       busbw #wrong} since 2.13, and {@code size count type [redop] time algbw busbw error ...}
 *       before (no {@code root}; no {@code redop} for all-gather, send/recv, all-to-all). The column
 *       of the out-of-place time is found from the header, or from the field count when the header
 *       is missing;
 *   <li>the {@code # Avg bus bandwidth} footer, whose absence means a truncated log.
 * </ul>
 *
 * <p>Units: the time column is microseconds, algbw and busbw are GB/s (10^9 bytes/s). One point is
 * made per row from the out-of-place columns. The collective comes from {@code # Collective test
 * starting: NAME}, any {@code NAME_perf} on a line of the log (a command echoed by a script), or the
 * file name; as a last resort from busbw/algbw = 2(n-1)/n, which only all-reduce has.
 */
public final class NcclTestsTextParser implements LogParser {
  private static final Pattern THREADS =
      Pattern.compile("^#\\s*nThread\\s+(\\S+)\\s+nGpus\\s+(\\S+)(\\s.*)?");
  private static final Pattern RANK = Pattern.compile(
      "^#\\s+Rank\\s+(\\d+)\\s+(?:Group\\s+(\\d+)\\s+)?Pid\\s+\\d+\\s+on\\s+(\\S+)\\s+device\\s+\\d+.*");
  private static final Pattern START = Pattern.compile("^#\\s*Collective test starting:\\s*(\\S+).*");
  private static final Pattern ROW = Pattern.compile("^\\s*\\d+\\s+\\d+\\s+\\S+.*");
  /**
   * A line that is a table row but for its size: a sign or a digit of any script first, then a
   * count ({@code -4194304}, {@code 0x800000}, {@code 1e6}, {@code 1_048_576}, fullwidth digits).
   * It is warned about as a row, where it would otherwise pass for prose and vanish.
   */
  private static final Pattern ROW_LIKE =
      Pattern.compile("^\\s*[+-]?[\\p{Nd}+-]\\S*\\s+\\d+\\s+\\S+.*");
  private static final Pattern NUMBER =
      Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");

  /** Creates the parser. */
  public NcclTestsTextParser() {}

  @Override
  public boolean accepts(List<String> lines) {
    for (String l : lines) {
      if (THREADS.matcher(l).matches() || START.matcher(l).matches() || isHeader(l)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isHeader(String l) {
    if (!l.startsWith("#")) {
      return false;
    }
    List<String> t = tokens(l.substring(1));
    return t.size() >= 6 && t.get(0).equals("size") && t.get(1).equals("count")
        && t.get(2).equals("type") && (t.contains("time") || t.contains("cputime"));
  }

  private static List<String> tokens(String s) {
    List<String> out = new ArrayList<>();
    for (String t : s.trim().split("\\s+")) {
      if (!t.isEmpty()) {
        out.add(t);
      }
    }
    return out;
  }

  /** The state of one run (one binary's output); a log may hold several runs one after another. */
  private static final class Run {
    Collective collective;
    int threadGpus;
    final Set<Integer> ranks = new HashSet<>();
    final Set<Integer> groups = new HashSet<>();
    final Set<String> hostsOfGroup0 = new LinkedHashSet<>();
    int timeIndex = -1;
    int fieldCount = -1;
    boolean hasRows;
    boolean footer;
    boolean skip;
    int lastLine;
    final List<PendingRow> rows = new ArrayList<>();
  }

  private record PendingRow(int line, long bytes, double seconds, double algbw, double busbw) {}

  @Override
  public ParseResult parse(String file, List<String> lines, int gpusPerNode) {
    List<MeasuredPoint> points = new ArrayList<>();
    List<ParseWarning> warnings = new ArrayList<>();
    Optional<Collective> fromFile = CollectiveNames.fromPerfBinary(file)
        .or(() -> CollectiveNames.fromLooseName(fileName(file)));
    Optional<Collective> fromLog = fromLog(lines);
    Run run = new Run();
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      int lineNo = i + 1;
      Matcher m;
      if ((m = START.matcher(l)).matches()) {
        run = startNewRun(file, run, points, warnings, gpusPerNode, fromLog, fromFile);
        Optional<Collective> c = CollectiveNames.fromPerfBinary(m.group(1));
        if (c.isPresent()) {
          run.collective = c.get();
        } else {
          warnings.add(new ParseWarning(file, lineNo, "nccl-tests binary '" + m.group(1)
              + "' is not one meshplan calibrates; its rows are skipped"));
          run.collective = null;
          run.skip = true;
        }
      } else if ((m = THREADS.matcher(l)).matches()) {
        if (run.hasRows) {
          run = startNewRun(file, run, points, warnings, gpusPerNode, fromLog, fromFile);
        }
        run.threadGpus = threadGpus(file, lineNo, m.group(1), m.group(2), warnings);
      } else if ((m = RANK.matcher(l)).matches()) {
        OptionalInt rank = MeasurementBounds.count(m.group(1), 0, MeasurementBounds.MAX_GPUS - 1);
        OptionalInt group = m.group(2) == null ? OptionalInt.of(0)
            : MeasurementBounds.count(m.group(2), 0, MeasurementBounds.MAX_GPUS - 1);
        if (rank.isEmpty() || group.isEmpty()) {
          warnings.add(new ParseWarning(file, lineNo, (rank.isEmpty() ? "Rank '" + m.group(1)
              : "Group '" + m.group(2)) + "' is not 0 to " + (MeasurementBounds.MAX_GPUS - 1)
              + " (at most " + MeasurementBounds.MAX_GPUS + " GPUs); line ignored"));
          continue;
        }
        run.ranks.add(rank.getAsInt());
        run.groups.add(group.getAsInt());
        if (group.getAsInt() == 0) {
          run.hostsOfGroup0.add(m.group(3));
        }
      } else if (isHeader(l)) {
        List<String> t = tokens(l.substring(1));
        int ti = t.indexOf("time");
        run.timeIndex = ti >= 0 ? ti : t.indexOf("cputime");
        run.fieldCount = (int) t.stream().filter(s -> !s.equals("timestamp")).count();
      } else if (l.startsWith("#") && l.contains("Avg bus bandwidth")) {
        run.footer = true;
      } else if (ROW.matcher(l).matches()) {
        run.lastLine = lineNo;
        if (run.skip) {
          continue;
        }
        parseRow(file, lineNo, l, run, warnings);
      } else if (ROW_LIKE.matcher(l).matches() && !run.skip) {
        warnings.add(new ParseWarning(file, lineNo, "size '"
            + io.meshplan.util.TerminalText.escape(tokens(l).get(0)) + "' is not a whole number"
            + " of bytes in ASCII digits; row skipped"));
      }
    }
    finishRun(file, run, points, warnings, gpusPerNode, fromLog, fromFile, lines.size());
    return new ParseResult(points, warnings);
  }

  /** The collective of the first {@code NAME_perf} on a line other than a run's start line. */
  private static Optional<Collective> fromLog(List<String> lines) {
    for (String l : lines) {
      if (!START.matcher(l).matches()) {
        Optional<Collective> c = CollectiveNames.fromPerfBinary(l);
        if (c.isPresent()) {
          return c;
        }
      }
    }
    return Optional.empty();
  }

  private static String fileName(String file) {
    int slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
    return file.substring(slash + 1);
  }

  private Run startNewRun(String file, Run run, List<MeasuredPoint> points,
      List<ParseWarning> warnings, int gpusPerNode, Optional<Collective> fromLog,
      Optional<Collective> fromFile) {
    if (run.hasRows || !run.rows.isEmpty()) {
      finishRun(file, run, points, warnings, gpusPerNode, fromLog, fromFile, run.lastLine);
    }
    return new Run();
  }

  /**
   * The GPUs of one process, nThread x nGpus of a {@code # nThread} line; 0 (with a warning) when
   * either is not a whole number or the product is not 1 to {@link MeasurementBounds#MAX_GPUS}, so
   * that the line counts as absent.
   */
  private static int threadGpus(String file, int lineNo, String threads, String gpus,
      List<ParseWarning> warnings) {
    OptionalInt n = MeasurementBounds.gpus(
        MeasurementBounds.count(threads, 1, MeasurementBounds.MAX_GPUS),
        MeasurementBounds.count(gpus, 1, MeasurementBounds.MAX_GPUS));
    if (n.isPresent()) {
      return n.getAsInt();
    }
    warnings.add(new ParseWarning(file, lineNo, "nThread " + threads + " x nGpus " + gpus
        + " is not 1 to " + MeasurementBounds.MAX_GPUS + " GPUs; line ignored"));
    return 0;
  }

  private void parseRow(String file, int lineNo, String l, Run run, List<ParseWarning> warnings) {
    run.hasRows = true;
    List<String> t = tokens(l);
    int ti = run.timeIndex;
    if (ti < 0) {
      // No header seen: 13 fields since 2.13 (size count type redop root + 2 x 4), 12 or 11 before.
      ti = switch (t.size()) {
        case 13 -> 5;
        case 12 -> 4;
        case 11 -> 3;
        default -> -1;
      };
      if (ti < 0) {
        warnings.add(new ParseWarning(file, lineNo, "row has " + t.size()
            + " fields and no column header was seen; row skipped"));
        return;
      }
    }
    if (t.size() <= ti + 3) {
      warnings.add(new ParseWarning(file, lineNo, "row has only " + t.size()
          + " fields, the out-of-place busbw needs " + (ti + 4) + " (truncated?); row skipped"));
      return;
    }
    int expected = run.fieldCount > 0 ? run.fieldCount : t.size();
    if (t.size() < expected) {
      warnings.add(new ParseWarning(file, lineNo, "row has " + t.size() + " of " + expected
          + " fields (truncated?); out-of-place columns used"));
    }
    Long bytes = parseLong(t.get(0));
    double us = number(t.get(ti));
    double alg = number(t.get(ti + 1));
    double bus = number(t.get(ti + 2));
    String bad = bytes == null ? "size '" + t.get(0) + "'"
        : !(us > 0) ? "time '" + t.get(ti) + "'"
        : !(alg >= 0) ? "algbw '" + t.get(ti + 1) + "'"
        : !(bus >= 0) ? "busbw '" + t.get(ti + 2) + "'"
        : null;
    if (bad != null) {
      warnings.add(new ParseWarning(file, lineNo, "out-of-place " + bad
          + " is not a usable number; row skipped"));
      return;
    }
    String implausible = MeasurementBounds.implausible(bytes, us * 1e-6, alg * 1e9, bus * 1e9);
    if (implausible != null) {
      warnings.add(new ParseWarning(file, lineNo, "implausible measurement with " + implausible
          + "; row skipped"));
      return;
    }
    run.rows.add(new PendingRow(lineNo, bytes, us * 1e-6, alg * 1e9, bus * 1e9));
  }

  private static Long parseLong(String s) {
    try {
      long v = AsciiDigits.parseLong(s);
      return v >= 0 ? v : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static double number(String s) {
    if (!NUMBER.matcher(s).matches()) {
      return Double.NaN;
    }
    double v = AsciiDigits.parseDecimal(s);
    return Double.isFinite(v) ? v : Double.NaN;
  }

  private void finishRun(String file, Run run, List<MeasuredPoint> points,
      List<ParseWarning> warnings, int gpusPerNode, Optional<Collective> fromLog,
      Optional<Collective> fromFile, int lastLine) {
    if (!run.hasRows) {
      return;
    }
    int endLine = Math.max(1, lastLine);
    if (!run.footer) {
      warnings.add(new ParseWarning(file, endLine,
          "no '# Avg bus bandwidth' footer after the rows: the log looks truncated"));
    }
    if (run.rows.isEmpty()) {
      return;
    }
    int[] ranksAndNodes = ranksAndNodes(file, run, warnings, gpusPerNode);
    if (ranksAndNodes == null) {
      return;
    }
    int ranks = Math.max(1, ranksAndNodes[0]);
    Collective c = collective(file, run, warnings, ranks, fromLog, fromFile);
    if (c != null) {
      addPoints(file, run, c, ranks, ranksAndNodes[1], points, warnings);
    }
  }

  /**
   * The ranks of one group and the nodes they span: from the {@code #  Rank} lines, else from
   * {@code # nThread} (with a warning).
   *
   * @return {ranks, nodes}, or null (with a warning) when neither line was seen
   */
  private static int[] ranksAndNodes(String file, Run run, List<ParseWarning> warnings,
      int gpusPerNode) {
    if (!run.ranks.isEmpty()) {
      int groups = Math.max(1, run.groups.size());
      return new int[] {run.ranks.size() / groups, Math.max(1, run.hostsOfGroup0.size())};
    } else if (run.threadGpus > 0) {
      int ranks = run.threadGpus;
      int nodes = (ranks + gpusPerNode - 1) / gpusPerNode;
      warnings.add(new ParseWarning(file, run.rows.get(0).line(), "no '#  Rank' lines: assumed "
          + ranks + " GPUs (nThread x nGpus of one process) on " + nodes + " node(s)"));
      return new int[] {ranks, nodes};
    }
    warnings.add(new ParseWarning(file, run.rows.get(0).line(),
        "neither '#  Rank' lines nor a '# nThread' line: the GPU count is unknown; rows skipped"));
    return null;
  }

  /**
   * The run's collective: from its start line, else from the log or the file name, else guessed
   * from busbw/algbw (with a warning).
   *
   * @return the collective, or null (with a warning) when nothing tells
   */
  private static Collective collective(String file, Run run, List<ParseWarning> warnings,
      int ranks, Optional<Collective> fromLog, Optional<Collective> fromFile) {
    Collective c = run.collective;
    if (c == null) {
      c = fromLog.or(() -> fromFile).orElse(null);
    }
    if (c == null) {
      c = guessFromRatio(run, ranks);
      if (c == null) {
        warnings.add(new ParseWarning(file, run.rows.get(0).line(), "cannot tell which collective"
            + " this is; name the file after the nccl-tests binary (e.g. all_gather_perf.log);"
            + " rows skipped"));
        return null;
      }
      warnings.add(new ParseWarning(file, run.rows.get(0).line(), "no binary name in the log or"
          + " file name; busbw/algbw = 2(n-1)/n, so taken as all_reduce"));
    }
    return c;
  }

  /**
   * One point per row, with a warning where busbw is not algbw times the bus factor (not for one
   * rank, whose rows {@link BenchmarkLogReader} skips with one warning).
   */
  private static void addPoints(String file, Run run, Collective c, int ranks, int nodes,
      List<MeasuredPoint> points, List<ParseWarning> warnings) {
    int groups = Math.max(1, run.groups.size());
    double factor = c.busFactor(ranks);
    for (PendingRow r : run.rows) {
      // busbw = algbw * factor, both printed with 2 decimals: allow the rounding of both columns.
      double tol = 0.006e9 * (1 + factor) + 0.005 * r.busbw();
      if (ranks > 1 && r.algbw() > 0 && Math.abs(r.busbw() - r.algbw() * factor) > tol) {
        warnings.add(new ParseWarning(file, r.line(), String.format(java.util.Locale.ROOT,
            "busbw %.2f GB/s is not algbw %.2f GB/s x %.4f for %s on %d ranks; check the rank count",
            r.busbw() / 1e9, r.algbw() / 1e9, factor, CollectiveNames.label(c), ranks)));
      }
      points.add(new MeasuredPoint(file, r.line(), c, ranks, groups, nodes, r.bytes(),
          r.seconds(), r.algbw(), r.busbw()));
    }
  }

  private static Collective guessFromRatio(Run run, int ranks) {
    if (ranks <= 2) {
      return null;
    }
    for (PendingRow r : run.rows) {
      if (r.algbw() >= 1e9) {
        double ratio = r.busbw() / r.algbw();
        return Math.abs(ratio - Collective.ALL_REDUCE.busFactor(ranks)) < 0.02 ? Collective.ALL_REDUCE
            : null;
      }
    }
    return null;
  }
}
