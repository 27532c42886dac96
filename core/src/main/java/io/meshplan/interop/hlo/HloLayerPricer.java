package io.meshplan.interop.hlo;

import io.meshplan.cluster.KernelTimeModel;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.exec.Futures;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.TensorShape;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.PhaseAccountant;
import io.meshplan.interop.cost.PhaseTotals;
import io.meshplan.intraop.AutoSharding;
import io.meshplan.intraop.IntraOpResult;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.Phase;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sharding.ShardingSpec;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntConsumer;

/**
 * Prices the layers of an HLO training step on logical meshes with the intra-operator ILP
 * (Alpa, OSDI'22, section 4), in seconds of the cluster's kernel and collective models.
 *
 * <p>Values that cross layers, and the batch inputs, keep one layout on every layer so that the
 * layers of a stage chain without resharding: the leading dimension split over the data-parallel
 * axis (axis 0) when the degree divides it, replicated otherwise. Every other layout is the ILP's
 * choice. Each instruction's cost (its strategy's compute and communication and the resharding of
 * its operands) is counted in its phase; the communication of the work that only computes
 * gradients for the update ({@link HloLayering#gradientWork}) is counted once per iteration, as
 * frameworks reduce the sum of the microbatches' gradients once.
 *
 * <p>Layers with equal fingerprints are solved once per mesh.
 */
public final class HloLayerPricer {
  /** A budget no layer reaches: the stage DP checks memory, not the layer solve. */
  private static final double UNBOUNDED_MEMORY = 1e18;
  /**
   * The solver of a layer: the exact reductions, then, on what they leave, restarted iterated
   * conditional modes ({@link SolverOptions.Kind#FAST}); a pipeline search prices every distinct
   * layer on every logical mesh, and the answer must not depend on the machine's speed.
   */
  public static final SolverOptions SOLVER = new SolverOptions(SolverOptions.Kind.FAST, 60.0, 1);

  /** Weights listed per layer in the plan. */
  private static final int LISTED_WEIGHTS = 3;

  private final ClusterSpec cluster;
  private final Function<LogicalMesh, CommModel> comm;
  private final int elementBytes;
  private final SolverOptions solver;
  private final double computeScale;
  private final Map<String, FutureTask<Optional<HloLayerCost>>> memo = new ConcurrentHashMap<>();
  private final AtomicInteger solves = new AtomicInteger();

  /**
   * Creates the pricer.
   *
   * @param cluster the cluster (its GPU prices kernels)
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param elementBytes bytes of the module's compute element type (sets the kernels' peak)
   * @param solver the ILP solver settings
   */
  public HloLayerPricer(ClusterSpec cluster, Function<LogicalMesh, CommModel> comm,
      int elementBytes, SolverOptions solver) {
    this(cluster, comm, elementBytes, 1, solver);
  }

  /**
   * Creates the pricer whose kernels run {@code computeScale} times faster than the kernel
   * model's defaults (a scale measured by {@code meshplan calibrate --train}).
   *
   * @param cluster the cluster (its GPU prices kernels)
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param elementBytes bytes of the module's compute element type (sets the kernels' peak)
   * @param computeScale divides every kernel time, > 0 (1 for the defaults)
   * @param solver the ILP solver settings
   */
  public HloLayerPricer(ClusterSpec cluster, Function<LogicalMesh, CommModel> comm,
      int elementBytes, double computeScale, SolverOptions solver) {
    Require.that(computeScale > 0 && Double.isFinite(computeScale),
        () -> "compute scale must be > 0, got " + computeScale);
    this.computeScale = computeScale;
    this.cluster = Require.nonNull(cluster, "cluster");
    this.comm = Require.nonNull(comm, "comm");
    Require.positive(elementBytes, "element bytes");
    this.elementBytes = elementBytes;
    this.solver = Require.nonNull(solver, "solver");
  }

  /**
   * The number of layer graphs solved so far.
   *
   * @return ILP solves
   */
  public int solves() {
    return solves.get();
  }

  /**
   * Prices every layer on every mesh ahead, on the pool's threads; each distinct layer and mesh is
   * solved once.
   *
   * @param layers the layers
   * @param meshes the logical meshes, {d, t} each
   * @param pool runs the solves
   * @param progress told the percentage done
   */
  public void prefetch(List<HloLayerGraph> layers, List<int[]> meshes, LocalExecutor pool,
      IntConsumer progress) {
    Map<String, HloLayerGraph> distinct = new LinkedHashMap<>();
    for (HloLayerGraph l : layers) {
      distinct.putIfAbsent(l.fingerprint(), l);
    }
    List<Callable<Boolean>> tasks = new ArrayList<>();
    AtomicInteger done = new AtomicInteger();
    int total = distinct.size() * meshes.size();
    for (HloLayerGraph l : distinct.values()) {
      for (int[] m : meshes) {
        tasks.add(() -> {
          cost(l, m[0], m[1]);
          progress.accept(done.incrementAndGet() * 100 / Math.max(1, total));
          return true;
        });
      }
    }
    pool.runAll(tasks, "meshplan-hlo-layer-solve");
  }

