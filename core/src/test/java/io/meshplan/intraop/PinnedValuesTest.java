package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.GraphBuilder;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.BitSet;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Pinned values are read as laid out (a framework's tensor-parallel weight, which it never
 * gathers): y = x w on a 1 x 4 mesh, x f32[1024, 64] split by rows over axis 1, w f32[64, 64]
 * split by columns over axis 1. Collectives cost 1 unit per bus byte (alpha 0, beta 1), compute
 * nothing. Gathering w sends 3/4 x 64 x 64 x 4 = 12,288 bytes a GPU, gathering x 3/4 x 1024 x 64
 * x 4 = 196,608: left free, the solver gathers the weight; pinned, it must gather x.
 */
class PinnedValuesTest {
  private static final LogicalMesh MESH = LogicalMesh.of(1, 4);
  private static final MeshEnv ENV = new MeshEnv(new AlphaBetaCommModel(MESH,
      new double[] {0, 0}, new double[] {1, 1}), 1e12, Optional.empty());
  private static final ShardingSpec ROWS = ShardingSpec.split(2, 0, 1);
  private static final ShardingSpec COLUMNS = ShardingSpec.split(2, 1, 1);

  /** The graph and the ids of x, w, what the dot reads as its weight, and the dot. */
  private record Product(Graph graph, int x, int w, int read, int dot) {}

  /** y = x w, or y = x convert(w) to bf16 (a weight cast before its GEMM) when {@code cast}. */
  private static Product product(boolean cast) {
    GraphBuilder b = new GraphBuilder("product");
    int x = b.parameter(TensorShape.of(cast ? DType.BF16 : DType.F32, 1024, 64));
    int w = b.parameter(TensorShape.of(DType.F32, 64, 64));
    int read = cast ? b.convert(w, DType.BF16) : w;
    int dot = b.dot(x, read);
    return new Product(b.build(), x, w, read, dot);
  }

  private static ShardingPlan solve(Product p, BitSet pinned) {
    IntraOpResult r = new AutoSharding(ENV, SolverOptions.defaults())
        .solve(p.graph(), Map.of(p.x(), ROWS, p.w(), COLUMNS), new BitSet(), pinned,
            new BitSet());
    assertThat(r).isInstanceOf(IntraOpResult.Planned.class);
    return ((IntraOpResult.Planned) r).plan();
  }

  private static BitSet pin(int id) {
    BitSet b = new BitSet();
    b.set(id);
    return b;
  }

  @Test
  void aFreeWeightIsGatheredAndAPinnedOneIsReadAsSplit() {
    Product p = product(false);
    // Free: the weight's gather, 12,288.
    ShardingPlan free = solve(p, new BitSet());
    assertThat(free.strategy(p.dot()).operandSpec(1)).isEqualTo(ShardingSpec.replicated(2));
    assertThat(free.objective()).isEqualTo(12_288);
    // Pinned: the weight is read split by columns and x is gathered, 196,608.
    ShardingPlan pinned = solve(p, pin(p.w()));
    assertThat(pinned.strategy(p.dot()).operandSpec(1)).isEqualTo(COLUMNS);
    assertThat(pinned.strategy(p.dot()).operandSpec(0)).isEqualTo(ShardingSpec.replicated(2));
    assertThat(pinned.objective()).isEqualTo(196_608);
  }

  @Test
  void aValueComputedFromAPinnedOneAloneIsPinnedToo() {
    // The cast of the weight, not the weight, is what the dot reads: a gather of the bf16 copy
    // (3/4 x 64 x 64 x 2 = 6,144) is what the free solver picks; pinning the weight pins its
    // cast, so x (bf16: 98,304) is gathered instead.
    Product p = product(true);
    ShardingPlan free = solve(p, new BitSet());
    assertThat(free.objective()).isEqualTo(6_144);
    ShardingPlan pinned = solve(p, pin(p.w()));
    assertThat(pinned.spec(p.read())).isEqualTo(COLUMNS);
    assertThat(pinned.strategy(p.dot()).operandSpec(1)).isEqualTo(COLUMNS);
    assertThat(pinned.objective()).isEqualTo(98_304);
  }
}
