package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.exec.TaskExecutor;
import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.dp.StageDp;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.interop.space.SearchSpace;
import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
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
   * Plans: a request that its arithmetic rules out is answered before any layer is priced ({@link
   * RequestBounds}); then one task per microbatch size whose stages can cover the cluster runs its
   * stage DP and simulates the 1F1B pipeline it finds; then, unless the request allows 1F1B only,
   * one task per planned size looks for an interleaved pipeline faster than the best 1F1B plan of
   * all sizes. The outcomes come back in
   * the order of the sizes, so the choice does not depend on where or in which order they ran.
   *
   * @param req the model, cluster and batch
   * @return the best plan found, or why nothing fits
   */
  public PlanResult plan(PlanRequest req) {
    SearchSpace space = SearchSpace.of(req);
    java.util.Optional<PlanResult.Infeasible> hopeless = RequestBounds.memory(req)
        .or(() -> RequestBounds.batch(req));
    if (hopeless.isPresent()) {
      return hopeless.get();
    }
    List<Integer> sizes = SearchRules.microbatchSizes(req, space.shapes());
    List<Integer> micro = RequestBounds.coverable(req, space, sizes);
    if (micro.isEmpty()) {
      return RequestBounds.uncovered(req, space, sizes);
    }
    List<LayerCostModel.Key> keys = executor.inProcess() ? layerKeys(req, space.shapes(), micro)
        : List.of();
    SearchProgress told = new SearchProgress(progress, (long) keys.size() + micro.size()
        + (req.interleave() ? micro.size() : 0));
    // Tasks that run here share this model: solve its layers first, on the executor's threads.
    prefetch(keys, told);
    List<MicrobatchOutcome> outcomes = executor.map("plan", micro,
        new SearchTask.OneFOneB(req, solver, layers), told.phase());
    told.finish(micro.size());
    dpRuns += micro.size();
    count(outcomes);
    if (req.interleave()) {
      outcomes = interleaveAll(req, outcomes, told);
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
    told.done();
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
  private void prefetch(List<LayerCostModel.Key> keys, SearchProgress told) {
    for (boolean derived : new boolean[] {false, true}) {
      List<LayerCostModel.Key> round = new ArrayList<>();
      for (LayerCostModel.Key k : keys) {
        if (derived == (k.kind().block()
            && k.setting().recompute() == Recompute.FULL)) {
          round.add(k);
        }
      }
      if (round.isEmpty()) {
        continue;
      }
      executor.map("price-layers", round, new LayerTask(layers), told.phase());
      told.finish(round.size());
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
   * @param told where the interleaved searches count their progress
   * @return the outcomes with the interleaved plans in place
   */
  private List<MicrobatchOutcome> interleaveAll(PlanRequest req,
      List<MicrobatchOutcome> outcomes, SearchProgress told) {
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
        new SearchTask.Interleaved(req, solver, layers, beat), told.phase());
    told.finish(planned.size());
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

  /** Every layer setting the search will ask for. */
  private static List<LayerCostModel.Key> layerKeys(PlanRequest req, List<SubmeshShape> shapes,
      List<Integer> micro) {
    java.util.Set<LayerCostModel.Key> keys = new java.util.LinkedHashSet<>();
    for (int g : micro) {
      for (SubmeshShape sh : shapes) {
        for (int t : SearchRules.tensorDegrees(req, sh.devices())) {
          for (LayerSetting ls : SearchRules.stageSettings(req, sh.devices() / t, t, g)) {
            for (LayerCostModel.Kind k : LayerCostModel.Kind.values()) {
              if (StageAssembler.present(req.model(), k)) {
                keys.add(new LayerCostModel.Key(k, ls));
              }
            }
          }
        }
      }
    }
    return new ArrayList<>(keys);
  }

  private PlanResult.Infeasible infeasible(PlanRequest req, double leastNeeded) {
    ModelSpec model = req.model();
    ClusterSpec c = req.cluster();
    // Model state alone (16-bit weights, fp32 gradients, fp32 master and moments: 18 bytes per
    // parameter; 8 under bf16 optimizer state) spread over every GPU of n nodes must fit in 90% of
    // the memory, and so must the best layout's total need.
    double state = model.optimizerState().modelStateBytes() * model.parameterCount();
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
          + "more factors of 2 or another global batch" + SharedBatch.advice(c.gpuCount(),
          req.globalBatch()), true);
    }
    long least = Math.max(nodes, (long) c.nodes() + 1);
    int smallest = (int) Math.min(Integer.MAX_VALUE, least);
    String need = Double.isFinite(leastNeeded)
        ? io.meshplan.util.Units.formatBytes(leastNeeded) : "more than "
            + io.meshplan.util.Units.formatBytes(req.memoryPerGpu());
    return new PlanResult.Infeasible(Double.isFinite(leastNeeded) ? leastNeeded : 0, smallest,
        "no plan of " + model.name() + " fits on " + c.toShortString() + ": the best layout "
            + "needs " + need + " per GPU, and " + io.meshplan.util.Units.formatBytes(
                req.memoryPerGpu()) + " is available; "
            + c.tryAtLeast(least)
            + " (a smaller global batch or sequence also helps)");
  }
}
