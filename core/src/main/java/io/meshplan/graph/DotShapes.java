package io.meshplan.graph;

import java.util.ArrayList;
import java.util.List;

/** Shape rules of the general dot: which dimensions are batch, contracting and free. */
public final class DotShapes {
  private DotShapes() {}

  /**
   * The free (non-batch, non-contracting) dimensions of one dot operand, ascending.
   *
   * @param rank the operand's rank
   * @param batch its batch dimensions
   * @param contracting its contracting dimensions
   * @return the free dimensions
   */
  public static List<Integer> freeDims(int rank, List<Integer> batch, List<Integer> contracting) {
    List<Integer> free = new ArrayList<>();
    for (int i = 0; i < rank; i++) {
      if (!batch.contains(i) && !contracting.contains(i)) {
        free.add(i);
      }
    }
    return free;
  }

  /**
   * Infers the result shape: batch dimensions, then lhs free, then rhs free dimensions.
   *
   * @param l the lhs shape
   * @param r the rhs shape
   * @param a the dimension numbers
   * @return the result shape
   * @throws IllegalArgumentException when paired dimensions differ in size
   */
  public static TensorShape resultShape(TensorShape l, TensorShape r, OpAttrs.Dot a) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < a.lhsBatch().size(); i++) {
      int ld = a.lhsBatch().get(i);
      int rd = a.rhsBatch().get(i);
      if (l.dim(ld) != r.dim(rd)) {
        throw new IllegalArgumentException("dot batch dimension sizes differ: " + l + " " + r);
      }
      out.add(l.dim(ld));
    }
    for (int i = 0; i < a.lhsContracting().size(); i++) {
      if (l.dim(a.lhsContracting().get(i)) != r.dim(a.rhsContracting().get(i))) {
        throw new IllegalArgumentException("dot contracting sizes differ: " + l + " " + r);
      }
    }
    for (int d : freeDims(l.rank(), a.lhsBatch(), a.lhsContracting())) {
      out.add(l.dim(d));
    }
    for (int d : freeDims(r.rank(), a.rhsBatch(), a.rhsContracting())) {
      out.add(r.dim(d));
    }
    int[] dims = new int[out.size()];
    for (int i = 0; i < dims.length; i++) {
      dims[i] = out.get(i);
    }
    return new TensorShape(l.dtype(), dims);
  }
}
