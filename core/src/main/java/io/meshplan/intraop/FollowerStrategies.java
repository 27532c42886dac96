package io.meshplan.intraop;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The strategies of ops that follow an operand (Alpa's "follower" instructions, merged with their
 * leader into one decision node): one strategy per strategy of the operand, with the layout
 * carried through the op. Elementwise ops follow their deepest operand of the same shape; reshape,
 * transpose and slice their operand; concatenate its deepest operand; reduce its operand,
 * all-reducing over a split reduced dimension; dynamic slice, dynamic update slice and pad their
 * first operand, keeping splits only on dimensions their window covers whole; a tuple element the
 * element of its tuple. A split the op cannot carry is gathered on the edge.
 */
final class FollowerStrategies {
  private final StrategyContext ctx;
  private final Graph graph;
  private final MeshEnv env;
  private final LogicalMesh mesh;

  FollowerStrategies(StrategyContext ctx) {
    this.ctx = ctx;
    this.graph = ctx.graph();
    this.env = ctx.env();
    this.mesh = ctx.mesh();
  }

  /** A reshape follows its operand, keeping the splits it can carry ({@link #reshapeSpec}). */
  StrategySet reshape(Instruction ins, List<StrategySet> done) {
    return follow(ins, 0, done, this::reshapeSpec);
  }

  /** A transpose follows its operand, permuting the splits. */
  StrategySet transpose(Instruction ins, List<StrategySet> done) {
    return follow(ins, 0, done, this::transposeSpec);
  }

  /** A slice follows its operand, gathering the splits of sliced dimensions. */
  StrategySet slice(Instruction ins, List<StrategySet> done) {
    return follow(ins, 0, done, this::sliceSpec);
  }

  /** Transforms a leader's layout into this op's output layout (or null if impossible). */
  @FunctionalInterface
  private interface SpecMap {
    ShardingSpec map(Instruction ins, ShardingSpec in);
  }

  private int deepestTensorOperand(Instruction ins) {
    int best = -1;
    TensorShape out = ins.tensorShape();
    for (int k = 0; k < ins.operands().size(); k++) {
      if (!(graph.get(ins.operand(k)).shape() instanceof TensorShape t)
          || !Arrays.equals(t.dims(), out.dims())) {
        continue;
      }
      if (best < 0 || ctx.depth(ins.operand(k)) > ctx.depth(ins.operand(best))) {
        best = k;
      }
    }
    return best;
  }

  /**
   * An elementwise op follows its deepest operand of the same shape; with none (all operands
   * broadcast or scalar) it may take any layout.
   */
  StrategySet elementwise(Instruction ins, List<StrategySet> done) {
    if (!(ins.shape() instanceof TensorShape t)) {
      return ctx.opaque(ins);
    }
    int k = deepestTensorOperand(ins);
    if (k < 0) {
      List<Strategy> list = new ArrayList<>();
      for (ShardingSpec s : ctx.layouts(t)) {
        list.add(new Strategy(s.toString(), s, ctx.operandsAll(ins, s),
            ctx.computeCost(ins, s.totalTiles(mesh)), 0.0, s.localBytes(t, mesh)));
      }
      return new StrategySet(list, -1, false);
    }
    return follow(ins, k, done, (i, s) -> s);
  }

  private StrategySet follow(Instruction ins, int k, List<StrategySet> done, SpecMap map) {
    int leader = ins.operand(k);
    StrategySet ls = done.get(leader);
    if (!(ins.shape() instanceof TensorShape t)
        || !(graph.get(leader).shape() instanceof TensorShape lt)) {
      return ctx.opaque(ins);
    }
    List<Strategy> list = new ArrayList<>(ls.size());
    for (Strategy st : ls.strategies()) {
      ShardingSpec in = st.output() == null ? ShardingSpec.replicated(lt.rank()) : st.output();
      ShardingSpec o = map.map(ins, in);
      ShardingSpec[] ops = ctx.operandsAll(ins, o);
      ops[k] = requiredOperand(ins, in, o);
      list.add(new Strategy(o.toString(), o, ops, ctx.computeCost(ins, o.totalTiles(mesh)), 0.0,
          o.localBytes(t, mesh)));
    }
    return new StrategySet(list, leader, false);
  }

