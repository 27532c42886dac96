package io.meshplan.interop.hlo;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.KernelTimeModel;
import io.meshplan.cluster.SendRecvModel;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.dp.PackedStageDp;
import io.meshplan.interop.dp.Stage;
import io.meshplan.interop.dp.StageCostTable;
import io.meshplan.interop.dp.StageDpProblem;
import io.meshplan.interop.dp.StageDpResult;
import io.meshplan.interop.dp.StageOption;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.interop.space.SearchSpace;
import io.meshplan.interop.space.SubmeshPlacement;
import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.plan.StagePlan;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.MemoryBreakdown;
import io.meshplan.sim.PipelineSimulator;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationInput;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCommBytes;
import io.meshplan.sim.StageCost;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.IntConsumer;

/**
 * Plans the pipeline of an HLO training step (Alpa, OSDI'22, section 5): the step's layers
 * ({@link HloLayering}), each priced on every logical mesh by the intra-operator ILP ({@link
 * HloLayerPricer}), then the stage DP over layer ranges and submeshes ({@link PackedStageDp})
 * with the 1F1B memory check, the chosen plan's submeshes placed inside nodes or on whole nodes
 * ({@link SubmeshPlacement}), and the plan simulated event by event under 1F1B.
 *
 * <p>The module's batch is one microbatch; an iteration runs {@code microbatches} of them. A
 * stage's logical meshes are {@code d x t} with {@code t} dividing the GPUs per node (tensor
 * parallelism stays on NVLink) and {@code d t} the submesh's GPUs. Every layer is solved on every
 * mesh; when that is more than {@link #MAX_SOLVES} solves (a cluster of hundreds of nodes), the
 * submeshes of whole nodes are Alpa's powers of two.
 */
public final class HloPipelinePlanner {
  /**
   * The most candidate stages (layer ranges times submesh shapes times logical meshes) the stage
   * DP is given: it keeps every one, and 2^21 of them take a few hundred MiB.
   */
  static final long MAX_CANDIDATES = 1L << 21;

  /**
   * The most layer solves (distinct layers times logical meshes) the search runs on Alpa's shapes
   * ({@link SubmeshShape#shapes}); beyond it, it takes Alpa's power-of-two space ({@link
   * SubmeshShape#powerOfTwoShapes}), and beyond that it refuses. Measured on the 4-block GPT of
   * {@code examples/gpt_train_step.hlo}: on 16 x 8 GPUs its 210 solves (3 distinct layers on 70
   * meshes) took 25 s of CPU time, on 64 x 8 its 786 took 55 s; on 131,072 x 8 Alpa's shapes would
   * need 49,152. The limit keeps a plan to about half a minute of CPU time at that layer size.
   */
  static final long MAX_SOLVES = 256;

  private final ClusterSpec cluster;
  private final HloLayerPricer pricer;
  private final double memoryPerGpu;
  private final SendRecvModel p2p;
  private final int elementBytes;
  private final boolean overlapGradSync;
  private final LocalExecutor pool;
  private final IntConsumer progress;

  /**
   * Creates the planner.
   *
   * @param cluster the cluster
   * @param pricer prices layers on logical meshes
   * @param memoryPerGpu memory available on one GPU, bytes
   * @param p2p prices of stage-to-stage transfers
   * @param elementBytes bytes of the module's compute element type (sets the dense peak of MFU)
   * @param overlapGradSync whether the gradient reduction overlaps with the backward pass
   * @param pool runs the layer solves
   * @param progress told the percentage of layer solves done
   */
  public HloPipelinePlanner(ClusterSpec cluster, HloLayerPricer pricer, double memoryPerGpu,
      SendRecvModel p2p, int elementBytes, boolean overlapGradSync, LocalExecutor pool,
      IntConsumer progress) {
    this.cluster = Require.nonNull(cluster, "cluster");
    this.pricer = Require.nonNull(pricer, "pricer");
    Require.that(memoryPerGpu > 0, "memory per GPU must be > 0");
    this.memoryPerGpu = memoryPerGpu;
    this.p2p = Require.nonNull(p2p, "p2p");
    this.elementBytes = elementBytes;
    this.overlapGradSync = overlapGradSync;
    this.pool = Require.nonNull(pool, "pool");
    this.progress = Require.nonNull(progress, "progress");
  }