  /**
   * The cost of a layer on the logical mesh {@code d x t}.
   *
   * @param layer the layer
   * @param d data-parallel degree (mesh axis 0)
   * @param t tensor-parallel degree (mesh axis 1)
   * @return the cost, or null when the ILP finds no plan
   */
  public HloLayerCost cost(HloLayerGraph layer, int d, int t) {
    String key = d + "x" + t + "\n" + layer.fingerprint();
    FutureTask<Optional<HloLayerCost>> task = memo.get(key);
    if (task == null) {
      FutureTask<Optional<HloLayerCost>> mine = new FutureTask<>(() ->
          Optional.ofNullable(solve(layer, d, t)));
      task = memo.putIfAbsent(key, mine);
      if (task == null) {
        task = mine;
        task.run();
      }
    }
    return Futures.await(task, "pricing a layer").map(c -> c.renamed(layer)).orElse(null);
  }

  /**
   * The layout that values crossing layers keep: the leading dimension over the data-parallel
   * axis when {@code d} divides it, else replicated.
   *
   * @param shape the value's shape
   * @param d the data-parallel degree
   * @return the layout
   */
  static ShardingSpec chainLayout(TensorShape shape, int d) {
    if (d > 1 && shape.rank() > 0 && shape.dim(0) % d == 0) {
      return ShardingSpec.split(shape.rank(), 0, 0);
    }
    return ShardingSpec.replicated(shape.rank());
  }

  private HloLayerCost solve(HloLayerGraph layer, int d, int t) {
    Graph g = layer.graph();
    LogicalMesh mesh = LogicalMesh.of(d, t);
    MeshEnv env = MeshEnv.onCluster(cluster.gpu(), comm.apply(mesh), UNBOUNDED_MEMORY,
        KernelTimeModel.xlaPrecision(cluster.gpu(), elementBytes), computeScale);
    Map<Integer, ShardingSpec> fixed = new HashMap<>();
    for (Instruction ins : g.instructions()) {
      HloLayerGraph.Input in = layer.inputs()[ins.id()];
      if ((in == HloLayerGraph.Input.ACTIVATION || in == HloLayerGraph.Input.BATCH)
          && ins.shape() instanceof TensorShape s) {
        fixed.put(ins.id(), chainLayout(s, d));
      }
    }
    for (int o : layer.outgoing()) {
      Phase p = layer.phases()[o];
      if ((p == Phase.FORWARD || p == Phase.BACKWARD) && !layer.gradients()[o]
          && layer.inputs()[o] == HloLayerGraph.Input.NONE
          && g.get(o).shape() instanceof TensorShape s) {
        fixed.put(o, chainLayout(s, d));
      }
    }
    solves.incrementAndGet();
    IntraOpResult r = new AutoSharding(env, solver, true).solve(g, fixed);
    if (!(r instanceof IntraOpResult.Planned planned)) {
      return null;
    }
    return price(layer, planned.plan(), env, d);
  }

  /**
   * Prices a planned layer: times and bytes by phase, the state it holds, the values its
   * backward pass reads, its working memory and its largest weights.
   */
  private static HloLayerCost price(HloLayerGraph layer, ShardingPlan plan, MeshEnv env, int d) {
    LogicalMesh mesh = env.mesh();
    PhaseTotals p = PhaseAccountant.account(plan, rules(layer));
    State st = State.of(layer, plan, mesh);
    double temp = Math.max(0, plan.evaluation().peakMemoryBytes() - st.params()
        - p.savedInsideBytes() - st.gradients());
    Graph g = layer.graph();
    List<Integer> listed = new ArrayList<>(st.weightIds());
    listed.sort(Comparator.comparingDouble((Integer id) ->
        -g.get(id).tensorShape().elementCount()).thenComparing(id -> g.get(id).name()));
    List<TensorSharding> tensors = new ArrayList<>();
    List<Integer> ids = listed.subList(0, Math.min(LISTED_WEIGHTS, listed.size()));
    for (int id : ids) {
      Instruction w = g.get(id);
      String name = weightName(w);
      tensors.add(new TensorSharding(name, w.tensorShape().toHlo(), plan.hloSharding(id),
          words(plan.spec(id), w.tensorShape(), mesh, name)));
    }
    return new HloLayerCost(p.forwardSeconds(), p.backwardSeconds(), p.commSeconds(),
        p.gradientSyncSeconds(), p.updateSeconds(), st.weights(), st.gradients(), st.state(),
        p.savedBytes(), temp, p.modelFlops() / d, p.axis1Bytes(), p.axis0Bytes(),
        p.iterationBytes(), tensors, ids);
  }

