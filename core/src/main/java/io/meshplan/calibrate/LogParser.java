package io.meshplan.calibrate;

import java.util.List;

/**
 * Reads one kind of benchmark log. Parsers never throw on bad content: every problem becomes a
 * {@link ParseWarning} with a line number, and the rows that make sense are still returned.
 */
public sealed interface LogParser
    permits NcclTestsTextParser, NcclTestsJsonParser, AlpaProfileParser, BandwidthTableParser {

  /**
   * Whether the lines look like this parser's format.
   *
   * @param lines the file's lines with launcher prefixes removed
   * @return true to let this parser read them
   */
  boolean accepts(List<String> lines);

  /**
   * Parses the lines.
   *
   * @param file the file name for positions
   * @param lines the file's lines with launcher prefixes removed
   * @param gpusPerNode GPUs per node of the cluster, used when the log does not say which host each
   *     rank ran on
   * @return points and warnings
   */
  ParseResult parse(String file, List<String> lines, int gpusPerNode);
}