  /**
   * A planner for one module, pricing its layers with {@link HloLayerPricer#SOLVER} in the
   * module's compute element type ({@link MeshEnv#computeElementBytes}).
   *
   * @param graph the module's entry computation, calls inlined
   * @param cluster the cluster
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param memoryPerGpu memory available on one GPU, bytes
   * @param p2p prices of stage-to-stage transfers
   * @param overlapGradSync whether the gradient reduction overlaps with the backward pass
   * @param pool runs the layer solves
   * @param progress told the percentage of layer solves done
   * @return the planner
   */
  public static HloPipelinePlanner of(io.meshplan.graph.Graph graph, ClusterSpec cluster,
      java.util.function.Function<io.meshplan.cluster.LogicalMesh, io.meshplan.cluster.CommModel>
          comm, double memoryPerGpu, SendRecvModel p2p, boolean overlapGradSync,
      LocalExecutor pool, IntConsumer progress) {
    return of(graph, cluster, comm, 1, memoryPerGpu, p2p, overlapGradSync, pool, progress);
  }

  /**
   * The planner of a module whose kernels run {@code computeScale} times faster than the kernel
   * model's defaults (a profile's measured scale, {@code CommPricing.computeScale}).
   *
   * @param graph the module's entry computation, calls inlined
   * @param cluster the cluster
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param computeScale divides every kernel time, > 0
   * @param memoryPerGpu memory available on one GPU, bytes
   * @param p2p prices of stage-to-stage transfers
   * @param overlapGradSync whether the gradient reduction overlaps with the backward pass
   * @param pool runs the layer solves
   * @param progress told the percentage of layer solves done
   * @return the planner
   */
  public static HloPipelinePlanner of(io.meshplan.graph.Graph graph, ClusterSpec cluster,
      java.util.function.Function<io.meshplan.cluster.LogicalMesh, io.meshplan.cluster.CommModel>
          comm, double computeScale, double memoryPerGpu, SendRecvModel p2p,
      boolean overlapGradSync, LocalExecutor pool, IntConsumer progress) {
    int elementBytes = MeshEnv.computeElementBytes(graph);
    return new HloPipelinePlanner(cluster, new HloLayerPricer(cluster, comm, elementBytes,
        computeScale, HloLayerPricer.SOLVER), memoryPerGpu, p2p, elementBytes, overlapGradSync,
        pool, progress);
  }

  /**
   * The submesh shapes of the search and, for each, the logical meshes' indices into {@code
   * meshes}.
   */
  private record Search(List<SubmeshShape> shapes, List<int[]> meshes, List<List<Integer>> of) {}

  private Search search(int layers, long distinct) {
    int nodes = cluster.nodes();
    int m = cluster.gpusPerNode();
    int granule = SubmeshShape.nodeGranule(nodes, m, layers);
    List<SubmeshShape> shapes = SubmeshShape.shapes(nodes, m, granule);
    long units = granule == 1 ? (long) nodes * m : nodes / granule;
    if (SubmeshShape.layerGroup(layers, shapes.size(), units) > 1
        || (long) layers * layers * shapes.size() > SearchSpace.MAX_TABLE_CELLS) {
      throw new InputException("the stage table of " + layers + " layers on " + nodes + " x " + m
          + " GPUs is too large; plan the module on fewer nodes or with fewer layer scopes");
    }
    Search all = meshes(layers, shapes);
    if (distinct * all.meshes().size() <= MAX_SOLVES) {
      return all;
    }
    Search few = meshes(layers, SubmeshShape.powerOfTwoShapes(nodes, m, granule));
    if (distinct * few.meshes().size() > MAX_SOLVES) {
      throw new InputException("planning the module on " + nodes + " x " + m + " GPUs takes "
          + distinct * few.meshes().size() + " layer solves (" + distinct + " distinct layers on "
          + few.meshes().size() + " logical meshes), more than the limit of " + MAX_SOLVES
          + "; plan it on fewer nodes or with fewer distinct layer scopes");
    }
    return few;
  }

