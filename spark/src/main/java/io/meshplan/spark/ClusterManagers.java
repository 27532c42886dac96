package io.meshplan.spark;

import io.meshplan.util.InputException;
import java.util.ServiceLoader;
import org.apache.spark.scheduler.ExternalClusterManager;

/**
 * Refuses a master that no cluster manager on the class path serves, before a Spark context is
 * opened. spark-core runs {@code local} and {@code spark://} masters itself; {@code k8s://} and
 * {@code yarn} are served by the {@code spark-kubernetes} and {@code spark-yarn} modules, found
 * as {@link ExternalClusterManager} services whose {@code canCreate} accepts the master (Spark
 * 4.0's {@code SparkContext.getClusterManager} looks them up the same way and otherwise fails
 * with "Could not parse Master URL" and a stack trace). {@code ./meshplan-spark} ships neither
 * module; a Spark distribution built with them, run through {@code spark-submit}, has them.
 */
final class ClusterManagers {
  private ClusterManagers() {}

  /**
   * Checks that a master can be run here.
   *
   * @param master the master as Spark receives it, e.g. {@code k8s://https://host:6443}
   * @throws InputException naming the missing module when no cluster manager serves it
   */
  static void require(String master) {
    if (master.startsWith("local") || master.startsWith("spark://")) {
      return;
    }
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    if (loader == null) {
      loader = ClusterManagers.class.getClassLoader();
    }
    for (ExternalClusterManager m : ServiceLoader.load(ExternalClusterManager.class, loader)) {
      if (m.canCreate(master)) {
        return;
      }
    }
    String module = master.startsWith("k8s") ? "Kubernetes (spark-kubernetes_2.13)"
        : "YARN (spark-yarn_2.13)";
    throw new InputException("Spark master " + master + ": this Spark has no " + module
        + " support on the class path; run meshplan through spark-submit of a Spark"
        + " distribution built with it, or use local[*] or spark://HOST:PORT");
  }
}
