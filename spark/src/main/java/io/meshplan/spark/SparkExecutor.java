package io.meshplan.spark;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.exec.TaskFunction;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Runs planning tasks on Apache Spark: one partition per task, so the engine schedules, retries
 * and (on a cluster) reruns the tasks of a lost executor one by one; {@code collect} returns the
 * results in partition order, which is task order. Spark shows the job's progress on the console.
 */
public final class SparkExecutor implements TaskExecutor {
  private final JavaSparkContext context;
  private final String master;

  /**
   * Starts a Spark context.
   *
   * @param conf the configuration, with its master set
   */
  public SparkExecutor(SparkConf conf) {
    Require.nonNull(conf, "conf");
    this.master = conf.get("spark.master");
    this.context = start(conf, master);
  }

  /**
   * Starts the context; a master Spark cannot run (one it cannot parse, or a cluster that refuses
   * the application) is bad input, reported in one line with Spark's own reason.
   */
  private static JavaSparkContext start(SparkConf conf, String master) {
    try {
      return new JavaSparkContext(conf);
    } catch (Exception e) {
      // Scala code throws SparkException, a checked exception, without declaring it.
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      String why = root.getMessage() == null ? root.getClass().getSimpleName()
          : root.getMessage().strip().lines().findFirst().orElse("");
      throw new InputException("Spark master " + master + ": Spark could not start (" + why
          + "); check the master and that it accepts this application", e);
    }
  }

  /**
   * The Spark context, for callers that need the engine itself (tests).
   *
   * @return the context
   */
  public JavaSparkContext context() {
    return context;
  }

  @Override
  public <T extends Serializable, R extends Serializable> List<R> map(String job, List<T> tasks,
      TaskFunction<T, R> f, IntConsumer done) {
    Require.nonNull(f, "task function");
    if (tasks.isEmpty()) {
      done.accept(0);
      return List.of();
    }
    context.setJobDescription("meshplan " + job + ": " + tasks.size() + " tasks");
    List<R> out;
    try {
      out = new ArrayList<>(context.parallelize(new ArrayList<>(tasks), tasks.size())
          .map(f::apply).collect());
    } catch (Exception e) {
      // Scala code throws SparkException without declaring it.
      if (context.sc().isStopped()) {
        // The application never got executors: a standalone master that is down or unreachable
        // gives up on the application and stops the context.
        throw new InputException("Spark master " + master + " did not run the job (is it "
            + "running and reachable from this machine?)");
      }
      if (e instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(e.getMessage(), e);
    }
    done.accept(tasks.size());
    return out;
  }

  @Override
  public String description() {
    return "spark, master " + master + ", default parallelism " + context.defaultParallelism();
  }

  @Override
  public void close() {
    context.close();
  }
}