  /** The logical meshes of the shapes, with the stage table's size checked. */
  private Search meshes(int layers, List<SubmeshShape> shapes) {
    int nodes = cluster.nodes();
    int m = cluster.gpusPerNode();
    List<int[]> meshes = new ArrayList<>();
    java.util.Map<Long, Integer> index = new java.util.HashMap<>();
    List<List<Integer>> of = new ArrayList<>();
    for (SubmeshShape s : shapes) {
      List<Integer> mine = new ArrayList<>();
      for (int t = 1; t <= s.m(); t++) {
        if (s.m() % t != 0 || m % t != 0) {
          continue;
        }
        int[] dt = {s.devices() / t, t};
        mine.add(index.computeIfAbsent((long) dt[0] << 32 | t, key -> {
          meshes.add(dt);
          return meshes.size() - 1;
        }));
      }
      of.add(mine);
    }
    long candidates = 0;
    for (List<Integer> mine : of) {
      candidates += mine.size();
    }
    candidates *= (long) layers * (layers + 1) / 2;
    if (candidates > MAX_CANDIDATES) {
      throw new InputException("the stage table of " + layers + " layers on " + nodes + " x " + m
          + " GPUs has " + candidates + " candidate stages, more than the limit of "
          + MAX_CANDIDATES + "; plan the module on fewer nodes or with fewer layer scopes");
    }
    return new Search(shapes, meshes, of);
  }

  /**
   * Plans a step.
   *
   * @param lay the step's layers and phases
   * @param module the module's file and hash, with the layers of {@code lay}
   * @param microbatches microbatches per iteration
   * @return the plan with its simulation
   * @throws InfeasibleException when no pipeline fits in memory; says how much would be needed
   */
  public HloPlanResult plan(HloLayering lay, PlanSource.HloModule module, int microbatches) {
    Require.positive(microbatches, "microbatches");
    SearchRules.checkMicrobatches(microbatches);
    Require.that(module.layerNames().equals(lay.names()), "the module's layers are the step's");
    int layers = lay.layers();
    List<HloLayerGraph> graphs = graphs(lay);
    long distinct = graphs.stream().map(HloLayerGraph::fingerprint).distinct().count();
    Search sr = search(layers, distinct);
    HloLayerCost[][] cost = price(graphs, sr.meshes());
    StageCostTable table = new Table(cost, sr.of());
    StageDpResult r = PackedStageDp.solve(new StageDpProblem(sr.shapes(), cluster.nodes(),
        cluster.gpusPerNode(), table, memoryPerGpu, microbatches));
    if (r instanceof StageDpResult.Infeasible inf) {
      throw infeasible(lay.graph().name(), microbatches, inf, cost, sr);
    }
    StageDpResult.Feasible f = (StageDpResult.Feasible) r;
    List<Placed> placed = new ArrayList<>();
    for (Stage st : f.plan().stages()) {
      int[] dt = sr.meshes().get(st.tag());
      placed.add(new Placed(st.firstLayer(), st.lastLayer(), st.submesh(), dt[0], dt[1],
          cost[st.tag()]));
    }
    int[] firstDevice = SubmeshPlacement.place(PackedStageDp.submeshes(f.plan()),
        cluster.nodes(), cluster.gpusPerNode()).orElseThrow();
    return assemble(lay, module, graphs, placed, firstDevice, microbatches,
        new HloPlanResult.Stats((int) distinct, sr.meshes().size(), pricer.solves(),
            f.latenciesTried()));
  }

