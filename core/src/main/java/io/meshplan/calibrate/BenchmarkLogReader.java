package io.meshplan.calibrate;

import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.Require;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Reads a benchmark log of any supported kind: removes launcher prefixes, picks the first parser
 * that accepts the text (nccl-tests JSON, nccl-tests text, Alpa lines, bandwidth tables), and
 * returns its points and warnings. A text no parser accepts gives one warning and no points.
 *
 * <p>Prefixes removed from the start of each line: Open MPI's {@code --tag-output} ({@code
 * [1,0]<stdout>:}) and torchrun's {@code --tee} ({@code [default0]:}).
 */
public final class BenchmarkLogReader {
  private static final Pattern TAG = Pattern.compile("^\\[\\d+,\\d+\\]<std(?:out|err)>:\\s?");
  private static final Pattern TORCHRUN = Pattern.compile("^\\[default\\d+\\]:\\s?");
  private static final List<LogParser> PARSERS = List.of(new NcclTestsJsonParser(),
      new NcclTestsTextParser(), new AlpaProfileParser(), new BandwidthTableParser());

  private final int gpusPerNode;

  /**
   * Creates a reader.
   *
   * @param gpusPerNode the cluster's GPUs per node, for logs that do not name hosts
   */
  public BenchmarkLogReader(int gpusPerNode) {
    this.gpusPerNode = Require.positive(gpusPerNode, "GPUs per node");
  }

  /**
   * Reads a file.
   *
   * @param file the path, as the user gave it
   * @return points and warnings
   * @throws InputException if the file cannot be read
   */
  public ParseResult read(Path file) {
    String text;
    byte[] bytes = InputFiles.readBytes(file, InputFiles.LOG_MAX_BYTES, "benchmark log");
    try {
      text = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      text = new String(bytes, StandardCharsets.ISO_8859_1);
    }
    return parse(file.toString(), text);
  }

  /** The longest time one collective may take to count as a measurement: one hour, in seconds. */
  public static final double MAX_SECONDS = 3600;
  /** The highest bandwidth a point may report: 1e15 bytes/s (1 PB/s), beyond any link. */
  public static final double MAX_BANDWIDTH = 1e15;
  /** The largest message a point may report: 2^50 bytes (1 PiB). */
  public static final long MAX_BYTES = 1L << 50;

  /**
   * Drops the points whose numbers no benchmark can produce (a time of 1e300 s, a bandwidth of
   * 1e300 B/s), with a warning at their line: the fitters square and sum these numbers, and such
   * values would overflow to infinity and NaN.
   */
  private static ParseResult plausible(ParseResult r) {
    List<MeasuredPoint> keep = new ArrayList<>();
    List<ParseWarning> warnings = new ArrayList<>(r.warnings());
    for (MeasuredPoint p : r.points()) {
      String bad = p.seconds() > MAX_SECONDS ? "a time of " + p.seconds() + " s (more than an hour)"
          : p.busbw() > MAX_BANDWIDTH || p.algbw() > MAX_BANDWIDTH
              ? "a bandwidth above 1 PB/s"
          : p.bytes() > MAX_BYTES ? "a size of " + p.bytes() + " bytes (more than 1 PiB)" : null;
      if (bad == null) {
        keep.add(p);
      } else {
        warnings.add(new ParseWarning(p.file(), p.line(), "implausible measurement with " + bad
            + "; row skipped"));
      }
    }
    return new ParseResult(keep, warnings);
  }

  /**
   * Parses the text of a log.
   *
   * @param file the name used in positions
   * @param text the whole log
   * @return points and warnings; never throws on bad content
   */
  public ParseResult parse(String file, String text) {
    List<String> lines = new ArrayList<>();
    for (String l : text.split("\r?\n|\r", -1)) {
      String s = TAG.matcher(l).replaceFirst("");
      lines.add(TORCHRUN.matcher(s).replaceFirst(""));
    }
    if (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
      lines.remove(lines.size() - 1);
    }
    for (LogParser p : PARSERS) {
      if (p.accepts(lines)) {
        return plausible(p.parse(file, lines, gpusPerNode));
      }
    }
    return new ParseResult(List.of(), List.of(new ParseWarning(file, 1, "not a log meshplan"
        + " can read (expected nccl-tests text or -J JSON, Alpa profile_communication lines, or an"
        + " all_reduce_bench busbw/algbw table); file skipped")));
  }
}
