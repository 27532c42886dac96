package io.meshplan.sim;

/**
 * Why a schedule cannot run with a given pipeline depth and number of microbatches. A value, not an
 * exception: the caller decides whether it is a user error.
 *
 * @param message one line that says what is wrong and how to fix it
 */
public record ScheduleError(String message) {
  /** Checks the message. */
  public ScheduleError {
    if (message == null || message.isBlank()) {
      throw new IllegalArgumentException("message must not be blank");
    }
  }
}
