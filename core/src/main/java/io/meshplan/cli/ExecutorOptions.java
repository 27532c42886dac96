package io.meshplan.cli;

import io.meshplan.exec.ExecutorProvider;
import io.meshplan.exec.ExecutorProviders;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.exec.TaskExecutor;
import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.Map;
import picocli.CommandLine.Option;

/** Where planning tasks run: this process's threads (the default) or Apache Spark. */
final class ExecutorOptions {
  /** How to run with Spark, for the message when its module is missing. */
  static final String HOW_TO_RUN_SPARK = "build it with 'mvn -B -DskipTests package' and run "
      + "./meshplan-spark instead of ./meshplan, or spark-submit --class io.meshplan.cli.Main "
      + "spark/target/meshplan-spark.jar";

  @Option(names = "--spark", paramLabel = "MASTER", description = "Run the tasks on Apache "
      + "Spark: local[*] (embedded), spark://HOST:7077 (standalone) or k8s://https://HOST:PORT; "
      + "needs the meshplan-spark module (./meshplan-spark). Spark's own log stays off"
      + " standard error unless --debug is given.")
  String spark;

  /** Whether the engine may log on standard error: {@code --debug} (set by {@link Main}). */
  boolean engineLog;

  @Option(names = "--threads", paramLabel = "N", description = "Threads of the local executor "
      + "(default: one per processor; 1 runs the tasks one after another).")
  Integer threads;

  /** Whether the tasks run in this process. */
  boolean local() {
    return spark == null;
  }

  /**
   * The threads of this process that layer solves and local tasks may use.
   *
   * @return {@code --threads}, or one per processor
   */
  int threads() {
    if (threads != null && (threads < 1 || threads > 4096)) {
      throw new InputException("--threads must be from 1 to 4096, got " + threads);
    }
    return threads == null ? Runtime.getRuntime().availableProcessors() : threads;
  }

  /**
   * Opens the executor the flags ask for.
   *
   * @return the executor; the caller closes it
   */
  TaskExecutor open() {
    if (spark == null) {
      return new LocalExecutor(threads());
    }
    if (threads != null) {
      throw new InputException("--threads applies to the local executor; with --spark the "
          + "executors' cores decide (spark.executor.cores)");
    }
    if (spark.isBlank()) {
      throw new InputException("--spark needs a master such as local[*] or spark://HOST:7077");
    }
    ExecutorProvider p = ExecutorProviders.find("spark").orElseThrow(() -> new InputException(
        "--spark " + spark + ": the meshplan-spark module is not on the class path; "
            + HOW_TO_RUN_SPARK));
    return p.open(Words.trimmed(spark), Map.of(), engineLog);
  }
}