  /**
   * Prices a saved plan of this step again: each stage's layers on the stage's logical mesh,
   * then the pipeline simulated as {@link #plan} simulates it, so the same module on the same
   * cluster gives the same iteration.
   *
   * @param lay the step's layers and phases, read from the module again
   * @param saved the saved plan
   * @return the plan with the figures of this pricing, and its simulation
   * @throws InputException when the plan's layers are not the module's, or a stage's mesh has no
   *     layout for one of its layers
   */
  public HloPlanResult simulate(HloLayering lay, PipelinePlan saved) {
    PlanSource.HloModule module = saved.hloModule().orElseThrow(() ->
        new IllegalArgumentException("not the plan of an HLO module"));
    if (!module.layerNames().equals(lay.names())) {
      throw new InputException("the plan's layers are not the module's: the plan names "
          + module.layerNames().size() + " layers, the module " + lay.layers());
    }
    Require.that(saved.virtualStages() == 1, "the plan of an HLO module runs 1F1B");
    List<HloLayerGraph> graphs = graphs(lay);
    List<Placed> placed = new ArrayList<>();
    for (StagePlan s : saved.stages()) {
      if (s.submeshNodes() > cluster.nodes() || s.submeshGpus() > cluster.gpusPerNode()) {
        throw new InputException("stage " + placed.size() + "'s submesh " + s.submeshNodes()
            + "x" + s.submeshGpus() + " is larger than the cluster " + cluster.toShortString());
      }
      HloLayerCost[] cost = new HloLayerCost[lay.layers()];
      for (int k = s.firstLayer(); k <= s.lastLayer(); k++) {
        cost[k] = pricer.cost(graphs.get(k), s.dataParallel(), s.tensorParallel());
        if (cost[k] == null) {
          throw new InputException("layer " + k + " (" + lay.names().get(k) + ") has no layout "
              + "on the " + s.dataParallel() + "x" + s.tensorParallel() + " mesh of stage "
              + placed.size());
        }
      }
      placed.add(new Placed(s.firstLayer(), s.lastLayer(),
          new SubmeshShape(s.submeshNodes(), s.submeshGpus()), s.dataParallel(),
          s.tensorParallel(), cost));
    }
    // The saved devices, which the plan file's check found inside nodes or on whole nodes.
    int[] firstDevice = saved.stages().stream().mapToInt(StagePlan::firstDevice).toArray();
    return assemble(lay, module, graphs, placed, firstDevice, saved.microbatches(),
        HloPlanResult.Stats.NONE);
  }

  /**
   * A stage placed on a submesh with its logical mesh {@code d x t}, and the costs of the layers
   * on that mesh ({@code cost[k]} for layer {@code k} of the stage).
   */
  private record Placed(int first, int last, SubmeshShape submesh, int d, int t,
      HloLayerCost[] cost) {}

  /** The stages' costs, the simulation of the pipeline under 1F1B, and the plan. */
  private HloPlanResult assemble(HloLayering lay, PlanSource.HloModule module,
      List<HloLayerGraph> graphs, List<Placed> placed, int[] firstDevice, int microbatches,
      HloPlanResult.Stats stats) {
    double[][] cut = lay.boundaryBytes();
    List<StageCost> costs = new ArrayList<>();
    for (int i = 0; i < placed.size(); i++) {
      Placed st = placed.get(i);
      boolean last = i == placed.size() - 1;
      double send = last ? 0 : Math.max(cut[st.last()][0], cut[st.last()][1])
          / ((double) st.d() * st.t());
      StageCost sc = stageCost(st.cost(), st.first(), st.last(), st.d(), st.t(), send);
      costs.add(sc);
    }
    StageAssembler.checkSimulationSize(microbatches, costs.size());
    SimulationResult sim = new PipelineSimulator(new SimulationInput(costs,
        new Schedule.OneFOneB(), microbatches, StageAssembler.p2p(cluster, p2p, costs,
            firstDevice), cluster.gpuCount(), KernelTimeModel.densePeak(cluster.gpu(),
            KernelTimeModel.xlaPrecision(cluster.gpu(), elementBytes)), microbatches)).simulate();
    List<StagePlan> stages = new ArrayList<>();
    for (int i = 0; i < placed.size(); i++) {
      Placed st = placed.get(i);
      StageCost sc = costs.get(i);
      stages.add(new StagePlan(st.first(), st.last(), st.submesh().n(), st.submesh().m(),
          firstDevice[i], st.d(), st.t(), Recompute.NONE, false, 0, false, sc.forwardSeconds(),
          sc.backwardSeconds(), sim.stages().get(i).memory().totalBytes(),
          largest(st.cost(), graphs, st.first(), st.last()),
          Optional.of(StageAssembler.axisBytes(sim.stages().get(i).commBytesPerGpu()))));
    }
    PipelinePlan plan = new PipelinePlan(module, cluster.toShortString(), microbatches, 1,
        microbatches, 1, stages, StageAssembler.prediction(sim));
    return new HloPlanResult(plan, sim, costs, stats);
  }

