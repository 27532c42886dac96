package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The uniform configuration nearest to a plan that is not uniform (stages on different logical
 * meshes, or with different layer counts), as Megatron-LM-style frameworks need one.
 *
 * <p>Rules, in order (documented because users compare the result with their plan):
 *
 * <ol>
 *   <li>Tensor-parallel size: the logical meshes of the stages ranked by how many stages use them,
 *       then by how many layers they hold, then by the smaller tensor size; the first rank is tried
 *       first, the others after it.
 *   <li>Pipeline size: divisors of the layer count (every stage gets the same number of layers)
 *       whose product with the tensor size divides the cluster's GPUs, nearest to the plan's stage
 *       count first, the smaller one on a tie.
 *   <li>Data-parallel size: the cluster's GPUs over tensor times pipeline.
 *   <li>Batch sizes, recomputation and sequence parallelism are the first stage's, and so is the
 *       number of first blocks recomputed under partial full recomputation where every chunk
 *       of the result holds more blocks than that (else every block is recomputed); the ZeRO stage
 *       is the highest of any stage (more sharding never needs more memory per GPU); virtual
 *       stages are the plan's when the result stays valid, else 1.
 * </ol>
 *
 * The first candidate that {@link ParallelConfig#check} accepts wins.
 */
public final class NearestConfig {
  private NearestConfig() {}

  /**
   * Finds the nearest uniform configuration.
   *
   * @param plan the plan
   * @param cluster the cluster it runs on
   * @return the configuration, or empty when no uniform configuration fits the model and cluster
   */
  public static Optional<ParallelConfig> of(PipelinePlan plan, ClusterSpec cluster) {
    int layers = plan.model().layers();
    int gpus = cluster.gpuCount();
    for (int tp : tensorSizes(plan)) {
      List<Integer> pps = new ArrayList<>();
      for (int d = 1; d <= layers; d++) {
        if (layers % d == 0 && gpus % ((long) tp * d) == 0) {
          pps.add(d);
        }
      }
      int stages = plan.pipelineStages();
      pps.sort(Comparator.<Integer>comparingInt(d -> Math.abs(d - stages))
          .thenComparingInt(d -> d));
      for (int pp : pps) {
        int dp = gpus / (tp * pp);
        for (int v : plan.virtualStages() > 1 ? List.of(plan.virtualStages(), 1) : List.of(1)) {
          Optional<ParallelConfig> c = valid(plan, gpus, tp, pp, dp, v);
          if (c.isPresent()) {
            return c;
          }
        }
      }
    }
    return Optional.empty();
  }

  private static Optional<ParallelConfig> valid(PipelinePlan plan, int gpus, int tp, int pp,
      int dp, int v) {
    try {
      // The first stage's settings stand for the plan's: its microbatch per replica, its
      // recomputation and sequence parallelism. The ZeRO stage is the highest any stage uses.
      StagePlan s0 = plan.stages().get(0);
      ParallelConfig c = new ParallelConfig(tp, pp, dp, v, plan.microBatchSize(s0),
          plan.globalBatchSize(), s0.recompute(), s0.sequenceParallel() && tp > 1,
          highestZeroStage(plan));
      c = c.withRecomputeLayers(StagePlan.recomputeLayersOf(s0.recomputeLayers(),
          plan.model().layers() / (pp * v)));
      c.check(gpus, plan.model().layers(), plan.model().heads(), plan.model().kvHeads());
      return Optional.of(c);
    } catch (InputException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /**
   * The highest ZeRO stage of the plan's stages: sharding more never needs more memory per GPU,
   * so every stage that fitted with its own stage still fits.
   */
  static int highestZeroStage(PipelinePlan plan) {
    int z = 0;
    for (StagePlan s : plan.stages()) {
      z = Math.max(z, s.zeroStage());
    }
    return z;
  }

  /** The stages' tensor sizes, most used logical mesh first. */
  private static List<Integer> tensorSizes(PipelinePlan plan) {
    record Use(int stages, int layers) {}
    Map<Integer, Use> byTp = new LinkedHashMap<>();
    for (StagePlan s : plan.stages()) {
      byTp.merge(s.tensorParallel(), new Use(1, s.layerCount()),
          (a, b) -> new Use(a.stages + b.stages, a.layers + b.layers));
    }
    List<Integer> tps = new ArrayList<>(byTp.keySet());
    tps.sort(Comparator.<Integer>comparingInt(t -> -byTp.get(t).stages())
        .thenComparingInt(t -> -byTp.get(t).layers())
        .thenComparingInt(t -> t));
    return tps;
  }
}
