package io.meshplan.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.TensorShape;
import org.junit.jupiter.api.Test;

/** XLA HloSharding text and resharding prices, with the arithmetic in comments. */
class ShardingTextAndCostTest {
  private static final LogicalMesh M22 = LogicalMesh.of(2, 2);

  @Test
  void hloShardingText() {
    assertThat(HloShardingText.format(ShardingSpec.replicated(2), M22)).isEqualTo("{replicated}");
    // dim 0 over axis 1, dim 1 over axis 0: tile (i, j) is mesh[j][i] = 2j + i -> 0,2,1,3,
    // which is iota(4) reshaped to [2,2] and transposed.
    assertThat(HloShardingText.formatExplicit(ShardingSpec.of(2, 1), M22))
        .isEqualTo("{devices=[2,2]0,2,1,3}");
    assertThat(HloShardingText.format(ShardingSpec.of(2, 1), M22))
        .isEqualTo("{devices=[2,2]<=[2,2]T(1,0)}");
    // dim 0 over axis 1, replicated over axis 0: tile (i, r) is mesh[r][i] -> 0,2,1,3.
    assertThat(HloShardingText.formatExplicit(ShardingSpec.of(2, 0), M22))
        .isEqualTo("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
    assertThat(HloShardingText.format(ShardingSpec.of(2, 0), M22))
        .isEqualTo("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}");
    // dim 0 over both axes (axis 0 major): tile t = 2*c0 + c1 is device t.
    assertThat(HloShardingText.formatExplicit(ShardingSpec.of(3, 0), M22))
        .isEqualTo("{devices=[4,1]0,1,2,3}");
    assertThat(HloShardingText.format(ShardingSpec.of(3, 0), M22))
        .isEqualTo("{devices=[4,1]<=[4]}");
  }

  /** The compact iota form exactly as XLA prints it (HloSharding::ToString), and read back. */
  @Test
  void iotaFormAsXlaPrintsIt() {
    // LLaMA on 50 x 4: dim 0 over axis 0 (50), dim 1 over axis 1 (4): devices in mesh order.
    LogicalMesh m504 = LogicalMesh.of(50, 4);
    assertThat(HloShardingText.format(ShardingSpec.of(1, 2), m504))
        .isEqualTo("{devices=[50,4]<=[200]}");
    // dim 0 over axis 0 of 2 x 2, axis 1 replicates: tiles [2,1] and a last dimension of 2.
    assertThat(HloShardingText.format(ShardingSpec.of(1, 0), M22))
        .isEqualTo("{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
    // 2 x 4 mesh, dim 0 over axis 1 (4 tiles), dim 1 over axis 0 (2 tiles): iota(8) reshaped to
    // [2,4] and transposed, i.e. 0,4,1,5,2,6,3,7.
    LogicalMesh m24 = LogicalMesh.of(2, 4);
    ShardingSpec t = ShardingSpec.of(2, 1);
    assertThat(HloShardingText.format(t, m24)).isEqualTo("{devices=[4,2]<=[2,4]T(1,0)}");
    assertThat(HloShardingText.formatExplicit(t, m24)).isEqualTo("{devices=[4,2]0,4,1,5,2,6,3,7}");
    // A mesh axis of size 1 is dropped from the reshape: 1 x 4 is iota(4).
    assertThat(HloShardingText.format(ShardingSpec.of(2, 0), LogicalMesh.of(1, 4)))
        .isEqualTo("{devices=[4,1]<=[4]}");
    // 2 x 3 x 2 mesh, dim 0 over axis 2 and dim 1 over axes 0,1: tile order is axes 2,0,1; the
    // run 0,1 merges into one reshape dimension of 2*3 = 6, so iota(12) as [6,2] transposed.
    LogicalMesh m232 = LogicalMesh.of(2, 3, 2);
    assertThat(HloShardingText.format(ShardingSpec.of(4, 3), m232))
        .isEqualTo("{devices=[2,6]<=[6,2]T(1,0)}");
    // Both forms read back to the same layout.
    TensorShape s = TensorShape.of(DType.F32, 64, 32);
    assertThat(HloShardingText.parse("{devices=[4,2]<=[2,4]T(1,0)}", s, m24)).isEqualTo(t);
    assertThat(HloShardingText.parse("{devices=[4,2]0,4,1,5,2,6,3,7}", s, m24)).isEqualTo(t);
    assertThat(HloShardingText.parse("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", s, M22))
        .isEqualTo(ShardingSpec.of(1, 0));
    assertThat(HloShardingText.parse("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", s, M22))
        .isEqualTo(ShardingSpec.of(1, 0));
    // Malformed or foreign assignments are not layouts: wrong size, bad permutation, huge iota.
    assertThat(HloShardingText.parse("{devices=[4,2]<=[2,4]T(0,0)}", s, m24)).isNull();
    assertThat(HloShardingText.parse("{devices=[4,2]<=[9]}", s, m24)).isNull();
    assertThat(HloShardingText.parse("{devices=[4,2]<=[2000000000,2000000000]}", s, m24))
        .isNull();
  }

  @Test
  void reshardingPrices() {
    AlphaBetaCommModel comm = new AlphaBetaCommModel(LogicalMesh.of(4, 2), new double[] {1, 1},
        new double[] {1, 0.5});
    TensorShape s = TensorShape.of(DType.F32, 64, 32); // 8192 bytes
    // Slice: free.
    assertThat(ReshardingCost.of(s, ShardingSpec.replicated(2), ShardingSpec.split(2, 0, 0),
        comm)).isZero();
    // All-gather over axis 0 (n=4) to the full 8192 bytes: 1 + 3/4 * 8192 = 6145.
    assertThat(ReshardingCost.of(s, ShardingSpec.split(2, 0, 0), ShardingSpec.replicated(2),
        comm)).isCloseTo(6145, within(1e-9));
    // Move axis 0 from dim 0 to dim 1: all-to-all of the 2048-byte local buffer:
    // 1 + 3/4 * 2048 = 1537.
    assertThat(ReshardingCost.of(s, ShardingSpec.split(2, 0, 0), ShardingSpec.split(2, 1, 0),
        comm)).isCloseTo(1537, within(1e-9));
    // S0@0,S1@1 -> R: gather axis 0 to 8192/2 = 4096 bytes (1 + 0.75*4096 = 3073), then axis 1 to
    // 8192 bytes (1 + 0.5 * 0.5 * 8192 = 2049): 5122.
    assertThat(ReshardingCost.of(s, ShardingSpec.of(1, 2), ShardingSpec.replicated(2), comm))
        .isCloseTo(5122, within(1e-9));
  }

  @Test
  void unevenSplitsArePadded() {
    // 1024 over 50 devices holds ceil(1024/50) = 21 rows of 4 bytes.
    LogicalMesh m = LogicalMesh.of(50, 4);
    TensorShape s = TensorShape.of(DType.F32, 1024);
    assertThat(ShardingSpec.split(1, 0, 0).localBytes(s, m)).isEqualTo(84.0);
    assertThat(ShardingSpec.split(1, 0, 0).fits(TensorShape.of(DType.F32, 8), m)).isFalse();
  }
}
