package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.BusBytesCommModel;
import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.model.AlpaMlpBuilder;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Bytes per mesh axis of solved intra-operator plans. */
class CommVolumeTest {
  private static final double MIB = 1024.0 * 1024;

  private static ShardingPlan plan(int layers, int batch, int hidden, LogicalMesh mesh,
      double[] alpha, double[] beta) {
    Graph g = AlpaMlpBuilder.build(layers, batch, hidden, DType.F32);
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(mesh, alpha, beta), 1000 * MIB,
        Optional.empty());
    return new AutoSharding(env, SolverOptions.defaults()).plan(g);
  }

  @Test
  void dataParallelMlpSendsTheGradientAllReducesOnItsAxis() {
    // Alpa's 2-layer data-parallel MLP (batch 1024, hidden 128, fp32) on 4 x 1: the plan
    // all-reduces two weight gradients of 128*128*4 = 65536 bytes over 4 GPUs, each
    // 2*(4-1)/4 * 65536 = 98304 bytes per GPU: 196608 bytes on axis 0, none on axis 1.
    ShardingPlan p = plan(2, 1024, 128, LogicalMesh.of(4, 1), new double[] {1, 1},
        new double[] {1, 1});
    PlanCommBytes v = PlanCommBytes.of(p);
    assertThat(v.totalBytes(0)).isEqualTo(196608.0);
    assertThat(v.totalBytes(1)).isZero();
  }

  @Test
  void modelParallelMlpSendsOneActivationAllReduce() {
    // batch 128, hidden 1024 on 1 x 4: one all-reduce of a 128*1024*4 = 524288-byte activation,
    // 2*(4-1)/4 * 524288 = 786432 bytes per GPU on axis 1.
    ShardingPlan p = plan(2, 128, 1024, LogicalMesh.of(1, 4), new double[] {1, 1},
        new double[] {1, 1});
    PlanCommBytes v = PlanCommBytes.of(p);
    assertThat(v.totalBytes(1)).isEqualTo(786432.0);
    assertThat(v.totalBytes(0)).isZero();
  }

  @Test
  void withUnitPricesTheCostOfEveryInstructionIsItsBytes() {
    // With alpha 0 and beta 1 per axis and compute free, a collective costs exactly the bus bytes
    // one GPU sends, so each instruction's strategy and resharding cost equals its bytes summed
    // over the axes, and the objective equals the plan's total bytes. Seeded random shapes.
    Random rnd = new Random(12);
    for (int trial = 0; trial < 6; trial++) {
      int layers = 1 + rnd.nextInt(3);
      int batch = 64 << rnd.nextInt(4);
      int hidden = 64 << rnd.nextInt(4);
      ShardingPlan p = plan(layers, batch, hidden, LogicalMesh.of(2, 2), new double[] {0, 0},
          new double[] {1, 1});
      PlanCommBytes v = PlanCommBytes.of(p);
      double total = 0;
      for (int i = 0; i < v.instructions(); i++) {
        double[] b = v.bytes(i);
        total += b[0] + b[1];
        Strategy st = p.strategy(i);
        assertThat(v.strategyBytes()[i][0] + v.strategyBytes()[i][1])
            .as("instruction %d, trial %d", i, trial)
            .isCloseTo(st.commCost(), within(1e-6 * (1 + st.commCost())));
      }
      assertThat(total).as("trial %d", trial)
          .isCloseTo(p.objective(), within(1e-9 * (1 + p.objective())));
    }
  }

  @Test
  void busBytesFollowNcclTestsFactors() {
    // S = 1000 bytes over n = 4: all-reduce 2*3/4*S = 1500, all-gather and reduce-scatter
    // 3/4*S = 750; a group of one sends nothing; the other axis counts nothing.
    BusBytesCommModel m = new BusBytesCommModel(LogicalMesh.of(4, 1), 0);
    assertThat(m.allReduce(1000, 0)).isEqualTo(1500.0);
    assertThat(m.allGather(1000, 0)).isEqualTo(750.0);
    assertThat(m.reduceScatter(1000, 0)).isEqualTo(750.0);
    assertThat(m.allToAll(1000, 0)).isEqualTo(750.0);
    assertThat(m.allReduce(1000, 1)).isZero();
    assertThat(BusBytesCommModel.bytesSent(Collective.ALL_REDUCE, 1000, 1)).isZero();
  }
}
