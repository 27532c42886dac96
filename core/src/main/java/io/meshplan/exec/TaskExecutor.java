package io.meshplan.exec;

import java.io.Serializable;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * Runs independent planning tasks (a sweep point, a batch of stage candidates) and returns their
 * results in task order, so what the caller makes of them does not depend on where or in which
 * order they ran. Implementations: {@link LocalExecutor} (a thread pool, the default) and, in the
 * {@code meshplan-spark} module, Apache Spark (found through {@link ExecutorProvider}).
 *
 * <p>An engine may run a task more than once (Spark retries a task whose executor died), so a task
 * must be a pure function of its input.
 */
public interface TaskExecutor extends AutoCloseable {
  /**
   * Applies {@code f} to every task.
   *
   * @param job a short name of the work, shown by engines that display jobs
   * @param tasks the tasks, serializable
   * @param f the work, serializable
   * @param done told the number of finished tasks as they finish (at least once, at the end)
   * @param <T> the task type
   * @param <R> the result type
   * @return one result per task, in task order
   */
  <T extends Serializable, R extends Serializable> List<R> map(String job, List<T> tasks,
      TaskFunction<T, R> f, IntConsumer done);

  /**
   * Whether tasks run in the caller's process on the objects it passed, unserialized: then work
   * the caller does before {@link #map} (solving shared layer prices, say) is seen by the tasks.
   *
   * @return true for this process's threads; false for an engine that ships tasks elsewhere
   */
  default boolean inProcess() {
    return false;
  }

  /**
   * What runs the tasks, for messages and reports (e.g. "local, 2 threads").
   *
   * @return one line
   */
  String description();

  /** Releases threads or the engine's context; the executor cannot be used afterwards. */
  @Override
  void close();
}
