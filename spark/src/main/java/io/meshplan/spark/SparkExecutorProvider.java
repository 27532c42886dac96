package io.meshplan.spark;

import io.meshplan.exec.ExecutorProvider;
import io.meshplan.exec.TaskExecutor;
import io.meshplan.util.InputException;
import java.util.Map;
import org.apache.spark.SparkConf;

/**
 * Opens {@link SparkExecutor}s for {@code --spark MASTER}. Defaults: the application name
 * {@code meshplan}, a task tried up to {@value #MAX_FAILURES} times (also in local mode, whose
 * master becomes {@code local[N,4]}), no web UI, the console progress bar on, a connect
 * timeout of {@link MasterProbe#CONNECT_TIMEOUT} (a standalone or Kubernetes master that accepts
 * no connection is refused before the context opens), and Spark's own log off unless asked for
 * ({@link SparkLogging}). Configuration given
 * as {@code spark.*} Java system properties or by {@code spark-submit} wins over these defaults,
 * and {@code settings} win over both.
 */
public final class SparkExecutorProvider implements ExecutorProvider {
  /** How often a task is tried before the job fails. */
  static final int MAX_FAILURES = 4;

  @Override
  public String name() {
    return "spark";
  }

  @Override
  public TaskExecutor open(String master, Map<String, String> settings) {
    return open(master, settings, false);
  }

  /**
   * Opens an executor after checking the master: its form, a cluster manager that serves it
   * ({@link ClusterManagers}) and, for a standalone or Kubernetes master, a connection ({@link
   * MasterProbe}); a context that still fails to start is refused in one line as well.
   */
  @Override
  public TaskExecutor open(String master, Map<String, String> settings, boolean engineLog) {
    SparkLogging.route(engineLog);
    SparkConf conf = conf(master, settings);
    ClusterManagers.require(conf.get("spark.master"));
    MasterProbe.requireReachable(conf.get("spark.master"), MasterProbe.CONNECT_TIMEOUT);
    return new SparkExecutor(conf);
  }

  /**
   * The configuration for a master.
   *
   * @param master the master URL
   * @param settings extra configuration
   * @return the configuration
   */
  static SparkConf conf(String master, Map<String, String> settings) {
    SparkConf conf = new SparkConf(true);
    conf.setMaster(withRetries(master));
    conf.setIfMissing("spark.app.name", "meshplan");
    conf.setIfMissing("spark.task.maxFailures", Integer.toString(MAX_FAILURES));
    conf.setIfMissing("spark.ui.enabled", "false");
    conf.setIfMissing("spark.ui.showConsoleProgress", "true");
    // A new RPC connection (to the master, or to executors) that hangs fails after the probe's
    // timeout instead of spark.network.timeout's 120 s.
    conf.setIfMissing("spark.rpc.io.connectionTimeout", MasterProbe.CONNECT_TIMEOUT.toSeconds()
        + "s");
    for (Map.Entry<String, String> e : settings.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    return conf;
  }

  /**
   * Local masters retry failed tasks only when the master says so: {@code local[*]} becomes
   * {@code local[*,4]}.
   */
  static String withRetries(String master) {
    if (master.equals("local")) {
      return "local[1," + MAX_FAILURES + "]";
    }
    if (master.matches("local\\[(\\*|[1-9][0-9]{0,4})\\]")) {
      return master.substring(0, master.length() - 1) + "," + MAX_FAILURES + "]";
    }
    boolean known = master.matches("local\\[(\\*|[1-9][0-9]{0,4}),[1-9][0-9]{0,4}\\]")
        || master.matches("spark://[^\\s/:,]+:[0-9]{1,5}(,[^\\s/:,]+:[0-9]{1,5})*")
        || master.matches("k8s://\\S+") || master.equals("yarn");
    if (!known) {
      throw new InputException("Spark master '" + master + "': expected local, local[N], "
          + "local[*], local[N,F], spark://HOST:PORT, k8s://URL or yarn");
    }
    return master;
  }
}
