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
import java.util.function.IntConsumer;

/**
 * Whole-cluster planning (Alpa, OSDI'22, section 5): for every global microbatch size and every
 * plan-wide choice of recomputation, sequence parallelism and ZeRO stage, build the stage cost
 * table from planned layers, run the {@link StageDp}, and simulate the resulting pipeline; the plan
 * with the shortest simulated iteration wins (ties: fewer stages, then the earlier candidate in the
 * enumeration order below).
 *
 * <p>Stage candidates: Alpa's submesh shapes; on each, every logical mesh {@code d x t} with
 * {@code d * t} devices, the batch on axis 0 ({@code d} must divide the microbatch), {@code t}
 * dividing the attention heads. A layer range costs its blocks (all alike: one block is planned
 * per setting and reused), plus the embedding when it starts at layer 0 and the head when it ends
 * at the last layer. For every setting both the ILP's layouts and Megatron-LM's fixed layouts are
 * priced and the faster is used, so every Megatron-LM configuration is inside the search space.
 */
public final class InterOpPlanner {
  private static final Recompute[] RECOMPUTES = Recompute.values();
  private static final int[] ZERO_STAGES = {0, 1, 3};

  private final LayerCostModel layers;
  private final IntConsumer progress;
  private int dpRuns;
  private int simulations;

  /**
   * Creates a planner.
   *
   * @param layers prices layers (usually an {@link IlpLayerCostModel})
   * @param progress told the percentage done, 0 to 100, as the search goes
   */
  public InterOpPlanner(LayerCostModel layers, IntConsumer progress) {
    this.layers = Require.nonNull(layers, "layer cost model");
    this.progress = Require.nonNull(progress, "progress");
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
    List<SubmeshShape> shapes = SubmeshShape.alpaShapes(cluster.nodes(), cluster.gpusPerNode());
    List<Integer> micro = microbatchSizes(req);
    double bestTime = Double.POSITIVE_INFINITY;
    PlanResult.Planned best = null;
    double leastNeeded = Double.POSITIVE_INFINITY;
    int total = micro.size() * RECOMPUTES.length * 2 * ZERO_STAGES.length;
    int done = 0;
    for (Recompute rc : RECOMPUTES) {
      for (boolean sp : new boolean[] {false, true}) {
        for (int zero : ZERO_STAGES) {
          for (int g : micro) {
            progress.accept(done++ * 100 / total);
            int b = req.globalBatch() / g;
            Table table = new Table(req, shapes, g, rc, sp, zero);
            dpRuns++;
            StageDpResult r = new StageDp(new StageDpProblem(shapes, cluster.nodes(),
                cluster.gpusPerNode(), table, req.memoryPerGpu(), b)).solve();
            if (r instanceof StageDpResult.Infeasible inf) {
              if (inf.minimumMemoryBytes().isPresent()) {
                leastNeeded = Math.min(leastNeeded, inf.minimumMemoryBytes().getAsDouble());
              }
              continue;
            }
            StageDpResult.Feasible f = (StageDpResult.Feasible) r;
            PlanResult.Planned p = toPlan(req, table, f.plan(), g, rc, sp, zero);
            double t = p.plan().prediction().iterationSeconds();
            if (t < bestTime - 1e-12 || (Math.abs(t - bestTime) <= 1e-12
                && p.plan().stages().size() < best.plan().stages().size())) {
              bestTime = t;
              best = p;
            }
          }
        }
      }
    }
    progress.accept(100);
    if (best == null) {
      return infeasible(req, leastNeeded);
    }
    return new PlanResult.Planned(best.plan(), best.simulation(),
        new PlanResult.SearchStats(layerSolves(), dpRuns, simulations));
  }

  private int layerSolves() {
    return layers instanceof IlpLayerCostModel ilp ? ilp.solves() : 0;
  }

  /** Global microbatch sizes: the fixed one, else the divisors of the global batch. */
  private static List<Integer> microbatchSizes(PlanRequest req) {
    List<Integer> out = new ArrayList<>();
    int gb = req.globalBatch();
    if (req.fixedMicrobatches() > 0) {
      Require.that(gb % req.fixedMicrobatches() == 0, "the global batch " + gb
          + " is not a multiple of " + req.fixedMicrobatches() + " microbatches");
      out.add(gb / req.fixedMicrobatches());
      return out;
    }
    for (int g = 1; g <= gb; g++) {
      if (gb % g == 0) {
        out.add(g);
      }
    }
    return out;
  }

