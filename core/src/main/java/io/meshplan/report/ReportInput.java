package io.meshplan.report;

import io.meshplan.util.Require;
import java.util.Optional;

/**
 * Everything a report shows.
 *
 * @param main the plan the report is about
 * @param compare a second plan drawn beside it, or empty
 * @param cluster the report's cluster and the memory one of its GPUs may use (the line the
 *     memory bars are drawn against): every side's but one that carries its own
 */
public record ReportInput(ReportSide main, Optional<ReportSide> compare,
    ReportSide.Cluster cluster) {
  /** Validates the fields. */
  public ReportInput {
    Require.nonNull(main, "main");
    Require.nonNull(compare, "compare");
    Require.nonNull(cluster, "cluster");
  }

  /**
   * The cluster a side runs on: its own, else the report's.
   *
   * @param s the side
   * @return the cluster
   */
  ReportSide.Cluster clusterOf(ReportSide s) {
    return s.cluster().orElse(cluster);
  }
}
