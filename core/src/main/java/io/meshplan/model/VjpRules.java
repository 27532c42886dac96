package io.meshplan.model;

import io.meshplan.graph.DotShapes;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The vector-Jacobian product of each opcode the model builders emit: given the cotangent {@code
 * g} of an instruction's result, add the cotangent of each operand that needs one (Griewank and
 * Walther, "Evaluating Derivatives", ch. 3; the transposition rules of JAX's {@code lax}). A dot's
 * rule is two dots with permuted dimensions, so the backward pass of a dot costs twice its forward
 * FLOPs.
 */
final class VjpRules {
  private VjpRules() {}

  /**
   * Applies the rule of an instruction.
   *
   * @param bp the pass (forward values, cotangent accumulation, the tape)
   * @param ins the forward instruction
   * @param g the id of its cotangent
   * @throws IllegalStateException for an opcode without a rule (a builder bug)
   */
  static void apply(Backprop bp, Instruction ins, int g) {
    switch (ins.opcode()) {
      case DOT -> dot(bp, ins, g);
      case ADD -> {
        bp.accumulate(ins.operand(0), g);
        bp.accumulate(ins.operand(1), g);
      }
      case SUBTRACT -> {
        bp.accumulate(ins.operand(0), g);
        if (bp.needsGrad(ins.operand(1))) {
          bp.accumulate(ins.operand(1), bp.tape().unary(Opcode.NEGATE, g));
        }
      }
      case MULTIPLY -> multiply(bp, ins, g);
      case DIVIDE -> divide(bp, ins, g);
      case NEGATE -> bp.accumulate(ins.operand(0), bp.tape().unary(Opcode.NEGATE, g));
      case COPY -> bp.accumulate(ins.operand(0), g);
      case EXP -> bp.accumulate(ins.operand(0), bp.tape().mul(g, bp.fwd(ins.id())));
      case LOG -> bp.accumulate(ins.operand(0),
          bp.tape().binary(Opcode.DIVIDE, g, bp.fwd(ins.operand(0))));
      case RSQRT -> rsqrt(bp, ins, g);
      case SQRT -> bp.accumulate(ins.operand(0), bp.tape().binary(Opcode.DIVIDE,
          bp.tape().mul(g, like(bp, g, 0.5)), bp.fwd(ins.id())));
      case TANH -> {
        Tape t = bp.tape();
        int y = bp.fwd(ins.id());
        bp.accumulate(ins.operand(0), t.mul(g, t.binary(Opcode.SUBTRACT, like(bp, g, 1.0),
            t.mul(y, y))));
      }
      case LOGISTIC -> {
        Tape t = bp.tape();
        int y = bp.fwd(ins.id());
        bp.accumulate(ins.operand(0), t.mul(t.mul(g, y), t.binary(Opcode.SUBTRACT,
            like(bp, g, 1.0), y)));
      }
      case MAXIMUM, MINIMUM -> extremum(bp, ins, g);
      case SELECT -> select(bp, ins, g);
      case CONVERT -> bp.accumulate(ins.operand(0),
          bp.tape().convert(g, bp.tape().shape(ins.operand(0)).dtype()));
      case BROADCAST -> broadcast(bp, ins, g);
      case REDUCE -> reduce(bp, ins, g);
      case RESHAPE -> bp.accumulate(ins.operand(0),
          bp.tape().reshape(g, bp.tape().shape(ins.operand(0)).dims()));
      case TRANSPOSE -> transpose(bp, ins, g);
      case SLICE -> slice(bp, ins, g);
      case CONCATENATE -> concatenate(bp, ins, g);
      case GATHER -> gather(bp, ins, g);
      default -> throw new IllegalStateException("no backward rule for " + ins.opcode().hloName()
          + " (" + ins.name() + ")");
    }
  }

  /** A constant shaped like {@code id}. */
  private static int like(Backprop bp, int id, double v) {
    return bp.tape().fill(bp.tape().shape(id), v);
  }

