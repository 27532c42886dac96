package io.meshplan.export;

import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * A pipeline as Alpa's {@code ManualStageOption} states it, and the checks Alpa makes of one (Alpa
 * at b8078a9, {@code alpa/pipeline_parallel/stage_construction.py}: {@code
 * cluster_layers_and_slice_mesh} and {@code get_sliced_virtual_submeshes}), restated so that a file
 * Alpa would refuse is never written:
 *
 * <ol>
 *   <li>the stages' forward layer ids, read in order, are 0, 1, 2, ... up to the marked layers;
 *   <li>there are as many submesh shapes, logical shapes and auto-sharding option dicts as stages;
 *   <li>each logical shape's product is its submesh's GPU count;
 *   <li>the submeshes' GPUs add up to the cluster's;
 *   <li>Alpa places the submeshes largest first (a stable sort by size, read backwards, so of equal
 *       sizes the later stage first): a submesh as wide as a node takes the next whole nodes and
 *       must start on a node's first GPU; a narrower one must be one node high and fit into what
 *       is left of the current node; the cluster must end full.
 * </ol>
 *
 * A stage on {@code n} nodes of {@code m} GPUs is Alpa's physical shape {@code (n, m)}; its
 * logical mesh is {@code (data-parallel, tensor-parallel)}, the batch on axis 0.
 */
final class AlpaStages {
  private AlpaStages() {}

  /**
   * One stage.
   *
   * @param firstLayer its first marked layer (a transformer block)
   * @param lastLayer its last, inclusive
   * @param hosts the submesh's nodes
   * @param devicesPerHost the submesh's GPUs on each of them
   * @param dataParallel the logical mesh's axis 0
   * @param tensorParallel the logical mesh's axis 1
   * @param recompute what the stage's blocks recompute
   * @param zeroStage 0 (gradients all-reduced) or 1 (reduce-scattered, the update sharded)
   * @param recomputeLayers under full recomputation, the first blocks recomputed (the rest keep
   *     their activations); 0 for every block
   */
  record Stage(int firstLayer, int lastLayer, int hosts, int devicesPerHost, int dataParallel,
      int tensorParallel, Recompute recompute, int zeroStage, int recomputeLayers) {
    /** Validates the sizes. */
    Stage {
      Require.that(firstLayer >= 0 && lastLayer >= firstLayer, "a stage holds layers");
      Require.positive(hosts, "hosts");
      Require.positive(devicesPerHost, "devices per host");
      Require.positive(dataParallel, "data-parallel size");
      Require.positive(tensorParallel, "tensor-parallel size");
      Require.nonNull(recompute, "recompute");
      Require.that(recomputeLayers == 0 || recompute == Recompute.FULL
          && recomputeLayers <= lastLayer - firstLayer, "partial recomputation recomputes fewer"
          + " than the stage's blocks");
    }

    /**
     * A stage whose blocks all take its recomputation.
     *
     * @param firstLayer its first marked layer
     * @param lastLayer its last, inclusive
     * @param hosts the submesh's nodes
     * @param devicesPerHost the submesh's GPUs per node
     * @param dataParallel the logical mesh's axis 0
     * @param tensorParallel the logical mesh's axis 1
     * @param recompute what the stage's blocks recompute
     * @param zeroStage 0 or 1
     */
    Stage(int firstLayer, int lastLayer, int hosts, int devicesPerHost, int dataParallel,
        int tensorParallel, Recompute recompute, int zeroStage) {
      this(firstLayer, lastLayer, hosts, devicesPerHost, dataParallel, tensorParallel, recompute,
          zeroStage, 0);
    }

    /**
     * What block {@code layer} of the stage recomputes.
     *
     * @param layer a marked layer of the stage
     * @return the stage's recomputation, or none for a block past its recomputed ones
     */
    Recompute recomputeOf(int layer) {
      return recomputeLayers > 0 && layer - firstLayer >= recomputeLayers ? Recompute.NONE
          : recompute;
    }

    /** The submesh's GPUs. */
    long devices() {
      return (long) hosts * devicesPerHost;
    }
  }

  /**
   * A plan's stages as they are.
   *
   * @param plan the plan (one chunk per stage)
   * @return the stages
   */
  static List<Stage> of(PipelinePlan plan) {
    List<Stage> out = new ArrayList<>();
    for (StagePlan s : plan.stages()) {
      out.add(new Stage(s.firstLayer(), s.lastLayer(), s.submeshNodes(), s.submeshGpus(),
          s.dataParallel(), s.tensorParallel(), s.recompute(), s.zeroStage(),
          s.recomputeLayers()));
    }
    return out;
  }

