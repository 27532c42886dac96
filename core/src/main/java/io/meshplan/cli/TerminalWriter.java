package io.meshplan.cli;

import io.meshplan.util.TerminalText;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;

/**
 * Standard output or standard error as every command sees it: whatever is printed (an error, a
 * warning, a plan, JSON, picocli's own messages) passes through {@link TerminalText}, so no
 * control or format character from an input reaches the terminal raw; newlines and tabs, which
 * meshplan writes itself, pass. This is the one place the class is closed: a message built
 * anywhere with a model name, a GPU name, a path or a log field in it is escaped on its way out.
 *
 * <p>The progress line alone writes controls of its own (carriage returns), through {@link
 * #printVerbatim}.
 */
final class TerminalWriter extends PrintWriter {
  private final PrintWriter target;

  private TerminalWriter(PrintWriter target) {
    super(new Escaping(target), true);
    this.target = target;
  }

  /**
   * Wraps a stream: writes through it, escaped, flushing at each line.
   *
   * @param target the real standard output or error
   * @return the escaping writer
   */
  static TerminalWriter of(PrintWriter target) {
    return new TerminalWriter(target);
  }

  /**
   * Writes text meshplan made itself, controls and all, to the stream under a writer.
   *
   * @param w a command's standard error (a {@link TerminalWriter}, or another writer in tests)
   * @param text the text, e.g. a carriage return and a progress line
   */
  static void printVerbatim(PrintWriter w, String text) {
    if (w instanceof TerminalWriter t) {
      // Under the writer's lock, as its own prints are, so a redraw from the progress thread
      // never lands inside a line.
      synchronized (t.lock) {
        t.flush();
        t.target.print(text);
        t.target.flush();
      }
    } else {
      w.print(text);
      w.flush();
    }
  }

  /** Escapes as it writes; a surrogate pair split across two writes is joined first. */
  private static final class Escaping extends Writer {
    private final Writer out;
    private char high;

    Escaping(Writer out) {
      this.out = out;
    }

    @Override
    public void write(char[] buf, int off, int len) throws IOException {
      StringBuilder sb = new StringBuilder(len + 8);
      if (high != 0) {
        sb.append(high);
        high = 0;
      }
      sb.append(buf, off, len);
      if (sb.length() > 0 && Character.isHighSurrogate(sb.charAt(sb.length() - 1))) {
        high = sb.charAt(sb.length() - 1);
        sb.setLength(sb.length() - 1);
      }
      out.write(TerminalText.escapeKeepingLines(sb.toString()));
    }

    /** A half pair still held at a flush stays alone: it is written as its escape. */
    @Override
    public void flush() throws IOException {
      if (high != 0) {
        out.write(TerminalText.escapeKeepingLines(String.valueOf(high)));
        high = 0;
      }
      out.flush();
    }

    @Override
    public void close() throws IOException {
      flush();
      out.close();
    }
  }
}
