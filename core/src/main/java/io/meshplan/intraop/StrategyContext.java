package io.meshplan.intraop;

import io.meshplan.cluster.ComputeModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Depth;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.graph.TupleShape;
import io.meshplan.sharding.ShardingSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What every kind of strategy needs while {@link StrategyGenerator} runs over one graph: the
 * graph, the mesh environment, each instruction's depth, the layouts of a shape in the solvers'
 * tie-break order, compute prices, and the two fallbacks (any layout for free, or replicated on
 * replicated operands for an op the generator cannot see into). One context serves one
 * generation; it caches layouts by shape and the graph's fused memory traffic.
 */
final class StrategyContext {
  private final Graph graph;
  private final MeshEnv env;
  private final LogicalMesh mesh;
  private final int[] depth;
  /** Layouts by shape (element type ignored: layouts depend only on the dimensions). */
  private final Map<TensorShape, List<ShardingSpec>> layoutCache = new java.util.HashMap<>();
  /** Bytes each instruction moves under loop fusion; computed on first use. */
  private double[] traffic;

  StrategyContext(Graph graph, MeshEnv env) {
    this.graph = graph;
    this.env = env;
    this.mesh = env.mesh();
    this.depth = Depth.of(graph);
  }

  Graph graph() {
    return graph;
  }

  MeshEnv env() {
    return env;
  }

  LogicalMesh mesh() {
    return mesh;
  }

  /** The depth of an instruction ({@link Depth}): followers follow their deepest operand. */
  int depth(int id) {
    return depth[id];
  }

  /** The mask of the mesh axes of size above 1. */
  int allAxes() {
    int all = 0;
    for (int ax = 0; ax < mesh.rank(); ax++) {
      all |= mesh.size(ax) > 1 ? 1 << ax : 0;
    }
    return all;
  }

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
  int preferred(ShardingSpec a, ShardingSpec b) {
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

  /** Memory traffic under loop fusion, computed once per graph. */
  private double[] traffic() {
    if (traffic == null) {
      traffic = io.meshplan.graph.FusedTraffic.bytes(graph);
    }
    return traffic;
  }

  /**
   * The compute cost of one device's share of an instruction split into {@code tiles} parts (0
   * without a compute model).
   */
  double computeCost(Instruction ins, int tiles) {
    if (env.compute().isEmpty()) {
      return 0.0;
    }
    ComputeModel c = env.compute().get();
    double flops = OpCost.flops(graph, ins) / tiles;
    double bytes = traffic()[ins.id()] / tiles;
    return switch (ins.opcode()) {
      case DOT -> c.dotCost(flops, bytes, operandPrecision(ins));
      case FUSED_ATTENTION -> c.attentionCost(flops, bytes, false, headDim(ins),
          OpCost.attentionSpan(graph, ins));
      case FUSED_ATTENTION_GRAD -> c.attentionCost(flops, bytes, true, headDim(ins),
          OpCost.attentionSpan(graph, ins));
      // The scan's chunk products run on tensor cores: priced as matrix products.
      case SSD_SCAN, SSD_SCAN_GRAD, GDN_SCAN, GDN_SCAN_GRAD -> c.dotCost(flops, bytes);
      // A cast to FP8 is priced within the FP8 GEMM that reads it, where the model's GEMM prices
      // are Transformer Engine's measured GEMMs with their casts.
      case CONVERT -> ins.tensorShape().dtype().eightBitFloat() && c.fp8GemmsHoldTheirCasts()
          ? 0.0 : c.cost(flops, bytes);
      // Mamba-1's scan runs on the vector units and is bound by its bytes.
      default -> c.cost(flops, bytes);
    };
  }

  /**
   * The head dimension of a fused attention kernel: the last dimension of its query, operand 0,
   * laid out (batch, sequence, heads, head dimension) as {@link OpCost} reads it.
   */
  private int headDim(Instruction ins) {
    TensorShape q = graph.get(ins.operand(0)).tensorShape();
    return q.dim(q.rank() - 1);
  }

  /**
   * The precision a dot's operands are multiplied in: FP8 when both are 8-bit floats (as in
   * Transformer Engine's GEMMs and in HLO from XLA's FP8 rewrites), else that of the result.
   */
  private io.meshplan.cluster.Precision operandPrecision(Instruction ins) {
    boolean fp8 = true;
    for (int op : ins.operands()) {
      fp8 &= graph.get(op).tensorShape().dtype().eightBitFloat();
    }
    if (fp8) {
      return io.meshplan.cluster.Precision.FP8;
    }
    return switch (ins.tensorShape().dtype()) {
      case F32 -> io.meshplan.cluster.Precision.TF32;
      case F16 -> io.meshplan.cluster.Precision.FP16;
      default -> io.meshplan.cluster.Precision.BF16;
    };
  }

  /** {@code spec} for every tensor operand of the same rank, null for the others. */
  ShardingSpec[] operandsAll(Instruction ins, ShardingSpec spec) {
    ShardingSpec[] ops = new ShardingSpec[ins.operands().size()];
    for (int k = 0; k < ops.length; k++) {
      ops[k] = graph.get(ins.operand(k)).shape() instanceof TensorShape t
          && t.rank() == spec.rank() ? spec : null;
    }
    return ops;
  }

  /** Any layout at no cost (parameters, constants, iota). */
  StrategySet free(Instruction ins, TensorShape t) {
    List<Strategy> list = new ArrayList<>();
    for (ShardingSpec s : layouts(t)) {
      list.add(new Strategy(s.toString(), s, new ShardingSpec[ins.operands().size()], 0.0, 0.0,
          s.localBytes(t, mesh)));
    }
    return new StrategySet(list, -1, false);
  }

  /**
   * Replicated on replicated operands, for an op the generator cannot see into; reported unless
   * it is a tuple or a parameter.
   */
  StrategySet opaque(Instruction ins) {
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
