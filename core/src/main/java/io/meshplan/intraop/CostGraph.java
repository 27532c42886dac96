package io.meshplan.intraop;

import io.meshplan.graph.AliasPair;
import io.meshplan.graph.CallInliner;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Liveness;
import io.meshplan.graph.TensorShape;
import io.meshplan.intraop.ilp.IlpEdge;
import io.meshplan.intraop.ilp.IlpProblem;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.sharding.ReshardingCost;
import io.meshplan.sharding.ShardingSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The cost graph after follower merging (Alpa, OSDI'22, section 4.2, "Simplify"): one decision node
 * per instruction that follows no other; a follower shares its leader's node, strategy for strategy.
 * Resharding between two instructions of one node becomes part of that node's cost; between two
 * nodes it becomes an edge matrix. Aliased pairs must take equal layouts: other pairs cost {@code
 * +Infinity}. Costs of an instruction inlined from a loop body count every iteration ({@link
 * CallInliner#repeat}).
 *
 * @param graph the computation
 * @param strategies the strategies per instruction
 * @param nodeOf the decision node of each instruction
 * @param nodeInstruction the leader instruction of each node
 * @param problem the ILP over the nodes
 */
public record CostGraph(
    Graph graph, List<StrategySet> strategies, int[] nodeOf, int[] nodeInstruction,
    IlpProblem problem) {

  /**
   * Builds the cost graph.
   *
   * @param graph the computation
   * @param strategies the strategies of every instruction
   * @param env the mesh and cost models
   * @return the cost graph
   */
  public static CostGraph build(Graph graph, List<StrategySet> strategies, MeshEnv env) {
    return build(graph, strategies, env, Map.of());
  }

  /**
   * Builds the cost graph with some layouts fixed: strategies of a fixed instruction whose result
   * layout differs from the given one cost {@code +Infinity}.
   *
   * @param graph the computation
   * @param strategies the strategies of every instruction
   * @param env the mesh and cost models
   * @param fixed required result layouts by instruction id
   * @return the cost graph
   */
  public static CostGraph build(Graph graph, List<StrategySet> strategies, MeshEnv env,
      Map<Integer, ShardingSpec> fixed) {
    return build(graph, strategies, env, fixed, true);
  }

  /**
   * Builds the cost graph with fixed layouts and a choice of parameter liveness.
   *
   * @param graph the computation
   * @param strategies the strategies of every instruction
   * @param env the mesh and cost models
   * @param fixed required result layouts by instruction id
   * @param residentParameters whether parameters occupy memory for the whole computation (see
   *     {@link Liveness})
   * @return the cost graph
   */
  public static CostGraph build(Graph graph, List<StrategySet> strategies, MeshEnv env,
      Map<Integer, ShardingSpec> fixed, boolean residentParameters) {
    return build(graph, strategies, env, fixed, residentParameters, new java.util.BitSet(),
        new java.util.BitSet());
  }

  /**
   * Builds the cost graph with fixed layouts and pinned values: a strategy that reads a pinned
   * value in a layout it would have to be resharded to (at a nonzero price) costs {@code
   * +Infinity}, so the value is read only as its producer lays it out.
   *
   * @param graph the computation
   * @param strategies the strategies of every instruction
   * @param env the mesh and cost models
   * @param fixed required result layouts by instruction id
   * @param residentParameters whether parameters occupy memory for the whole computation
   * @param pinned the ids of values their readers may not reshard
   * @param silent the ids of instructions whose strategies that communicate cost {@code
   *     +Infinity}
   * @return the cost graph
   */
  public static CostGraph build(Graph graph, List<StrategySet> strategies, MeshEnv env,
      Map<Integer, ShardingSpec> fixed, boolean residentParameters, java.util.BitSet pinned,
      java.util.BitSet silent) {
    int n = graph.size();
    int[] nodeOf = new int[n];
    List<Integer> leaders = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int f = strategies.get(i).follows();
      if (f >= 0) {
        nodeOf[i] = nodeOf[f];
      } else {
        nodeOf[i] = leaders.size();
        leaders.add(i);
      }
    }
    CostSums sums = new CostSums(graph, strategies, env, nodeOf, leaders, pinned);
    for (Instruction ins : graph.instructions()) {
      sums.price(ins);
    }
    sums.forbidOtherLayouts(fixed);
    sums.forbidCollectives(silent);
    sums.forbidUnequalAliases();
    MemoryConstraint memory = memory(graph, strategies, nodeOf, env.memoryPerDevice(),
        residentParameters);
    int[] nodeInstruction = leaders.stream().mapToInt(Integer::intValue).toArray();
    return new CostGraph(graph, strategies, nodeOf, nodeInstruction,
        new IlpProblem(sums.nodeCosts, sums.edgeList(), memory));
  }

  /** The node costs and edge matrices while they are summed up. */
  private static final class CostSums {
    final Graph graph;
    final List<StrategySet> strategies;
    final MeshEnv env;
    final int[] nodeOf;
    final double[][] nodeCosts;
    final Map<Long, double[]> edges = new TreeMap<>();
    final Map<ReshardKey, Double> cache = new HashMap<>();
    final java.util.BitSet pinned;

    CostSums(Graph graph, List<StrategySet> strategies, MeshEnv env, int[] nodeOf,
        List<Integer> leaders, java.util.BitSet pinned) {
      this.graph = graph;
      this.pinned = pinned;
      this.strategies = strategies;
      this.env = env;
      this.nodeOf = nodeOf;
      int nodes = leaders.size();
      nodeCosts = new double[nodes][];
      for (int v = 0; v < nodes; v++) {
        nodeCosts[v] = new double[strategies.get(leaders.get(v)).size()];
      }
    }

    /**
     * Adds an instruction's compute and collectives to its node, and the resharding of each
     * tensor operand to its node (operand of the same node) or to the edge between the two; the
     * resharding of a pinned operand at a nonzero price costs +Infinity instead.
     */
    void price(Instruction ins) {
      StrategySet ss = strategies.get(ins.id());
      int v = nodeOf[ins.id()];
      double rep = CallInliner.repeat(ins);
      for (int q = 0; q < ss.size(); q++) {
        Strategy st = ss.get(q);
        nodeCosts[v][q] += rep * (st.computeCost() + st.commCost());
      }
      for (int k = 0; k < ins.operands().size(); k++) {
        int opId = ins.operand(k);
        if (!(graph.get(opId).shape() instanceof TensorShape shape)) {
          continue;
        }
        StrategySet os = strategies.get(opId);
        int u = nodeOf[opId];
        boolean pin = pinned.get(opId);
        if (u == v) {
          for (int q = 0; q < ss.size(); q++) {
            nodeCosts[v][q] += pinnedOr(pin, rep * reshard(shape, os.get(q).output(),
                ss.get(q).operandSpec(k), env, cache));
          }
          continue;
        }
        boolean flip = u > v;
        int sb = nodeCosts[Math.max(u, v)].length;
        double[] m = edgeMatrix(edges, nodeCosts, u, v);
        for (int p = 0; p < os.size(); p++) {
          ShardingSpec from = os.get(p).output();
          for (int q = 0; q < ss.size(); q++) {
            double c = pinnedOr(pin, rep * reshard(shape, from, ss.get(q).operandSpec(k), env,
                cache));
            if (c != 0) {
              m[flip ? q * sb + p : p * sb + q] += c;
            }
          }
        }
      }
    }

    /** Strategies of a fixed instruction whose result layout differs cost +Infinity. */
    void forbidOtherLayouts(Map<Integer, ShardingSpec> fixed) {
      for (Map.Entry<Integer, ShardingSpec> f : new TreeMap<>(fixed).entrySet()) {
        StrategySet ss = strategies.get(f.getKey());
        int v = nodeOf[f.getKey()];
        for (int q = 0; q < ss.size(); q++) {
          if (!f.getValue().equals(ss.get(q).output())) {
            nodeCosts[v][q] = Double.POSITIVE_INFINITY;
          }
        }
      }
    }

    /** Strategies of a silent instruction that communicate cost +Infinity. */
    void forbidCollectives(java.util.BitSet silent) {
      for (int id = silent.nextSetBit(0); id >= 0; id = silent.nextSetBit(id + 1)) {
        StrategySet ss = strategies.get(id);
        int v = nodeOf[id];
        for (int q = 0; q < ss.size(); q++) {
          if (ss.get(q).commCost() != 0) {
            nodeCosts[v][q] = Double.POSITIVE_INFINITY;
          }
        }
      }
    }

    /** A pinned value's nonzero resharding price is +Infinity; any other price stands. */
    private static double pinnedOr(boolean pin, double price) {
      return pin && price != 0 ? Double.POSITIVE_INFINITY : price;
    }

    /** Aliased pairs must take equal layouts: other pairs cost +Infinity. */
    void forbidUnequalAliases() {
      for (AliasPair al : graph.aliases()) {
        StrategySet ps = strategies.get(al.parameter());
        StrategySet os = strategies.get(al.output());
        int u = nodeOf[al.parameter()];
        int v = nodeOf[al.output()];
        if (u == v) {
          for (int q = 0; q < ps.size(); q++) {
            if (!Objects.equals(ps.get(q).output(), os.get(q).output())) {
              nodeCosts[u][q] = Double.POSITIVE_INFINITY;
            }
          }
          continue;
        }
        boolean flip = u > v;
        int sb = nodeCosts[Math.max(u, v)].length;
        double[] m = edgeMatrix(edges, nodeCosts, u, v);
        for (int p = 0; p < ps.size(); p++) {
          for (int q = 0; q < os.size(); q++) {
            if (!Objects.equals(ps.get(p).output(), os.get(q).output())) {
              m[flip ? q * sb + p : p * sb + q] = Double.POSITIVE_INFINITY;
            }
          }
        }
      }
    }

    /** The edges in node-pair order, leaving out matrices that are all zero. */
    List<IlpEdge> edgeList() {
      List<IlpEdge> edgeList = new ArrayList<>(edges.size());
      for (Map.Entry<Long, double[]> e : edges.entrySet()) {
        if (allZero(e.getValue())) {
          continue;
        }
        edgeList.add(new IlpEdge((int) (e.getKey() >>> 32), (int) (e.getKey() & 0xffffffffL),
            e.getValue()));
      }
      return edgeList;
    }
  }

  private static MemoryConstraint memory(Graph graph, List<StrategySet> strategies, int[] nodeOf,
      double budget, boolean residentParameters) {
    Liveness live = new Liveness(graph, residentParameters);
    int n = graph.size();
    int[] start = new int[n];
    int[] end = new int[n];
    double[][] bytes = new double[n][];
    for (int i = 0; i < n; i++) {
      start[i] = live.start(i);
      end[i] = live.end(i);
      StrategySet ss = strategies.get(i);
      bytes[i] = new double[ss.size()];
      for (int q = 0; q < ss.size(); q++) {
        bytes[i][q] = ss.get(q).memoryBytes();
      }
    }
    return new MemoryConstraint(budget, live.peakCandidateSteps(), nodeOf.clone(), start, end,
        bytes);
  }

  /** The row-major matrix of the edge between two nodes, lower id first, created on first use. */
  private static double[] edgeMatrix(Map<Long, double[]> edges, double[][] nodeCosts, int u,
      int v) {
    int a = Math.min(u, v);
    int b = Math.max(u, v);
    int size = nodeCosts[a].length * nodeCosts[b].length;
    return edges.computeIfAbsent(((long) a << 32) | b, key -> new double[size]);
  }

  private static boolean allZero(double[] m) {
    for (double x : m) {
      if (x != 0) {
        return false;
      }
    }
    return true;
  }

  private record ReshardKey(TensorShape shape, ShardingSpec from, ShardingSpec to) {}

  private static double reshard(TensorShape shape, ShardingSpec from, ShardingSpec to,
      MeshEnv env, Map<ReshardKey, Double> cache) {
    if (from == null || to == null || from.equals(to)) {
      return 0.0;
    }
    ReshardKey key = new ReshardKey(shape, from, to);
    Double c = cache.get(key);
    if (c == null) {
      c = ReshardingCost.of(shape, from, to, env.comm());
      cache.put(key, c);
    }
    return c;
  }

  /**
   * The strategy each instruction takes under a node assignment.
   *
   * @param choice one strategy per node
   * @return one strategy index per instruction
   */
  public int[] instructionChoice(int[] choice) {
    int[] out = new int[nodeOf.length];
    for (int i = 0; i < nodeOf.length; i++) {
      out[i] = choice[nodeOf[i]];
    }
    return out;
  }
}
