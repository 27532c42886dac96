package io.meshplan.sharding;

import io.meshplan.cluster.LogicalMesh;

/**
 * Writes a {@link ShardingSpec} as XLA {@code HloSharding} text: {@code {replicated}}, {@code
 * {devices=[2,2]0,2,1,3}}, or {@code {devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}}.
 *
 * <p>The tile assignment has one entry per tensor dimension (its tile count), plus a trailing
 * dimension over the unused mesh axes when some axes replicate. Devices are listed in row-major
 * order of tile index; tile index {@code t} along a dimension split over axes {@code a1 < a2} is
 * {@code c[a1] * size(a2) + c[a2]}, and the mesh maps a coordinate to a device id row-major.
 */
public final class HloShardingText {
  private HloShardingText() {}

  /**
   * Reads XLA sharding text back into a layout of a given shape on a mesh: the layout whose {@link
   * #format} equals the text, ignoring spaces. {@code {maximal device=N}}, tuple shardings and tile
   * assignments that no layout of this mesh produces are not expressible and give null.
   *
   * @param text the sharding text, with braces
   * @param shape the tensor shape
   * @param mesh the mesh
   * @return the layout, or null when none matches
   */
  public static ShardingSpec parse(String text, io.meshplan.graph.TensorShape shape,
      LogicalMesh mesh) {
    String want = text.replaceAll("\\s+", "");
    for (ShardingSpec s : ShardingSpec.allLayouts(shape, mesh)) {
      if (format(s, mesh).replaceAll("\\s+", "").equals(want)) {
        return s;
      }
    }
    return null;
  }

  /**
   * Formats a spec.
   *
   * @param spec the spec
   * @param mesh the mesh whose row-major device ids are used
   * @return the HLO sharding text
   */
  public static String format(ShardingSpec spec, LogicalMesh mesh) {
    int used = spec.usedAxes();
    int unused = ((1 << mesh.rank()) - 1) & ~used;
    if (ShardingSpec.axesProduct(used, mesh) == 1) {
      return "{replicated}";
    }
    int rank = spec.rank();
    boolean replicateLast = ShardingSpec.axesProduct(unused, mesh) > 1;
    int tileRank = rank + (replicateLast ? 1 : 0);
    int[] tileDims = new int[tileRank];
    int[] masks = new int[tileRank];
    for (int d = 0; d < rank; d++) {
      masks[d] = spec.axes(d);
      tileDims[d] = spec.tiles(d, mesh);
    }
    if (replicateLast) {
      masks[rank] = unused;
      tileDims[rank] = ShardingSpec.axesProduct(unused, mesh);
    }
    StringBuilder sb = new StringBuilder("{devices=[");
    for (int d = 0; d < tileRank; d++) {
      if (d > 0) {
        sb.append(',');
      }
      sb.append(tileDims[d]);
    }
    sb.append(']');
    int total = mesh.deviceCount();
    int[] tileIndex = new int[tileRank];
    int[] coord = new int[mesh.rank()];
    for (int k = 0; k < total; k++) {
      int rem = k;
      for (int d = tileRank - 1; d >= 0; d--) {
        tileIndex[d] = rem % tileDims[d];
        rem /= tileDims[d];
      }
      for (int d = 0; d < tileRank; d++) {
        int t = tileIndex[d];
        for (int a = mesh.rank() - 1; a >= 0; a--) {
          if ((masks[d] & (1 << a)) != 0) {
            coord[a] = t % mesh.size(a);
            t /= mesh.size(a);
          }
        }
      }
      for (int a = 0; a < mesh.rank(); a++) {
        if (mesh.size(a) == 1) {
          coord[a] = 0;
        }
      }
      sb.append(k == 0 ? "" : ",").append(mesh.deviceAt(coord));
    }
    if (replicateLast) {
      sb.append(" last_tile_dim_replicate");
    }
    return sb.append('}').toString();
  }
}
