package io.meshplan.util;

/**
 * The input is well formed but admits no solution, for example when no sharding fits in device
 * memory. The message says how much would be needed. The command line maps it to exit code 3.
 */
public class InfeasibleException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message one line that says what does not fit and what would be needed
   */
  public InfeasibleException(String message) {
    super(message);
  }
}
