package io.meshplan.report;

import io.meshplan.plan.PipelinePlan;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * One plan (or simulated configuration) to draw.
 *
 * @param title a heading, e.g. the command that produced it
 * @param plan the plan; empty for a configuration that is not a plan of contiguous layer ranges
 *     (the interleaved schedule), in which case the cluster view assumes each device group takes
 *     the next block of GPUs in device order, as Megatron-LM places pipeline ranks
 * @param simulation the simulator's run of it, with its events
 * @param run its whole training run with interruptions, or empty when none was asked for
 * @param cluster the cluster it runs on and the memory it is judged by, where they are not the
 *     report's ({@link ReportInput}): a compared plan's own; empty for the report's
 */
public record ReportSide(String title, Optional<PipelinePlan> plan, SimulationResult simulation,
    Optional<TrainingRun> run, Optional<Cluster> cluster) {
  /**
   * A side's own cluster.
   *
   * @param nodes nodes
   * @param gpusPerNode GPUs per node
   * @param gpuMemoryBytes the memory one GPU may use, bytes
   */
  public record Cluster(int nodes, int gpusPerNode, double gpuMemoryBytes) {
    /** Validates the fields. */
    public Cluster {
      Require.positive(nodes, "nodes");
      Require.positive(gpusPerNode, "GPUs per node");
      Require.that(gpuMemoryBytes > 0 && Double.isFinite(gpuMemoryBytes),
          "GPU memory must be positive, got " + gpuMemoryBytes);
    }
  }

  /** Validates the fields. */
  public ReportSide {
    Require.nonNull(title, "title");
    Require.nonNull(plan, "plan");
    Require.nonNull(simulation, "simulation");
    Require.nonNull(run, "run");
    Require.nonNull(cluster, "cluster");
    plan.ifPresent(p -> Require.that(p.pipelineStages() == simulation.stages().size(),
        "the plan has " + p.pipelineStages() + " stages but the simulation "
            + simulation.stages().size() + " groups"));
  }

  /**
   * A plan without a training run.
   *
   * @param title the heading
   * @param plan the plan, or empty
   * @param simulation the simulation
   */
  public ReportSide(String title, Optional<PipelinePlan> plan, SimulationResult simulation) {
    this(title, plan, simulation, Optional.empty(), Optional.empty());
  }

  /**
   * This side with its training run.
   *
   * @param r the run, or empty
   * @return the side
   */
  public ReportSide withRun(Optional<TrainingRun> r) {
    return new ReportSide(title, plan, simulation, r, cluster);
  }

  /**
   * This side on its own cluster, judged by its own memory.
   *
   * @param c the cluster
   * @return the side
   */
  public ReportSide on(Cluster c) {
    return new ReportSide(title, plan, simulation, run, Optional.of(c));
  }
}