  /**
   * {@code out = dot(L, R)} with result dimensions batch, lhs free, rhs free. {@code dL = dot(G,
   * R)} contracting G's rhs-free part with R's free dimensions, {@code dR = dot(L, G)} contracting
   * L's free dimensions with G's lhs-free part; each is transposed back to its operand's order.
   */
  static void dot(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    OpAttrs.Dot a = (OpAttrs.Dot) ins.attrs();
    int l = ins.operand(0);
    int r = ins.operand(1);
    TensorShape ls = t.shape(l);
    TensorShape rs = t.shape(r);
    List<Integer> lf = DotShapes.freeDims(ls.rank(), a.lhsBatch(), a.lhsContracting());
    List<Integer> rf = DotShapes.freeDims(rs.rank(), a.rhsBatch(), a.rhsContracting());
    int nb = a.lhsBatch().size();
    int[] gBatch = range(0, nb);
    if (bp.needsGrad(l)) {
      int d = t.dot(g, bp.fwd(r), gBatch, range(nb + lf.size(), nb + lf.size() + rf.size()),
          Backprop.ints(a.rhsBatch()), Backprop.ints(rf));
      // Result: batch, L free, then R's contracting dimensions in ascending R order.
      int[] pos = new int[ls.rank()];
      for (int i = 0; i < nb; i++) {
        pos[a.lhsBatch().get(i)] = i;
      }
      for (int j = 0; j < lf.size(); j++) {
        pos[lf.get(j)] = nb + j;
      }
      int[] rcSorted = Backprop.ints(a.rhsContracting());
      Arrays.sort(rcSorted);
      for (int m = 0; m < a.lhsContracting().size(); m++) {
        pos[a.lhsContracting().get(m)] = nb + lf.size()
            + Arrays.binarySearch(rcSorted, a.rhsContracting().get(m));
      }
      bp.accumulate(l, permuteTo(t, d, pos));
    }
    if (bp.needsGrad(r)) {
      int d = t.dot(bp.fwd(l), g, Backprop.ints(a.lhsBatch()), Backprop.ints(lf), gBatch,
          range(nb, nb + lf.size()));
      // Result: batch, L's contracting dimensions in ascending L order, then R free.
      int[] pos = new int[rs.rank()];
      for (int i = 0; i < nb; i++) {
        pos[a.rhsBatch().get(i)] = i;
      }
      int[] lcSorted = Backprop.ints(a.lhsContracting());
      Arrays.sort(lcSorted);
      for (int m = 0; m < a.rhsContracting().size(); m++) {
        pos[a.rhsContracting().get(m)] = nb
            + Arrays.binarySearch(lcSorted, a.lhsContracting().get(m));
      }
      for (int k = 0; k < rf.size(); k++) {
        pos[rf.get(k)] = nb + lcSorted.length + k;
      }
      bp.accumulate(r, permuteTo(t, d, pos));
    }
  }

  /** Transposes {@code x} so that operand dimension {@code i} comes from {@code pos[i]}. */
  private static int permuteTo(Tape t, int x, int[] pos) {
    for (int i = 0; i < pos.length; i++) {
      if (pos[i] != i) {
        return t.transpose(x, pos);
      }
    }
    return x;
  }

  private static int[] range(int from, int to) {
    int[] a = new int[to - from];
    for (int i = 0; i < a.length; i++) {
      a[i] = from + i;
    }
    return a;
  }

  static void multiply(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    int a = ins.operand(0);
    int b = ins.operand(1);
    if (bp.needsGrad(a)) {
      bp.accumulate(a, t.mul(g, bp.fwd(b)));
    }
    if (bp.needsGrad(b)) {
      bp.accumulate(b, t.mul(g, bp.fwd(a)));
    }
  }

  /** {@code y = a / b}: {@code da = g / b}, {@code db = -(g / b) * y}. */
  static void divide(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    int a = ins.operand(0);
    int b = ins.operand(1);
    int ga = t.binary(Opcode.DIVIDE, g, bp.fwd(b));
    bp.accumulate(a, ga);
    if (bp.needsGrad(b)) {
      bp.accumulate(b, t.unary(Opcode.NEGATE, t.mul(ga, bp.fwd(ins.id()))));
    }
  }

  /** {@code y = x^(-1/2)}: {@code dx = g * (-1/2) * y^3}. */
  static void rsqrt(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    int y = bp.fwd(ins.id());
    bp.accumulate(ins.operand(0), t.mul(t.mul(g, like(bp, g, -0.5)), t.mul(y, t.mul(y, y))));
  }

  /** The cotangent goes to the operand that was chosen (the first one on ties). */
  static void extremum(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    int a = ins.operand(0);
    int b = ins.operand(1);
    int first = t.compare(ins.opcode() == Opcode.MAXIMUM ? "GE" : "LE", bp.fwd(a), bp.fwd(b));
    int zero = like(bp, g, 0.0);
    if (bp.needsGrad(a)) {
      bp.accumulate(a, t.select(first, g, zero));
    }
    if (bp.needsGrad(b)) {
      bp.accumulate(b, t.select(first, zero, g));
    }
  }

