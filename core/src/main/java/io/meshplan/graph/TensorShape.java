package io.meshplan.graph;

import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.Arrays;

/**
 * A dense tensor shape: element type and dimension sizes. Rank 0 is a scalar. The byte size is at
 * most {@link Checked#MAX_TENSOR_BYTES}, so element and byte counts never overflow a long and are
 * exact as doubles.
 *
 * @param dtype the element type
 * @param dims the size of each dimension, each at least 0
 */
public record TensorShape(DType dtype, int[] dims) implements Shape {
  /** Validates and copies the dimensions. */
  public TensorShape {
    Require.nonNull(dtype, "dtype");
    Require.nonNull(dims, "dims");
    dims = dims.clone();
    java.math.BigInteger bytes = java.math.BigInteger.valueOf(Math.max(1, dtype.bytes()));
    for (int d : dims) {
      if (d < 0) {
        throw new IllegalArgumentException("dimension sizes must be >= 0, got "
            + Arrays.toString(dims));
      }
      bytes = bytes.multiply(java.math.BigInteger.valueOf(d));
    }
    if (bytes.compareTo(java.math.BigInteger.valueOf(Checked.MAX_TENSOR_BYTES)) > 0) {
      throw new InputException("tensor " + text(dtype, dims) + " has " + bytes
          + " bytes, more than the limit of " + Checked.MAX_TENSOR_BYTES + " (1 PiB)");
    }
  }

  /**
   * Creates a shape.
   *
   * @param dtype the element type
   * @param dims the dimension sizes
   * @return the shape
   */
  public static TensorShape of(DType dtype, int... dims) {
    return new TensorShape(dtype, dims);
  }

  /**
   * The dimension sizes (a copy).
   *
   * @return the sizes
   */
  @Override
  public int[] dims() {
    return dims.clone();
  }

  /**
   * The number of dimensions.
   *
   * @return the rank
   */
  public int rank() {
    return dims.length;
  }

  /**
   * One dimension size.
   *
   * @param i the dimension
   * @return its size
   */
  public int dim(int i) {
    return dims[i];
  }

  /**
   * The number of elements.
   *
   * @return the product of the dimension sizes
   */
  public long elementCount() {
    long n = 1;
    for (int d : dims) {
      n *= d;
    }
    return n;
  }

  @Override
  public long byteSize() {
    return elementCount() * dtype.bytes();
  }

  /**
   * The same dimensions with another element type.
   *
   * @param other the new element type
   * @return the new shape
   */
  public TensorShape withDtype(DType other) {
    return new TensorShape(other, dims);
  }

  @Override
  public String toHlo() {
    return text(dtype, dims);
  }

  private static String text(DType dtype, int[] dims) {
    StringBuilder sb = new StringBuilder(dtype.hloName()).append('[');
    for (int i = 0; i < dims.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(dims[i]);
    }
    return sb.append(']').toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TensorShape s && dtype == s.dtype && Arrays.equals(dims, s.dims);
  }

  @Override
  public int hashCode() {
    return dtype.hashCode() * 31 + Arrays.hashCode(dims);
  }

  @Override
  public String toString() {
    return toHlo();
  }
}