  /**
   * The layout a follower needs of the operand it follows: the leader's layout, less the splits the
   * op cannot carry (those are gathered on the edge).
   */
  private ShardingSpec requiredOperand(Instruction ins, ShardingSpec in, ShardingSpec out) {
    return switch (ins.opcode().kind()) {
      case RESHAPE -> {
        int kept = out.usedAxes();
        int[] m = in.masks();
        for (int d = 0; d < m.length; d++) {
          m[d] &= kept;
        }
        yield ShardingSpec.of(m);
      }
      case TRANSPOSE -> inverseTranspose(ins, out);
      case SLICE, CONCATENATE, ELEMENTWISE, OPAQUE -> out;
      default -> in;
    };
  }

  private ShardingSpec transposeSpec(Instruction ins, ShardingSpec in) {
    List<Integer> perm = ((OpAttrs.Dims) ins.attrs()).dims();
    int[] m = new int[perm.size()];
    for (int i = 0; i < m.length; i++) {
      m[i] = in.axes(perm.get(i));
    }
    return ShardingSpec.of(m);
  }

  private ShardingSpec inverseTranspose(Instruction ins, ShardingSpec out) {
    List<Integer> perm = ((OpAttrs.Dims) ins.attrs()).dims();
    int[] m = new int[perm.size()];
    for (int i = 0; i < m.length; i++) {
      m[perm.get(i)] = out.axes(i);
    }
    return ShardingSpec.of(m);
  }

  /**
   * Carries splits through a reshape: an input dimension keeps its split when some output dimension
   * starts at the same element offset (equal products of the dimensions before them) and can hold
   * the split; that covers splitting a dimension (the major part keeps the split) and merging
   * dimensions (the first of the merged group keeps it). Other splits are dropped.
   */
  private ShardingSpec reshapeSpec(Instruction ins, ShardingSpec in) {
    TensorShape src = graph.get(ins.operand(0)).tensorShape();
    TensorShape dst = ins.tensorShape();
    int[] m = new int[dst.rank()];
    long prefixIn = 1;
    for (int i = 0; i < src.rank(); i++) {
      int mask = in.axes(i);
      if (mask != 0) {
        int t = ShardingSpec.axesProduct(mask, mesh);
        long prefixOut = 1;
        for (int j = 0; j < dst.rank(); j++) {
          if (prefixOut == prefixIn && dst.dim(j) >= t && m[j] == 0
              && (src.dim(i) % t == 0 ? dst.dim(j) % t == 0 : dst.dim(j) == src.dim(i))) {
            m[j] = mask;
            break;
          }
          prefixOut *= dst.dim(j);
          if (prefixOut > prefixIn) {
            break;
          }
        }
      }
      prefixIn *= src.dim(i);
    }
    return ShardingSpec.of(m);
  }

  private ShardingSpec sliceSpec(Instruction ins, ShardingSpec in) {
    TensorShape src = graph.get(ins.operand(0)).tensorShape();
    TensorShape dst = ins.tensorShape();
    int[] m = in.masks();
    for (int d = 0; d < m.length; d++) {
      if (src.dim(d) != dst.dim(d)) {
        m[d] = 0;
      }
    }
    return ShardingSpec.of(m);
  }

  /** A concatenate follows its deepest operand, gathering the concatenated dimension. */
  StrategySet concatenate(Instruction ins, List<StrategySet> done) {
    int dim = ((OpAttrs.Dims) ins.attrs()).dims().get(0);
    int best = 0;
    for (int k = 1; k < ins.operands().size(); k++) {
      if (ctx.depth(ins.operand(k)) > ctx.depth(ins.operand(best))) {
        best = k;
      }
    }
    return follow(ins, best, done, (i, s) -> s.with(dim, 0));
  }

