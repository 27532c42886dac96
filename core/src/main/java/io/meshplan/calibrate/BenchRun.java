package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.util.Require;

/**
 * One benchmark invocation of a {@link BenchPlan}.
 *
 * @param collective the collective measured
 * @param nodes nodes taking part
 * @param gpusPerNode processes (one GPU each) per node
 * @param logFile the log file name, which {@code meshplan calibrate} reads back
 * @param command the exact shell command, including the {@code tee} into the log
 */
public record BenchRun(Collective collective, int nodes, int gpusPerNode, String logFile,
    String command) {
  /** Validates the fields. */
  public BenchRun {
    Require.nonNull(collective, "collective");
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "GPUs per node");
    Require.nonNull(logFile, "log file");
    Require.nonNull(command, "command");
  }
}
