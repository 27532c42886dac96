package io.meshplan.model;

import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads document lengths for {@link Packing}: one document's length in tokens per line, blank
 * lines and text after {@code #} ignored. A line may also hold a length and a count separated by
 * whitespace or one comma ({@code 1024 8} or {@code 1024,8}: eight documents of 1,024 tokens), as
 * a histogram is written, in text or CSV; an empty field ({@code 1024,}, {@code 1024,,8}) is
 * refused. Each
 * length is a positive integer below 2^31, each count a positive integer below 2^63; at most
 * {@link #MAX_DOCUMENTS} documents and {@link Packing#MAX_LENGTHS} distinct lengths.
 */
public final class PackingText {
  /** The most documents a file may count ({@link Packing#MAX_DOCUMENTS}). */
  public static final long MAX_DOCUMENTS = Packing.MAX_DOCUMENTS;

  /** The largest file read: 64 MiB, some ten million lines. */
  public static final long MAX_BYTES = 64L << 20;

  private PackingText() {}

  /**
   * Parses a file's text.
   *
   * @param where the file's name, for messages
   * @param text the text
   * @return the packing
   * @throws InputException naming the file and line of the first bad line, or an empty file
   */
  public static Packing parse(String where, String text) {
    Map<Integer, Long> histogram = new HashMap<>();
    long documents = 0;
    int lineNo = 0;
    for (String raw : text.split("\n", -1)) {
      lineNo++;
      int hash = raw.indexOf('#');
      String line = (hash >= 0 ? raw.substring(0, hash) : raw).strip();
      if (line.isEmpty()) {
        continue;
      }
      String[] f = line.split("[ \t]*,[ \t]*|[ \t]+", -1);
      if (f.length > 2) {
        throw bad(where, lineNo, "expected a document length in tokens, optionally followed by "
            + "a count");
      }
      int len;
      long count;
      try {
        len = AsciiDigits.parseInt(f[0]);
        count = f.length == 2 ? AsciiDigits.parseLong(f[1]) : 1;
      } catch (NumberFormatException e) {
        throw bad(where, lineNo, "'" + shown(line) + "' is not a length in tokens (and a count)"
            + ", positive integers below 2^31 (and 2^63)");
      }
      if (len <= 0 || count <= 0) {
        throw bad(where, lineNo, "lengths and counts must be at least 1, got '" + shown(line)
            + "'");
      }
      // Checked before adding, so one line's count cannot pass the bound or wrap the total.
      if (count > MAX_DOCUMENTS - documents) {
        throw bad(where, lineNo, "more than " + MAX_DOCUMENTS + " documents");
      }
      documents += count;
      histogram.merge(len, count, Long::sum);
      if (histogram.size() > Packing.MAX_LENGTHS) {
        throw bad(where, lineNo, "more than " + Packing.MAX_LENGTHS + " distinct lengths");
      }
    }
    if (histogram.isEmpty()) {
      throw new InputException(where + ": no document lengths (one length in tokens per line)");
    }
    return Packing.of(histogram);
  }

  private static InputException bad(String where, int line, String why) {
    return new InputException(where + ":" + line + ": " + why);
  }

  /** At most 40 characters of a line, for a message. */
  private static String shown(String line) {
    return io.meshplan.util.Words.clipped(line);
  }
}