  /**
   * A reduce follows its operand, dropping the reduced dimensions; a split reduced dimension
   * all-reduces the result over its axes.
   */
  StrategySet reduce(Instruction ins, List<StrategySet> done) {
    if (!(ins.shape() instanceof TensorShape t)
        || !(graph.get(ins.operand(0)).shape() instanceof TensorShape src)) {
      return ctx.opaque(ins);
    }
    List<Integer> dims = ((OpAttrs.Dims) ins.attrs()).dims();
    int leader = ins.operand(0);
    StrategySet ls = done.get(leader);
    List<Strategy> list = new ArrayList<>(ls.size());
    for (Strategy st : ls.strategies()) {
      ShardingSpec in = st.output() == null ? ShardingSpec.replicated(src.rank()) : st.output();
      int[] m = new int[t.rank()];
      int reducedAxes = 0;
      int j = 0;
      for (int d = 0; d < src.rank(); d++) {
        if (dims.contains(d)) {
          reducedAxes |= in.axes(d);
        } else if (j < m.length) {
          m[j++] = in.axes(d);
        }
      }
      ShardingSpec o = ShardingSpec.of(m);
      double local = o.localBytes(t, mesh);
      double comm = 0.0;
      String name = o.toString();
      for (int ax = 0; ax < mesh.rank(); ax++) {
        if ((reducedAxes & (1 << ax)) != 0) {
          comm += env.comm().allReduce(local, ax);
          name += " (allreduce @ " + ax + ")";
        }
      }
      ShardingSpec[] ops = new ShardingSpec[ins.operands().size()];
      ops[0] = in;
      for (int k = 1; k < ops.length; k++) {
        ops[k] = graph.get(ins.operand(k)).shape() instanceof TensorShape ts
            ? ShardingSpec.replicated(ts.rank()) : null;
      }
      list.add(new Strategy(name, o, ops, ctx.computeCost(ins, in.totalTiles(mesh)), comm, local));
    }
    return new StrategySet(list, leader, false);
  }

  /**
   * A tuple element of a planned {@code tuple} takes that element's layout, strategy for strategy;
   * an element of an opaque tuple (replicated) may be sliced to any layout for free.
   */
  StrategySet getTupleElement(Instruction ins, List<StrategySet> done) {
    if (!(ins.shape() instanceof TensorShape t)) {
      return ctx.opaque(ins);
    }
    Instruction tuple = graph.get(ins.operand(0));
    if (tuple.opcode() == Opcode.TUPLE && ins.attrs() instanceof OpAttrs.Index idx
        && idx.index() < tuple.operands().size()) {
      int element = tuple.operand(idx.index());
      if (graph.get(element).shape() instanceof TensorShape et && et.equals(t)) {
        StrategySet es = done.get(element);
        List<Strategy> list = new ArrayList<>(es.size());
        for (Strategy st : es.strategies()) {
          ShardingSpec o = st.output() == null ? ShardingSpec.replicated(t.rank()) : st.output();
          list.add(new Strategy(o.toString(), o, new ShardingSpec[1], 0.0, 0.0,
              o.localBytes(t, mesh)));
        }
        return new StrategySet(list, element, false);
      }
    }
    return ctx.free(ins, t);
  }

  /**
   * Dynamic slice, dynamic update slice and pad follow their first operand: a dimension keeps its
   * split only where the window covers it whole (the instruction {@code window}, the result of a
   * slice or pad or the update of an update slice, has the operand's size there), since
   * a window at a run-time offset or padding would otherwise cross tiles; other splits are
   * gathered. Index and padding-value operands are scalars and free.
   */
  StrategySet windowed(Instruction ins, List<StrategySet> done, int window) {
    if (!(ins.shape() instanceof TensorShape t)
        || !(graph.get(ins.operand(0)).shape() instanceof TensorShape src)
        || !(graph.get(window).shape() instanceof TensorShape w)
        || src.rank() != t.rank() || w.rank() != t.rank()) {
      return ctx.opaque(ins);
    }
    return follow(ins, 0, done, (i, in) -> {
      int[] m = in.masks();
      for (int d = 0; d < m.length; d++) {
        if (w.dim(d) != src.dim(d)) {
          m[d] = 0;
        }
      }
      return ShardingSpec.of(m);
    });
  }
}
