package io.meshplan.intraop;

import io.meshplan.cluster.ComputeModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Depth;
import io.meshplan.graph.DotShapes;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.graph.TupleShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Enumerates the sharding strategies of every instruction (Alpa, OSDI'22, section 4.1, Table 3).
 *
 * <ul>
 *   <li>Parameters, constants, iota and broadcasts may take any layout: every assignment of the
 *       mesh axes (of size above 1) to tensor dimensions, including two axes on one dimension and
 *       the replicated layout. Broadcast requires its operand in the projected layout.
 *   <li>A dot may split each of its batch, lhs-free, rhs-free and contracting dimensions over any
 *       set of axes; this contains Alpa's set ({@code SS = SR x RS}, {@code SR = SS x SR} with an
 *       all-reduce, {@code RS = RS x SS} with an all-reduce, batch splits) and its 2-D
 *       combinations. Each axis on a contracting dimension costs an all-reduce of the result. When
 *       compute is not priced (Alpa's abstract units), a dot must use every mesh axis, as in
 *       Alpa's prototype; otherwise replicated computation would look free.
 *   <li>Elementwise ops, reshape, transpose, reduce, slice and concatenate follow their deepest
 *       operand: one strategy per strategy of that operand, with the layout carried through the op
 *       (a split that a reshape cannot carry, or that falls on a sliced or concatenated dimension,
 *       is gathered). Reduce over a split dimension all-reduces its result.
 *   <li>Dynamic slice, dynamic update slice and pad follow their first operand, keeping splits only
 *       on dimensions their window covers whole.
 *   <li>Tuples cost nothing; a "must be replicated" marker takes only the replicated layout; ops the
 *       generator cannot see into ({@link io.meshplan.graph.OpKind#OPAQUE}) run replicated on
 *       replicated operands and are reported.
 * </ul>
 *
 * <p>Layouts are listed with the most tiles first, then the most dimensions split, then in a fixed
 * enumeration order, so that among equally cheap strategies the solvers' lowest-index rule prefers
 * the one using least memory and spreading splits over dimensions (as XLA's auto-sharding tests
 * expect of a lone dot on a 2-D mesh).
 */
public final class StrategyGenerator {
  private final Graph graph;
  private final MeshEnv env;
  private final LogicalMesh mesh;
  private final int[] depth;
  /** Layouts by shape (element type ignored: layouts depend only on the dimensions). */
  private final Map<TensorShape, List<ShardingSpec>> layoutCache = new java.util.HashMap<>();

  /**
   * Prepares a generator.
   *
   * @param graph the computation
   * @param env the mesh, cost models and memory budget
   */
  public StrategyGenerator(Graph graph, MeshEnv env) {
    this.graph = graph;
    this.env = env;
    this.mesh = env.mesh();
    this.depth = Depth.of(graph);
  }

  /**
   * Generates the strategies of every instruction.
   *
   * @return one set per instruction id
   */
  public List<StrategySet> generate() {
    List<StrategySet> sets = new ArrayList<>(graph.size());
    for (Instruction ins : graph.instructions()) {
      sets.add(forInstruction(ins, sets));
    }
    return sets;
  }

  private StrategySet forInstruction(Instruction ins, List<StrategySet> done) {
    return switch (ins.opcode().kind()) {
      case PARAMETER -> ins.shape() instanceof TensorShape t ? free(ins, t) : opaque(ins);
      case SOURCE -> ins.shape() instanceof TensorShape t ? free(ins, t) : opaque(ins);
      case BROADCAST -> broadcast(ins);
      case DOT -> dot(ins);
      case ELEMENTWISE -> elementwise(ins, done);
      case RESHAPE -> follow(ins, 0, done, this::reshapeSpec);
      case TRANSPOSE -> follow(ins, 0, done, this::transposeSpec);
      case REDUCE -> reduce(ins, done);
      case SLICE -> follow(ins, 0, done, this::sliceSpec);
      case CONCATENATE -> concatenate(ins, done);
      case TUPLE -> tuple(ins);
      case GET_TUPLE_ELEMENT -> getTupleElement(ins, done);
      case FORCE_REPLICATED -> forceReplicated(ins);
      case OPAQUE -> switch (ins.opcode()) {
        case DYNAMIC_SLICE, PAD -> windowed(ins, done, ins.id());
        case DYNAMIC_UPDATE_SLICE -> ins.operands().size() > 1
            ? windowed(ins, done, ins.operand(1)) : opaque(ins);
        case GATHER -> isRowLookup(ins) ? rowGather(ins) : opaque(ins);
        case SCATTER -> isRowScatter(ins) ? rowScatterAdd(ins) : opaque(ins);
        default -> opaque(ins);
      };
    };
  }

  /**
   * Whether a gather is a row lookup {@code out[i..., :] = table[idx[i...], :]} of a rank-2 table
   * (an embedding lookup, as {@code GraphBuilder.gather} writes it).
   */
  private boolean isRowLookup(Instruction ins) {
    if (ins.operands().size() != 2 || !(ins.shape() instanceof TensorShape out)
        || !(graph.get(ins.operand(0)).shape() instanceof TensorShape table)
        || !(graph.get(ins.operand(1)).shape() instanceof TensorShape idx)) {
      return false;
    }
    int r = idx.rank();
    Map<String, String> a = ins.rawAttributes();
    return table.rank() == 2 && out.rank() == r + 1 && out.dim(r) == table.dim(1)
        && ("{" + r + "}").equals(a.get("offset_dims"))
        && "{0}".equals(a.get("collapsed_slice_dims")) && "{0}".equals(a.get("start_index_map"))
        && Integer.toString(r).equals(a.get("index_vector_dim"))
        && ("{1," + table.dim(1) + "}").equals(a.get("slice_sizes"));
  }

  /**
   * Whether a scatter adds rows {@code updates[i..., :]} into a rank-2 table at rows {@code
   * idx[i...]} (the transpose of a row lookup, as {@code GraphBuilder.scatterAdd} writes it).
   */
  private boolean isRowScatter(Instruction ins) {
    if (ins.operands().size() != 3 || !(ins.shape() instanceof TensorShape out)
        || !(graph.get(ins.operand(1)).shape() instanceof TensorShape idx)
        || !(graph.get(ins.operand(2)).shape() instanceof TensorShape upd)) {
      return false;
    }
    int r = idx.rank();
    Map<String, String> a = ins.rawAttributes();
    return out.rank() == 2 && upd.rank() == r + 1 && upd.dim(r) == out.dim(1)
        && ("{" + r + "}").equals(a.get("update_window_dims"))
        && "{0}".equals(a.get("inserted_window_dims"))
        && "{0}".equals(a.get("scatter_dims_to_operand_dims"))
        && Integer.toString(r).equals(a.get("index_vector_dim"))
        && a.getOrDefault("to_apply", "").startsWith("%add");
  }

  /**
   * A row lookup: the indices' splits carry to the result's leading dimensions and a split of the
   * table's width to the result's last; the table's rows may be split too, over axes the result
   * does not use: each device then looks up only the rows it holds (zeros elsewhere) and the
   * result is all-reduced over those axes (Megatron-LM's vocabulary-parallel embedding, Shoeybi
   * et al. 2019, section 3).
   */
  private StrategySet rowGather(Instruction ins) {
    TensorShape out = ins.tensorShape();
    TensorShape table = graph.get(ins.operand(0)).tensorShape();
    int r = out.rank() - 1;
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec o : layouts(out)) {
      int[] om = o.masks();
      int[] idxMasks = Arrays.copyOf(om, r);
      int free = allAxes() & ~o.usedAxes();
      for (int rows = free; ; rows = (rows - 1) & free) {
        if (ShardingSpec.axesProduct(rows, mesh) <= table.dim(0)) {
          ShardingSpec t = ShardingSpec.of(rows, om[r]);
          double local = o.localBytes(out, mesh);
          double comm = 0.0;
          StringBuilder name = new StringBuilder(o + " = " + t + " [" + ShardingSpec.of(idxMasks)
              + "]");
          for (int ax = 0; ax < mesh.rank(); ax++) {
            if ((rows & (1 << ax)) != 0) {
              comm += env.comm().allReduce(local, ax);
              name.append(" (allreduce @ ").append(ax).append(')');
            }
          }
          list.add(new Strategy(name.toString(), o,
              new ShardingSpec[] {t, ShardingSpec.of(idxMasks)},
              computeCost(ins, o.totalTiles(mesh)), comm, local));
        }
        if (rows == 0) {
          break;
        }
      }
    }
    return new StrategySet(list, -1, false);
  }

  /**
   * A row scatter-add: the result (the table's gradient) may take any layout; the updates keep the
   * result's width split and may split their leading (token) dimensions over the other axes, the
   * indices alike. Each device adds its tokens' rows into the rows it holds; token splits leave
   * partial sums that are all-reduced over their axes (the data-parallel gradient reduction of an
   * embedding table).
   */
  private StrategySet rowScatterAdd(Instruction ins) {
    TensorShape out = ins.tensorShape();
    TensorShape upd = graph.get(ins.operand(2)).tensorShape();
    int r = upd.rank() - 1;
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec o : layouts(out)) {
      for (ShardingSpec u : layouts(upd)) {
        int tokenAxes = u.usedAxes() & ~u.axes(r);
        if (u.axes(r) != o.axes(1) || (tokenAxes & o.usedAxes()) != 0) {
          continue;
        }
        int[] idxMasks = Arrays.copyOf(u.masks(), r);
        double local = o.localBytes(out, mesh);
        double comm = 0.0;
        StringBuilder name = new StringBuilder(o + " = scatter " + u);
        for (int ax = 0; ax < mesh.rank(); ax++) {
          if ((tokenAxes & (1 << ax)) != 0) {
            comm += env.comm().allReduce(local, ax);
            name.append(" (allreduce @ ").append(ax).append(')');
          }
        }
        list.add(new Strategy(name.toString(), o,
            new ShardingSpec[] {o, ShardingSpec.of(idxMasks), u},
            computeCost(ins, o.totalTiles(mesh)), comm, local));
      }
    }
    return new StrategySet(list, -1, false);
  }

  /** The mask of the mesh axes of size above 1. */
  private int allAxes() {
    int all = 0;
    for (int ax = 0; ax < mesh.rank(); ax++) {
      all |= mesh.size(ax) > 1 ? 1 << ax : 0;
    }
    return all;
  }

  /**
   * Dynamic slice, dynamic update slice and pad follow their first operand: a dimension keeps its
   * split only where the window covers it whole (the instruction {@code window}, the result of a
   * slice or pad or the update of an update slice, has the operand's size there), since
   * a window at a run-time offset or padding would otherwise cross tiles; other splits are
   * gathered. Index and padding-value operands are scalars and free.
   */
  private StrategySet windowed(Instruction ins, List<StrategySet> done, int window) {
    if (!(ins.shape() instanceof TensorShape t)
        || !(graph.get(ins.operand(0)).shape() instanceof TensorShape src)
        || !(graph.get(window).shape() instanceof TensorShape w)
        || src.rank() != t.rank() || w.rank() != t.rank()) {
      return opaque(ins);
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


  // ---------------------------------------------------------------- layouts

  /** All layouts of a shape, most tiles first. */
  List<ShardingSpec> layouts(TensorShape shape) {
    return layoutCache.computeIfAbsent(shape.withDtype(DType.F32), key -> {
      List<ShardingSpec> out = new ArrayList<>(ShardingSpec.allLayouts(shape, mesh));
      out.sort(this::preferred);
      return List.copyOf(out);
    });
  }

  /**
   * The tie-break order of layouts: more tiles first (less memory), then more dimensions split
   * (smaller splits per dimension), then enumeration order (the sort is stable).
   */
  private int preferred(ShardingSpec a, ShardingSpec b) {
    int c = Integer.compare(b.totalTiles(mesh), a.totalTiles(mesh));
    return c != 0 ? c : Integer.compare(splitDims(b), splitDims(a));
  }

  private static int splitDims(ShardingSpec s) {
    int n = 0;
    for (int d = 0; d < s.rank(); d++) {
      if (s.axes(d) != 0) {
        n++;
      }
    }
    return n;
  }

  private double[] traffic;

  /** Memory traffic under loop fusion, computed once per graph. */
  private double[] traffic() {
    if (traffic == null) {
      traffic = io.meshplan.graph.FusedTraffic.bytes(graph);
    }
    return traffic;
  }

  private double computeCost(Instruction ins, int tiles) {
    if (env.compute().isEmpty()) {
      return 0.0;
    }
    ComputeModel c = env.compute().get();
    double flops = OpCost.flops(graph, ins) / tiles;
    double bytes = traffic()[ins.id()] / tiles;
    return ins.opcode() == io.meshplan.graph.Opcode.DOT ? c.dotCost(flops, bytes)
        : c.cost(flops, bytes);
  }

  private ShardingSpec[] operandsAll(Instruction ins, ShardingSpec spec) {
    ShardingSpec[] ops = new ShardingSpec[ins.operands().size()];
    for (int k = 0; k < ops.length; k++) {
      ops[k] = graph.get(ins.operand(k)).shape() instanceof TensorShape t
          && t.rank() == spec.rank() ? spec : null;
    }
    return ops;
  }

  // ---------------------------------------------------------------- kinds

  private StrategySet free(Instruction ins, TensorShape t) {
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec s : layouts(t)) {
      list.add(new Strategy(s.toString(), s, new ShardingSpec[ins.operands().size()], 0.0, 0.0,
          s.localBytes(t, mesh)));
    }
    return new StrategySet(list, -1, false);
  }

  private StrategySet broadcast(Instruction ins) {
    TensorShape t = ins.tensorShape();
    List<Integer> dims = ((OpAttrs.Dims) ins.attrs()).dims();
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec s : layouts(t)) {
      int[] opMasks = new int[dims.size()];
      for (int i = 0; i < dims.size(); i++) {
        opMasks[i] = s.axes(dims.get(i));
      }
      ShardingSpec op = ShardingSpec.of(opMasks);
      list.add(new Strategy(s.toString(), s, new ShardingSpec[] {op},
          computeCost(ins, s.totalTiles(mesh)), 0.0, s.localBytes(t, mesh)));
    }
    return new StrategySet(list, -1, false);
  }

  private StrategySet dot(Instruction ins) {
    OpAttrs.Dot a = (OpAttrs.Dot) ins.attrs();
    TensorShape lhs = graph.get(ins.operand(0)).tensorShape();
    TensorShape rhs = graph.get(ins.operand(1)).tensorShape();
    TensorShape out = ins.tensorShape();
    List<Integer> lf = DotShapes.freeDims(lhs.rank(), a.lhsBatch(), a.lhsContracting());
    List<Integer> rf = DotShapes.freeDims(rhs.rank(), a.rhsBatch(), a.rhsContracting());
    int nb = a.lhsBatch().size();
    // Index dimensions: out dim, lhs dim, rhs dim (-1 when absent), size.
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
    ShardingSpec.checkChoiceCount("dot '" + ins.name() + "'", idx.size() + 1, mesh);
    List<int[]> assignments = new ArrayList<>();
    int[] choice = new int[mesh.rank()];
    enumerateDot(0, choice, idx, assignments);
    List<Strategy> list = new ArrayList<>();
    boolean priced = env.compute().isPresent();
    int allAxes = 0;
    for (int ax = 0; ax < mesh.rank(); ax++) {
      allAxes |= mesh.size(ax) > 1 ? 1 << ax : 0;
    }
    int full = allAxes;
    // Without a compute model, replicated computation would look free; as in Alpa's prototype a
    // dot must then use every mesh axis, unless no strategy can.
    boolean requireAll = !priced
        && assignments.stream().anyMatch(as -> usedAxes(as) == full);
    for (int[] as : assignments) {
      int[] outM = new int[out.rank()];
      int[] lhsM = new int[lhs.rank()];
      int[] rhsM = new int[rhs.rank()];
      int contractAxes = 0;
      int used = usedAxes(as);
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
      if ((used == 0 && !priced && mesh.deviceCount() > 1) || (requireAll && used != full)) {
        continue;
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
      list.add(new Strategy(name, o, new ShardingSpec[] {l, r},
          computeCost(ins, ShardingSpec.axesProduct(used, mesh)), comm, local));
    }
    if (list.isEmpty()) {
      ShardingSpec rep = ShardingSpec.replicated(out.rank());
      list.add(new Strategy("R = R x R", rep, new ShardingSpec[] {
          ShardingSpec.replicated(lhs.rank()), ShardingSpec.replicated(rhs.rank())},
          computeCost(ins, 1), 0.0, rep.localBytes(out, mesh)));
    }
    list.sort((x, y) -> {
      int c = Double.compare(tiles(y), tiles(x));
      return c != 0 ? c : preferred(x.output(), y.output());
    });
    return new StrategySet(list, -1, false);
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
      if (best < 0 || depth[ins.operand(k)] > depth[ins.operand(best)]) {
        best = k;
      }
    }
    return best;
  }

  private StrategySet elementwise(Instruction ins, List<StrategySet> done) {
    if (!(ins.shape() instanceof TensorShape t)) {
      return opaque(ins);
    }
    int k = deepestTensorOperand(ins);
    if (k < 0) {
      List<Strategy> list = new ArrayList<>();
      for (ShardingSpec s : layouts(t)) {
        list.add(new Strategy(s.toString(), s, operandsAll(ins, s),
            computeCost(ins, s.totalTiles(mesh)), 0.0, s.localBytes(t, mesh)));
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
      return opaque(ins);
    }
    List<Strategy> list = new ArrayList<>(ls.size());
    for (Strategy st : ls.strategies()) {
      ShardingSpec in = st.output() == null ? ShardingSpec.replicated(lt.rank()) : st.output();
      ShardingSpec o = map.map(ins, in);
      ShardingSpec[] ops = operandsAll(ins, o);
      ops[k] = requiredOperand(ins, in, o);
      list.add(new Strategy(o.toString(), o, ops, computeCost(ins, o.totalTiles(mesh)), 0.0,
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

  private StrategySet concatenate(Instruction ins, List<StrategySet> done) {
    int dim = ((OpAttrs.Dims) ins.attrs()).dims().get(0);
    int best = 0;
    for (int k = 1; k < ins.operands().size(); k++) {
      if (depth[ins.operand(k)] > depth[ins.operand(best)]) {
        best = k;
      }
    }
    return follow(ins, best, done, (i, s) -> s.with(dim, 0));
  }

  private StrategySet reduce(Instruction ins, List<StrategySet> done) {
    if (!(ins.shape() instanceof TensorShape t)
        || !(graph.get(ins.operand(0)).shape() instanceof TensorShape src)) {
      return opaque(ins);
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
      list.add(new Strategy(name, o, ops, computeCost(ins, in.totalTiles(mesh)), comm, local));
    }
    return new StrategySet(list, leader, false);
  }

  private StrategySet tuple(Instruction ins) {
    return new StrategySet(List.of(new Strategy("tuple", null,
        new ShardingSpec[ins.operands().size()], 0.0, 0.0, 0.0)), -1, false);
  }

  /**
   * A tuple element of a planned {@code tuple} takes that element's layout, strategy for strategy;
   * an element of an opaque tuple (replicated) may be sliced to any layout for free.
   */
  private StrategySet getTupleElement(Instruction ins, List<StrategySet> done) {
    if (!(ins.shape() instanceof TensorShape t)) {
      return opaque(ins);
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
    return free(ins, t);
  }

  private StrategySet forceReplicated(Instruction ins) {
    TensorShape t = ins.tensorShape();
    ShardingSpec r = ShardingSpec.replicated(t.rank());
    return new StrategySet(List.of(new Strategy("R (forced)", r, operandsAll(ins, r), 0.0, 0.0,
        r.localBytes(t, mesh))), -1, false);
  }

  private StrategySet opaque(Instruction ins) {
    ShardingSpec[] ops = new ShardingSpec[ins.operands().size()];
    for (int k = 0; k < ops.length; k++) {
      ops[k] = graph.get(ins.operand(k)).shape() instanceof TensorShape t
          ? ShardingSpec.replicated(t.rank()) : null;
    }
    boolean reported = ins.opcode() != Opcode.TUPLE && ins.opcode() != Opcode.PARAMETER;
    if (ins.shape() instanceof TupleShape) {
      return new StrategySet(List.of(new Strategy("tuple (replicated)", null, ops,
          computeCost(ins, 1), 0.0, ins.shape().byteSize())), -1, reported);
    }
    TensorShape t = ins.tensorShape();
    ShardingSpec r = ShardingSpec.replicated(t.rank());
    return new StrategySet(List.of(new Strategy("R (opaque)", r, ops, computeCost(ins, 1), 0.0,
        r.localBytes(t, mesh))), -1, reported);
  }
}
