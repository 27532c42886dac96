package io.meshplan.interop.hlo;

import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.Require;
import java.util.List;

/**
 * A pipeline plan of an HLO training step: its layers, the stages the DP chose and their
 * simulation. The module's batch is one microbatch.
 *
 * @param module the module's name
 * @param cluster the cluster, e.g. {@code 2x4:a100-80gb:ib-hdr200}
 * @param layerNames the layers, from their scopes
 * @param stages the stages, first to last
 * @param microbatches microbatches per iteration
 * @param simulation the simulated iteration under 1F1B
 * @param stats how much the search did
 */
public record HloPipelinePlan(String module, String cluster, List<String> layerNames,
    List<Stage> stages, int microbatches, SimulationResult simulation, Stats stats) {

  /** Copies the lists and checks that the stages cover the layers in order. */
  public HloPipelinePlan {
    Require.nonNull(module, "module");
    Require.nonNull(cluster, "cluster");
    layerNames = List.copyOf(layerNames);
    stages = List.copyOf(stages);
    Require.that(!stages.isEmpty(), "a plan needs at least one stage");
    int next = 0;
    for (Stage s : stages) {
      Require.that(s.firstLayer() == next, "stage starts at layer " + s.firstLayer() + " but "
          + next + " is next");
      next = s.lastLayer() + 1;
    }
    Require.that(next == layerNames.size(), "stages cover " + next + " of "
        + layerNames.size() + " layers");
    Require.positive(microbatches, "microbatches");
    Require.nonNull(simulation, "simulation");
    Require.nonNull(stats, "stats");
  }

  /**
   * One stage.
   *
   * @param firstLayer first layer
   * @param lastLayer last layer, inclusive
   * @param submesh the submesh, nodes x GPUs per node
   * @param firstDevice the stage's first GPU in the cluster (GPUs numbered node by node)
   * @param dataParallel logical mesh axis 0
   * @param tensorParallel logical mesh axis 1
   * @param tensors the largest weights of the stage with their layouts
   * @param cost what the simulator was given
   */
  public record Stage(int firstLayer, int lastLayer, SubmeshShape submesh, int firstDevice,
      int dataParallel, int tensorParallel, List<TensorSharding> tensors, StageCost cost) {
    /** Copies the list. */
    public Stage {
      tensors = List.copyOf(tensors);
      Require.nonNull(submesh, "submesh");
      Require.nonNull(cost, "cost");
    }
  }

  /**
   * What the search did.
   *
   * @param distinctLayers layers with different fingerprints (each is solved per mesh)
   * @param meshes logical meshes tried
   * @param layerSolves ILP solves
   * @param latenciesTried values of the DP's t_max evaluated
   */
  public record Stats(int distinctLayers, int meshes, int layerSolves, int latenciesTried) {}
}
