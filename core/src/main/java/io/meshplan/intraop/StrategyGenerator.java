package io.meshplan.intraop;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.ArrayList;
import java.util.List;

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
 *       combinations. Each axis on a contracting dimension costs an all-reduce of the result or,
 *       with compute priced, a reduce-scatter that leaves the result split over that axis
 *       (Megatron-LM's sequence parallelism, Korthikanti et al., MLSys'23). When compute is not
 *       priced (Alpa's abstract units), a dot must use every mesh axis and all-reduces, as in
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
 *
 * <p>This class dispatches by op kind; the dots are in {@link DotStrategies}, the ops that follow
 * an operand in {@link FollowerStrategies}, embedding lookups in {@link RowLookupStrategies}, and
 * what they share (layouts, compute prices, the fallbacks) in {@link StrategyContext}.
 */
public final class StrategyGenerator {
  private final Graph graph;
  private final StrategyContext ctx;
  private final DotStrategies dots;
  private final FollowerStrategies followers;
  private final RowLookupStrategies rows;
  private final LogicalMesh mesh;
  private final java.util.BitSet local;

  /**
   * Prepares a generator.
   *
   * @param graph the computation
   * @param env the mesh, cost models and memory budget
   */
  public StrategyGenerator(Graph graph, MeshEnv env) {
    this(graph, env, new java.util.BitSet());
  }

  /**
   * Prepares a generator for a graph some of whose instructions are device-local: every device
   * runs them whole on its own data (the local experts of a mixture-of-experts layer, whose rows
   * differ from device to device), so they take one strategy, the replicated layout on replicated
   * operands at the full compute cost and without communication.
   *
   * @param graph the computation
   * @param env the mesh, cost models and memory budget
   * @param local the ids of the device-local instructions
   */
  public StrategyGenerator(Graph graph, MeshEnv env, java.util.BitSet local) {
    this.local = (java.util.BitSet) local.clone();
    this.graph = graph;
    this.ctx = new StrategyContext(graph, env);
    this.dots = new DotStrategies(ctx);
    this.followers = new FollowerStrategies(ctx);
    this.rows = new RowLookupStrategies(ctx);
    this.mesh = env.mesh();
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
    if (local.get(ins.id()) && ins.shape() instanceof TensorShape t) {
      ShardingSpec r = ShardingSpec.replicated(t.rank());
      return new StrategySet(List.of(new Strategy("R (device-local)", r, ctx.operandsAll(ins, r),
          ctx.computeCost(ins, 1), 0.0, r.localBytes(t, mesh))), -1, false);
    }
    return switch (ins.opcode().kind()) {
      case PARAMETER -> ins.shape() instanceof TensorShape t ? ctx.free(ins, t) : ctx.opaque(ins);
      case SOURCE -> ins.shape() instanceof TensorShape t ? ctx.free(ins, t) : ctx.opaque(ins);
      case BROADCAST -> broadcast(ins);
      case DOT -> dots.dot(ins);
      case ELEMENTWISE -> followers.elementwise(ins, done);
      case RESHAPE -> followers.reshape(ins, done);
      case TRANSPOSE -> followers.transpose(ins, done);
      case REDUCE -> followers.reduce(ins, done);
      case SLICE -> followers.slice(ins, done);
      case CONCATENATE -> followers.concatenate(ins, done);
      case TUPLE -> tuple(ins);
      case GET_TUPLE_ELEMENT -> followers.getTupleElement(ins, done);
      case FORCE_REPLICATED -> forceReplicated(ins);
      case FUSED_ATTENTION -> attention(ins);
      case SCAN -> scan(ins);
      case TOKEN_EXCHANGE -> exchange(ins);
      case OPAQUE -> switch (ins.opcode()) {
        case DYNAMIC_SLICE, PAD -> followers.windowed(ins, done, ins.id());
        case DYNAMIC_UPDATE_SLICE -> ins.operands().size() > 1
            ? followers.windowed(ins, done, ins.operand(1)) : ctx.opaque(ins);
        case GATHER -> rows.isRowLookup(ins) ? rows.rowGather(ins) : ctx.opaque(ins);
        case SCATTER -> rows.isRowScatter(ins) ? rows.rowScatterAdd(ins) : ctx.opaque(ins);
        default -> ctx.opaque(ins);
      };
    };
  }

  /**
   * Fused attention splits its operands and its output together over the batch (dim 0) and the
   * heads (dim 2), as Megatron-LM's tensor parallelism splits heads; never over the sequence or
   * the head dimension, since a device must hold whole rows of scores. The split must divide the
   * key/value heads too ({@link #headSplit}).
   */
  private StrategySet attention(Instruction ins) {
    return headSplit(ins, 1);
  }

  /**
   * The SSD scan and the gated delta rule split like fused attention ({@link #headSplit}): over
   * the batch and the heads, or the heads' groups (dim 2), as Megatron-Core's tensor parallelism
   * splits a Mamba-2 or Gated DeltaNet layer; never over the sequence, which the scan runs along,
   * or within a head. The split must divide the SSD scan's groups of B and C (operand 3) too.
   * Mamba-1's selective scan splits its own way ({@link #selective}).
   */
  private StrategySet scan(Instruction ins) {
    if (ins.opcode() == io.meshplan.graph.Opcode.SELECTIVE_SCAN
        || ins.opcode() == io.meshplan.graph.Opcode.SELECTIVE_SCAN_GRAD) {
      return selective(ins);
    }
    return headSplit(ins, 3);
  }

  /**
   * A kernel whose rank-4 operands and output split together over the batch (dim 0) and the
   * heads (dim 2), and over nothing else, where the split divides operand {@code other} too.
   * Its work divides evenly over the tiles; it communicates nothing.
   */
  private StrategySet headSplit(Instruction ins, int other) {
    TensorShape first = graph.get(ins.operand(0)).tensorShape();
    TensorShape second = graph.get(ins.operand(other)).tensorShape();
    TensorShape out = ins.tensorShape();
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec s : ctx.layouts(first)) {
      if (s.axes(1) != 0 || s.axes(3) != 0 || !s.even(first, mesh) || !s.even(second, mesh)) {
        continue;
      }
      ShardingSpec[] ops = new ShardingSpec[ins.operands().size()];
      java.util.Arrays.fill(ops, s);
      list.add(new Strategy(s.toString(), s, ops, ctx.computeCost(ins, s.totalTiles(mesh)), 0.0,
          s.localBytes(out, mesh)));
    }
    return list.isEmpty() ? ctx.opaque(ins) : new StrategySet(list, -1, false);
  }

  /**
   * Mamba-1's selective scan splits its inputs, step sizes and output over the batch (dim 0)
   * and the channels (dim 2), and {@code A} over its channels with them; {@code B} and {@code
   * C}, which every channel reads, follow the batch's split and are whole on the channels'. Never
   * over the sequence, which the scan runs along.
   */
  private StrategySet selective(Instruction ins) {
    TensorShape u = graph.get(ins.operand(0)).tensorShape();
    TensorShape out = ins.tensorShape();
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec s : ctx.layouts(u)) {
      if (s.axes(1) != 0 || !s.even(u, mesh)) {
        continue;
      }
      ShardingSpec a = ShardingSpec.of(new int[] {s.axes(2), 0});
      ShardingSpec bc = ShardingSpec.of(new int[] {s.axes(0), 0, 0});
      ShardingSpec[] ops = new ShardingSpec[ins.operands().size()];
      ops[0] = s;
      ops[1] = s;
      ops[2] = a;
      ops[3] = bc;
      ops[4] = bc;
      if (ops.length > 5) {
        ops[5] = s;
      }
      int output = ((io.meshplan.graph.OpAttrs.Scan) ins.attrs()).output();
      ShardingSpec result = output >= 0 ? ops[output] : s;
      list.add(new Strategy(s.toString(), result, ops, ctx.computeCost(ins, s.totalTiles(mesh)),
          0.0, result.localBytes(out, mesh)));
    }
    return list.isEmpty() ? ctx.opaque(ins) : new StrategySet(list, -1, false);
  }

  /**
   * A token dispatch or combine: the token-side tensor (the dispatch's operand, the combine's
   * result) takes any layout at no cost, since each device exchanges the tokens it holds; the
   * expert-side tensor is device-local (replicated as the mesh sees it); the routing weights
   * {@code [b, s, k]} follow the tokens' split of batch and sequence. Its traffic is one device's
   * whole; the exchange between devices is priced by the stage.
   */
  private StrategySet exchange(Instruction ins) {
    boolean dispatch = ins.opcode() == io.meshplan.graph.Opcode.MOE_DISPATCH;
    TensorShape tokens = dispatch ? graph.get(ins.operand(0)).tensorShape() : ins.tensorShape();
    TensorShape out = ins.tensorShape();
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec s : ctx.layouts(tokens)) {
      ShardingSpec[] ops = new ShardingSpec[ins.operands().size()];
      ShardingSpec rows = ShardingSpec.replicated(dispatch ? out.rank()
          : graph.get(ins.operand(0)).tensorShape().rank());
      ops[0] = dispatch ? s : rows;
      if (ops.length > 1) {
        int[] masks = new int[graph.get(ins.operand(1)).tensorShape().rank()];
        masks[0] = s.axes(0);
        masks[1] = s.axes(1);
        ops[1] = ShardingSpec.of(masks);
      }
      ShardingSpec result = dispatch ? rows : s;
      list.add(new Strategy(s.toString(), result, ops, ctx.computeCost(ins, 1), 0.0,
          result.localBytes(out, mesh)));
    }
    return new StrategySet(list, -1, false);
  }

  private StrategySet broadcast(Instruction ins) {
    TensorShape t = ins.tensorShape();
    List<Integer> dims = ((OpAttrs.Dims) ins.attrs()).dims();
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec s : ctx.layouts(t)) {
      int[] opMasks = new int[dims.size()];
      for (int i = 0; i < dims.size(); i++) {
        opMasks[i] = s.axes(dims.get(i));
      }
      ShardingSpec op = ShardingSpec.of(opMasks);
      list.add(new Strategy(s.toString(), s, new ShardingSpec[] {op},
          ctx.computeCost(ins, s.totalTiles(mesh)), 0.0, s.localBytes(t, mesh)));
    }
    return new StrategySet(list, -1, false);
  }

  private StrategySet tuple(Instruction ins) {
    return new StrategySet(List.of(new Strategy("tuple", null,
        new ShardingSpec[ins.operands().size()], 0.0, 0.0, 0.0)), -1, false);
  }

  private StrategySet forceReplicated(Instruction ins) {
    TensorShape t = ins.tensorShape();
    ShardingSpec r = ShardingSpec.replicated(t.rank());
    return new StrategySet(List.of(new Strategy("R (forced)", r, ctx.operandsAll(ins, r), 0.0, 0.0,
        r.localBytes(t, mesh))), -1, false);
  }
}
