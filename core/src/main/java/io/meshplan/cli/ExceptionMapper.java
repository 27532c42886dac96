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

  /** The longest error line printed, characters; a value echoed back is cut beyond it. */
  static final int MAX_LINE = 1000;

  /**
   * A message as one line: its first line, at most {@link #MAX_LINE} characters, so that a
   * flag's value of any length echoed back in it stays readable, with the control characters of
   * the values it quotes escaped ({@link TerminalText}).
   *
   * @param s the message, or null
   * @return the line
   */
  static String oneLine(String s) {
    if (s == null) {
      return "";
    }
    String t = s.strip();
    int nl = t.indexOf('\n');
    String line = TerminalText.escape(nl < 0 ? t : t.substring(0, nl).strip() + " ...");
    return line.length() <= MAX_LINE ? line : line.substring(0, MAX_LINE) + " ... ("
        + (line.length() - MAX_LINE) + " more characters)";
  }
}
