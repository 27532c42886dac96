package io.meshplan.intraop;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DotShapes;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The strategies of a dot (Alpa, OSDI'22, Table 3): each of its batch, lhs-free, rhs-free and
 * contracting dimensions may be split over any set of mesh axes. Each axis on a contracting
 * dimension leaves partial sums, finished in one of two ways: an all-reduce of the result (Alpa's
 * Table 3), or a reduce-scatter that leaves the result split over that same axis on one of its
 * dimensions, at half the bytes of the all-reduce. The second is how Megatron-LM runs sequence
 * parallelism (Korthikanti et al., MLSys'23, section 4.2.2): the row-parallel matrices of
 * attention and MLP reduce-scatter their output along the sequence instead of all-reducing it,
 * so a sequence-split activation never needs a weight gathered. When compute is not priced
 * (Alpa's abstract units), the strategies are Alpa's prototype's: a dot must use every mesh axis,
 * and partial sums are all-reduced (no reduce-scatter form).
 */
final class DotStrategies {
  private final StrategyContext ctx;
  private final Graph graph;
  private final MeshEnv env;
  private final LogicalMesh mesh;

  DotStrategies(StrategyContext ctx) {
    this.ctx = ctx;
    this.graph = ctx.graph();
    this.env = ctx.env();
    this.mesh = ctx.mesh();
  }

  /**
   * The strategies of a dot, most tiles first, then in the layouts' tie-break order; the
   * replicated one alone when no split fits.
   */
  StrategySet dot(Instruction ins) {
    OpAttrs.Dot a = (OpAttrs.Dot) ins.attrs();
    TensorShape lhs = graph.get(ins.operand(0)).tensorShape();
    TensorShape rhs = graph.get(ins.operand(1)).tensorShape();
    TensorShape out = ins.tensorShape();
    List<int[]> idx = indexDims(a, lhs, rhs);
    ShardingSpec.checkChoiceCount("dot '" + ins.name() + "'", idx.size() + 1, mesh);
    List<int[]> assignments = new ArrayList<>();
    int[] choice = new int[mesh.rank()];
    enumerateDot(0, choice, idx, assignments);
    List<Strategy> list = new ArrayList<>();
    boolean priced = env.compute().isPresent();
    int full = ctx.allAxes();
    // Without a compute model, replicated computation would look free; as in Alpa's prototype a
    // dot must then use every mesh axis, unless no strategy can.
    boolean requireAll = !priced
        && assignments.stream().anyMatch(as -> usedAxes(as) == full);
    for (int[] as : assignments) {
      int used = usedAxes(as);
      if ((used == 0 && !priced && mesh.deviceCount() > 1) || (requireAll && used != full)) {
        continue;
      }
      addForms(ins, as, idx, priced, list);
    }
    if (list.isEmpty()) {
      ShardingSpec rep = ShardingSpec.replicated(out.rank());
      list.add(new Strategy("R = R x R", rep, new ShardingSpec[] {
          ShardingSpec.replicated(lhs.rank()), ShardingSpec.replicated(rhs.rank())},
          ctx.computeCost(ins, 1), 0.0, rep.localBytes(out, mesh)));
    }
    list.sort((x, y) -> {
      int c = Double.compare(tiles(y), tiles(x));
      return c != 0 ? c : ctx.preferred(x.output(), y.output());
    });
    return new StrategySet(list, -1, false);
  }

  /**
   * The index dimensions of a dot: batch, lhs-free, rhs-free, then contracting; each as its out
   * dimension, lhs dimension and rhs dimension (-1 when absent) and its size.
   */
  private static List<int[]> indexDims(OpAttrs.Dot a, TensorShape lhs, TensorShape rhs) {
    List<Integer> lf = DotShapes.freeDims(lhs.rank(), a.lhsBatch(), a.lhsContracting());
    List<Integer> rf = DotShapes.freeDims(rhs.rank(), a.rhsBatch(), a.rhsContracting());
    int nb = a.lhsBatch().size();
    List<int[]> idx = new ArrayList<>();
    for (int i = 0; i < nb; i++) {
      idx.add(new int[] {i, a.lhsBatch().get(i), a.rhsBatch().get(i), lhs.dim(a.lhsBatch().get(i))});
    }
    for (int j = 0; j < lf.size(); j++) {
      idx.add(new int[] {nb + j, lf.get(j), -1, lhs.dim(lf.get(j))});
    }
    for (int k = 0; k < rf.size(); k++) {
      idx.add(new int[] {nb + lf.size() + k, -1, rf.get(k), rhs.dim(rf.get(k))});
    }
    for (int m = 0; m < a.lhsContracting().size(); m++) {
      idx.add(new int[] {-1, a.lhsContracting().get(m), a.rhsContracting().get(m),
          lhs.dim(a.lhsContracting().get(m))});
    }
    return idx;
  }

  /**
   * Adds the strategies of one assignment of mesh axes to index dimensions: with compute priced,
   * every way to finish the partial sums of its contracting axes, each axis by an all-reduce or
   * by a reduce-scatter onto one of the result's dimensions; in Alpa's abstract units only the
   * all-reduces, Table 3's set, whose objectives the reproductions of Alpa's prototype pin.
   */
  private void addForms(Instruction ins, int[] as, List<int[]> idx, boolean priced,
      List<Strategy> list) {
    int[] scatter = new int[as.length];
    Arrays.fill(scatter, -1);
    if (!priced) {
      list.add(strategy(ins, as, scatter, idx));
      return;
    }
    enumerateScatter(0, ins, as, idx, scatter, list);
  }

  /**
   * Chooses, for each axis from {@code ax} on that splits a contracting dimension, -1 (all-reduce)
   * or the result dimension it reduce-scatters onto, and adds each complete choice whose result
   * layout fits the result's shape.
   */
  private void enumerateScatter(int ax, Instruction ins, int[] as, List<int[]> idx,
      int[] scatter, List<Strategy> list) {
    if (ax == as.length) {
      Strategy s = strategy(ins, as, scatter, idx);
      if (s != null) {
        list.add(s);
      }
      return;
    }
    enumerateScatter(ax + 1, ins, as, idx, scatter, list);
    if (as[ax] >= 0 && idx.get(as[ax])[0] < 0) {
      for (int d = 0; d < ins.tensorShape().rank(); d++) {
        scatter[ax] = d;
        enumerateScatter(ax + 1, ins, as, idx, scatter, list);
      }
      scatter[ax] = -1;
    }
  }

  /**
   * The strategy of one assignment of mesh axes to index dimensions and one way to finish its
   * partial sums: the layouts of the result and both operands, the reduce-scatters (in ascending
   * axis order, each of the buffer the previous ones left) and then the all-reduces (of the
   * result's local buffer) of the contracting axes; null when the scattered result splits a
   * dimension more ways than its size.
   *
   * <p>A reduce-scatter of an {@code S}-byte buffer over {@code n} GPUs is priced by the comm
   * model on {@code S}, the buffer before the scatter (nccl-tests sends {@code (n-1)/n * S} per
   * GPU, half an all-reduce's {@code 2(n-1)/n * S}), and leaves {@code S/n} on each GPU.
   *
   * @param scatter per mesh axis, the result dimension its partial sums are reduce-scattered onto,
   *     or -1 (all-reduced, or not a contracting axis)
   */
  private Strategy strategy(Instruction ins, int[] as, int[] scatter, List<int[]> idx) {
    TensorShape out = ins.tensorShape();
    int[] outM = new int[out.rank()];
    int[] lhsM = new int[graph.get(ins.operand(0)).tensorShape().rank()];
    int[] rhsM = new int[graph.get(ins.operand(1)).tensorShape().rank()];
    int contractAxes = 0;
    for (int ax = 0; ax < as.length; ax++) {
      if (as[ax] < 0) {
        continue;
      }
      int[] d = idx.get(as[ax]);
      if (d[0] >= 0) {
        outM[d[0]] |= 1 << ax;
      } else {
        contractAxes |= 1 << ax;
      }
      if (d[1] >= 0) {
        lhsM[d[1]] |= 1 << ax;
      }
      if (d[2] >= 0) {
        rhsM[d[2]] |= 1 << ax;
      }
    }
    double comm = 0.0;
    StringBuilder coll = new StringBuilder();
    for (int ax = 0; ax < mesh.rank(); ax++) {
      if (scatter[ax] >= 0) {
        comm += env.comm().reduceScatter(ShardingSpec.localBytes(out, outM, mesh), ax);
        outM[scatter[ax]] |= 1 << ax;
        coll.append(coll.length() == 0 ? " (reducescatter @ " : ",").append(ax);
      }
    }
    ShardingSpec o = ShardingSpec.of(outM);
    if (!o.fits(out, mesh)) {
      return null;
    }
    double local = o.localBytes(out, mesh);
    comm += allReduces(contractAxes & ~scatterAxes(scatter), local, coll);
    String name = o + " = " + ShardingSpec.of(lhsM) + " x " + ShardingSpec.of(rhsM) + coll;
    return new Strategy(name, o, new ShardingSpec[] {ShardingSpec.of(lhsM), ShardingSpec.of(rhsM)},
        ctx.computeCost(ins, ShardingSpec.axesProduct(usedAxes(as), mesh)), comm, local);
  }

  /**
   * The all-reduces of a {@code local}-byte result over the given axes, named into {@code coll}
   * after any reduce-scatters ({@code " (allreduce @ 0,1)"}).
   */
  private double allReduces(int axes, double local, StringBuilder coll) {
    double comm = 0.0;
    boolean first = true;
    for (int ax = 0; ax < mesh.rank(); ax++) {
      if ((axes & (1 << ax)) != 0) {
        comm += env.comm().allReduce(local, ax);
        if (first && coll.length() > 0) {
          coll.append("; allreduce @ ");
        } else if (first) {
          coll.append(" (allreduce @ ");
        } else {
          coll.append(',');
        }
        coll.append(ax);
        first = false;
      }
    }
    if (coll.length() > 0) {
      coll.append(')');
    }
    return comm;
  }

  /** The axes a scatter choice (result dimension per axis, -1 for none) reduce-scatters. */
  private static int scatterAxes(int[] scatter) {
    int mask = 0;
    for (int ax = 0; ax < scatter.length; ax++) {
      mask |= scatter[ax] >= 0 ? 1 << ax : 0;
    }
    return mask;
  }

  /** The mesh axes an assignment (split dimension per axis, -1 for none) uses. */
  private static int usedAxes(int[] assignment) {
    int used = 0;
    for (int ax = 0; ax < assignment.length; ax++) {
      if (assignment[ax] >= 0) {
        used |= 1 << ax;
      }
    }
    return used;
  }


  private double tiles(Strategy s) {
    int used = s.output().usedAxes();
    for (ShardingSpec op : s.operandSpecs()) {
      if (op != null) {
        used |= op.usedAxes();
      }
    }
    return ShardingSpec.axesProduct(used, mesh);
  }

  private void enumerateDot(int axis, int[] choice, List<int[]> idx, List<int[]> out) {
    if (axis == mesh.rank()) {
      // Check that every index dimension is split no more ways than its size.
      int[] tiles = new int[idx.size()];
      Arrays.fill(tiles, 1);
      for (int a = 0; a < choice.length; a++) {
        if (choice[a] >= 0) {
          tiles[choice[a]] *= mesh.size(a);
        }
      }
      for (int i = 0; i < idx.size(); i++) {
        if (tiles[i] > idx.get(i)[3]) {
          return;
        }
      }
      out.add(choice.clone());
      return;
    }
    choice[axis] = -1;
    enumerateDot(axis + 1, choice, idx, out);
    if (mesh.size(axis) > 1) {
      for (int i = 0; i < idx.size(); i++) {
        choice[axis] = i;
        enumerateDot(axis + 1, choice, idx, out);
      }
      choice[axis] = -1;
    }
  }
}
