package io.meshplan.spark;

import java.lang.reflect.InvocationTargetException;

/**
 * Where Spark's own log goes. The module's {@code log4j2.properties} turns it off, so that a
 * failure (a master that cannot be parsed, reached or run) ends in meshplan's one line and not in
 * Spark's log lines and stack traces; with meshplan's {@code --debug} its warnings and errors go
 * to standard error as well.
 *
 * <p>Spark 4 logs through log4j 2, whose {@code Configurator.setRootLevel} sets the level. It is
 * called by reflection: log4j-core's classes carry annotations of a build tool that is not on the
 * class path, which the compiler would warn about. Under a {@code spark-submit} whose logging is
 * not log4j 2, the level stays as that logging sets it.
 */
final class SparkLogging {
  private SparkLogging() {}

  /**
   * Sets the level of Spark's log.
   *
   * @param onStderr true for warnings and errors on standard error, false for nothing
   */
  static void route(boolean onStderr) {
    try {
      Class<?> level = Class.forName("org.apache.logging.log4j.Level");
      Object l = level.getMethod("getLevel", String.class).invoke(null,
          onStderr ? "WARN" : "OFF");
      Class.forName("org.apache.logging.log4j.core.config.Configurator")
          .getMethod("setRootLevel", level).invoke(null, l);
    } catch (ClassNotFoundException | NoSuchMethodException | IllegalAccessException
        | InvocationTargetException e) {
      // Another logging back end: its own configuration decides.
    }
  }
}
