package io.meshplan.util;

/**
 * A problem with something the user gave: a flag, a file, a field. The message is one line that says
 * what was wrong, where (file, line, column or flag), and how to fix it. The command line maps it to
 * exit code 2 and never prints a stack trace for it.
 */
public class InputException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message one line: what, where, and how to fix it
   */
  public InputException(String message) {
    super(message);
  }

  /**
   * Creates the exception with a cause kept for debugging.
   *
   * @param message one line: what, where, and how to fix it
   * @param cause the underlying error
   */
  public InputException(String message, Throwable cause) {
    super(message, cause);
  }
}
