package io.meshplan.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.TensorShape;
import io.meshplan.testing.Cases;
import io.meshplan.testing.Cases.Gen;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** XLA sharding text written by meshplan reads back as the same layout. */
class ShardingTextProperties {
  /** A two-axis mesh, a tensor rank, and the dimension each mesh axis splits (none if not one). */
  private record TwoAxes(int a0, int a1, int rank, int d0, int d1) {
  }

  /** A three-axis mesh and the dimension of a rank-3 tensor each axis splits (-1: none). */
  private record ThreeAxes(int a0, int a1, int a2, int d0, int d1, int d2) {
  }

  private static TwoAxes twoAxes(Gen g) {
    return new TwoAxes(g.between(2, 4), g.between(2, 3), g.between(1, 3), g.between(-1, 2),
        g.between(-1, 2));
  }

  private static ThreeAxes threeAxes(Gen g) {
    return new ThreeAxes(g.between(1, 3), g.between(1, 3), g.between(1, 3), g.between(-1, 2),
        g.between(-1, 2), g.between(-1, 2));
  }

  /** Every case: the domain has 3 x 2 x 3 x 4 x 4 = 288 of them. */
  private static List<TwoAxes> allTwoAxes() {
    List<TwoAxes> all = new ArrayList<>();
    for (int a0 = 2; a0 <= 4; a0++) {
      for (int a1 = 2; a1 <= 3; a1++) {
        for (int rank = 1; rank <= 3; rank++) {
          for (int d0 = -1; d0 <= 2; d0++) {
            for (int d1 = -1; d1 <= 2; d1++) {
              all.add(new TwoAxes(a0, a1, rank, d0, d1));
            }
          }
        }
      }
    }
    return all;
  }

  /** Axes of size 1 and 3 (the ends of their range) with every split (-1, 0, 1, 2): 512 cases. */
  private static List<ThreeAxes> threeAxesEdges() {
    List<ThreeAxes> edges = new ArrayList<>();
    int[] sizes = {1, 3};
    for (int a0 : sizes) {
      for (int a1 : sizes) {
        for (int a2 : sizes) {
          for (int d0 = -1; d0 <= 2; d0++) {
            for (int d1 = -1; d1 <= 2; d1++) {
              for (int d2 = -1; d2 <= 2; d2++) {
                edges.add(new ThreeAxes(a0, a1, a2, d0, d1, d2));
              }
            }
          }
        }
      }
    }
    return edges;
  }

  /** Every case of the small domain first, then random ones. */
  @Test
  void formatThenParseIsIdentity() {
    Cases.check(53, 500, allTwoAxes(), ShardingTextProperties::twoAxes, c -> {
      int a0 = c.a0();
      int a1 = c.a1();
      int rank = c.rank();
      int d0 = c.d0();
      int d1 = c.d1();
      LogicalMesh mesh = LogicalMesh.of(a0, a1);
      int[] masks = new int[rank];
      if (d0 >= 0 && d0 < rank) {
        masks[d0] |= 1;
      }
      if (d1 >= 0 && d1 < rank) {
        masks[d1] |= 2;
      }
      ShardingSpec spec = ShardingSpec.of(masks);
      int[] dims = new int[rank];
      java.util.Arrays.fill(dims, 24);
      TensorShape shape = TensorShape.of(DType.F32, dims);
      String text = HloShardingText.format(spec, mesh);
      assertThat(HloShardingText.parse(text, shape, mesh)).isEqualTo(spec);
      // The explicit device list is a permutation of all devices, and the compact form expands to
      // it.
      if (!spec.isReplicated()) {
        String explicit = HloShardingText.formatExplicit(spec, mesh);
        String ids = explicit.substring(explicit.indexOf(']') + 1)
            .replace("last_tile_dim_replicate", "").replace("}", "").trim();
        assertThat(ids.split(",")).hasSize(a0 * a1).doesNotHaveDuplicates();
        assertThat(HloShardingText.explicit(text.replace(" ", ""), a0 * a1))
            .isEqualTo(explicit.replace(" ", ""));
        assertThat(HloShardingText.parse(explicit, shape, mesh)).isEqualTo(spec);
      }
    });
  }

  /** On three-axis meshes (with size-1 axes) the compact form expands to the explicit list. */
  @Test
  void compactFormExpandsToExplicitOnThreeAxes() {
    Cases.check(59, 300, threeAxesEdges(), ShardingTextProperties::threeAxes, c -> {
      LogicalMesh mesh = LogicalMesh.of(c.a0(), c.a1(), c.a2());
      int[] masks = new int[3];
      int[] ds = {c.d0(), c.d1(), c.d2()};
      for (int a = 0; a < 3; a++) {
        if (ds[a] >= 0) {
          masks[ds[a]] |= 1 << a;
        }
      }
      ShardingSpec spec = ShardingSpec.of(masks);
      TensorShape shape = TensorShape.of(DType.F32, 36, 36, 36);
      String text = HloShardingText.format(spec, mesh);
      if (text.equals("{replicated}")) {
        return;
      }
      assertThat(HloShardingText.explicit(text.replace(" ", ""), mesh.deviceCount()))
          .isEqualTo(HloShardingText.formatExplicit(spec, mesh).replace(" ", ""));
      ShardingSpec back = HloShardingText.parse(text, shape, mesh);
      assertThat(HloShardingText.formatExplicit(back, mesh))
          .isEqualTo(HloShardingText.formatExplicit(spec, mesh));
    });
  }
}
