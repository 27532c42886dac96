package io.meshplan.sharding;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.TensorShape;
import io.meshplan.util.Require;
import java.util.Arrays;

/**
 * How a tensor is laid out on a logical mesh: for each tensor dimension, the set of mesh axes it is
 * split over (a bit mask, bit {@code a} for axis {@code a}); mesh axes that split no dimension
 * replicate the tensor. When one dimension is split over several axes, the lower-numbered axis is
 * the major one (Alpa's {@code S01}).
 *
 * <p>Uneven splits are padded, as XLA does: a dimension of size {@code d} split {@code t} ways
 * holds {@code ceil(d / t)} elements on every device, and the padding counts in memory and
 * communication. A dimension may not be split more ways than it has elements ({@link #fits}).
 */
public final class ShardingSpec {
  private final int[] dimAxes;
  private final int hash;

  private ShardingSpec(int[] dimAxes) {
    this.dimAxes = dimAxes;
    this.hash = Arrays.hashCode(dimAxes);
  }

  /**
   * Creates a spec from per-dimension axis masks.
   *
   * @param dimAxes bit mask of mesh axes per tensor dimension
   * @return the spec
   * @throws IllegalArgumentException when an axis is used by two dimensions
   */
  public static ShardingSpec of(int... dimAxes) {
    int used = 0;
    for (int m : dimAxes) {
      Require.that(m >= 0, "axis masks must be >= 0");
      Require.that((used & m) == 0, () -> "a mesh axis may split only one tensor dimension: "
          + Arrays.toString(dimAxes));
      used |= m;
    }
    return new ShardingSpec(dimAxes.clone());
  }

  /**
   * The replicated spec of a given rank.
   *
   * @param rank the tensor rank
   * @return the spec with no split
   */
  public static ShardingSpec replicated(int rank) {
    return new ShardingSpec(new int[rank]);
  }

  /**
   * A spec splitting one dimension over one axis.
   *
   * @param rank the tensor rank
   * @param dim the dimension
   * @param axis the mesh axis
   * @return the spec
   */
  public static ShardingSpec split(int rank, int dim, int axis) {
    int[] m = new int[rank];
    m[dim] = 1 << axis;
    return new ShardingSpec(m);
  }

  /**
   * The tensor rank.
   *
   * @return the number of dimensions
   */
  public int rank() {
    return dimAxes.length;
  }

  /**
   * The axes splitting one dimension.
   *
   * @param dim the dimension
   * @return the bit mask of axes
   */
  public int axes(int dim) {
    return dimAxes[dim];
  }

  /**
   * All axes used by any dimension.
   *
   * @return the bit mask
   */
  public int usedAxes() {
    int used = 0;
    for (int m : dimAxes) {
      used |= m;
    }
    return used;
  }

  /**
   * The dimension an axis splits.
   *
   * @param axis the axis
   * @return the dimension, or -1 if the axis replicates
   */
  public int dimOf(int axis) {
    for (int d = 0; d < dimAxes.length; d++) {
      if ((dimAxes[d] & (1 << axis)) != 0) {
        return d;
      }
    }
    return -1;
  }

  /**
   * Whether nothing is split.
   *
   * @return true for the replicated spec
   */
  public boolean isReplicated() {
    return usedAxes() == 0;
  }

  /**
   * The number of tiles along one dimension.
   *
   * @param dim the dimension
   * @param mesh the mesh
   * @return the product of the sizes of its axes
   */
  public int tiles(int dim, LogicalMesh mesh) {
    return axesProduct(dimAxes[dim], mesh);
  }

  /**
   * The total number of distinct tiles.
   *
   * @param mesh the mesh
   * @return the product of the sizes of all used axes
   */
  public int totalTiles(LogicalMesh mesh) {
    return axesProduct(usedAxes(), mesh);
  }

  /**
   * The bytes one device holds.
   *
   * @param shape the tensor shape
   * @param mesh the mesh
   * @return the full size divided by the number of tiles
   */
  public double localBytes(TensorShape shape, LogicalMesh mesh) {
    return localBytes(shape, dimAxes, mesh);
  }

