package io.meshplan.exec;

import java.util.Map;

/**
 * A service (found with {@link java.util.ServiceLoader}) that opens a {@link TaskExecutor} on a
 * distributed engine, so that core code can use an engine whose module it does not depend on; the
 * {@code meshplan-spark} module provides Apache Spark under the name {@code spark}.
 */
public interface ExecutorProvider {
  /**
   * The engine's name.
   *
   * @return e.g. "spark"
   */
  String name();

  /**
   * Opens an executor.
   *
   * @param master where the engine runs (for Spark: {@code local[*]}, {@code spark://HOST:7077},
   *     {@code k8s://https://HOST:PORT}, ...)
   * @param settings engine settings added to its defaults (for Spark: configuration keys)
   * @return the executor; the caller closes it
   */
  TaskExecutor open(String master, Map<String, String> settings);

  /**
   * Opens an executor, with or without the engine's own log on standard error. An engine's log
   * stays off standard error by default, so that a failure ends in meshplan's one line.
   *
   * @param master where the engine runs
   * @param settings engine settings added to its defaults
   * @param engineLog whether the engine may log its warnings and errors on standard error
   * @return the executor; the caller closes it
   */
  default TaskExecutor open(String master, Map<String, String> settings, boolean engineLog) {
    return open(master, settings);
  }
}
