package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.GraphBuilder;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Strategies of embedding lookups (row gathers) and their transposes (row scatter-adds). */
class GatherStrategiesTest {
  private static final LogicalMesh MESH = LogicalMesh.of(2, 2);
  private static final AlphaBetaCommModel COMM = new AlphaBetaCommModel(MESH,
      new double[] {1, 1}, new double[] {1, 0.01});

  private static MeshEnv env(double memory) {
    return new MeshEnv(COMM, memory, Optional.empty());
  }

  /** table f32[64,16], tokens s32[4,8] -> f32[4,8,16]. */
  private static Graph lookup() {
    GraphBuilder b = new GraphBuilder("lookup");
    int table = b.parameter(TensorShape.of(DType.F32, 64, 16));
    int tokens = b.parameter(TensorShape.of(DType.S32, 4, 8));
    b.gather(table, tokens);
    return b.build();
  }

  @Test
  void vocabularyParallelLookupAllReduces() {
    StrategySet gather = new StrategyGenerator(lookup(), env(1e9)).generate().get(2);
    assertThat(gather.opaque()).isFalse();
    // Rows split over axis 0, result replicated: each device reads its 32 rows and the 4*8*16*4 =
    // 2048-byte result is all-reduced over axis 0: 1 + 1 * 2 * (1/2) * 2048 = 2049.
    Strategy vocab = find(gather, ShardingSpec.of(1, 0), ShardingSpec.replicated(3));
    assertThat(vocab.commCost()).isEqualTo(COMM.allReduce(2048, 0)).isEqualTo(2049.0);
    assertThat(vocab.operandSpec(1)).isEqualTo(ShardingSpec.replicated(2));
    // Width split over axis 1: no communication, the result split on its last dimension.
    Strategy width = find(gather, ShardingSpec.of(0, 2), ShardingSpec.of(0, 0, 2));
    assertThat(width.commCost()).isZero();
    // Tokens split over axis 0 (data parallel) and rows over axis 1 (tensor parallel): the
    // 1024-byte local result is all-reduced over axis 1: 1 + 0.01 * 1024 = 11.24.
    Strategy both = find(gather, ShardingSpec.of(2, 0), ShardingSpec.of(1, 0, 0));
    assertThat(both.operandSpec(1)).isEqualTo(ShardingSpec.of(1, 0));
    assertThat(both.commCost()).isCloseTo(11.24, org.assertj.core.api.Assertions.within(1e-9));
    for (Strategy s : gather.strategies()) {
      assertThat(s.operandSpec(0).axes(0) & s.output().usedAxes()).as(s.name()).isZero();
      assertThat(s.operandSpec(0).axes(1)).isEqualTo(s.output().axes(2));
    }
  }

  private static Strategy find(StrategySet set, ShardingSpec table, ShardingSpec out) {
    List<Strategy> hits = set.strategies().stream()
        .filter(s -> s.operandSpec(0).equals(table) && s.output().equals(out)).toList();
    assertThat(hits).as(table + " -> " + out).hasSize(1);
    return hits.get(0);
  }

  /** The table gradient: token splits leave partial sums (all-reduced); row splits do not. */
  @Test
  void scatterAddStrategies() {
    GraphBuilder b = new GraphBuilder("grad");
    int tokens = b.parameter(TensorShape.of(DType.S32, 4, 8));
    int upd = b.parameter(TensorShape.of(DType.F32, 4, 8, 16));
    int zero = b.broadcast(b.constant(DType.F32, 0), new int[] {64, 16});
    b.scatterAdd(zero, tokens, upd);
    Graph g = b.build();
    StrategySet s = new StrategyGenerator(g, env(1e9)).generate().get(g.size() - 1);
    assertThat(s.opaque()).isFalse();
    for (Strategy st : s.strategies()) {
      ShardingSpec u = st.operandSpec(2);
      int tokenAxes = u.usedAxes() & ~u.axes(2);
      assertThat(tokenAxes & st.output().usedAxes()).isZero();
      assertThat(u.axes(2)).isEqualTo(st.output().axes(1));
      // 64*16*4 = 4096 bytes replicated; each token axis all-reduces the local table.
      double expected = 0;
      for (int ax = 0; ax < 2; ax++) {
        if ((tokenAxes & (1 << ax)) != 0) {
          expected += COMM.allReduce(st.output().localBytes(g.get(g.size() - 1).tensorShape(),
              MESH), ax);
        }
      }
      assertThat(st.commCost()).isEqualTo(expected);
    }
    // Rows split over both axes, updates replicated: no communication.
    assertThat(s.strategies()).anyMatch(st -> st.output().equals(ShardingSpec.of(3, 0))
        && st.commCost() == 0);
  }

  /**
   * A table that does not fit replicated (64 KiB of f32 rows, 40 KiB per device) is planned
   * split; as an opaque op the lookup would need it whole on every device.
   */
  @Test
  void aLargeTableIsPlannedSplit() {
    GraphBuilder b = new GraphBuilder("lookup");
    int table = b.parameter(TensorShape.of(DType.F32, 1024, 16));
    int tokens = b.parameter(TensorShape.of(DType.S32, 4, 8));
    b.gather(table, tokens);
    ShardingPlan p = new AutoSharding(env(40 * 1024), SolverOptions.defaults()).plan(b.build());
    assertThat(p.spec(table).isReplicated()).isFalse();
    assertThat(p.opaqueOps()).isEmpty();
  }
}
