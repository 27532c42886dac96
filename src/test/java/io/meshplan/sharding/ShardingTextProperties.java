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
    // The device list is a permutation of all devices.
    if (!spec.isReplicated()) {
      String ids = text.substring(text.indexOf(']') + 1).replace("last_tile_dim_replicate", "")
          .replace("}", "").trim();
      assertThat(ids.split(",")).hasSize(a0 * a1).doesNotHaveDuplicates();
    }
  }
}
