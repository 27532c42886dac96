package io.meshplan.cluster;

import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Arrays;

/**
 * A logical N-D device mesh. Device ids are {@code 0..size-1}, laid out row-major over the shape, so
 * on a 50 x 4 mesh device {@code 4*i + j} sits at coordinate {@code (i, j)}.
 *
 * @param shape the number of devices along each axis, each at least 1
 */
public record LogicalMesh(int[] shape) {
  /**
   * The most axes a mesh may have. Layouts per tensor grow as (rank + 1)^axes (81 per matrix on 4
   * axes, 243 on 5), and so does the exact solver's work on a dense core (the fourth power of the
   * layouts per node); no cluster has more than three levels (GPU, node, rack) to map axes on, so
   * four leaves one to spare.
   */
  public static final int MAX_RANK = 4;

  /** Validates and copies the shape. */
  public LogicalMesh {
    Require.nonNull(shape, "mesh shape");
    Require.that(shape.length >= 1, "a mesh needs at least one axis");
    shape = shape.clone();
    for (int s : shape) {
      Require.positive(s, "mesh axis size");
    }
    if (shape.length > MAX_RANK) {
      throw new InputException("mesh " + text(shape) + " has " + shape.length
          + " axes, more than the limit of " + MAX_RANK);
    }
    Checked.intProduct("the device count of mesh " + text(shape), Checked.MAX_DEVICES, shape);
  }

  /**
   * Creates a mesh.
   *
   * @param shape the axis sizes
   * @return the mesh
   */
  public static LogicalMesh of(int... shape) {
    return new LogicalMesh(shape);
  }

  /**
   * The shape (a copy).
   *
   * @return the axis sizes
   */
  @Override
  public int[] shape() {
    return shape.clone();
  }

  /**
   * The number of axes.
   *
   * @return the rank of the mesh
   */
  public int rank() {
    return shape.length;
  }

  /**
   * The size of one axis.
   *
   * @param axis the axis
   * @return the number of devices along it
   */
  public int size(int axis) {
    return shape[axis];
  }

  /**
   * The total device count.
   *
   * @return the product of the axis sizes
   */
  public int deviceCount() {
    int n = 1;
    for (int s : shape) {
      n *= s; // no overflow: the constructor bounded the product by Checked.MAX_DEVICES
    }
    return n;
  }

  /**
   * The row-major device id at a coordinate.
   *
   * @param coord one index per axis
   * @return the device id
   */
  public int deviceAt(int[] coord) {
    int id = 0;
    for (int a = 0; a < shape.length; a++) {
      id = id * shape[a] + coord[a];
    }
    return id;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LogicalMesh m && Arrays.equals(shape, m.shape);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(shape);
  }

  @Override
  public String toString() {
    return text(shape);
  }

  private static String text(int[] shape) {
    StringBuilder sb = new StringBuilder();
    for (int a = 0; a < shape.length; a++) {
      if (a > 0) {
        sb.append('x');
      }
      sb.append(shape[a]);
    }
    return sb.toString();
  }
}