  private PlanResult.Planned toPlan(PlanRequest req, Table table,
      io.meshplan.interop.StagePlan dp, int g, Recompute rc, boolean sp, int zero) {
    ModelSpec model = req.model();
    ClusterSpec cluster = req.cluster();
    List<StageCost> costs = new ArrayList<>();
    List<StageSetting> settings = new ArrayList<>();
    List<List<LayerCost>> stageLayers = new ArrayList<>();
    int[] firstDevice = new int[dp.stages().size()];
    int device = 0;
    int L = model.layers();
    for (int i = 0; i < dp.stages().size(); i++) {
      Stage s = dp.stages().get(i);
      StageSetting st = table.settings.get(s.tag());
      List<LayerCost> ls = table.stageLayers(st.layer(), s.lastLayer() - s.firstLayer() + 1,
          s.firstLayer() == 0, s.lastLayer() == L - 1);
      costs.add(table.builder(st.dataParallel(), st.tensorParallel()).build(ls,
          st.dataParallel(), st.tensorParallel(), zero, s.lastLayer() == L - 1));
      settings.add(st);
      stageLayers.add(ls);
      firstDevice[i] = device;
      device += s.submesh().devices();
    }
    int b = req.globalBatch() / g;
    simulations++;
    SimulationResult sim = table.assembler.simulate(costs, firstDevice, req.globalBatch(), b,
        new Schedule.OneFOneB());
    List<StagePlan> stages = new ArrayList<>();
    for (int i = 0; i < dp.stages().size(); i++) {
      Stage s = dp.stages().get(i);
      StageSetting st = settings.get(i);
      StageCost c = costs.get(i);
      stages.add(new StagePlan(s.firstLayer(), s.lastLayer(), s.submesh().n(), s.submesh().m(),
          firstDevice[i], st.dataParallel(), st.tensorParallel(), c.forwardSeconds(),
          c.backwardSeconds(), sim.stages().get(i).memory().totalBytes(),
          largestTensors(stageLayers.get(i))));
    }
    int mb = g / settings.get(0).dataParallel();
    PipelinePlan plan = new PipelinePlan(model, cluster.toShortString(), req.globalBatch(), mb, b,
        1, rc, sp, zero == 1, zero, stages, prediction(sim));
    return new PlanResult.Planned(plan, sim, new PlanResult.SearchStats(0, 0, 0));
  }

  static PipelinePlan.Prediction prediction(SimulationResult sim) {
    return new PipelinePlan.Prediction(sim.iterationSeconds(), sim.tokensPerSecond(),
        sim.tflopsPerGpu(), sim.mfu(), sim.peakMemoryBytesPerGpu());
  }

  /** The tensors of the stage's first block (or its only layer), largest first, at most six. */
  static List<io.meshplan.plan.TensorSharding> largestTensors(List<LayerCost> layers) {
    LayerCost pick = layers.get(0);
    for (LayerCost l : layers) {
      if (l.parameters() > pick.parameters() && !l.tensors().isEmpty()) {
        pick = l;
      }
    }
    return pick.tensors().size() <= 6 ? pick.tensors() : pick.tensors().subList(0, 6);
  }

  private PlanResult.Infeasible infeasible(PlanRequest req, double leastNeeded) {
    ModelSpec model = req.model();
    ClusterSpec c = req.cluster();
    // Model state alone (16-bit weights, fp32 gradients, fp32 master and moments: 18 bytes per
    // parameter) spread over every GPU of n nodes must fit in 90% of the memory.
    double state = 18.0 * model.parameterCount();
    double perNode = 0.9 * req.memoryPerGpu() * c.gpusPerNode();
    long nodes = (long) Math.ceil(state / perNode);
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

  /** The stage cost table of one plan-wide setting, built on demand and remembered. */
  private final class Table implements StageCostTable {
    private final PlanRequest req;
    private final List<SubmeshShape> shapes;
    private final int microbatchSize;
    private final Recompute recompute;
    private final boolean sequenceParallel;
    private final int zero;
    private final Map<Long, List<StageOption>> memo = new HashMap<>();
    final List<StageSetting> settings = new ArrayList<>();
    final StageAssembler assembler;

    Table(PlanRequest req, List<SubmeshShape> shapes, int microbatchSize, Recompute recompute,
        boolean sequenceParallel, int zero) {
      this.req = req;
      this.shapes = shapes;
      this.microbatchSize = microbatchSize;
      this.recompute = recompute;
      this.sequenceParallel = sequenceParallel;
      this.zero = zero;
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

    private List<StageOption> build(int count, boolean emb, boolean head, SubmeshShape shape) {
      List<StageOption> out = new ArrayList<>();
      int devices = shape.devices();
      for (int t = 1; t <= devices; t++) {
        if (devices % t != 0) {
          continue;
        }
        int d = devices / t;
        if (microbatchSize % d != 0 || req.model().heads() % t != 0) {
          continue;
        }
        if (sequenceParallel && t == 1 || zero > 0 && d == 1) {
          continue;
        }
        LayerSetting ls = new LayerSetting(t, microbatchSize / d, recompute, sequenceParallel,
            false);
        List<LayerCost> stageLayers = stageLayers(ls, count, emb, head);
        if (stageLayers == null) {
          continue;
        }
        StageSetting setting = new StageSetting(d, t, zero, ls);
        StageCost c = builder(d, t).build(stageLayers, d, t, zero, head);
        int tag = settings.size();
        settings.add(setting);
        out.add(new StageOption(c.forwardSeconds() + c.backwardSeconds(),
            c.memory().weightsBytes() + c.memory().gradientsBytes()
                + c.memory().optimizerStateBytes() + c.memory().temporaryBytes(),
            c.memory().activationBytesPerMicrobatch(), tag));
      }
      return out;
    }

    List<LayerCost> stageLayers(LayerSetting ls, int count, boolean emb, boolean head) {
      return assembler.stageLayers(ls, count, emb, head);
    }

    StageCostBuilder builder(int d, int t) {
      return assembler.builder(d, t);
    }
  }
}
