package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.plan.StagePlan;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The planner's placement over seeded random clusters: whatever the stage DP chooses, no submesh
 * of fewer than M GPUs spans two nodes and whole-node submeshes start on a node boundary. The
 * layers are priced by a made-up model (seeded times per setting), so that the DP picks varied
 * shapes without an ILP solve.
 */
class PlannedPlacementTest {

  /** Seeded layer prices: a time per setting that favours no shape in particular. */
  private static LayerCostModel madeUp(long seed) {
    return new LayerCostModel() {
      @Override
      public LayerCost cost(Kind kind, LayerSetting s) {
        Random r = new Random(seed * 31 + s.hashCode() * 7L + kind.ordinal());
        double f = (0.5 + r.nextDouble()) * 1e-3 * s.microBatch() / Math.sqrt(s.tensorParallel());
        return LayerCost.builder().forwardSeconds(f).backwardSeconds(2 * f)
            .parameters(1e6 / s.tensorParallel()).gradientParameters(1e6 / s.tensorParallel())
            .savedActivationBytes(1e6 * s.microBatch()).temporaryBytes(1e5).inputBytes(1e5)
            .boundaryBytes(1e5).modelFlops(1e9).hardwareFlops(1e9).build();
      }
    };
  }

  /**
   * 120 seeded clusters of 1 to 6 nodes of 1 to 16 GPUs, models of 2 to 8 layers, global batches
   * of 8 to 64 sequences (about half plan; on the others no pipeline covers the cluster). Every
   * plan found keeps its stages inside nodes or on whole nodes and uses each GPU once;
   * non-power-of-two nodes are among them.
   */
  @Test
  void everyPlannedStageSitsInsideANodeOrOnWholeNodes() {
    int planned = 0;
    int partial = 0;
    for (int seed = 0; seed < 120; seed++) {
      Random rnd = new Random(seed);
      int nodes = 1 + rnd.nextInt(6);
      int m = 1 + rnd.nextInt(16);
      ModelSpec model = Presets.get("llama2-7b").withLayers(2 + rnd.nextInt(7));
      int gb = 8 << rnd.nextInt(4);
      // Built directly: a cluster string refuses nodes beyond the A100's NVLink domain of 8.
      ClusterSpec a100 = ClusterSpec.parse("1x8:a100-80gb");
      PlanRequest req = Requests.of(model.withWorkload(model.seq(), gb),
          new ClusterSpec(nodes, m, a100.gpu(), a100.fabric()), gb, false);
      PlanResult r;
      try (LocalExecutor one = new LocalExecutor(1)) {
        r = new InterOpPlanner(madeUp(seed), p -> { }, one).plan(req);
      } catch (io.meshplan.util.InputException e) {
        continue;
      }
      if (!(r instanceof PlanResult.Planned p)) {
        continue;
      }
      planned++;
      boolean[] used = new boolean[nodes * m];
      int depth = p.plan().pipelineStages();
      for (int k = 0; k < depth; k++) {
        StagePlan s = p.plan().stages().get(k);
        String where = "seed " + seed + " on " + nodes + "x" + m + ": stage " + k + " "
            + s.submeshNodes() + "x" + s.submeshGpus() + " at " + s.firstDevice();
        int first = s.firstDevice();
        if (s.submeshGpus() < m) {
          partial++;
          assertThat(s.submeshNodes()).as(where).isEqualTo(1);
          assertThat(first / m).as(where).isEqualTo((first + s.submeshGpus() - 1) / m);
        } else {
          assertThat(s.submeshGpus()).as(where).isEqualTo(m);
          assertThat(first % m).as(where).isZero();
        }
        for (int d = first; d < first + s.devices(); d++) {
          assertThat(used[d]).as(where + ", device " + d).isFalse();
          used[d] = true;
        }
      }
    }
    assertThat(planned).as("plans").isGreaterThan(40);
    assertThat(partial).as("stages smaller than a node").isGreaterThan(30);
  }
}
