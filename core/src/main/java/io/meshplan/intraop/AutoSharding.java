package io.meshplan.intraop;

import io.meshplan.graph.Graph;
import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.ilp.MemoryConstraint;
import io.meshplan.intraop.ilp.SolutionEvaluator;
import io.meshplan.intraop.solve.IlpSolution;
import io.meshplan.intraop.solve.SolveStatus;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.List;

/**
 * Intra-operator auto-sharding (Alpa, OSDI'22, section 4; Alpa's {@code solve_auto_sharding}):
 * enumerate strategies, merge followers, build the ILP, solve it, and check the answer with the
 * independent evaluator.
 */
public final class AutoSharding {
  private final MeshEnv env;
  private final SolverOptions options;
  private final boolean residentParameters;

  /**
   * Creates the planner.
   *
   * @param env the mesh, cost models and memory budget
   * @param options the solver settings
   */
  public AutoSharding(MeshEnv env, SolverOptions options) {
    this(env, options, true);
  }

  /**
   * Creates the planner with a choice of parameter liveness.
   *
   * @param env the mesh, cost models and memory budget
   * @param options the solver settings
   * @param residentParameters true (the default) when parameters occupy memory for the whole
   *     step; false for Alpa's prototype, where a parameter is live from its position in the graph
   *     to its last use
   */
  public AutoSharding(MeshEnv env, SolverOptions options, boolean residentParameters) {
    this.env = env;
    this.options = options;
    this.residentParameters = residentParameters;
  }

  /**
   * Plans a graph.
   *
   * @param graph the computation
   * @return the plan
   * @throws InfeasibleException when no layout fits the memory bound; says how much is needed
   */
  public ShardingPlan plan(Graph graph) {
    return plan(graph, java.util.Map.of());
  }

  /**
   * Plans a graph with some result layouts fixed (for example shardings already in an HLO module).
   *
   * @param graph the computation
   * @param fixed required result layouts by instruction id
   * @return the plan
   * @throws InfeasibleException when no plan satisfies the memory bound and the fixed layouts
   */
  public ShardingPlan plan(Graph graph, java.util.Map<Integer, io.meshplan.sharding.ShardingSpec>
      fixed) {
    IntraOpResult r = solve(graph, fixed);
    if (r instanceof IntraOpResult.Infeasible inf) {
      throw new InfeasibleException(inf.message());
    }
    return ((IntraOpResult.Planned) r).plan();
  }

  /**
   * Runs the intra-operator pipeline of a request: plans its graph, describes the plan for
   * renderers and lists what was planned conservatively or not kept.
   *
   * @param request the graph, mesh, solver settings and fixed layouts
   * @return the plan with its description and warnings, or why there is none
   */
  public static ShardResult shard(ShardRequest request) {
    IntraOpResult r = new AutoSharding(request.env(), request.solver(),
        request.residentParameters()).solve(request.graph(), request.fixed());
    if (r instanceof IntraOpResult.Infeasible inf) {
      return new ShardResult.Infeasible(inf);
    }
    ShardingPlan plan = ((IntraOpResult.Planned) r).plan();
    List<String> warnings = new ArrayList<>();
    for (String w : plan.opaqueOps()) {
      warnings.add(w + ": planned conservatively (replicated on replicated operands)");
    }
    warnings.addAll(plan.notKept());
    return new ShardResult.Planned(plan, IntraOpPlan.of(plan), warnings);
  }

  /**
   * Plans a graph and returns infeasibility as a value (the form the pipeline planner uses).
   *
   * @param graph the computation
   * @param fixed required result layouts by instruction id
   * @return the plan, or why there is none with the memory that would be needed
   */
  public IntraOpResult solve(Graph graph,
      java.util.Map<Integer, io.meshplan.sharding.ShardingSpec> fixed) {
    return solve(graph, fixed, new java.util.BitSet());
  }

  /**
   * Plans a graph some of whose instructions every device runs whole on its own data (see
   * {@link StrategyGenerator#StrategyGenerator(Graph, MeshEnv, java.util.BitSet)}).
   *
   * @param graph the computation
   * @param fixed required result layouts by instruction id
   * @param local the ids of the device-local instructions
   * @return the plan, or why there is none with the memory that would be needed
   */
  public IntraOpResult solve(Graph graph,
      java.util.Map<Integer, io.meshplan.sharding.ShardingSpec> fixed, java.util.BitSet local) {
    return solve(graph, fixed, local, new java.util.BitSet(), new java.util.BitSet());
  }