  private static List<HloLayerGraph> graphs(HloLayering lay) {
    List<HloLayerGraph> graphs = new ArrayList<>(lay.layers());
    for (int k = 0; k < lay.layers(); k++) {
      graphs.add(HloLayerGraph.of(lay, k));
    }
    return graphs;
  }

  /**
   * Prices every layer on every logical mesh, the distinct ones ahead on the pool's threads.
   *
   * @return {@code cost[mesh][layer]}, null where the ILP found no plan
   */
  private HloLayerCost[][] price(List<HloLayerGraph> graphs, List<int[]> meshes) {
    pricer.prefetch(graphs, meshes, pool, progress);
    HloLayerCost[][] cost = new HloLayerCost[meshes.size()][graphs.size()];
    for (int i = 0; i < meshes.size(); i++) {
      int[] dt = meshes.get(i);
      for (int k = 0; k < graphs.size(); k++) {
        cost[i][k] = pricer.cost(graphs.get(k), dt[0], dt[1]);
      }
    }
    return cost;
  }

  /**
   * Why no pipeline fits: no partition covers the cluster, or the memory per GPU it would need
   * and the nodes to try.
   */
  private InfeasibleException infeasible(String name, int microbatches,
      StageDpResult.Infeasible inf, HloLayerCost[][] cost, Search sr) {
    if (inf.minimumMemoryBytes().isEmpty()) {
      return new InfeasibleException("no pipeline of " + name + " covers "
          + cluster.toShortString() + ": " + inf.reason());
    }
    double need = inf.minimumMemoryBytes().getAsDouble();
    return new InfeasibleException("no pipeline of " + name + " with " + microbatches
        + " microbatches fits in " + Units.formatBytes(memoryPerGpu) + " per GPU; it needs "
        + Units.formatBytes(need) + " per GPU; "
        + cluster.tryAtLeast(nodesNeeded(need, cost, sr)));
  }

  /**
   * The stage options from the layer costs, computed when the DP asks: prefix sums per mesh for
   * time, model state and activations, and a sparse table for the largest temporary, so a range
   * costs O(1) per mesh and the table keeps O(L log L) numbers per mesh, not O(L^2) options.
   */
  private static final class Table implements StageCostTable {
    private final int layers;
    private final List<List<Integer>> of;
    private final double[][] latency;
    private final double[][] state;
    private final double[][] saved;
    private final int[][] missing;
    /** {@code temp[i][j][k]}: the largest temporary of layers k .. k + 2^j - 1 on mesh i. */
    private final double[][][] temp;

    Table(HloLayerCost[][] cost, List<List<Integer>> of) {
      this.of = of;
      int meshes = cost.length;
      this.layers = cost[0].length;
      latency = new double[meshes][layers + 1];
      state = new double[meshes][layers + 1];
      saved = new double[meshes][layers + 1];
      missing = new int[meshes][layers + 1];
      int levels = 32 - Integer.numberOfLeadingZeros(layers);
      temp = new double[meshes][levels][];
      for (int i = 0; i < meshes; i++) {
        temp[i][0] = new double[layers];
        for (int k = 0; k < layers; k++) {
          HloLayerCost c = cost[i][k];
          latency[i][k + 1] = latency[i][k] + (c == null ? 0 : c.latencySeconds());
          state[i][k + 1] = state[i][k] + (c == null ? 0 : c.modelStateBytes());
          saved[i][k + 1] = saved[i][k] + (c == null ? 0 : c.savedActivationBytes());
          missing[i][k + 1] = missing[i][k] + (c == null ? 1 : 0);
          temp[i][0][k] = c == null ? 0 : c.temporaryBytes();
        }
        for (int j = 1; j < levels; j++) {
          int span = 1 << j;
          temp[i][j] = new double[layers - span + 1];
          for (int k = 0; k + span <= layers; k++) {
            temp[i][j][k] = Math.max(temp[i][j - 1][k], temp[i][j - 1][k + span / 2]);
          }
        }
      }
    }

