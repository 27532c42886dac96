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
 * contracting dimensions may be split over any set of mesh axes; each axis on a contracting
 * dimension costs an all-reduce of the result. When compute is not priced (Alpa's abstract
 * units), a dot must use every mesh axis, as in Alpa's prototype.
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
      list.add(strategy(ins, as, idx));
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
   * The strategy of one assignment of mesh axes to index dimensions: the layouts of the result
   * and both operands, and an all-reduce of the result over each axis on a contracting dimension.
   */
  private Strategy strategy(Instruction ins, int[] as, List<int[]> idx) {
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
    ShardingSpec o = ShardingSpec.of(outM);
    ShardingSpec l = ShardingSpec.of(lhsM);
    ShardingSpec r = ShardingSpec.of(rhsM);
    double local = o.localBytes(out, mesh);
    double comm = 0.0;
    StringBuilder ar = new StringBuilder();
    for (int ax = 0; ax < mesh.rank(); ax++) {
      if ((contractAxes & (1 << ax)) != 0) {
        comm += env.comm().allReduce(local, ax);
        ar.append(ar.length() == 0 ? " (allreduce @ " : ",").append(ax);
      }
    }
    if (ar.length() > 0) {
      ar.append(')');
    }
    String name = o + " = " + l + " x " + r + ar;
    return new Strategy(name, o, new ShardingSpec[] {l, r},
        ctx.computeCost(ins, ShardingSpec.axesProduct(usedAxes(as), mesh)), comm, local);
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
