package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
   * The most (first layer, last layer, submesh) cells a stage table may have: the DP keeps arrays
   * of this size, so the bound keeps memory and time polynomial and small (a 126-layer model on
   * 52 submesh shapes needs 825,552 cells).
   */
  static final long MAX_TABLE_CELLS = 1L << 25;
  /**
   * The most microbatches per iteration: the simulator steps through every forward and backward
   * of every microbatch on every stage, so this bounds its events (real jobs use a few thousand).
   */
  static final int MAX_MICROBATCHES = 1 << 16;
  /** Sequences per microbatch on one replica that the search considers. */
  private static final int[] REPLICA_MICROBATCHES = {1, 2, 4, 8};

  private final LayerCostModel layers;
  private final IntConsumer progress;
  private final io.meshplan.exec.LocalExecutor pool;
  private int dpRuns;
  private final java.util.concurrent.atomic.AtomicInteger simulations =
      new java.util.concurrent.atomic.AtomicInteger();

  /**
   * Creates a planner.
   *
   * @param layers prices layers (usually an {@link IlpLayerCostModel})
   * @param progress told the percentage done, 0 to 100, as the search goes
   */
  public InterOpPlanner(LayerCostModel layers, IntConsumer progress) {
    this(layers, progress, io.meshplan.exec.LocalExecutor.perProcessor());
  }

  /**
   * Creates a planner whose stage DPs run on the given threads.
   *
   * @param layers prices layers (usually an {@link IlpLayerCostModel})
   * @param progress told the percentage done, 0 to 100, as the search goes
   * @param pool runs the stage DPs (one per microbatch size)
   */
  public InterOpPlanner(LayerCostModel layers, IntConsumer progress,
      io.meshplan.exec.LocalExecutor pool) {
    this.layers = Require.nonNull(layers, "layer cost model");
    this.progress = Require.nonNull(progress, "progress");
    this.pool = Require.nonNull(pool, "pool");
  }

  /**
   * Plans.
   *
   * @param req the model, cluster and batch
   * @return the best plan found, or why nothing fits
   */
  public PlanResult plan(PlanRequest req) {
    ModelSpec model = req.model();
    ClusterSpec cluster = req.cluster();
    int granule = SubmeshShape.nodeGranule(cluster.nodes(), cluster.gpusPerNode(),
        model.layers());
    List<SubmeshShape> shapes = SubmeshShape.shapes(cluster.nodes(), cluster.gpusPerNode(),
        granule);
    long cells = (long) model.layers() * model.layers() * shapes.size();
    if (cells > MAX_TABLE_CELLS) {
      throw new io.meshplan.util.InputException("the stage table of " + model.layers()
          + " layers on " + shapes.size() + " submesh shapes has " + cells + " cells, more than "
          + "the limit of " + MAX_TABLE_CELLS + "; plan at most "
          + (long) Math.sqrt((double) MAX_TABLE_CELLS / shapes.size()) + " layers on this cluster");
    }
    long units = granule == 1 ? (long) cluster.nodes() * cluster.gpusPerNode()
        : cluster.nodes() / granule;
    int group = SubmeshShape.layerGroup(model.layers(), shapes.size(), units);
    List<Integer> micro = microbatchSizes(req, shapes);
    layers.prefetch(layerKeys(req, shapes, micro));
    // One DP per microbatch size, in parallel; the results are combined in the order of the
    // sizes, so the choice does not depend on the threads.
    List<java.util.concurrent.Callable<Object>> runs = new ArrayList<>();
    java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();
    for (int g : micro) {
      runs.add(() -> {
        Table table = new Table(req, shapes, g);
        GroupedTable grouped = new GroupedTable(table, group);
        StageDpResult r = new StageDp(new StageDpProblem(shapes, cluster.nodes(),
            cluster.gpusPerNode(), grouped, req.memoryPerGpu(), req.globalBatch() / g)).solve();
        Object out = r instanceof StageDpResult.Feasible f
            ? toPlan(req, table, grouped.ungroup(f.plan()), g) : r;
        progress.accept(done.incrementAndGet() * 100 / micro.size());
        return out;
      });
    }
    dpRuns += runs.size();
    List<Object> results = pool.runAll(runs, "meshplan-stage-dp");
    if (req.interleave()) {
      results = interleaveAll(req, shapes, micro, results);
    }
    PlanResult.Planned best = null;
    double leastNeeded = Double.POSITIVE_INFINITY;
    for (Object o : results) {
      if (o instanceof StageDpResult.Infeasible inf) {
        if (inf.minimumMemoryBytes().isPresent()) {
          leastNeeded = Math.min(leastNeeded, inf.minimumMemoryBytes().getAsDouble());
        }
        continue;
      }
      PlanResult.Planned p = (PlanResult.Planned) o;
      double t = p.plan().prediction().iterationSeconds();
      if (best == null || isBetter(t, p.plan().pipelineStages(),
          best.plan().prediction().iterationSeconds(), best.plan().pipelineStages())) {
        best = p;
      }
    }
    progress.accept(100);
    if (best == null) {
      return infeasible(req, leastNeeded);
    }
    return new PlanResult.Planned(best.plan(), best.simulation(),
        new PlanResult.SearchStats(layerSolves(), dpRuns, simulations.get(), granule, group));
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
    ClusterSpec cluster = req.cluster();
    int granule = SubmeshShape.nodeGranule(cluster.nodes(), cluster.gpusPerNode(),
        req.model().layers());
    return microbatchSizes(req, SubmeshShape.shapes(cluster.nodes(), cluster.gpusPerNode(),
        granule));
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

  private PlanResult.Planned toPlan(PlanRequest req, Table table,
      io.meshplan.interop.StagePlan dp, int g) {
    ModelSpec model = req.model();
    ClusterSpec cluster = req.cluster();
    List<StageCost> costs = new ArrayList<>();
    List<StageSetting> settings = new ArrayList<>();
    List<List<LayerCost>> stageLayers = new ArrayList<>();
    int[] firstDevice = new int[dp.stages().size()];
    int device = 0;
    int last = model.layers() - 1;
    for (int i = 0; i < dp.stages().size(); i++) {
      Stage s = dp.stages().get(i);
      StageSetting st = table.settings.get(s.tag());
      List<LayerCost> ls = table.assembler.stageLayers(st.layer(),
          s.lastLayer() - s.firstLayer() + 1, s.firstLayer() == 0, s.lastLayer() == last);
      costs.add(table.assembler.builder(st.dataParallel(), st.tensorParallel()).build(ls,
          st.dataParallel(), st.tensorParallel(), st.zeroStage(), s.lastLayer() == last));
      settings.add(st);
      stageLayers.add(ls);
      firstDevice[i] = device;
      device += s.submesh().devices();
    }
    int b = req.globalBatch() / g;
    simulations.incrementAndGet();
    SimulationResult sim = table.assembler.simulate(costs, firstDevice, req.globalBatch(), b,
        new Schedule.OneFOneB());
    List<StagePlan> stages = new ArrayList<>();
    for (int i = 0; i < dp.stages().size(); i++) {
      Stage s = dp.stages().get(i);
      StageSetting st = settings.get(i);
      StageCost c = costs.get(i);
      stages.add(new StagePlan(s.firstLayer(), s.lastLayer(), s.submesh().n(), s.submesh().m(),
          firstDevice[i], st.dataParallel(), st.tensorParallel(), st.layer().recompute(),
          st.layer().sequenceParallel(), st.zeroStage(), st.layer().megatron(),
          c.forwardSeconds(), c.backwardSeconds(),
          sim.stages().get(i).memory().totalBytes(), largestTensors(stageLayers.get(i)),
          Optional.of(axisBytes(sim.stages().get(i).commBytesPerGpu()))));
    }
    PipelinePlan plan = new PipelinePlan(model, cluster.toShortString(), req.globalBatch(), g, b,
        1, stages, prediction(sim));
    return new PlanResult.Planned(plan, sim, new PlanResult.SearchStats(0, 0, 0, 1, 1));
  }

  /**
   * Replaces each microbatch size's 1F1B plan by the fastest interleaved pipeline of that size
   * that fits and is faster than every 1F1B plan ({@link Interleaver}); sizes run in parallel.
   * Only a plan faster than the best 1F1B plan can be chosen, so bounding every size by that time
   * finds the plan that bounding each by its own 1F1B plan would, with fewer simulations.
   *
   * @param results the stage DP's outcome per size, in the order of {@code micro}
   * @return the outcomes with the interleaved plans in place
   */
  private List<Object> interleaveAll(PlanRequest req, List<SubmeshShape> shapes,
      List<Integer> micro, List<Object> results) {
    double beat = fastest(results);
    List<java.util.concurrent.Callable<Object>> runs = new ArrayList<>();
    for (int k = 0; k < micro.size(); k++) {
      Object o = results.get(k);
      int g = micro.get(k);
      runs.add(() -> o instanceof PlanResult.Planned p
          ? interleaved(req, shapes, g, beat).map(x -> (Object) new PlanResult.Planned(x.plan(),
              x.simulation(), p.stats())).orElse(o) : o);
    }
    return pool.runAll(runs, "meshplan-interleave");
  }

  /** The shortest iteration among the planned outcomes, seconds (infinity without one). */
  private static double fastest(List<Object> results) {
    double t = Double.POSITIVE_INFINITY;
    for (Object o : results) {
      if (o instanceof PlanResult.Planned p) {
        t = Math.min(t, p.plan().prediction().iterationSeconds());
      }
    }
    return t;
  }

  /**
   * The fastest interleaved pipeline of one microbatch size that fits and beats an iteration
   * time ({@link Interleaver}), priced with this planner's layer prices.
   *
   * @param req the request
   * @param g sequences per microbatch
   * @param beatSeconds the iteration to beat, seconds
   * @return the plan and its simulation, or empty when none beats it
   */
  public Optional<PlanSimulator.Evaluated> interleaved(PlanRequest req, int g,
      double beatSeconds) {
    ClusterSpec cluster = req.cluster();
    int granule = SubmeshShape.nodeGranule(cluster.nodes(), cluster.gpusPerNode(),
        req.model().layers());
    return interleaved(req, SubmeshShape.shapes(cluster.nodes(), cluster.gpusPerNode(), granule),
        g, beatSeconds);
  }

  private Optional<PlanSimulator.Evaluated> interleaved(PlanRequest req,
      List<SubmeshShape> shapes, int g, double beatSeconds) {
    Interleaver search = new Interleaver(req, new StageAssembler(req, layers), shapes, g);
    Optional<PlanSimulator.Evaluated> e = search.best(beatSeconds, false);
    simulations.addAndGet(search.simulations());
    return e;
  }

  static PipelinePlan.Prediction prediction(SimulationResult sim) {
    return new PipelinePlan.Prediction(sim.iterationSeconds(), sim.tokensPerSecond(),
        sim.tflopsPerGpu(), sim.mfu(), sim.peakMemoryBytesPerGpu(),
        Optional.of(axisBytes(sim.commBytes())));
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

  /** The stage cost table of one microbatch size, built on demand and remembered. */
  private final class Table implements StageCostTable {
    private final PlanRequest req;
    private final List<SubmeshShape> shapes;
    private final int microbatchSize;
    private final int microbatches;
    private final Map<Long, List<StageOption>> memo = new HashMap<>();
    final List<StageSetting> settings = new ArrayList<>();
    final StageAssembler assembler;

    Table(PlanRequest req, List<SubmeshShape> shapes, int microbatchSize) {
      this.microbatches = req.globalBatch() / microbatchSize;
      this.req = req;
      this.shapes = shapes;
      this.microbatchSize = microbatchSize;
      this.assembler = new StageAssembler(req, layers);
    }

    @Override
    public int layers() {
      return req.model().layers();
    }

    @Override
    public int submeshes() {
      return shapes.size();
    }

    @Override
    public List<StageOption> options(int first, int last, int submesh) {
      int count = last - first + 1;
      boolean emb = first == 0;
      boolean head = last == layers() - 1;
      long key = ((long) count * 4 + (emb ? 2 : 0) + (head ? 1 : 0)) * shapes.size() + submesh;
      return memo.computeIfAbsent(key, k -> build(count, emb, head, shapes.get(submesh)));
    }

    /**
     * The options of a stage, in order of latency, then static and activation memory; an option
     * no better than another in all three is dropped (the DP would never prefer it).
     */
    private List<StageOption> build(int count, boolean emb, boolean head, SubmeshShape shape) {
      List<StageOption> all = new ArrayList<>();
      int devices = shape.devices();
      for (int t : tensorDegrees(req, devices)) {
        int d = devices / t;
        int b = replicaMicrobatch(microbatchSize, d);
        if (b == 0) {
          continue;
        }
        StageCostBuilder builder = assembler.builder(d, t);
        for (LayerSetting ls : layerSettings(t, b)) {
          List<LayerCost> stageLayers = assembler.stageLayers(ls, count, emb, head);
          if (stageLayers == null) {
            continue;
          }
          for (int zero : zeroStages(d)) {
            StageCost c = builder.build(stageLayers, d, t, zero, head);
            int tag = settings.size();
            settings.add(new StageSetting(d, t, zero, ls));
            all.add(new StageOption(c.forwardSeconds() + c.backwardSeconds()
                    + iterationTail(c) / microbatches,
                c.memory().weightsBytes() + c.memory().gradientsBytes()
                    + c.memory().optimizerStateBytes() + c.memory().temporaryBytes(),
                c.memory().activationBytesPerMicrobatch(), tag));
          }
        }
      }
      return pareto(all);
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