  static void select(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    int p = bp.fwd(ins.operand(0));
    int zero = like(bp, g, 0.0);
    if (bp.needsGrad(ins.operand(1))) {
      bp.accumulate(ins.operand(1), t.select(p, g, zero));
    }
    if (bp.needsGrad(ins.operand(2))) {
      bp.accumulate(ins.operand(2), t.select(p, zero, g));
    }
  }

  /** Sums over the result dimensions the operand was broadcast along. */
  static void broadcast(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    List<Integer> dims = ((OpAttrs.Dims) ins.attrs()).dims();
    int rank = t.shape(g).rank();
    List<Integer> summed = new ArrayList<>();
    for (int d = 0; d < rank; d++) {
      if (!dims.contains(d)) {
        summed.add(d);
      }
    }
    int x = summed.isEmpty() ? g : t.reduce(g, Backprop.ints(summed));
    // The kept result dimensions stay in ascending order; operand dimension i is dims[i].
    int[] sorted = Backprop.ints(dims);
    Arrays.sort(sorted);
    int[] pos = new int[dims.size()];
    for (int i = 0; i < pos.length; i++) {
      pos[i] = Arrays.binarySearch(sorted, dims.get(i));
    }
    bp.accumulate(ins.operand(0), permuteTo(t, x, pos));
  }

  /** Broadcasts back along the summed dimensions. */
  static void reduce(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    TensorShape in = t.shape(ins.operand(0));
    List<Integer> dims = ((OpAttrs.Dims) ins.attrs()).dims();
    List<Integer> kept = new ArrayList<>();
    for (int d = 0; d < in.rank(); d++) {
      if (!dims.contains(d)) {
        kept.add(d);
      }
    }
    bp.accumulate(ins.operand(0), t.broadcast(g, in.dims(), Backprop.ints(kept)));
  }

  static void transpose(Backprop bp, Instruction ins, int g) {
    List<Integer> perm = ((OpAttrs.Dims) ins.attrs()).dims();
    int[] inv = new int[perm.size()];
    for (int i = 0; i < inv.length; i++) {
      inv[perm.get(i)] = i;
    }
    bp.accumulate(ins.operand(0), bp.tape().transpose(g, inv));
  }

  /** Pads the cotangent with zeros back to the operand's shape, one dimension at a time. */
  static void slice(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    OpAttrs.Slice s = (OpAttrs.Slice) ins.attrs();
    TensorShape in = t.shape(ins.operand(0));
    int x = g;
    for (int d = 0; d < in.rank(); d++) {
      int lo = s.starts().get(d);
      int hi = s.limits().get(d);
      if (lo == 0 && hi == in.dim(d)) {
        continue;
      }
      List<Integer> parts = new ArrayList<>();
      if (lo > 0) {
        parts.add(zerosWith(t, x, d, lo));
      }
      parts.add(x);
      if (hi < in.dim(d)) {
        parts.add(zerosWith(t, x, d, in.dim(d) - hi));
      }
      x = t.concatenate(d, Backprop.ints(parts));
    }
    bp.accumulate(ins.operand(0), x);
  }

  private static int zerosWith(Tape t, int like, int dim, int size) {
    int[] dims = t.shape(like).dims();
    dims[dim] = size;
    return t.fill(TensorShape.of(t.shape(like).dtype(), dims), 0.0);
  }

  static void concatenate(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    int dim = ((OpAttrs.Dims) ins.attrs()).dims().get(0);
    int[] limits = t.shape(g).dims();
    int[] starts = new int[limits.length];
    int offset = 0;
    for (int op : ins.operands()) {
      int size = t.shape(op).dim(dim);
      if (bp.needsGrad(op)) {
        int[] s = starts.clone();
        int[] l = limits.clone();
        s[dim] = offset;
        l[dim] = offset + size;
        bp.accumulate(op, t.slice(g, s, l));
      }
      offset += size;
    }
  }

  /** An embedding lookup's table gets the rows added back where they were read. */
  static void gather(Backprop bp, Instruction ins, int g) {
    Tape t = bp.tape();
    int table = ins.operand(0);
    bp.accumulate(table, t.scatterAdd(t.fill(t.shape(table), 0.0), bp.fwd(ins.operand(1)), g));
  }
}
