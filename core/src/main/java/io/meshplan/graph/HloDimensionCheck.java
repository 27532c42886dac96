package io.meshplan.graph;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks that the dimension numbers of an instruction name dimensions its operands and result
 * have: a dot's batch and contracting dimensions (distinct, paired sizes equal), the dimensions of
 * broadcast, transpose, reduce, concatenate and reverse, and the bounds of a slice. Later stages
 * index shapes by these numbers.
 */
final class HloDimensionCheck {
  private HloDimensionCheck() {}

  /**
   * What is wrong with an instruction's dimension numbers.
   *
   * @param p the instruction
   * @param ops the shapes of its operands
   * @return the problem, or null when there is none
   */
  static String problem(PendingInstruction p, List<Shape> ops) {
    if (p.attrs instanceof OpAttrs.Dot d && ops.size() >= 2
        && ops.get(0) instanceof TensorShape l && ops.get(1) instanceof TensorShape r) {
      return dot(d, l, r);
    } else if (p.attrs instanceof OpAttrs.Dims d && p.shape instanceof TensorShape out) {
      int in = !ops.isEmpty() && ops.get(0) instanceof TensorShape t ? t.rank() : -1;
      return switch (p.opcode) {
        case BROADCAST -> dimsIn("dimensions", d.dims(), out.rank(), null);
        case TRANSPOSE -> d.dims().size() != out.rank() ? "dimensions=" + d.dims()
            + " is not a permutation of the " + out.rank() + " result dimensions"
            : dimsIn("dimensions", d.dims(), out.rank(), null);
        default -> in < 0 ? null : dimsIn("dimensions", d.dims(), in, null);
      };
    } else if (p.attrs instanceof OpAttrs.Slice s && !s.starts().isEmpty() && !ops.isEmpty()
        && ops.get(0) instanceof TensorShape t) {
      return slice(s, t);
    }
    return null;
  }

  private static String dot(OpAttrs.Dot d, TensorShape l, TensorShape r) {
    String bad = dimsIn("lhs_batch_dims", d.lhsBatch(), l.rank(), null);
    bad = bad != null ? bad : dimsIn("lhs_contracting_dims", d.lhsContracting(), l.rank(),
        d.lhsBatch());
    bad = bad != null ? bad : dimsIn("rhs_batch_dims", d.rhsBatch(), r.rank(), null);
    bad = bad != null ? bad : dimsIn("rhs_contracting_dims", d.rhsContracting(), r.rank(),
        d.rhsBatch());
    for (int i = 0; bad == null && i < d.lhsContracting().size(); i++) {
      if (l.dim(d.lhsContracting().get(i)) != r.dim(d.rhsContracting().get(i))) {
        bad = "contracting dimensions of different sizes: lhs " + l.toHlo() + " dimension "
            + d.lhsContracting().get(i) + " and rhs " + r.toHlo() + " dimension "
            + d.rhsContracting().get(i);
      }
    }
    for (int i = 0; bad == null && i < d.lhsBatch().size(); i++) {
      if (l.dim(d.lhsBatch().get(i)) != r.dim(d.rhsBatch().get(i))) {
        bad = "batch dimensions of different sizes: lhs " + l.toHlo() + " and rhs " + r.toHlo();
      }
    }
    return bad;
  }

  private static String slice(OpAttrs.Slice s, TensorShape t) {
    if (s.starts().size() != t.rank()) {
      return "slice bounds for " + s.starts().size() + " dimensions on a rank-" + t.rank()
          + " operand";
    }
    for (int i = 0; i < t.rank(); i++) {
      if (s.starts().get(i) < 0 || s.limits().get(i) > t.dim(i)
          || s.starts().get(i) > s.limits().get(i)) {
        return "slice bounds [" + s.starts().get(i) + ":" + s.limits().get(i) + "] outside"
            + " dimension " + i + " of " + t.toHlo();
      }
    }
    return null;
  }

  /** Null when every index is in [0, rank) and none repeats or is in {@code taken}. */
  private static String dimsIn(String attr, List<Integer> dims, int rank, List<Integer> taken) {
    Set<Integer> seen = new HashSet<>();
    for (int d : dims) {
      if (d < 0 || d >= rank) {
        return attr + "={" + join(dims) + "} names dimension " + d + " of a rank-" + rank
            + " operand";
      }
      if (!seen.add(d) || (taken != null && taken.contains(d))) {
        return attr + "={" + join(dims) + "} repeats dimension " + d;
      }
    }
    return null;
  }

  private static String join(List<Integer> dims) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < dims.size(); i++) {
      sb.append(i == 0 ? "" : ",").append(dims.get(i));
    }
    return sb.toString();
  }
}