  /**
   * How a layer's phases are counted: the optimizer phase once per iteration; the work that only
   * computes gradients for the update in the backward pass, its communication once per iteration;
   * the rest in the forward or backward pass of each microbatch. The backward pass keeps, of one
   * microbatch, the forward values computed in the layer but constants, the forward activations
   * of other layers, and the batch inputs; those computed in the layer are inside it.
   */
  private static PhaseAccountant.Rules rules(HloLayerGraph layer) {
    return new PhaseAccountant.Rules(id -> {
      Phase p = layer.phases()[id];
      if (p == Phase.OPTIMIZER) {
        return PhaseAccountant.Bucket.UPDATE;
      } else if (layer.gradientWork()[id]) {
        return PhaseAccountant.Bucket.GRADIENT;
      }
      return p == Phase.FORWARD ? PhaseAccountant.Bucket.FORWARD
          : PhaseAccountant.Bucket.BACKWARD;
    }, id -> layer.phases()[id] == Phase.BACKWARD, o -> {
      HloLayerGraph.Input in = layer.inputs()[o];
      boolean forward = layer.phases()[o] == Phase.FORWARD;
      return in == HloLayerGraph.Input.NONE && forward && !layer.constants()[o]
          || in == HloLayerGraph.Input.ACTIVATION && forward || in == HloLayerGraph.Input.BATCH;
    }, i -> layer.inputs()[i] == HloLayerGraph.Input.NONE);
  }

  /**
   * The trained state and gradients of a layer on one GPU, bytes.
   *
   * @param weights the weights
   * @param state other trained state
   * @param params every parameter of the layer graph but the batch and other layers' values
   * @param gradients the gradients the update reads
   * @param weightIds the weights' instructions, in id order
   */
  private record State(double weights, double state, double params, double gradients,
      List<Integer> weightIds) {
    static State of(HloLayerGraph layer, ShardingPlan plan, LogicalMesh mesh) {
      double weights = 0;
      double state = 0;
      double params = 0;
      double gradients = 0;
      List<Integer> listed = new ArrayList<>();
      for (Instruction ins : layer.graph().instructions()) {
        int id = ins.id();
        if (!(ins.shape() instanceof TensorShape shape)) {
          continue;
        }
        double local = plan.spec(id).localBytes(shape, mesh);
        switch (layer.inputs()[id]) {
          case WEIGHT -> {
            weights += local;
            listed.add(id);
          }
          case STATE -> state += local;
          case NONE -> {
            if (layer.gradients()[id]) {
              gradients += local;
            }
            continue;
          }
          default -> {
          }
        }
        params += local;
      }
      return new State(weights, state, params, gradients, List.copyOf(listed));
    }
  }

  /**
   * A weight's layout in words on a stage's {@code d x t} mesh: over the tensor-parallel axis
   * alone in Megatron-LM's terms (column-, row-parallel), over the data-parallel axis alone as
   * ZeRO-3 does (each replica holds a slice and gathers the rest), or over both.
   *
   * @param spec the layout
   * @param shape the weight's shape
   * @param mesh the stage's logical mesh
   * @param name the weight's name
   * @return e.g. {@code split dim 0 over the data-parallel axis (4 GPUs)}
   */
  static String words(ShardingSpec spec, TensorShape shape, LogicalMesh mesh, String name) {
    int used = spec.usedAxes();
    if (used == 0b01 && mesh.shape()[0] > 1) {
      return "split dim " + spec.dimOf(0) + " over the data-parallel axis (" + mesh.shape()[0]
          + " GPUs)";
    }
    String w = IlpLayerCostModel.words(spec, shape, mesh, name);
    return used == 0b11 ? w + ", both axes" : w;
  }

  /**
   * A weight's name for people: its scope (JAX names entry parameters by their path, such as
   * {@code params['layers_0']['kernel']}), or its instruction's name.
   *
   * @param w the weight's parameter
   * @return the name
   */
  static String weightName(Instruction w) {
    return w.opName().isEmpty() ? w.name() : w.opName();
  }
}
