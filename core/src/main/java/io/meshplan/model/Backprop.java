package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reverse-mode differentiation of the forward part of a {@link Tape}: instructions are visited in
 * reverse id order and each one's cotangent is pushed to its operands by the rule of its opcode
 * ({@link VjpRules}) or by the custom rule of a fused region. Forward values a rule needs come
 * through {@link #fwd}: parameters and kept values are used as they are; any other value is
 * computed again from kept values (tagged {@link Phase#RECOMPUTE}), so the forward values that the
 * backward pass reads are exactly the kept ones. Only values that depend on a differentiable
 * parameter get cotangents.
 */
final class Backprop {
  /** Callback of the reverse pass. */
  @FunctionalInterface
  interface Hooks {
    /** Called with the complete cotangent of a differentiable parameter. */
    void parameterGradient(int parameter, int gradient);
  }

  private final Tape tape;
  private final int forwardEnd;
  private final BitSet needsGrad = new BitSet();
  private final Map<Integer, Integer> cotangents = new HashMap<>();
  private final Map<Integer, Integer> recomputed = new HashMap<>();

  /**
   * Prepares the pass.
   *
   * @param tape the tape whose instructions {@code [0, forwardEnd)} are the forward pass
   * @param forwardEnd one past the last forward instruction
   * @param differentiable the parameters to differentiate with respect to
   */
  Backprop(Tape tape, int forwardEnd, Set<Integer> differentiable) {
    this.tape = tape;
    this.forwardEnd = forwardEnd;
    for (int id = 0; id < forwardEnd; id++) {
      Instruction ins = tape.ins(id);
      boolean dep = differentiable.contains(id);
      for (int op : ins.operands()) {
        dep |= needsGrad.get(op);
      }
      if (dep && isFloat(ins)) {
        needsGrad.set(id);
      }
    }
  }

  private static boolean isFloat(Instruction ins) {
    if (!(ins.shape() instanceof TensorShape t)) {
      return false;
    }
    DType d = t.dtype();
    return d == DType.BF16 || d == DType.F16 || d == DType.F32 || d == DType.F64
        || d.eightBitFloat();
  }

  Tape tape() {
    return tape;
  }

  boolean needsGrad(int id) {
    return needsGrad.get(id);
  }

  /** Sets the cotangent of an output. */
  void seed(int id, int cotangent) {
    accumulate(id, cotangent);
  }

  /** Adds a contribution to the cotangent of a forward value (ignored when it needs none). */
  void accumulate(int id, int cotangent) {
    if (!needsGrad.get(id)) {
      return;
    }
    if (!tape.shape(id).equals(tape.shape(cotangent)) && !wideningOfFp8(id, cotangent)) {
      throw new IllegalStateException("cotangent " + tape.shape(cotangent) + " of "
          + tape.ins(id).name() + " does not match its shape " + tape.shape(id));
    }
    Integer prev = cotangents.get(id);
    cotangents.put(id, prev == null ? cotangent : tape.add(prev, cotangent));
  }

  /**
   * Whether a cotangent is the gradient of a weight stored in FP8 ({@link Lora#fp8Weights}): the
   * same dimensions in the compute type, as Transformer Engine's weight-gradient GEMM writes it
   * (into the fp32 or bf16 main gradient, never into the FP8 weight's type).
   */
  private boolean wideningOfFp8(int id, int cotangent) {
    TensorShape w = tape.shape(id);
    TensorShape g = tape.shape(cotangent);
    return tape.ins(id).opcode() == Opcode.PARAMETER && w.dtype().eightBitFloat()
        && !g.dtype().eightBitFloat() && w.withDtype(g.dtype()).equals(g);
  }

  /**
   * A forward value for use in the backward pass: the value itself when it is a parameter or
   * kept, else its recomputation (made once).
   */
  int fwd(int id) {
    Instruction ins = tape.ins(id);
    if (ins.opcode() == Opcode.PARAMETER || tape.kept(id) || id >= forwardEnd) {
      return id;
    }
    Integer r = recomputed.get(id);
    if (r != null) {
      return r;
    }
    int[] ops = new int[ins.operands().size()];
    for (int k = 0; k < ops.length; k++) {
      ops[k] = fwd(ins.operand(k));
    }
    Phase p = tape.phase();
    LayerRef l = tape.layer();
    String part = tape.part();
    tape.at(Phase.RECOMPUTE, tape.layerOf(id), tape.partOf(id));
    int out = reemit(ins, ops);
    tape.at(p, l, part);
    recomputed.put(id, out);
    return out;
  }

  /**
   * Recomputes forward instructions {@code [from, to)} in order (a recompute region); operands
   * from outside the range come through {@link #fwd}. A replayed region ({@link
   * Tape#replayRegion}) reuses the values kept inside it.
   */
  void recompute(int from, int to) {
    Phase p = tape.phase();
    LayerRef l = tape.layer();
    String part = tape.part();
    boolean reuse = tape.replays(to - 1);
    for (int id = from; id < to; id++) {
      Instruction ins = tape.ins(id);
      // A replay reuses the values its policy saved, not the region's output: that one is kept
      // as the next block's input, and the replay computes it again from the saved values. A
      // value kept for what it feeds is computed again too, and its readers read the kept one.
      if (ins.opcode() == Opcode.PARAMETER || recomputed.containsKey(id)
          || reuse && tape.kept(id) && !tape.rerun(id) && id != to - 1) {
        continue;
      }
      int[] ops = new int[ins.operands().size()];
      for (int k = 0; k < ops.length; k++) {
        ops[k] = fwd(ins.operand(k));
      }
      tape.at(Phase.RECOMPUTE, tape.layerOf(id), tape.partOf(id));
      recomputed.put(id, reemit(ins, ops));
    }
    tape.at(p, l, part);
  }

  /**
   * Runs the reverse pass over the forward instructions; a recompute region is recomputed when
   * the pass reaches its last instruction.
   */
  void run(Hooks hooks) {
    for (int id = forwardEnd - 1; id >= 0; id--) {
      LayerRef l = tape.layerOf(id);
      int region = tape.regionEndingAt(id);
      if (region >= 0) {
        recompute(region, id + 1);
      }
      Integer g = cotangents.remove(id);
      if (g == null) {
        continue;
      }
      Instruction ins = tape.ins(id);
      if (ins.opcode() == Opcode.PARAMETER) {
        hooks.parameterGradient(id, g);
        continue;
      }
      tape.at(Phase.BACKWARD, l, tape.partOf(id));
      Tape.CustomVjp custom = tape.customVjp(id);
      if (custom != null) {
        custom.apply(this, g);
      } else {
        VjpRules.apply(this, ins, g);
      }
    }
  }

  /** Emits a copy of a forward instruction on new operands. */
  private int reemit(Instruction ins, int[] ops) {
    TensorShape shape = ins.tensorShape();
    return switch (ins.opcode()) {
      case CONSTANT -> tape.constant(shape.dtype(),
          io.meshplan.util.AsciiDigits.parseDecimal(((OpAttrs.Literal) ins.attrs()).literal()));
      case IOTA -> tape.iota(shape, ((OpAttrs.Index) ins.attrs()).index());
      case BROADCAST -> tape.broadcast(ops[0], shape.dims(), ints(((OpAttrs.Dims) ins.attrs())
          .dims()));
      case RESHAPE -> tape.reshape(ops[0], shape.dims());
      case TRANSPOSE -> tape.transpose(ops[0], ints(((OpAttrs.Dims) ins.attrs()).dims()));
      case REDUCE -> tape.reduce(ops[0], ints(((OpAttrs.Dims) ins.attrs()).dims()));
      case CONVERT -> tape.convert(ops[0], shape.dtype());
      case COMPARE -> tape.compare(((OpAttrs.Compare) ins.attrs()).direction(), ops[0], ops[1]);
      case SELECT -> tape.select(ops[0], ops[1], ops[2]);
      case DOT -> {
        OpAttrs.Dot d = (OpAttrs.Dot) ins.attrs();
        yield tape.dot(ops[0], ops[1], ints(d.lhsBatch()), ints(d.lhsContracting()),
            ints(d.rhsBatch()), ints(d.rhsContracting()), shape.dtype());
      }
      case SLICE -> {
        OpAttrs.Slice s = (OpAttrs.Slice) ins.attrs();
        yield tape.slice(ops[0], ints(s.starts()), ints(s.limits()));
      }
      case CONCATENATE -> tape.concatenate(((OpAttrs.Dims) ins.attrs()).dims().get(0), ops);
      case GATHER -> tape.gather(ops[0], ops[1]);
      case FUSED_ATTENTION -> {
        io.meshplan.graph.OpAttrs.Attention a = (io.meshplan.graph.OpAttrs.Attention) ins.attrs();
        yield tape.fusedAttention(ops[0], ops[1], ops[2], a.work(), a.span());
      }
      case SSD_SCAN, GDN_SCAN, SELECTIVE_SCAN -> tape.scan(ins.opcode(),
          ((io.meshplan.graph.OpAttrs.Scan) ins.attrs()).chunk(), ops);
      case MOE_DISPATCH -> tape.moeDispatch(ops[0], ops.length > 1 ? ops[1] : -1, shape.dim(0),
          shape.dim(1));
      case MOE_COMBINE -> tape.moeCombine(ops[0], ops.length > 1 ? ops[1] : -1, shape.dim(0),
          shape.dim(1));
      default -> ops.length == 1 ? tape.unary(ins.opcode(), ops[0])
          : tape.binary(ins.opcode(), ops[0], ops[1]);
    };
  }

  static int[] ints(List<Integer> l) {
    int[] a = new int[l.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = l.get(i);
    }
    return a;
  }
}
