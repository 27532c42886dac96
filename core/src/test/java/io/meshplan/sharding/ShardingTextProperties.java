package io.meshplan.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.TensorShape;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** XLA sharding text written by meshplan reads back as the same layout. */
class ShardingTextProperties {
  @Property(tries = 500)
  void formatThenParseIsIdentity(
      @ForAll @IntRange(min = 2, max = 4) int a0,
      @ForAll @IntRange(min = 2, max = 3) int a1,
      @ForAll @IntRange(min = 1, max = 3) int rank,
      @ForAll @IntRange(min = -1, max = 2) int d0,
      @ForAll @IntRange(min = -1, max = 2) int d1) {
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
  }

  /** On three-axis meshes (with size-1 axes) the compact form expands to the explicit list. */
  @Property(tries = 300)
  void compactFormExpandsToExplicitOnThreeAxes(
      @ForAll @IntRange(min = 1, max = 3) int a0,
      @ForAll @IntRange(min = 1, max = 3) int a1,
      @ForAll @IntRange(min = 1, max = 3) int a2,
      @ForAll @IntRange(min = -1, max = 2) int d0,
      @ForAll @IntRange(min = -1, max = 2) int d1,
      @ForAll @IntRange(min = -1, max = 2) int d2) {
    LogicalMesh mesh = LogicalMesh.of(a0, a1, a2);
    int[] masks = new int[3];
    int[] ds = {d0, d1, d2};
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
  }
}
