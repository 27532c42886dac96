package io.meshplan.sharding;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.util.AsciiDigits;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a {@link ShardingSpec} as XLA {@code HloSharding} text and reads it back: {@code
 * {replicated}}, or a tile assignment such as {@code {devices=[50,4]<=[200]}}, {@code
 * {devices=[4,2]<=[2,4]T(1,0)}} or {@code {devices=[2,1,2]<=[4] last_tile_dim_replicate}}.
 *
 * <p>The tile assignment has one entry per tensor dimension (its tile count), plus a trailing
 * dimension over the unused mesh axes when some axes replicate. Devices are listed in row-major
 * order of tile index; tile index {@code t} along a dimension split over axes {@code a1 < a2} is
 * {@code c[a1] * size(a2) + c[a2]}, and the mesh maps a coordinate to a device id row-major. That
 * list is always the mesh's iota reshaped to the mesh shape and transposed so that the axes come in
 * tile order, so it is written in XLA's compact iota form ({@code <=[dims]} with {@code T(perm)}
 * for a transposed order, size-1 dimensions dropped and runs of consecutive axes merged, as XLA's
 * {@code IotaTileAssignment} prints it). The reader takes the compact and the explicit form ({@code
 * {devices=[2,2]0,2,1,3}}).
 */
public final class HloShardingText {
  private static final java.util.regex.Pattern TILED = java.util.regex.Pattern.compile(
      "\\{devices=\\[([0-9,]+)\\](?:<=\\[([0-9,]+)\\](?:T\\(([0-9,]+)\\))?|([0-9,]+))"
          + "(last_tile_dim_replicate)?\\}");

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
    String want = explicit(text.replaceAll("\\s+", ""), mesh.deviceCount());
    if (want == null) {
      return null;
    }
    for (ShardingSpec s : ShardingSpec.allLayouts(shape, mesh)) {
      if (formatExplicit(s, mesh).replaceAll("\\s+", "").equals(want)) {
        return s;
      }
    }
    return null;
  }

  /**
   * Formats a spec in XLA's compact iota form (see the class comment).
   *
   * @param spec the spec
   * @param mesh the mesh whose row-major device ids are used
   * @return the HLO sharding text, e.g. {@code {devices=[50,4]<=[200]}}
   */
  public static String format(ShardingSpec spec, LogicalMesh mesh) {
    int used = spec.usedAxes();
    int unused = ((1 << mesh.rank()) - 1) & ~used;
    if (ShardingSpec.axesProduct(used, mesh) == 1) {
      return "{replicated}";
    }
    int rank = spec.rank();
    boolean replicateLast = ShardingSpec.axesProduct(unused, mesh) > 1;
    StringBuilder sb = new StringBuilder("{devices=[");
    // The mesh axes in tile order: each dimension's axes, lowest (major) first, then the unused.
    List<Integer> order = new ArrayList<>();
    for (int d = 0; d < rank; d++) {
      sb.append(d == 0 ? "" : ",").append(spec.tiles(d, mesh));
      addAxes(spec.axes(d), mesh, order);
    }
    if (replicateLast) {
      sb.append(rank == 0 ? "" : ",").append(ShardingSpec.axesProduct(unused, mesh));
      addAxes(unused, mesh, order);
    }
    sb.append("]<=[");
    appendDeviceOrder(sb, order, mesh);
    if (replicateLast) {
      sb.append(" last_tile_dim_replicate");
    }
    return sb.append('}').toString();
  }

  /**
   * Appends the device list of a tile assignment after its {@code <=[}: the mesh's device count
   * when one reshape dimension suffices, else the reshape dimensions and their transposition
   * {@code T(...)}.
   *
   * @param order the mesh axes of size above 1 in tile order
   */
  private static void appendDeviceOrder(StringBuilder sb, List<Integer> order, LogicalMesh mesh) {
    // Merge runs of consecutive axes (they are one reshape dimension) and drop size-1 axes.
    List<Integer> groupSize = new ArrayList<>();
    List<Integer> groupFirstAxis = new ArrayList<>();
    for (int i = 0; i < order.size(); i++) {
      int a = order.get(i);
      if (i > 0 && order.get(i - 1) == a - 1) {
        int g = groupSize.size() - 1;
        groupSize.set(g, groupSize.get(g) * mesh.size(a));
      } else {
        groupSize.add(mesh.size(a));
        groupFirstAxis.add(a);
      }
    }
    // The reshape dimensions are the groups in mesh order; the permutation lists them in tile
    // order.
    Integer[] byAxis = new Integer[groupSize.size()];
    for (int g = 0; g < byAxis.length; g++) {
      byAxis[g] = g;
    }
    java.util.Arrays.sort(byAxis, java.util.Comparator.comparingInt(groupFirstAxis::get));
    int[] rankOf = new int[byAxis.length];
    for (int r = 0; r < byAxis.length; r++) {
      rankOf[byAxis[r]] = r;
    }
    if (byAxis.length == 1) {
      sb.append(mesh.deviceCount()).append(']');
    } else {
      for (int r = 0; r < byAxis.length; r++) {
        sb.append(r == 0 ? "" : ",").append(groupSize.get(byAxis[r]));
      }
      sb.append("]T(");
      for (int g = 0; g < byAxis.length; g++) {
        sb.append(g == 0 ? "" : ",").append(rankOf[g]);
      }
      sb.append(')');
    }
  }

  /** Appends the axes of size above 1 in a mask, lowest first. */
  private static void addAxes(int mask, LogicalMesh mesh, List<Integer> order) {
    for (int a = 0; a < mesh.rank(); a++) {
      if ((mask & (1 << a)) != 0 && mesh.size(a) > 1) {
        order.add(a);
      }
    }
  }

  /**
   * Expands a tile assignment to the explicit device list, so that the compact and the explicit
   * form compare equal: {@code {devices=[2,2]<=[2,2]T(1,0)}} gives {@code
   * {devices=[2,2]0,2,1,3}}. Text without a tile assignment is returned as it is.
   *
   * @param text the sharding text without spaces
   * @param devices the mesh device count; an assignment of another size gives null
   * @return the explicit text without spaces, or null when the text is malformed
   */
  static String explicit(String text, int devices) {
    if (!text.startsWith("{devices=")) {
      return text;
    }
    java.util.regex.Matcher m = TILED.matcher(text);
    if (!m.matches()) {
      return null;
    }
    int[] tiles = ints(m.group(1));
    int[] ids;
    if (m.group(2) != null) {
      int[] dims = ints(m.group(2));
      int[] perm = m.group(3) == null ? identity(dims == null ? 0 : dims.length) : ints(m.group(3));
      ids = iota(dims, perm, devices);
    } else {
      ids = ints(m.group(4));
    }
    if (tiles == null || ids == null || ids.length != devices || product(tiles) != devices) {
      return null;
    }
    StringBuilder sb = new StringBuilder("{devices=[").append(m.group(1)).append(']');
    for (int i = 0; i < ids.length; i++) {
      sb.append(i == 0 ? "" : ",").append(ids[i]);
    }
    if (m.group(5) != null) {
      sb.append("last_tile_dim_replicate");
    }
    return sb.append('}').toString();
  }

  /** iota(product(dims)) reshaped to dims and transposed by perm; null when inconsistent. */
  private static int[] iota(int[] dims, int[] perm, int devices) {
    if (dims == null || perm == null || dims.length != perm.length
        || product(dims) != devices) {
      return null;
    }
    int r = dims.length;
    boolean[] seen = new boolean[r];
    for (int p : perm) {
      if (p < 0 || p >= r || seen[p]) {
        return null;
      }
      seen[p] = true;
    }
    // Strides of the original row-major array.
    long[] stride = new long[r];
    long s = 1;
    for (int d = r - 1; d >= 0; d--) {
      stride[d] = s;
      s *= dims[d];
    }
    int[] out = new int[devices];
    int[] idx = new int[r];
    for (int k = 0; k < devices; k++) {
      long id = 0;
      for (int j = 0; j < r; j++) {
        id += idx[j] * stride[perm[j]];
      }
      out[k] = (int) id;
      for (int j = r - 1; j >= 0; j--) {
        if (++idx[j] < dims[perm[j]]) {
          break;
        }
        idx[j] = 0;
      }
    }
    return out;
  }

  /** The product, or -1 when it exceeds the device limit (so it matches no mesh). */
  private static long product(int[] a) {
    long p = 1;
    for (int x : a) {
      p *= x;
      if (p > io.meshplan.util.Checked.MAX_DEVICES) {
        return -1;
      }
    }
    return p;
  }

  private static int[] identity(int n) {
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = i;
    }
    return p;
  }

  /** Comma-separated non-negative ints; null when one does not fit in an int. */
  private static int[] ints(String csv) {
    String[] parts = csv.split(",", -1);
    int[] out = new int[parts.length];
    for (int i = 0; i < parts.length; i++) {
      if (parts[i].isEmpty() || parts[i].length() > 9) {
        return null;
      }
      out[i] = AsciiDigits.parseInt(parts[i]);
    }
    return out;
  }

  /**
   * Formats a spec with the explicit device list, e.g. {@code {devices=[2,2]0,2,1,3}}.
   *
   * @param spec the spec
   * @param mesh the mesh whose row-major device ids are used
   * @return the HLO sharding text
   */
  public static String formatExplicit(ShardingSpec spec, LogicalMesh mesh) {
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
