package io.meshplan.exec;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/** Waiting for a task: its own exception comes back unwrapped, so one line still reaches the user. */
public final class Futures {
  private Futures() {
  }

  /**
   * Waits for a task's result.
   *
   * @param <T> the result type
   * @param task the task
   * @param what what the task does, for the interruption message (e.g. "planning")
   * @return the result
   * @throws RuntimeException the task's own unchecked exception, or IllegalStateException when
   *     interrupted or for a checked cause
   */
  public static <T> T await(Future<T> task, String what) {
    try {
      return task.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while " + what, e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(e.getCause());
    }
  }
}
