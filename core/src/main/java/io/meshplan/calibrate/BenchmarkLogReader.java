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
    return parse(file.toString(), InputFiles.withoutMark(text));
  }

  /**
   * Drops the points of groups of one GPU, with one warning per file at the first of them: a
   * group of one rank moves no data between GPUs (nccl-tests prints a bus bandwidth of 0 for its
   * all-reduce, whose bus factor 2(n-1)/n is 0 at n = 1), so there is no communication to fit, and
   * a fit of it would put an infinite bus bandwidth (beta = 0) into the profile, which meshplan
   * refuses to read. The numbers of each row were checked by its parser ({@link
   * MeasurementBounds}).
   */
  private static ParseResult communicating(ParseResult r) {
    List<MeasuredPoint> keep = new ArrayList<>();
    List<ParseWarning> warnings = new ArrayList<>(r.warnings());
    MeasuredPoint first = null;
    int alone = 0;
    for (MeasuredPoint p : r.points()) {
      if (p.gpus() >= 2) {
        keep.add(p);
      } else {
        first = first == null ? p : first;
        alone++;
      }
    }
    if (first != null) {
      warnings.add(new ParseWarning(first.file(), first.line(), "measured on groups of 1 GPU,"
          + " which move no data between GPUs: no communication to fit; "
          + io.meshplan.util.Words.count(alone, "row") + " skipped"));
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
        return communicating(p.parse(file, lines, gpusPerNode));
      }
    }
    return new ParseResult(List.of(), List.of(new ParseWarning(file, 1, "not a log meshplan"
        + " can read (expected nccl-tests text or -J JSON, Alpa profile_communication lines, or an"
        + " all_reduce_bench busbw/algbw table); file skipped")));
  }
}
