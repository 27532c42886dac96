package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.exec.TaskExecutor;
import io.meshplan.exec.TaskFunction;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * Whole-cluster planning (Alpa, OSDI'22, section 5): for every microbatch size, build the stage
 * cost table from planned layers, run the {@link StageDp}, and simulate the resulting 1F1B
 * pipeline; then, unless the request allows 1F1B only, look for interleaved pipelines faster than
 * the best of those ({@link Interleaver}); the plan with the shortest simulated iteration wins
 * (ties: fewer stages, then the smaller microbatch).
 *
 * <p>Stage candidates: Alpa's submesh shapes; on each, every logical mesh {@code d x t} with
 * {@code d * t} devices, the batch on axis 0 ({@code d} must divide the microbatch), {@code t}
 * dividing the attention heads. A layer range costs its blocks (all alike: one block is planned
 * per setting and reused), plus the embedding when it starts at layer 0 and the head when it ends
 * at the last layer. Each stage also chooses its recomputation, sequence parallelism and ZeRO stage;
 * options that another option beats in latency, static memory and activation memory at once are
 * dropped. For every setting both the ILP's layouts and Megatron-LM's fixed layouts are priced and
 * the faster is used, so every Megatron-LM configuration is inside the search space.
 */
public final class InterOpPlanner {
  private static final int[] ZERO_STAGES = {0, 1, 3};
  private static final int[] NO_ZERO = {0};
  /**
   * The most microbatches per iteration: the simulator steps through every forward and backward
   * of every microbatch on every stage, so this bounds its events (real jobs use a few thousand).
   */
  static final int MAX_MICROBATCHES = 1 << 16;
  /** Sequences per microbatch on one replica that the search considers. */
  private static final int[] REPLICA_MICROBATCHES = {1, 2, 4, 8};

  private final LayerCostModel layers;
  private final SolverOptions solver;
  private final TaskExecutor executor;
  private final IntConsumer progress;
  private int dpRuns;
  private int simulations;

  /**
   * Creates a planner whose tasks run on this process's threads, one per processor.
   *
   * @param layers prices layers (usually an {@link IlpLayerCostModel})
   * @param progress told the percentage done, 0 to 100, as the search goes
   */
  public InterOpPlanner(LayerCostModel layers, IntConsumer progress) {
    this(layers, progress, LocalExecutor.perProcessor());
  }

  /**
   * Creates a planner whose tasks run on the given executor. Tasks that run in another process
   * price layers there with the ILP settings of {@code layers} (the defaults when it is not an
   * {@link IlpLayerCostModel}).
   *
   * @param layers prices layers in this process (usually an {@link IlpLayerCostModel})
   * @param progress told the percentage done, 0 to 100, as the search goes
   * @param executor runs one task per microbatch size, then one per interleaved search
   */
  public InterOpPlanner(LayerCostModel layers, IntConsumer progress, TaskExecutor executor) {
    this.layers = Require.nonNull(layers, "layer cost model");
    this.progress = Require.nonNull(progress, "progress");
    this.executor = Require.nonNull(executor, "executor");
    this.solver = layers instanceof IlpLayerCostModel ilp ? ilp.solver()
        : SolverOptions.defaults();
  }

  /**
   * Plans: one task per microbatch size runs its stage DP and simulates the 1F1B pipeline it
   * finds; then, unless the request allows 1F1B only, one task per planned size looks for an
   * interleaved pipeline faster than the best 1F1B plan of all sizes. The outcomes come back in
   * the order of the sizes, so the choice does not depend on where or in which order they ran.
   *
   * @param req the model, cluster and batch
   * @return the best plan found, or why nothing fits
   */
  public PlanResult plan(PlanRequest req) {
    SearchSpace space = SearchSpace.of(req);
    List<Integer> micro = microbatchSizes(req, space.shapes());
    if (executor.inProcess()) {
      // Tasks that run here share this model: solve its layers first, on the executor's threads.
      prefetch(layerKeys(req, space.shapes(), micro));
    }
    List<MicrobatchOutcome> outcomes = executor.map("plan", micro,
        new MicrobatchTask(req, solver, layers),
        n -> progress.accept(n * 100 / micro.size()));
    dpRuns += micro.size();
    count(outcomes);
    if (req.interleave()) {
      outcomes = interleaveAll(req, outcomes);
    }
    MicrobatchOutcome best = null;
    double leastNeeded = Double.POSITIVE_INFINITY;
    for (MicrobatchOutcome o : outcomes) {
      if (!o.hasPlan()) {
        if (o.neededBytesPerGpu() >= 0) {
          leastNeeded = Math.min(leastNeeded, o.neededBytesPerGpu());
        }
        continue;
      }
      if (best == null || isBetter(o.iterationSeconds(), o.stages(), best.iterationSeconds(),
          best.stages())) {
        best = o;
      }
    }
    progress.accept(100);
    if (best == null) {
      return infeasible(req, leastNeeded);
    }
    PlanResult.Planned p = best.resolve(req, layers);
    return new PlanResult.Planned(p.plan(), p.simulation(),
        new PlanResult.SearchStats(layerSolves(), dpRuns, simulations, space.granule(),
            space.group()));
  }

  /**
   * Prices every layer the search will ask for, one executor task per layer, so the executor's
   * threads bound the solver's. Blocks with full recomputation are derived from the plan without
   * it, so they come second: each graph is then solved exactly once, and the count is repeatable.
   */
  private void prefetch(List<LayerCostModel.Key> keys) {
    for (boolean derived : new boolean[] {false, true}) {
      List<LayerCostModel.Key> round = new ArrayList<>();
      for (LayerCostModel.Key k : keys) {
        if (derived == (k.kind() == LayerCostModel.Kind.BLOCK
            && k.setting().recompute() == Recompute.FULL)) {
          round.add(k);
        }
      }
      executor.map("price-layers", round, new LayerTask(layers), n -> { });
    }
  }

  /**
   * Prices one layer with the planner's model, in the planner's process (the only place where
   * its memo is seen).
   */
  private static final class LayerTask implements TaskFunction<LayerCostModel.Key, Boolean> {
    private static final long serialVersionUID = 1L;
    private final transient LayerCostModel layers;

    LayerTask(LayerCostModel layers) {
      this.layers = layers;
    }

    @Override
    public Boolean apply(LayerCostModel.Key k) {
      Require.that(layers != null, "layer prices are solved in the planner's process");
      return layers.cost(k.kind(), k.setting()) != null;
    }
  }

  /** Counts the outcomes' simulations; rethrows the first refusal in size order. */
  private void count(List<MicrobatchOutcome> outcomes) {
    for (MicrobatchOutcome o : outcomes) {
      if (o.refused()) {
        throw new InputException(o.message());
      }
      simulations += o.simulations();
    }
  }

  /**
   * Replaces each microbatch size's 1F1B plan by the fastest interleaved pipeline of that size
   * that fits and is faster than every 1F1B plan ({@link Interleaver}), one task per planned size.
   * Only a plan faster than the best 1F1B plan can be chosen, so bounding every size by that time
   * finds the plan that bounding each by its own 1F1B plan would, with fewer simulations.
   *
   * @param outcomes the first round's outcome per size, in size order
   * @return the outcomes with the interleaved plans in place
   */
  private List<MicrobatchOutcome> interleaveAll(PlanRequest req,
      List<MicrobatchOutcome> outcomes) {
    double beat = Double.POSITIVE_INFINITY;
    List<Integer> planned = new ArrayList<>();
    for (MicrobatchOutcome o : outcomes) {
      if (o.hasPlan()) {
        beat = Math.min(beat, o.iterationSeconds());
        planned.add(o.microbatchSequences());
      }
    }
    if (planned.isEmpty()) {
      return outcomes;
    }
    List<MicrobatchOutcome> found = executor.map("interleave", planned,
        new InterleaveTask(req, solver, beat, layers), n -> { });
    count(found);
    Map<Integer, MicrobatchOutcome> bySize = new HashMap<>();
    for (MicrobatchOutcome o : found) {
      if (o.hasPlan()) {
        bySize.put(o.microbatchSequences(), o);
      }
    }
    List<MicrobatchOutcome> out = new ArrayList<>(outcomes.size());
    for (MicrobatchOutcome o : outcomes) {
      out.add(bySize.getOrDefault(o.microbatchSequences(), o));
    }
    return out;
  }

  /**
   * The planner's choice between two plans, taken in ascending microbatch size so that the smaller
   * microbatch wins the remaining ties: the shorter iteration (more than 1e-12 s apart), then
   * fewer stages.
   *
   * @param seconds the candidate's iteration time, seconds
   * @param stages the candidate's stages
   * @param bestSeconds the best plan's iteration time so far, seconds
   * @param bestStages the best plan's stages
   * @return whether the candidate replaces the best
   */
  public static boolean isBetter(double seconds, int stages, double bestSeconds, int bestStages) {
    return seconds < bestSeconds - 1e-12
        || (Math.abs(seconds - bestSeconds) <= 1e-12 && stages < bestStages);
  }

  private int layerSolves() {
    return layers instanceof IlpLayerCostModel ilp ? ilp.solves() : 0;
  }

  /**
   * The microbatch sizes a plan searches, one stage DP each: with a fixed microbatch count, the
   * one size it gives; planning with {@code fixedMicrobatches = globalBatch / size} for each size
   * and keeping the best (see {@link #plan}) gives the same plan as planning them all at once.
   *
   * @param req the request
   * @return sequences per microbatch, ascending
   */
  public static List<Integer> microbatchSizes(PlanRequest req) {
    return microbatchSizes(req, SearchSpace.of(req).shapes());
  }

  /**
   * Global microbatch sizes (sequences per microbatch over a stage's replicas): the fixed one, else
   * every divisor of the global batch that some stage option can use.
   */
  private static List<Integer> microbatchSizes(PlanRequest req, List<SubmeshShape> shapes) {
    int gb = req.globalBatch();
    if (req.fixedMicrobatches() > 0) {
      Require.that(gb % req.fixedMicrobatches() == 0, "the global batch " + gb
          + " is not a multiple of " + req.fixedMicrobatches() + " microbatches");
      checkMicrobatches(req.fixedMicrobatches());
      return List.of(gb / req.fixedMicrobatches());
    }
    // A microbatch gives each replica of some stage 1, 2, 4 or 8 sequences, so the candidates are
    // those products that divide the global batch: at most 4 per data-parallel size.
    java.util.TreeSet<Integer> sizes = new java.util.TreeSet<>();
    for (SubmeshShape sh : shapes) {
      for (int t : tensorDegrees(req, sh.devices())) {
        for (int b : REPLICA_MICROBATCHES) {
          long g = (long) b * (sh.devices() / t);
          if (g <= gb && gb % g == 0 && gb / g <= MAX_MICROBATCHES) {
            sizes.add((int) g);
          }
        }
      }
    }
    if (sizes.isEmpty()) {
      throw new io.meshplan.util.InputException("the global batch of " + gb + " sequences cannot "
          + "be split into at most " + MAX_MICROBATCHES + " microbatches of 1, 2, 4 or 8 "
          + "sequences per data-parallel replica on this cluster; choose a global batch with "
          + "more factors of 2");
    }
    return new ArrayList<>(sizes);
  }

  /**
   * Refuses more microbatches per iteration than the simulator can step through quickly.
   *
   * @param microbatches microbatches per iteration
   */
  static void checkMicrobatches(long microbatches) {
    if (microbatches > MAX_MICROBATCHES) {
      throw new io.meshplan.util.InputException(microbatches + " microbatches per iteration are "
          + "more than the limit of " + MAX_MICROBATCHES + "; use larger microbatches or a "
          + "smaller global batch");
    }
  }

  /**
   * Tensor-parallel degrees for a stage of {@code devices} GPUs: divisors of the GPUs per node (so
   * that tensor parallelism stays on NVLink, Narayanan et al. SC'21, section 5.4) that divide the
   * attention heads and the stage.
   */
  static List<Integer> tensorDegrees(PlanRequest req, int devices) {
    List<Integer> out = new ArrayList<>();
    int m = req.cluster().gpusPerNode();
    for (int t = 1; t <= Math.min(m, devices); t++) {
      if (m % t == 0 && devices % t == 0 && req.model().heads() % t == 0) {
        out.add(t);
      }
    }
    return out;
  }

  /**
   * The layer settings a stage of tensor-parallel size {@code t} may take with {@code b} sequences
   * per replica, in the search's order: each recomputation mode, then (with {@code t > 1})
   * sequence parallelism off and on, and the ILP's or Megatron-LM's layouts.
   *
   * @param t tensor-parallel size
   * @param b sequences per microbatch per replica
   * @return the settings
   */
  static List<LayerSetting> layerSettings(int t, int b) {
    boolean[] both = t > 1 ? new boolean[] {false, true} : new boolean[] {false};
    List<LayerSetting> out = new ArrayList<>();
    for (Recompute rc : Recompute.values()) {
      for (boolean sp : both) {
        for (boolean meg : both) {
          out.add(new LayerSetting(t, b, rc, sp, meg));
        }
      }
    }
    return out;
  }

  /**
   * The ZeRO stages a stage of {@code d} data-parallel replicas may use: 0, 1 and 3, or only 0
   * without data parallelism.
   *
   * @param d data-parallel replicas
   * @return the stages, ascending
   */
  static int[] zeroStages(int d) {
    return d > 1 ? ZERO_STAGES.clone() : NO_ZERO.clone();
  }

  /** The per-replica microbatch when {@code d} replicas share {@code g} sequences, or 0. */
  static int replicaMicrobatch(int g, int d) {
    if (g % d != 0) {
      return 0;
    }
    int b = g / d;
    for (int c : REPLICA_MICROBATCHES) {
      if (c == b) {
        return b;
      }
    }
    return 0;
  }

  /** Every layer setting the search will ask for. */
  private static List<LayerCostModel.Key> layerKeys(PlanRequest req, List<SubmeshShape> shapes,
      List<Integer> micro) {
    java.util.Set<LayerCostModel.Key> keys = new java.util.LinkedHashSet<>();
    for (int g : micro) {
      for (SubmeshShape sh : shapes) {
        for (int t : tensorDegrees(req, sh.devices())) {
          int b = replicaMicrobatch(g, sh.devices() / t);
          if (b == 0) {
            continue;
          }
          for (LayerSetting ls : layerSettings(t, b)) {
            for (LayerCostModel.Kind k : LayerCostModel.Kind.values()) {
              keys.add(new LayerCostModel.Key(k, ls));
            }
          }
        }
      }
    }
    return new ArrayList<>(keys);
  }

  static PipelinePlan.Prediction prediction(SimulationResult sim) {
    return new PipelinePlan.Prediction(sim.iterationSeconds(), sim.tokensPerSecond(),
        sim.tflopsPerGpu(), sim.mfu(), sim.peakMemoryBytesPerGpu(),
        java.util.Optional.of(axisBytes(sim.commBytes())));
  }

  /** The simulator's communication volume in the plan's terms. */
  static io.meshplan.plan.AxisBytes axisBytes(io.meshplan.sim.CommVolume v) {
    return new io.meshplan.plan.AxisBytes(v.tensorParallelBytes(), v.dataParallelBytes(),
        v.pipelineBytes());
  }

  /**
   * The weights of the stage's transformer block (the layer with the most weight tensors), largest
   * first, at most six, named {@code block/...}: every block of a stage has the same layouts.
   */
  static List<io.meshplan.plan.TensorSharding> largestTensors(List<LayerCost> layers) {
    LayerCost pick = layers.get(0);
    for (LayerCost l : layers) {
      if (l.tensors().size() > pick.tensors().size()) {
        pick = l;
      }
    }
    List<io.meshplan.plan.TensorSharding> out = new ArrayList<>();
    for (io.meshplan.plan.TensorSharding t : pick.tensors()) {
      if (out.size() == 6) {
        break;
      }
      out.add(new io.meshplan.plan.TensorSharding(t.name().replaceFirst("^layer_0/", "block/"),
          t.shape(), t.sharding(), t.words()));
    }
    return out;
  }

  private PlanResult.Infeasible infeasible(PlanRequest req, double leastNeeded) {
    ModelSpec model = req.model();
    ClusterSpec c = req.cluster();
    // Model state alone (16-bit weights, fp32 gradients, fp32 master and moments: 18 bytes per
    // parameter) spread over every GPU of n nodes must fit in 90% of the memory, and so must the
    // best layout's total need.
    double state = 18.0 * model.parameterCount();
    double perNode = 0.9 * req.memoryPerGpu() * c.gpusPerNode();
    long nodes = (long) Math.ceil(state / perNode);
    if (Double.isFinite(leastNeeded)) {
      // The best layout's need spread over more nodes of the same kind: a lower bound as well.
      nodes = Math.max(nodes, (long) Math.ceil(leastNeeded * c.gpuCount() / perNode));
    }
    if (!Double.isFinite(leastNeeded) && nodes <= c.nodes()) {
      // No stage DP found any partition at all: the model state would fit, but the cluster's GPUs
      // cannot be cut into stages that share one microbatch size.
      return new PlanResult.Infeasible(0, c.nodes(), "no pipeline of " + model.name()
          + " covers all " + c.gpuCount() + " GPUs of " + c.toShortString() + " with stages "
          + "whose data-parallel sizes take 1, 2, 4 or 8 sequences each of one microbatch "
          + "that divides the global batch of " + req.globalBatch() + "; use a node count with "
          + "more factors of 2 or another global batch");
    }
    int smallest = (int) Math.min(Integer.MAX_VALUE, Math.max(nodes, (long) c.nodes() + 1));
    String need = Double.isFinite(leastNeeded)
        ? io.meshplan.util.Units.formatBytes(leastNeeded) : "more than "
            + io.meshplan.util.Units.formatBytes(req.memoryPerGpu());
    return new PlanResult.Infeasible(Double.isFinite(leastNeeded) ? leastNeeded : 0, smallest,
        "no plan of " + model.name() + " fits on " + c.toShortString() + ": the best layout "
            + "needs " + need + " per GPU, and " + io.meshplan.util.Units.formatBytes(
                req.memoryPerGpu()) + " is available; try at least " + smallest + "x"
            + c.gpusPerNode() + ":" + c.gpu().name() + ":" + c.fabric().name()
            + " (a smaller global batch or sequence also helps)");
  }

  /**
   * A table whose DP layers are groups of {@code group} consecutive layers (the last group may be
   * shorter), so that a stage starts and ends on a group boundary.
   */
  static final class GroupedTable implements StageCostTable {
    private final StageCostTable inner;
    private final int group;

    GroupedTable(StageCostTable inner, int group) {
      Require.that(group >= 1, "layer group must be >= 1");
      this.inner = inner;
      this.group = group;
    }

    @Override
    public int layers() {
      return (inner.layers() + group - 1) / group;
    }

    @Override
    public int submeshes() {
      return inner.submeshes();
    }

    private int lastOf(int g) {
      return Math.min((g + 1) * group, inner.layers()) - 1;
    }

    @Override
    public List<StageOption> options(int first, int last, int submesh) {
      return inner.options(first * group, lastOf(last), submesh);
    }

    /** The plan in layers of the inner table. */
    io.meshplan.interop.StagePlan ungroup(io.meshplan.interop.StagePlan p) {
      if (group == 1) {
        return p;
      }
      List<Stage> out = new ArrayList<>();
      for (Stage s : p.stages()) {
        out.add(new Stage(s.firstLayer() * group, lastOf(s.lastLayer()), s.submeshIndex(),
            s.submesh(), s.option()));
      }
      return new io.meshplan.interop.StagePlan(out, p.microbatches(), p.objectiveSeconds());
    }
  }

  /**
   * The once-per-iteration work of a stage that the pipeline does not hide: the gradient
   * reduction (beyond the last backward when the framework overlaps them), the gather of updated
   * weights and the optimizer step. Alpa's DP objective counts microbatch latencies only; spreading
   * this over the microbatches lets it tell apart options that differ here (a wider data-parallel
   * group, a sharded optimizer) while keeping the objective exact for a single stage.
   */
  static double iterationTail(StageCost c) {
    double sync = c.gradSyncOverlappable() ? Math.max(0, c.gradSyncSeconds() - c.backwardSeconds())
        : c.gradSyncSeconds();
    return sync + c.paramGatherSeconds() + c.optimizerSeconds();
  }

  /** Drops dominated options; keeps the first of equal ones (the enumeration order). */
  static List<StageOption> pareto(List<StageOption> all) {
    List<StageOption> sorted = new ArrayList<>(all);
    sorted.sort(java.util.Comparator.comparingDouble(StageOption::latencySeconds)
        .thenComparingDouble(StageOption::staticBytes)
        .thenComparingDouble(StageOption::activationBytes)
        .thenComparingInt(StageOption::tag));
    List<StageOption> kept = new ArrayList<>();
    for (StageOption o : sorted) {
      boolean dominated = false;
      for (StageOption k : kept) {
        if (k.staticBytes() <= o.staticBytes() && k.activationBytes() <= o.activationBytes()) {
          dominated = true;
          break;
        }
      }
      if (!dominated) {
        kept.add(o);
      }
    }
    return kept;
  }
}
