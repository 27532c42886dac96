package io.meshplan.cli;

import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.TerminalText;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Maps every exception that leaves a subcommand to an exit code and one line on stderr. Bad input
 * is exit 2, infeasibility exit 3, and anything else is an internal error, exit 1: one line that
 * names the error and points to {@code --debug}, which adds the stack trace.
 */
final class ExceptionMapper implements CommandLine.IExecutionExceptionHandler {
  private final boolean debug;

  /**
   * Creates the mapper.
   *
   * @param debug whether to print stack traces
   */
  ExceptionMapper(boolean debug) {
    this.debug = debug;
  }

  @Override
  public int handleExecutionException(
      Exception ex, CommandLine commandLine, CommandLine.ParseResult parseResult) {
    return handle(ex, commandLine.getErr());
  }

  /**
   * Prints one line for any throwable and returns its exit code.
   *
   * @param ex what was thrown
   * @param err standard error
   * @return the exit code
   */
  int handle(Throwable ex, PrintWriter err) {
    if (ex instanceof InputException) {
      err.println("meshplan: error: " + oneLine(ex.getMessage()));
      trace(ex, err);
      return ExitCodes.BAD_INPUT;
    }
    if (ex instanceof InfeasibleException) {
      err.println("meshplan: infeasible: " + oneLine(ex.getMessage()));
      trace(ex, err);
      return ExitCodes.INFEASIBLE;
    }
    String what;
    if (ex instanceof OutOfMemoryError) {
      what = "out of memory (the Java heap is too small for this input; raise -Xmx in "
          + "MESHPLAN_JAVA_OPTS or shrink the input)";
    } else if (ex instanceof StackOverflowError) {
      what = "the input is nested too deeply (stack overflow)";
    } else {
      String m = ex.getMessage();
      what = ex.getClass().getSimpleName() + (m == null ? "" : ": " + oneLine(m));
    }
    err.println("meshplan: internal error (please report it; run again with --debug for the "
        + "stack trace): " + what);
    trace(ex, err);
    return ExitCodes.INTERNAL;
  }

  private void trace(Throwable ex, PrintWriter err) {
    if (debug) {
      ex.printStackTrace(err);
    }
  }

  /** The longest message printed, characters; a longer one loses part of its middle. */
  static final int MAX_LINE = 1000;

  /** How much of an over-long line's end is kept: the reason that follows an echoed value. */
  private static final int TAIL = 400;

  /**
   * A warning as the CLI prints it on standard error: {@code meshplan: warning: } and the
   * message as one line ({@link #oneLine}).
   *
   * @param message the warning
   * @return the line
   */
  static String warning(String message) {
    return "meshplan: warning: " + oneLine(message);
  }

  /**
   * A note as the CLI prints it on standard error: {@code meshplan: note: } and the message as
   * one line ({@link #oneLine}).
   *
   * @param message the note
   * @return the line
   */
  static String note(String message) {
    return "meshplan: note: " + oneLine(message);
  }

  /**
   * A message as one line that keeps all it says: a line break or tab inside it (a flag's value,
   * a file's name or content echoed back, a parser's second line) is written as its escape
   * ({@code \n}, {@code \r}, {@code \t}) and every other control or format character as
   * {@link TerminalText} writes it, so nothing after the break is lost and nothing reaches the
   * terminal raw. A line over {@link #MAX_LINE} characters keeps its start and its last
   * {@link #TAIL} characters, where the reason after a long echoed value stands, and says how
   * much of the middle it left out.
   *
   * @param s the message, or null
   * @return the line
   */
  static String oneLine(String s) {
    if (s == null) {
      return "";
    }
    String line = TerminalText.escape(s.strip().replace("\r", "\\r").replace("\n", "\\n")
        .replace("\t", "\\t"));
    if (line.length() <= MAX_LINE) {
      return line;
    }
    int head = MAX_LINE - TAIL;
    int tail = line.length() - TAIL;
    // A cut never splits a character written as two UTF-16 units.
    head -= Character.isHighSurrogate(line.charAt(head - 1)) ? 1 : 0;
    tail += Character.isLowSurrogate(line.charAt(tail)) ? 1 : 0;
    return line.substring(0, head) + " ... (" + (tail - head) + " more characters) ... "
        + line.substring(tail);
  }
}
