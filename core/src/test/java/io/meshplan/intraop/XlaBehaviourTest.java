package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloParser;
import io.meshplan.graph.Instruction;
import io.meshplan.sharding.ShardingSpec;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Small hand-written modules in the style of XLA's {@code auto_sharding_test.cc}: each checks one
 * behaviour of the planner on HLO text input.
 */
class XlaBehaviourTest {
  private static ShardingPlan plan(String hlo, int[] mesh, double[] alpha, double[] beta) {
    Graph g = new HloParser().parse(hlo, "test.hlo").entry();
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(new LogicalMesh(mesh), alpha, beta),
        1L << 34, Optional.empty());
    return new AutoSharding(env, SolverOptions.defaults()).plan(g);
  }

  private static Instruction named(ShardingPlan p, String name) {
    return p.graph().instructions().stream().filter(i -> i.name().equals(name)).findFirst()
        .orElseThrow();
  }

  private static final String ONE_DOT = """
      HloModule one_dot

      ENTRY %main (p0: f32[128,64], p1: f32[64,32]) -> f32[128,32] {
        %p0 = f32[128,64]{1,0} parameter(0)
        %p1 = f32[64,32]{1,0} parameter(1)
        ROOT %dot = f32[128,32]{1,0} dot(f32[128,64]{1,0} %p0, f32[64,32]{1,0} %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      }
      """;

  @Test
  void oneDotOnA1dMeshOfFourSplitsOneDimensionFourWays() {
    ShardingPlan p = plan(ONE_DOT, new int[] {4}, new double[] {1}, new double[] {1});
    ShardingSpec s = p.spec(named(p, "dot").id());
    // One output dimension split 4 ways, no communication: {devices=[4,1]0,1,2,3}, in XLA's
    // compact form {devices=[4,1]<=[4]}.
    assertThat(s.totalTiles(LogicalMesh.of(4))).isEqualTo(4);
    assertThat(p.hloSharding(named(p, "dot").id())).isEqualTo("{devices=[4,1]<=[4]}");
    assertThat(p.objective()).isZero();
  }

  @Test
  void oneDotOnA2x2MeshSplitsBothOutputDims() {
    ShardingPlan p = plan(ONE_DOT, new int[] {2, 2}, new double[] {1, 1},
        new double[] {0.01, 1});
    ShardingSpec s = p.spec(named(p, "dot").id());
    // Both output dimensions split, one per mesh axis: 4 tiles.
    assertThat(s.axes(0)).isNotZero();
    assertThat(s.axes(1)).isNotZero();
    assertThat(p.hloSharding(named(p, "dot").id())).startsWith("{devices=[2,2]");
    assertThat(p.objective()).isZero();
  }

  @Test
  void elementwiseAddOfRankThreeSplitsTwoDims() {
    String hlo = """
        HloModule add3

        ENTRY %main (a: f32[8,16,32], b: f32[8,16,32]) -> f32[8,16,32] {
          %a = f32[8,16,32]{2,1,0} parameter(0)
          %b = f32[8,16,32]{2,1,0} parameter(1)
          ROOT %add = f32[8,16,32]{2,1,0} add(f32[8,16,32]{2,1,0} %a, f32[8,16,32]{2,1,0} %b)
        }
        """;
    ShardingPlan p = plan(hlo, new int[] {2, 2}, new double[] {1, 1}, new double[] {1, 1});
    ShardingSpec s = p.spec(named(p, "add").id());
    int split = 0;
    for (int d = 0; d < 3; d++) {
      split += s.axes(d) != 0 ? 1 : 0;
    }
    assertThat(split).isEqualTo(2);
    assertThat(p.objective()).isZero();
  }

  @Test
  void twoChainedDotsTakeTheMegatronPattern() {
    // x[2,64] . w1[64,256] -> h[2,256]; h . w2[256,64] -> y[2,64]. The batch of 2 cannot be
    // split 4 ways, so the mesh must also split a weight. Axis 1 is cheap (beta 0.01).
    String hlo = """
        HloModule mlp_fwd

        ENTRY %main (x: f32[2,64], w1: f32[64,256], w2: f32[256,64]) -> f32[2,64] {
          %x = f32[2,64]{1,0} parameter(0)
          %w1 = f32[64,256]{1,0} parameter(1)
          %w2 = f32[256,64]{1,0} parameter(2)
          %h = f32[2,256]{1,0} dot(f32[2,64]{1,0} %x, f32[64,256]{1,0} %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
          ROOT %y = f32[2,64]{1,0} dot(f32[2,256]{1,0} %h, f32[256,64]{1,0} %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
        }
        """;
    ShardingPlan p = plan(hlo, new int[] {2, 2}, new double[] {1, 1}, new double[] {1, 0.01});
    int h = named(p, "h").id();
    int y = named(p, "y").id();
    // First dot column-split: its output's feature dimension is split over the cheap axis 1.
    assertThat(p.spec(h).axes(1)).isEqualTo(0b10);
    // Second dot row-split: it contracts over axis 1 and all-reduces there.
    assertThat(p.strategy(y).name()).contains("allreduce @ 1").doesNotContain("allreduce @ 0");
    assertThat(p.strategy(y).operandSpec(1).axes(0)).isEqualTo(0b10);
    // No all-gather or other resharding anywhere: the whole cost is that one all-reduce of the
    // [2,64] result split over axis 0 (64 * 4 bytes): 1 + 0.01 * 2 * 1/2 * 256 = 3.56.
    assertThat(p.evaluation().edgeCost()).isZero();
    assertThat(p.objective()).isCloseTo(3.56, org.assertj.core.api.Assertions.within(1e-9));
  }

  @Test
  void dynamicSliceAndUpdateKeepSplitsOnlyWhereTheWindowIsWhole() {
    // A layer's weights cut out of stacked weights at a run-time index, as a scan over layers does.
    String hlo = """
        HloModule scan_step

        ENTRY %main (w: f32[8,64,32], i: s32[], x: f32[16,64]) -> f32[8,64,32] {
          %w = f32[8,64,32]{2,1,0} parameter(0)
          %i = s32[] parameter(1)
          %x = f32[16,64]{1,0} parameter(2)
          %zero = s32[] constant(0)
          %ds = f32[1,64,32]{2,1,0} dynamic-slice(f32[8,64,32]{2,1,0} %w, s32[] %i, s32[] %zero, s32[] %zero), dynamic_slice_sizes={1,64,32}
          %layer = f32[64,32]{1,0} reshape(f32[1,64,32]{2,1,0} %ds)
          %y = f32[16,32]{1,0} dot(f32[16,64]{1,0} %x, f32[64,32]{1,0} %layer), lhs_contracting_dims={1}, rhs_contracting_dims={0}
          %upd = f32[1,64,32]{2,1,0} multiply(f32[1,64,32]{2,1,0} %ds, f32[1,64,32]{2,1,0} %ds)
          ROOT %dus = f32[8,64,32]{2,1,0} dynamic-update-slice(f32[8,64,32]{2,1,0} %w, f32[1,64,32]{2,1,0} %upd, s32[] %i, s32[] %zero, s32[] %zero)
        }
        """;
    ShardingPlan p = plan(hlo, new int[] {2, 2}, new double[] {1, 1}, new double[] {1, 1});
    ShardingSpec ds = p.spec(named(p, "ds").id());
    ShardingSpec dus = p.spec(named(p, "dus").id());
    // Dimension 0 is cut at a run-time offset: never split there.
    assertThat(ds.axes(0)).isZero();
    assertThat(dus.axes(0)).isZero();
    // Neither op is planned as opaque.
    assertThat(p.opaqueOps()).doesNotContain("ds", "dus");
  }
}