  /**
   * Plans a graph some of whose values are read only as they are laid out, and some of whose
   * instructions run without a collective of their own. Every reader of a pinned value, and of
   * every value computed from pinned values alone (a weight's cast to FP8, its transpose, its
   * scale), takes it in its producer's layout, never resharded at a cost; a strategy of a silent
   * instruction that communicates (a reduce-scatter of a partial weight gradient) is not taken.
   * This is a framework that stores a weight split over the tensor-parallel GPUs, never gathers
   * it, and computes its shard's gradient whole on its GPU, as Megatron-LM's and torchtitan's
   * tensor parallelism do.
   *
   * @param graph the computation
   * @param fixed required result layouts by instruction id
   * @param local the ids of the device-local instructions
   * @param pinned the ids of values their readers may not reshard
   * @param silent the ids of instructions whose strategies may not communicate
   * @return the plan, or why there is none with the memory that would be needed
   */
  public IntraOpResult solve(Graph graph,
      java.util.Map<Integer, io.meshplan.sharding.ShardingSpec> fixed, java.util.BitSet local,
      java.util.BitSet pinned, java.util.BitSet silent) {
    long t0 = System.nanoTime();
    List<StrategySet> sets = new StrategyGenerator(graph, env, local).generate();
    java.util.Map<Integer, io.meshplan.sharding.ShardingSpec> kept = new java.util.TreeMap<>();
    List<String> notKept = new ArrayList<>();
    for (var f : new java.util.TreeMap<>(fixed).entrySet()) {
      boolean available = sets.get(f.getKey()).strategies().stream()
          .anyMatch(st -> f.getValue().equals(st.output()));
      if (available) {
        kept.put(f.getKey(), f.getValue());
      } else {
        notKept.add(graph.get(f.getKey()).name() + ": its sharding " + f.getValue()
            + " is not among the strategies meshplan can price for this op; not kept");
      }
    }
    CostGraph cg = CostGraph.build(graph, sets, env, kept, residentParameters,
        derivedClosure(graph, pinned), silent);
    double strategySeconds = (System.nanoTime() - t0) / 1e9;
    IlpSolution sol = options.newSolver().solve(cg.problem());
    if (!sol.hasSolution()) {
      return infeasible(cg, sol, !kept.isEmpty());
    }
    Evaluation ev = SolutionEvaluator.evaluate(cg.problem(), sol.choice());
    if (!ev.feasible()) {
      throw new IllegalStateException("solver returned an infeasible assignment: "
          + ev.violations().get(0));
    }
    List<String> opaque = new ArrayList<>();
    for (int i = 0; i < graph.size(); i++) {
      if (sets.get(i).opaque()) {
        opaque.add(graph.get(i).name());
      }
    }
    return new IntraOpResult.Planned(
        new ShardingPlan(cg, env, sol, ev, strategySeconds, opaque, notKept, local));
  }

  /**
   * The pinned values and every value computed from them alone ({@link #derivedRoots}).
   */
  static java.util.BitSet derivedClosure(Graph graph, java.util.BitSet pinned) {
    java.util.BitSet out = new java.util.BitSet();
    int[] root = derivedRoots(graph, pinned);
    for (int id = 0; id < root.length; id++) {
      if (root[id] >= 0) {
        out.set(id);
      }
    }
    return out;
  }

  /**
   * For each value, the pinned value it is computed from alone, or -1: a pinned value is its own;
   * in graph order, an instruction whose tensor operands are values of one such root or single
   * elements (a weight's cast, transpose or scale) takes that root.
   *
   * @param graph the computation
   * @param pinned the ids of the pinned values
   * @return the root of each instruction id, or -1
   */
  public static int[] derivedRoots(Graph graph, java.util.BitSet pinned) {
    int[] root = new int[graph.size()];
    java.util.Arrays.fill(root, -1);
    if (pinned.isEmpty()) {
      return root;
    }
    for (io.meshplan.graph.Instruction ins : graph.instructions()) {
      int id = ins.id();
      if (pinned.get(id)) {
        root[id] = id;
        continue;
      }
      int r = -1;
      boolean only = !ins.operands().isEmpty()
          && graph.get(id).shape() instanceof io.meshplan.graph.TensorShape;
      for (int o : ins.operands()) {
        if (root[o] >= 0) {
          only &= r < 0 || r == root[o];
          r = root[o];
        } else if (graph.get(o).shape() instanceof io.meshplan.graph.TensorShape t
            && t.elementCount() > 1) {
          only = false;
        }
      }
      root[id] = only ? r : -1;
    }
    return root;
  }

  private IntraOpResult.Infeasible infeasible(CostGraph cg, IlpSolution sol, boolean anyKept) {
    MemoryConstraint m = cg.problem().memory();
    if (sol.status() == SolveStatus.UNKNOWN) {
      return new IntraOpResult.Infeasible(0, IntraOpResult.Cause.TIME_LIMIT,
          "no plan found within the time limit of " + options.timeLimitSeconds() + " s");
    }
    double need = 0;
    int step = -1;
    if (m != null) {
      // A lower bound: every value at its smallest layout.
      double[] at = SolutionEvaluator.memoryAtSteps(m,
          it -> java.util.Arrays.stream(m.itemBytes()[it]).min().orElse(0));
      for (int k = 0; k < at.length; k++) {
        if (at[k] > need) {
          need = at[k];
          step = m.steps()[k];
        }
      }
    }
    String at = step >= 0 ? " at " + cg.graph().get(step).name() : "";
    String budget = Units.formatBytes(env.memoryPerDevice());
    if (need <= env.memoryPerDevice()) {
      return new IntraOpResult.Infeasible(0,
          anyKept ? IntraOpResult.Cause.FIXED_LAYOUTS : IntraOpResult.Cause.PRICES_OVERFLOW,
          (anyKept ? "the kept shardings and aliases admit no plan on this mesh"
              : "no plan has a finite cost on this mesh")
              + " (memory is not the cause: the smallest layouts need " + Units.formatBytes(need)
              + " of " + budget + ")");
    }
    return new IntraOpResult.Infeasible(need, IntraOpResult.Cause.MEMORY, "no sharding fits in "
        + budget + " per device; even the smallest layouts need at least "
        + Units.formatBytes(need) + at);
  }
}