    @Override
    public int layers() {
      return layers;
    }

    @Override
    public int submeshes() {
      return of.size();
    }

    @Override
    public List<StageOption> options(int first, int last, int submesh) {
      List<StageOption> out = new ArrayList<>(of.get(submesh).size());
      int j = 31 - Integer.numberOfLeadingZeros(last - first + 1);
      for (int i : of.get(submesh)) {
        if (missing[i][last + 1] - missing[i][first] > 0) {
          continue;
        }
        double t = Math.max(temp[i][j][first], temp[i][j][last - (1 << j) + 1]);
        // Sums of non-negative terms: clamp the rounding of the prefix differences at 0.
        out.add(new StageOption(Math.max(0, latency[i][last + 1] - latency[i][first]),
            Math.max(0, state[i][last + 1] - state[i][first]) + t,
            Math.max(0, saved[i][last + 1] - saved[i][first]), i));
      }
      return out;
    }
  }

  /**
   * A lower bound on the nodes of this kind that could hold the step: the least need per GPU
   * spread over more GPUs, and the model state of one replica (weights, gradients, optimizer
   * state on one GPU) spread over every GPU, each within 90% of a GPU's memory.
   */
  private long nodesNeeded(double needPerGpu, HloLayerCost[][] cost, Search sr) {
    double perNode = 0.9 * memoryPerGpu * cluster.gpusPerNode();
    long nodes = (long) Math.ceil(needPerGpu * cluster.gpuCount() / perNode);
    for (int i = 0; i < sr.meshes().size(); i++) {
      if (sr.meshes().get(i)[0] * sr.meshes().get(i)[1] == 1) {
        double state = 0;
        for (HloLayerCost c : cost[i]) {
          state += c == null ? 0 : c.modelStateBytes();
        }
        nodes = Math.max(nodes, (long) Math.ceil(state / perNode));
      }
    }
    return Math.max(nodes, cluster.nodes() + 1L);
  }

  private StageCost stageCost(HloLayerCost[] c, int first, int last, int d, int t,
      double send) {
    HloLayerCost s = c[first];
    for (int k = first + 1; k <= last; k++) {
      s = s.plus(c[k]);
    }
    return new StageCost(d * t, d, t, s.forwardSeconds(), s.backwardSeconds(), 0,
        Math.min(s.tensorCommSeconds(), s.latencySeconds()), send, s.gradSyncSeconds(),
        overlapGradSync, 0, s.optimizerSeconds(), s.modelFlops(), s.modelFlops(),
        new MemoryBreakdown(s.weightBytes(), s.gradientBytes(), s.stateBytes(),
            s.savedActivationBytes(), s.temporaryBytes()),
        new StageCommBytes(s.tensorCommBytes(), 0, s.dataCommBytes(), s.iterationCommBytes()));
  }

  /** The stage's three largest weights (by elements, then name), one per layout and shape. */
  private static List<TensorSharding> largest(HloLayerCost[] c, List<HloLayerGraph> graphs,
      int first, int last) {
    record Listed(TensorSharding tensor, long elements) {}
    List<Listed> all = new ArrayList<>();
    for (int k = first; k <= last; k++) {
      for (int i = 0; i < c[k].tensors().size(); i++) {
        all.add(new Listed(c[k].tensors().get(i), graphs.get(k).graph()
            .get(c[k].tensorIds().get(i)).tensorShape().elementCount()));
      }
    }
    all.sort(Comparator.comparingLong((Listed l) -> -l.elements())
        .thenComparing(l -> l.tensor().name()));
    List<TensorSharding> out = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (Listed l : all) {
      TensorSharding t = l.tensor();
      if (out.size() < 3 && seen.add(t.shape() + " " + t.sharding())) {
        out.add(t);
      }
    }
    return out;
  }
}
