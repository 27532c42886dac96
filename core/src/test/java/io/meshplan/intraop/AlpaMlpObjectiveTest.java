package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.intraop.solve.SolveStatus;
import io.meshplan.model.AlpaMlpBuilder;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The expectations of Alpa's prototype solver tests ({@code test_solver_mlp.py}): alpha (1,1), 1000
 * MiB per device, fp32, and AR(bytes, d) = alpha_d + beta_d * 2(n_d-1)/n_d * bytes. Objectives must
 * match within 0.1%.
 */
class AlpaMlpObjectiveTest {
  private static final double MIB = 1024.0 * 1024;

  private static double ar(double bytes, int n, double alpha, double beta) {
    return alpha + beta * 2.0 * (n - 1) / n * bytes;
  }

  private static ShardingPlan plan(int layers, int batch, int hidden, int m0, int m1, double b0,
      double b1) {
    Graph g = AlpaMlpBuilder.build(layers, batch, hidden, DType.F32);
    LogicalMesh mesh = LogicalMesh.of(m0, m1);
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(mesh, new double[] {1, 1},
        new double[] {b0, b1}), 1000 * MIB, Optional.empty());
    return new AutoSharding(env, SolverOptions.defaults()).plan(g);
  }

  @ParameterizedTest
  @CsvSource({"4,1", "1,4"})
  void twoLayerDataParallel(int m0, int m1) {
    // batch 1024, hidden 128: two all-reduces of the weight gradients, 128*128*4 = 65536 bytes,
    // on the axis of size 4: 2 * (1 + 1.5 * 65536) = 196610.
    ShardingPlan p = plan(2, 1024, 128, m0, m1, 1, 1);
    assertThat(p.objective()).isCloseTo(2 * ar(65536, 4, 1, 1), within(196610 * 1e-3));
    assertThat(p.objective()).isCloseTo(196610, within(196.6));
    assertThat(p.solution().status()).isEqualTo(SolveStatus.OPTIMAL);
  }

  @ParameterizedTest
  @CsvSource({"4,1", "1,4"})
  void twoLayerModelParallel(int m0, int m1) {
    // batch 128, hidden 1024: one all-reduce of an activation, 128*1024*4 = 524288 bytes:
    // 1 + 1.5 * 524288 = 786433.
    ShardingPlan p = plan(2, 128, 1024, m0, m1, 1, 1);
    assertThat(p.objective()).isCloseTo(786433, within(786.4));
  }

  @ParameterizedTest
  @CsvSource({"4,1", "1,4"})
  void twelveLayerDataParallel(int m0, int m1) {
    // 12 * (1 + 1.5 * 65536) = 1179660.
    ShardingPlan p = plan(12, 1024, 128, m0, m1, 1, 1);
    assertThat(p.objective()).isCloseTo(12 * ar(65536, 4, 1, 1), within(1179.7));
  }

  @ParameterizedTest
  @CsvSource({"4,1", "1,4"})
  void twelveLayerModelParallel(int m0, int m1) {
    // 11 * (1 + 1.5 * 524288) = 8650763.
    ShardingPlan p = plan(12, 128, 1024, m0, m1, 1, 1);
    assertThat(p.objective()).isCloseTo(11 * ar(524288, 4, 1, 1), within(8650.8));
  }

  @ParameterizedTest
  @CsvSource({"4,8", "8,4"})
  void twoLayer2d(int m0, int m1) {
    // 2 * AR(128*128*4 / m1, dim 0) + AR(1024*128*4 / m0, dim 1) with beta (1, 0.01):
    // (4,8): 2 * (1 + 1.5 * 8192) + (1 + 0.01 * 1.75 * 131072) = 24578 + 2294.76 = 26872.76
    // (8,4): 2 * (1 + 1.75 * 16384) + (1 + 0.01 * 1.5 * 65536) = 57346 + 984.04 = 58330.04
    double expected = 2 * ar(128 * 128 * 4.0 / m1, m0, 1, 1) + ar(1024 * 128 * 4.0 / m0, m1, 1,
        0.01);
    ShardingPlan p = plan(2, 1024, 128, m0, m1, 1, 0.01);
    assertThat(p.objective()).isCloseTo(expected, within(expected * 1e-3));
  }

  @ParameterizedTest
  @CsvSource({"4,8", "8,4"})
  void twelveLayer2d(int m0, int m1) {
    // 12 * AR(hidden^2*4 / m1, dim 0) + 11 * AR(batch*hidden*4 / m0, dim 1):
    // (4,8): 12 * 12289 + 11 * 2294.76 = 147468 + 25242.36 = 172710.36
    double expected = 12 * ar(128 * 128 * 4.0 / m1, m0, 1, 1)
        + 11 * ar(1024 * 128 * 4.0 / m0, m1, 1, 0.01);
    ShardingPlan p = plan(12, 1024, 128, m0, m1, 1, 0.01);
    assertThat(p.objective()).isCloseTo(expected, within(expected * 1e-3));
    assertThat(p.solution().status()).isEqualTo(SolveStatus.OPTIMAL);
  }
}