  /**
   * Whether every split divides its dimension exactly (no padding).
   *
   * @param shape the tensor shape
   * @param mesh the mesh
   * @return true when no tile is padded
   */
  public boolean even(TensorShape shape, LogicalMesh mesh) {
    for (int d = 0; d < dimAxes.length; d++) {
      if (shape.dim(d) % tiles(d, mesh) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether the spec suits the shape: one mask per dimension, no axis beyond the mesh, and no
   * dimension split more ways than its size.
   *
   * @param shape the tensor shape
   * @param mesh the mesh
   * @return true when the spec is allowed for this shape
   */
  public boolean fits(TensorShape shape, LogicalMesh mesh) {
    if (shape.rank() != dimAxes.length || (usedAxes() >> mesh.rank()) != 0) {
      return false;
    }
    for (int d = 0; d < dimAxes.length; d++) {
      if (tiles(d, mesh) > Math.max(1, shape.dim(d))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The same spec with some masks replaced.
   *
   * @param dim the dimension
   * @param mask its new axis mask
   * @return the new spec
   */
  public ShardingSpec with(int dim, int mask) {
    int[] m = dimAxes.clone();
    m[dim] = mask;
    return of(m);
  }

  /**
   * The per-dimension masks (a copy).
   *
   * @return one mask per dimension
   */
  public int[] masks() {
    return dimAxes.clone();
  }

  /**
   * Every layout of a shape on a mesh: each mesh axis of size above 1 either replicates or splits
   * one dimension (two axes on one dimension give Alpa's {@code S01}), keeping those that {@link
   * #fits}. The order is fixed: axis 0 varies slowest, and for each axis "replicate" comes before
   * dimensions 0, 1, ...
   *
   * @param shape the tensor shape
   * @param mesh the mesh
   * @return the layouts
   */
  public static java.util.List<ShardingSpec> allLayouts(TensorShape shape, LogicalMesh mesh) {
    checkLayoutCount(shape, mesh);
    java.util.List<ShardingSpec> out = new java.util.ArrayList<>();
    collect(0, new int[mesh.rank()], shape, mesh, out);
    return out;
  }

  /**
   * The most layouts enumerated for one tensor: 2,048. A tensor of rank r on a mesh with m axes
   * above size 1 has up to (r + 1)^m layouts, and the cost graph holds products of two such
   * counts, so the count is checked before enumerating (rank 5 on a 4-axis mesh has 1,296;
   * rank 44 on a 2-axis mesh 2,025).
   */
  public static final int MAX_LAYOUTS = 2048;

  /**
   * Refuses a tensor whose layouts on a mesh are too many to enumerate.
   *
   * @param shape the tensor shape
   * @param mesh the mesh
   * @throws io.meshplan.util.InputException naming the shape, the mesh and the count
   */
  public static void checkLayoutCount(TensorShape shape, LogicalMesh mesh) {
    checkChoiceCount("tensor " + shape.toHlo(), shape.rank() + 1, mesh);
  }

  /**
   * Refuses an enumeration in which every mesh axis above size 1 picks one of {@code choices}
   * options when the product exceeds {@link #MAX_LAYOUTS}.
   *
   * @param what what is enumerated, for the message (e.g. "tensor f32[...]" or "dot 'd'")
   * @param choices the options per axis
   * @param mesh the mesh
   * @throws io.meshplan.util.InputException naming what, the mesh and the limit
   */
  public static void checkChoiceCount(String what, int choices, LogicalMesh mesh) {
    long count = 1;
    for (int a = 0; a < mesh.rank(); a++) {
      if (mesh.size(a) > 1) {
        count *= choices;
      }
      if (count > MAX_LAYOUTS) {
        throw new io.meshplan.util.InputException(what + " has more than " + MAX_LAYOUTS
            + " layouts on mesh " + mesh + " (" + (choices - 1) + " dimensions to split, "
            + mesh.rank() + " axes); use a mesh with fewer axes");
      }
    }
  }

  private static void collect(int axis, int[] choice, TensorShape shape, LogicalMesh mesh,
      java.util.List<ShardingSpec> out) {
    if (axis == mesh.rank()) {
      int[] masks = new int[shape.rank()];
      for (int a = 0; a < choice.length; a++) {
        if (choice[a] > 0) {
          masks[choice[a] - 1] |= 1 << a;
        }
      }
      ShardingSpec s = new ShardingSpec(masks);
      if (s.fits(shape, mesh)) {
        out.add(s);
      }
      return;
    }
    int options = mesh.size(axis) > 1 ? shape.rank() : 0;
    for (int d = 0; d <= options; d++) {
      choice[axis] = d;
      collect(axis + 1, choice, shape, mesh, out);
    }
    choice[axis] = 0;
  }

  /**
   * The bytes one device holds when each dimension is split over the given axes, padded as the
   * class comment says.
   *
   * @param shape the tensor shape
   * @param masks the axis mask of each dimension
   * @param mesh the mesh
   * @return bytes
   */
  public static double localBytes(TensorShape shape, int[] masks, LogicalMesh mesh) {
    double elements = 1;
    for (int d = 0; d < masks.length; d++) {
      long t = axesProduct(masks[d], mesh);
      elements *= (shape.dim(d) + t - 1) / t; // long: dim + t - 1 may exceed an int
    }
    return elements * shape.dtype().bytes();
  }

  /**
   * The product of the sizes of a set of axes.
   *
   * @param mask the axes
   * @param mesh the mesh
   * @return the product, 1 for no axis
   */
  public static int axesProduct(int mask, LogicalMesh mesh) {
    int p = 1;
    for (int a = 0; a < mesh.rank(); a++) {
      if ((mask & (1 << a)) != 0) {
        p *= mesh.size(a);
      }
    }
    return p;
  }

  /**
   * A short name in Alpa's notation: {@code R}, {@code S0@1} (dimension 0 over axis 1), {@code
   * S0@0,S1@1}, {@code S0@01}.
   *
   * @return the name
   */
  @Override
  public String toString() {
    if (isReplicated()) {
      return "R";
    }
    StringBuilder sb = new StringBuilder();
    for (int d = 0; d < dimAxes.length; d++) {
      if (dimAxes[d] == 0) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append('S').append(d).append('@');
      for (int a = 0; a < 31; a++) {
        if ((dimAxes[d] & (1 << a)) != 0) {
          sb.append(a);
        }
      }
    }
    return sb.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ShardingSpec s && hash == s.hash && Arrays.equals(dimAxes, s.dimAxes);
  }

  @Override
  public int hashCode() {
    return hash;
  }
}
