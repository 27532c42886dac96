package io.meshplan.report;

import io.meshplan.util.Require;
import java.util.Optional;

/**
 * Everything a report shows.
 *
 * @param main the plan the report is about
 * @param compare a second plan drawn beside it, or empty
 * @param nodes nodes of the cluster
 * @param gpusPerNode GPUs per node
 * @param gpuMemoryBytes memory capacity of one GPU, bytes (the line the memory bars are drawn
 *     against)
 */
public record ReportInput(ReportSide main, Optional<ReportSide> compare, int nodes,
    int gpusPerNode, double gpuMemoryBytes) {
  /** Validates the fields. */
  public ReportInput {
    Require.nonNull(main, "main");
    Require.nonNull(compare, "compare");
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "GPUs per node");
    Require.that(gpuMemoryBytes > 0 && Double.isFinite(gpuMemoryBytes),
        "GPU memory must be positive, got " + gpuMemoryBytes);
  }

  /**
   * The cluster a side runs on: its own, else the report's.
   *
   * @param s the side
   * @return the cluster
   */
  ReportSide.Cluster clusterOf(ReportSide s) {
    return s.cluster().orElseGet(() -> new ReportSide.Cluster(nodes, gpusPerNode,
        gpuMemoryBytes));
  }
}