  /**
   * A Megatron-style configuration's stages, one after another: a stage of at least a node's
   * GPUs takes whole nodes, a smaller one part of one node.
   *
   * @param c the configuration (one chunk per stage)
   * @param layers the model's layers
   * @param gpusPerNode GPUs per node
   * @return the stages, or empty when a stage's GPUs are neither whole nodes nor part of one
   */
  static Optional<List<Stage>> of(ParallelConfig c, int layers, int gpusPerNode) {
    long devices = (long) c.tensorParallel() * c.dataParallel() * c.contextParallel();
    int hosts;
    int perHost;
    if (devices >= gpusPerNode && devices % gpusPerNode == 0) {
      hosts = (int) (devices / gpusPerNode);
      perHost = gpusPerNode;
    } else if (devices < gpusPerNode && gpusPerNode % devices == 0) {
      hosts = 1;
      perHost = (int) devices;
    } else {
      return Optional.empty();
    }
    int[] chunks = c.chunkLayers(layers);
    List<Stage> out = new ArrayList<>();
    int first = 0;
    for (int n : chunks) {
      out.add(new Stage(first, first + n - 1, hosts, perHost, c.dataParallel(),
          c.tensorParallel(), c.recompute(), c.zeroStage(),
          StagePlan.recomputeLayersOf(c.recomputeLayers(), n)));
      first += n;
    }
    return Optional.of(out);
  }

  /**
   * Alpa's checks of the stages on a cluster, in the order above.
   *
   * @param stages the stages
   * @param layers the marked layers (the model's transformer blocks)
   * @param nodes the cluster's nodes
   * @param gpusPerNode its GPUs per node
   * @return the first check that fails, in words, or empty
   */
  static Optional<String> check(List<Stage> stages, int layers, int nodes, int gpusPerNode) {
    int next = 0;
    long devices = 0;
    for (int i = 0; i < stages.size(); i++) {
      Stage s = stages.get(i);
      if (s.firstLayer() != next) {
        return Optional.of("stage " + i + " starts at layer " + s.firstLayer() + ", not "
            + next + ": Alpa's forward stage layer ids must run 0, 1, 2, ... in order");
      }
      next = s.lastLayer() + 1;
      if ((long) s.dataParallel() * s.tensorParallel() != s.devices()) {
        return Optional.of("stage " + i + "'s logical mesh " + s.dataParallel() + "x"
            + s.tensorParallel() + " does not multiply to its submesh's " + s.devices()
            + " GPUs, as Alpa requires");
      }
      devices += s.devices();
    }
    if (next != layers) {
      return Optional.of("the stages hold " + next + " layers of the " + layers + " marked");
    }
    if (devices != (long) nodes * gpusPerNode) {
      return Optional.of("the submeshes hold " + devices + " GPUs, the cluster "
          + (long) nodes * gpusPerNode + "; Alpa's submeshes cover the cluster exactly");
    }
    return slice(stages, nodes, gpusPerNode);
  }

  /**
   * Alpa's placement of the submeshes ({@code get_sliced_virtual_submeshes}): the first GPU of
   * each stage's submesh, or why Alpa cannot place them.
   *
   * @param stages the stages
   * @param nodes the cluster's nodes
   * @param gpusPerNode its GPUs per node
   * @return the first device of each stage (row-major over nodes)
   */
  static long[] placement(List<Stage> stages, int nodes, int gpusPerNode) {
    long[] first = new long[stages.size()];
    long host = 0;
    long device = 0;
    for (int i : placementOrder(stages)) {
      Stage s = stages.get(i);
      first[i] = host * gpusPerNode + device;
      if (s.devicesPerHost() == gpusPerNode) {
        host += s.hosts();
      } else {
        device += s.devicesPerHost();
        if (device == gpusPerNode) {
          host++;
          device = 0;
        }
      }
    }
    return first;
  }

  private static Optional<String> slice(List<Stage> stages, int nodes, int gpusPerNode) {
    long host = 0;
    long device = 0;
    for (int i : placementOrder(stages)) {
      Stage s = stages.get(i);
      if (s.devicesPerHost() == gpusPerNode) {
        if (device != 0 || host + s.hosts() > nodes) {
          return Optional.of(unplaceable(i, s, "whole nodes from the next free node"));
        }
        host += s.hosts();
      } else {
        if (s.hosts() != 1 || s.devicesPerHost() > gpusPerNode
            || device + s.devicesPerHost() > gpusPerNode) {
          return Optional.of(unplaceable(i, s, "what is left of one node"));
        }
        device += s.devicesPerHost();
        if (device == gpusPerNode) {
          host++;
          device = 0;
        }
      }
    }
    if (host != nodes || device != 0) {
      return Optional.of("Alpa's placement of the submeshes, largest first, leaves nodes "
          + "unfilled");
    }
    return Optional.empty();
  }

  private static String unplaceable(int i, Stage s, String where) {
    return "Alpa places submeshes largest first (get_sliced_virtual_submeshes), and stage " + i
        + "'s " + s.hosts() + "x" + s.devicesPerHost() + " submesh does not fit " + where
        + "; plan with --for alpa for submeshes Alpa can place";
  }

  /** Alpa's order: by size descending; of equal sizes, the later stage first. */
  private static List<Integer> placementOrder(List<Stage> stages) {
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < stages.size(); i++) {
      order.add(i);
    }
    // np.argsort(sizes, kind="stable") read in reverse: descending sizes, later index first.
    order.sort(Comparator.<Integer>comparingLong(i -> -stages.get(i).devices())
        .thenComparing(Comparator.<Integer>reverseOrder()));
    return order;
  }
}
