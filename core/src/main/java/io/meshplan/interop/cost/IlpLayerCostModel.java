package io.meshplan.interop.cost;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.intraop.AutoSharding;
import io.meshplan.intraop.IntraOpResult;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.ParamRole;
import io.meshplan.model.Phase;
import io.meshplan.model.TrainingGraph;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.model.TrainingOptions;
import io.meshplan.model.WeightTensors;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sharding.ShardingSpec;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Prices layers by planning their training graphs with the intra-operator ILP (Alpa, OSDI'22,
 * section 4) on the logical mesh {@code 1 x t} of one data-parallel replica, in seconds: kernels by
 * the cluster's {@link io.meshplan.cluster.KernelTimeModel}, collectives by the communication
 * model placed on the cluster's devices. Each instruction's cost (its strategy's compute and
 * communication plus the resharding of its operands) is counted in its phase.
 *
 * <p>The layer's input activation and its output keep one layout so that identical blocks can be
 * chained: replicated over the tensor axis, or split along the sequence with sequence
 * parallelism (Korthikanti et al. MLSys'23), which the dots' reduce-scatter form runs as
 * Megatron-LM does (see {@link io.meshplan.intraop.StrategyGenerator}). Under {@link
 * LayerSetting#megatron()} the weights are fixed to Megatron-LM's layouts (Shoeybi et al. 2019):
 * the query/key/value and first MLP matrices split by columns, the attention output and second MLP
 * matrices by rows, embedding and LM head by vocabulary; otherwise the ILP chooses every layout.
 * The planner asks for both, so its space contains every Megatron-LM configuration.
 *
 * <p>Every distinct (layer kind, setting) is solved once and remembered: a model of any depth costs
 * three graph solves per setting, not one per layer.
 */
public final class IlpLayerCostModel implements LayerCostModel {
  /** A budget no layer reaches: the stage DP checks memory, not the layer solve. */
  private static final double UNBOUNDED_MEMORY = 1e18;

  private final ModelSpec model;
  private final ClusterSpec cluster;
  private final Function<LogicalMesh, CommModel> comm;
  private final DType computeType;
  private final SolverOptions solver;
  private final io.meshplan.exec.LocalExecutor pool;
  private final io.meshplan.model.Attention attention;
  private final boolean fusedLoss;
  private final double computeScale;
  private final java.util.Optional<io.meshplan.cluster.AttentionKernel> kernel;
  /** Each layer is solved once: a caller that finds a solve under way waits for its result. */
  private final Map<Key, java.util.concurrent.FutureTask<Optional<LayerCost>>> memo =
      new ConcurrentHashMap<>();
  private final AtomicInteger solves = new AtomicInteger();

  /**
   * Creates the model.
   *
   * @param model the model, with the sequence length trained
   * @param cluster the cluster (its GPU prices kernels)
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param computeType the compute precision (bf16, f16 or f32)
   * @param solver the ILP solver settings
   */
  public IlpLayerCostModel(ModelSpec model, ClusterSpec cluster,
      Function<LogicalMesh, CommModel> comm, DType computeType, SolverOptions solver) {
    this(model, cluster, comm, computeType, solver, io.meshplan.exec.LocalExecutor.perProcessor());
  }

  /**
   * Creates the model whose {@link #prefetch} solves on the given threads.
   *
   * @param model the model, with the sequence length trained
   * @param cluster the cluster (its GPU prices kernels)
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param computeType the compute precision (bf16, f16 or f32)
   * @param solver the ILP solver settings
   * @param pool runs the layer solves of a prefetch
   */
  public IlpLayerCostModel(ModelSpec model, ClusterSpec cluster,
      Function<LogicalMesh, CommModel> comm, DType computeType, SolverOptions solver,
      io.meshplan.exec.LocalExecutor pool) {
    this(model, cluster, comm, computeType, io.meshplan.model.Attention.UNFUSED, solver, pool);
  }

  /**
   * Creates the model with the attention core run as given.
   *
   * @param model the model, with the sequence length trained
   * @param cluster the cluster (its GPU prices kernels)
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param computeType the compute precision (bf16, f16 or f32)
   * @param attention fused (FlashAttention) or unfused
   * @param solver the ILP solver settings
   * @param pool runs the layer solves of a prefetch
   */
  public IlpLayerCostModel(ModelSpec model, ClusterSpec cluster,
      Function<LogicalMesh, CommModel> comm, DType computeType,
      io.meshplan.model.Attention attention, SolverOptions solver,
      io.meshplan.exec.LocalExecutor pool) {
    this(model, cluster, comm, computeType, attention, 1, solver, pool);
  }

  /**
   * Creates the model whose kernels run {@code computeScale} times faster than the kernel model's
   * defaults (a scale measured by {@code meshplan calibrate --train}).
   *
   * @param model the model, with the sequence length trained
   * @param cluster the cluster (its GPU prices kernels)
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param computeType the compute precision (bf16, f16 or f32)
   * @param attention fused (FlashAttention) or unfused
   * @param computeScale divides every kernel time, > 0 (1 for the defaults)
   * @param solver the ILP solver settings
   * @param pool runs the layer solves of a prefetch
   */
  public IlpLayerCostModel(ModelSpec model, ClusterSpec cluster,
      Function<LogicalMesh, CommModel> comm, DType computeType,
      io.meshplan.model.Attention attention, double computeScale, SolverOptions solver,
      io.meshplan.exec.LocalExecutor pool) {
    this(model, cluster, comm, computeType, attention, false, computeScale,
        java.util.Optional.empty(), solver, pool);
  }

  /**
   * Creates the model with the loss run fused or unfused ({@link
   * io.meshplan.model.TrainingOptions#fusedLoss}).
   *
   * @param model the model, with the sequence length trained
   * @param cluster the cluster (its GPU prices kernels)
   * @param comm collective prices on a logical mesh placed on the cluster, seconds
   * @param computeType the compute precision (bf16, f16 or f32)
   * @param attention fused (FlashAttention) or unfused
   * @param fusedLoss whether the cross-entropy loss is one fused kernel
   * @param computeScale divides every kernel time, > 0 (1 for the defaults)
   * @param kernel the fused attention kernel, or empty for the architecture's default
   * @param solver the ILP solver settings
   * @param pool runs the layer solves of a prefetch
   */
  public IlpLayerCostModel(ModelSpec model, ClusterSpec cluster,
      Function<LogicalMesh, CommModel> comm, DType computeType,
      io.meshplan.model.Attention attention, boolean fusedLoss, double computeScale,
      java.util.Optional<io.meshplan.cluster.AttentionKernel> kernel, SolverOptions solver,
      io.meshplan.exec.LocalExecutor pool) {
    this.fusedLoss = fusedLoss;
    this.kernel = Require.nonNull(kernel, "attention kernel");
    Require.that(computeScale > 0 && Double.isFinite(computeScale),
        () -> "compute scale must be > 0, got " + computeScale);
    this.computeScale = computeScale;
    this.attention = Require.nonNull(attention, "attention");
    this.pool = Require.nonNull(pool, "pool");
    this.model = Require.nonNull(model, "model");
    this.cluster = Require.nonNull(cluster, "cluster");
    this.comm = Require.nonNull(comm, "comm");
    this.computeType = Require.nonNull(computeType, "compute type");
    this.solver = Require.nonNull(solver, "solver");
  }

  /**
   * The ILP settings layers are solved with.
   *
   * @return the settings
   */
  public SolverOptions solver() {
    return solver;
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
   * Plans layers ahead on the pool's threads. Layers that no other caller has started are solved
   * here; those already under way (another point of a sweep sharing this model, say) are waited
   * for at the end, so concurrent callers split the solves between them. Each result is what
   * {@link #cost} would compute on its own, so the outcome does not depend on the threads.
   *
   * @param keys the layers
   */
  @Override
  public void prefetch(java.util.Collection<Key> keys) {
    List<java.util.concurrent.FutureTask<Optional<LayerCost>>> others = new ArrayList<>();
    // Full recomputation is derived from the plan without it, so those keys come second: each
    // graph is then solved exactly once, and the count is repeatable.
    for (boolean derived : new boolean[] {false, true}) {
      List<Callable<Optional<LayerCost>>> mine = new ArrayList<>();
      for (Key k : new java.util.LinkedHashSet<>(keys)) {
        if (derived != (k.kind().block()
            && k.setting().recompute() == io.meshplan.model.Recompute.FULL)) {
          continue;
        }
        java.util.concurrent.FutureTask<Optional<LayerCost>> task = newTask(k);
        java.util.concurrent.FutureTask<Optional<LayerCost>> known = memo.putIfAbsent(k, task);
        if (known == null) {
          mine.add(() -> {
            task.run();
            return io.meshplan.exec.Futures.await(task, "pricing a layer");
          });
        } else {
          others.add(known);
        }
      }
      pool.runAll(mine, "meshplan-layer-solve");
    }
    for (java.util.concurrent.FutureTask<Optional<LayerCost>> t : others) {
      io.meshplan.exec.Futures.await(t, "pricing a layer");
    }
  }

  @Override
  public LayerCost cost(Kind kind, LayerSetting setting) {
    Key key = new Key(kind, setting);
    java.util.concurrent.FutureTask<Optional<LayerCost>> task = memo.get(key);
    if (task == null) {
      java.util.concurrent.FutureTask<Optional<LayerCost>> mine = newTask(key);
      task = memo.putIfAbsent(key, mine);
      if (task == null) {
        task = mine;
        task.run();
      }
    }
    return io.meshplan.exec.Futures.await(task, "pricing a layer").orElse(null);
  }

  private java.util.concurrent.FutureTask<Optional<LayerCost>> newTask(Key key) {
    return new java.util.concurrent.FutureTask<>(() -> Optional.ofNullable(price(key)));
  }

  private LayerCost price(Key key) {
    LayerSetting s = key.setting();
    if (key.kind().block() && s.recompute() == io.meshplan.model.Recompute.FULL) {
      // Full recomputation re-runs the same sharded forward: derived from the plan without it.
      LayerCost none = cost(key.kind(), s.withRecompute(io.meshplan.model.Recompute.NONE));
      return none == null ? null : none.withFullRecompute();
    }
    return solve(key.kind(), s, s.megatron() && s.tensorParallel() > 1);
  }

  private LayerCost solve(Kind kind, LayerSetting s, boolean megatron) {
    int t = s.tensorParallel();
    boolean mixer = kind == Kind.MAMBA || kind == Kind.MAMBA1 || kind == Kind.GDN_LAYER;
    if (mixer && model.hybridLayoutProblem(t, s.contextParallel()).isPresent()) {
      return null; // Megatron-Core's splits of heads and groups over TP and CP
    }
    if (model.quantizedLayoutProblem(t).isPresent()) {
      return null; // QLoRA's 4-bit base runs data-parallel only
    }
    // A dense block of a mixture-of-experts model prices as a block of the dense model it is.
    ModelSpec m = kind == Kind.DENSE_BLOCK ? model.denseBlockModel() : model;
    TrainingOptions opt = TrainingOptions.of(m).withComputeDtype(computeType)
        .withRecompute(s.recompute()).withRecomputeModules(s.recomputeModules())
        .withOptimizer(false)
        .withWorkload(s.microBatch(), model.seq() / s.contextParallel()).withAttention(attention)
        .withFusedLoss(fusedLoss).withExperts(s.experts()).withContextParallel(s.contextParallel())
        .withKvReplicas(KvReplicas.of(m, t, megatron));
    opt = switch (kind) {
      case EMBEDDING -> opt.withBlocks(0, 0).withEmbedding(true).withHead(false);
      // An expert block is built at the first block that routes to experts; a hybrid's layer
      // of a kind at the first layer of its symbol.
      case BLOCK, MAMBA, MAMBA1, GDN_LAYER, ATTENTION_LAYER, MLP_LAYER -> opt.withBlocks(
          m.arch().hybrid().on() ? m.arch().hybrid().first(kind.symbol()) : firstRouted(m), 1)
          .withEmbedding(false).withHead(false);
      case DENSE_BLOCK -> opt.withBlocks(0, 1).withEmbedding(false).withHead(false);
      case HEAD, MTP, MTP_FIRST_STAGE, MTP_HEAD -> opt.withBlocks(0, 0).withEmbedding(false)
          .withHead(true);
    };
    TrainingGraph tg = kind == Kind.MTP || kind == Kind.MTP_FIRST_STAGE
        ? TrainingGraphBuilder.buildMtp(m, opt)
        : TrainingGraphBuilder.build(m, opt);
    Graph g = tg.graph();
    LogicalMesh mesh = LogicalMesh.of(1, t);
    MeshEnv env = MeshEnv.onCluster(cluster.gpu(), comm.apply(mesh), UNBOUNDED_MEMORY,
        io.meshplan.cluster.KernelTimeModel.trainingPrecision(cluster.gpu(),
            io.meshplan.model.Fp8Training.storage(computeType).bytes()), computeScale, kernel,
        fp8Quantization(m.fp8Scaling()));
    if (ulysses(s) && kind.block()) {
      env = new MeshEnv(env.comm(), env.memoryPerDevice(),
          env.compute().map(c -> new WholeSequenceAttention(c, s.contextParallel())));
    }
    Map<Integer, ShardingSpec> fixed = new HashMap<>();
    fixBoundary(tg, s, fixed);
    java.util.BitSet local = tg.deviceLocal();
    java.util.BitSet pinned = new java.util.BitSet();
    if (megatron && t > 1 && !fixMegatron(tg, t, fixed, local, pinned)) {
      return null;
    }
    KvReplicas.fix(tg, fixed);
    solves.incrementAndGet();
    IntraOpResult r = new AutoSharding(env, solver, true).solve(g, fixed, local, pinned,
        weightGradientProducts(tg, pinned));
    if (!(r instanceof IntraOpResult.Planned planned) || !planned.plan().notKept().isEmpty()) {
      return null;
    }
    LayerCost priced = price(tg, planned.plan(), env, t, local,
        s.recompute() != io.meshplan.model.Recompute.NONE, s.sequenceParallel() && t > 1,
        fusedGemms(tg, pinned), !pinned.isEmpty(),
        kind == Kind.MTP_HEAD ? TrainingGraphBuilder.lmHeadWeights()
            : kind == Kind.MTP_FIRST_STAGE ? TrainingGraphBuilder.mtpTableWeights(m) : null);
    LayerCost.Builder out = priced.toBuilder();
    if (kind.routed() && model.arch().moe().routed()) {
      // Recomputing the whole mixture-of-experts layer dispatches and combines again.
      ExpertExchange x = exchange(tg, planned.plan(), env, s, local);
      out.experts(s.recomputes(io.meshplan.model.RecomputeModule.MOE) ? x.withFullRecompute() : x);
    }
    if (kind == Kind.MAMBA || kind == Kind.GDN_LAYER) {
      if (s.contextParallel() > 1) {
        out.ring(headSwap(kind, m, s, tg.options().storageDtype().bytes()));
      }
    } else if (kind.block() && s.contextParallel() > 1) {
      out.ring(ring(tg, planned.plan(), env, s));
    }
    return out.build();
  }

  /**
   * The head-parallel all-to-alls of a Mamba-2 or Gated DeltaNet layer under context
   * parallelism ({@link RingExchange#headSwap}): one GPU's share of the mixer's tensors, for its
   * microbatch's share of the sequence.
   */
  private static RingExchange headSwap(Kind kind, ModelSpec m, LayerSetting s, int bytes) {
    int t = s.tensorParallel();
    int cp = s.contextParallel();
    double perToken = kind == Kind.MAMBA ? m.arch().hybrid().mamba().swapElementsPerToken(t, cp)
        : m.arch().hybrid().gdn().swapElementsPerToken(t);
    double tokens = (double) s.microBatch() * m.seq() / cp;
    return new RingExchange(cp, false, tokens * perToken * bytes, 0, 0, 1, true);
  }

  /** The first block of a model that is not a listed dense block. */
  private static int firstRouted(ModelSpec m) {
    int i = 0;
    while (m.arch().moe().denseLayer(i)) {
      i++;
    }
    return i;
  }

  /**
   * The context-parallel exchange of a block ({@link RingExchange}): the keys and values of one
   * GPU's share of the sequence (the operands 1 and 2 of its attention core before the ring
   * widens them, under their layouts), and the attention kernels' seconds by pass; under Ulysses'
   * all-to-alls, a head swap of those and the share's queries and output.
   */
  private static RingExchange ring(TrainingGraph tg, ShardingPlan plan, MeshEnv env,
      LayerSetting s) {
    Graph g = tg.graph();
    boolean ulysses = ulysses(s);
    double kv = 0;
    double fwd = 0;
    double bwd = 0;
    for (Instruction ins : g.instructions()) {
      if (ins.opcode() == Opcode.FUSED_ATTENTION) {
        fwd += plan.strategy(ins.id()).computeCost();
        if (ulysses) {
          // The all-to-alls move one GPU's share of Q, K and V in and of the output back.
          kv += plan.spec(ins.operand(0)).localBytes(g.get(ins.operand(0)).tensorShape(),
              env.mesh()) + plan.spec(ins.id()).localBytes(ins.tensorShape(), env.mesh());
        }
        for (int k = 1; k <= 2; k++) {
          int whole = ins.operand(k);
          int local = g.get(whole).opcode() == Opcode.CONCATENATE ? g.get(whole).operand(0)
              : whole;
          kv += plan.spec(local).localBytes(g.get(local).tensorShape(), env.mesh());
        }
      } else if (ins.opcode() == Opcode.FUSED_ATTENTION_GRAD) {
        bwd += plan.strategy(ins.id()).computeCost();
      }
    }
    return ulysses ? new RingExchange(s.contextParallel(), false, kv, 0, 0, 1, true)
        : new RingExchange(s.contextParallel(), s.cpAllGather(), kv, fwd, bwd, 1);
  }

  /** Whether a setting splits each sequence by head-parallel (Ulysses) all-to-alls. */
  private static boolean ulysses(LayerSetting s) {
    return s.contextParallel() > 1
        && s.cpExchange() == io.meshplan.plan.ContextExchange.ALL_TO_ALL;
  }

  /**
   * The expert-parallel exchange of a mixture-of-experts block ({@link ExpertExchange}): the
   * routed experts' weights one GPU holds, and the all-to-all buffer of the busiest GPU, {@code
   * load x T k / t} rows of {@code h} elements (LatentMoE's latent width) in the activations'
   * type.
   */
  private ExpertExchange exchange(TrainingGraph tg, ShardingPlan plan, MeshEnv env,
      LayerSetting s, java.util.BitSet expertOps) {
    double expertParams = 0;
    java.util.BitSet local = plan.local();
    for (WeightTensors w : tg.weights()) {
      if (local.get(w.weight())) {
        TensorShape shape = tg.graph().get(w.weight()).tensorShape();
        expertParams += shape.elementCount()
            / (double) plan.spec(w.weight()).totalTiles(env.mesh());
      }
    }
    io.meshplan.model.MoeShape moe = model.arch().moe();
    // Under context parallelism a GPU's replica holds s / CP tokens of each sequence, as the
    // graph's dispatch does (MoeForward).
    double rows = s.experts().rowsSent(moe,
        (long) s.microBatch() * (model.seq() / s.contextParallel())) * s.experts().load(moe);
    // Rows of the experts' width: the hidden size, or LatentMoE's latent width (MoeShape#latent).
    double bytes = rows * moe.expertWidth(model.hidden())
        * io.meshplan.model.Fp8Training.storage(computeType).bytes();
    double[] compute = expertCompute(tg, plan, expertOps);
    return new ExpertExchange(s.expertParallel(), s.expertTensorParallel(), expertParams, bytes,
        2, 2, compute[0], compute[1], moe);
  }

  /**
   * The compute of the block's local experts ({@link TrainingGraph#deviceLocal}: between the
   * dispatch and the combine), forward and backward (recomputation included), seconds.
   */
  private static double[] expertCompute(TrainingGraph tg, ShardingPlan plan,
      java.util.BitSet expertOps) {
    double[] out = new double[2];
    for (int id = expertOps.nextSetBit(0); id >= 0; id = expertOps.nextSetBit(id + 1)) {
      io.meshplan.model.Phase p = tg.phase(id);
      if (p == io.meshplan.model.Phase.FORWARD) {
        out[0] += plan.strategy(id).computeCost();
      } else if (p == io.meshplan.model.Phase.BACKWARD
          || p == io.meshplan.model.Phase.RECOMPUTE) {
        out[1] += plan.strategy(id).computeCost();
      }
    }
    return out;
  }

  /** Input and output activations (and their gradients) take the chaining layout. */
  private static void fixBoundary(TrainingGraph tg, LayerSetting s, Map<Integer,
      ShardingSpec> fixed) {
    int[] ids = {tg.input(), tg.output(), tg.outputGradient(), tg.inputGradient()};
    for (int id : ids) {
      if (id < 0 || !(tg.graph().get(id).shape() instanceof TensorShape shape)) {
        continue;
      }
      if (shape.rank() != 3 || tg.role(id).orElse(null) == ParamRole.TOKENS) {
        continue;
      }
      // [batch, seq, hidden]: sequence-split over the tensor axis with sequence parallelism.
      fixed.put(id, s.sequenceParallel() ? ShardingSpec.split(3, 1, 1)
          : ShardingSpec.replicated(3));
    }
  }

  /**
   * The residual stream of a layer under sequence parallelism (Korthikanti et al., MLSys'23,
   * section 4.2.2): the layer input, what LayerNorm, dropout and the residual additions compute
   * from it, and the outputs of the row-parallel matrix multiplications with all that follows them
   * up to the next matrix multiplication: the forward values with the input's elements (in its
   * shape or flattened for a matrix product) reached from the input or from a row-parallel output
   * without crossing a matrix multiplication, and the values of that size they are combined with
   * elementwise (dropout masks). Megatron-LM
   * keeps these split by sequence for the backward pass, and gathers a column-parallel layer's
   * input again in the backward pass for its weight gradient, overlapped with the input-gradient
   * GEMM; the layer ILP prices time only and may keep such a value whole, so the saved-activation
   * count takes a tensor-parallel shard of each (see {@link PhaseAccountant.Rules#sequenceShard}).
   *
   * @return by id, whether a value is in the residual stream
   */
  static boolean[] residualStream(TrainingGraph tg) {
    Graph g = tg.graph();
    boolean[] residual = new boolean[g.size()];
    int in = tg.input();
    if (in < 0 || !(g.get(in).shape() instanceof TensorShape x) || x.rank() != 3
        || tg.role(in).orElse(null) == ParamRole.TOKENS) {
      return residual;
    }
    java.util.Set<Integer> rowWeights = new java.util.HashSet<>();
    for (WeightTensors w : tg.weights()) {
      int rank = g.get(w.weight()).tensorShape().rank();
      if (rank == 2 && megatronDim(w.name(), rank) == 0) {
        rowWeights.add(w.weight());
      }
    }
    boolean[] reached = new boolean[g.size()];
    reached[in] = true;
    for (Instruction ins : g.instructions()) {
      int id = ins.id();
      if (id == in || tg.phase(id) != Phase.FORWARD) {
        continue;
      }
      for (int o : ins.operands()) {
        reached[id] |= ins.opcode() == Opcode.DOT ? rowWeights.contains(o) : reached[o];
      }
    }
    for (Instruction ins : g.instructions()) {
      int id = ins.id();
      if (!reached[id] || !inputSized(g, id, x)) {
        continue;
      }
      residual[id] = true;
      // What the stream is combined with elementwise, such as a dropout mask, is split alike.
      for (int o : ins.operands()) {
        residual[o] |= tg.phase(o) == Phase.FORWARD && inputSized(g, o, x);
      }
    }
    return residual;
  }

  /** Whether a value holds the input's elements, in its shape or flattened to [b * s, h]. */
  private static boolean inputSized(Graph g, int id, TensorShape x) {
    return g.get(id).shape() instanceof TensorShape y && y.elementCount() == x.elementCount()
        && y.rank() >= 2 && y.dim(y.rank() - 1) == x.dim(2);
  }

  /**
   * Megatron-LM's layouts by weight name; false when a weight cannot be split evenly. A split
   * weight is also pinned: its readers take it as split, because Megatron-LM's tensor parallelism
   * (and torchtitan's, which follows its plan) never gathers a tensor-parallel weight. Left free,
   * the layer ILP gathers the weights instead of the activations wherever the microbatch's
   * activations outweigh them (Llama 3.1 70B at TP 8 from about 65,536 tokens a microbatch), and
   * prices a layer that no such framework runs.
   */
  private static boolean fixMegatron(TrainingGraph tg, int t, Map<Integer, ShardingSpec> fixed,
      java.util.BitSet local, java.util.BitSet pinned) {
    for (WeightTensors w : tg.weights()) {
      if (local.get(w.weight())) {
        continue; // a GPU's own experts, whole on it
      }
      TensorShape shape = tg.graph().get(w.weight()).tensorShape();
      int dim = megatronDim(w.name(), shape.rank());
      if (dim < 0) {
        fixed.put(w.weight(), ShardingSpec.replicated(shape.rank()));
        continue;
      }
      if (shape.dim(dim) % t != 0) {
        return false;
      }
      fixed.put(w.weight(), ShardingSpec.split(shape.rank(), dim, 1));
      pinned.set(w.weight());
    }
    return true;
  }

  /**
   * The dimension Megatron-LM splits a weight on, from its name's last path element: columns
   * (the output dimension, last) of the query, key, value, gate, up and first MLP matrices and
   * their biases; rows (dimension 0) of the attention output and second MLP matrices; rows of the
   * embedding table (vocabulary-parallel) and columns of the LM head; -1 (replicated) for norms
   * and the other biases.
   */
  static int megatronDim(String name, int rank) {
    String leaf = name.substring(name.lastIndexOf('/') + 1).toLowerCase(java.util.Locale.ROOT);
    boolean bias = rank == 1;
    if (leaf.endsWith(LORA_A) || leaf.endsWith(LORA_B)) {
      // A LoRA adapter beside a column-parallel projection keeps A whole and splits B's output
      // columns as the projection's; beside a row-parallel one it splits A's input rows and keeps
      // B whole, so the adapter's output is partial like the projection's (torchtitan
      // components/lora.py at b5bcd76, _lora_adapter_sharding).
      boolean down = leaf.endsWith(LORA_A);
      String adapted = leaf.substring(0, leaf.length() - LORA_A.length());
      boolean column = COLUMN.contains(adapted) || LORA_COLUMN.contains(adapted);
      return column ? (down ? -1 : rank - 1) : (down ? 0 : -1);
    }
    if (CHANNELS.contains(leaf.replaceFirst("_bias$", ""))) {
      return 0;
    }
    String base = leaf.replaceFirst("[._]?bias$", "");
    if (COLUMN.contains(base)) {
      return bias ? 0 : rank - 1;
    }
    if (ROW.contains(base)) {
      return bias ? -1 : 0;
    }
    if (VOCAB_ROWS.contains(base)) {
      return bias ? -1 : 0;
    }
    return -1;
  }

  /** Latent attention's up-projections split by columns too; its down-projections are whole. */
  private static final java.util.Set<String> COLUMN = java.util.Set.of("wq", "wk", "wv", "wqkv",
      "qkv", "w1", "w3", "fc1", "gate", "up", "lm_head", "head", "output", "wq_b", "wkv_b",
      "in_z", "in_x", "in_b", "in_c", "in_dt", "in_q", "in_k", "in_v", "in_a", "wq_gate",
      "dt_proj");
  /**
   * The Mamba-2 and Gated DeltaNet mixers' per-channel and per-head weights ({@link
   * io.meshplan.model.MambaShape}, {@link io.meshplan.model.GdnShape}),
   * split on their first dimension with the heads and groups: Megatron-Core's {@code
   * mamba_mixer.py} shards {@code conv1d}, {@code dt_bias}, {@code A_log}, {@code D} and the
   * gated norm's weight on dimension 0, and its {@code in_proj} (here {@code in_z} ... {@code
   * in_dt}) by columns and {@code out_proj} by rows.
   */
  private static final java.util.Set<String> CHANNELS = java.util.Set.of("conv_x", "conv_b",
      "conv_c", "dt", "a_log", "d", "norm", "conv_q", "conv_k", "conv_v");
  private static final String LORA_A = "_lora_a";
  private static final String LORA_B = "_lora_b";
  /** The LoRA adapters' names ({@link io.meshplan.model.Lora}) beside column-parallel layers. */
  private static final java.util.Set<String> LORA_COLUMN = java.util.Set.of("q_proj", "k_proj",
      "v_proj", "gate_proj", "up_proj", "linear_qkv", "linear_fc1");
  private static final java.util.Set<String> ROW = java.util.Set.of("wo", "w2", "fc2", "proj",
      "down", "dense", "out_proj", "x_proj");
  private static final java.util.Set<String> VOCAB_ROWS = java.util.Set.of("embedding",
      "tok_embeddings", "wte", "word_embeddings");

  /**
   * Prices a planned layer: its traffic and times by phase, its weights and their layouts, its
   * activations and working memory. The graph's device-local instructions ({@code local}: a
   * mixture-of-experts block's own experts, {@link TrainingGraph#deviceLocal}) are one GPU's;
   * the replica's t GPUs each run their own, so its FLOPs count them t times.
   */
  private LayerCost price(TrainingGraph tg, ShardingPlan plan, MeshEnv env, int t,
      java.util.BitSet local, boolean recompute, boolean sequenceParallel, int[] fused,
      boolean megatronLayouts, String shared) {
    PhaseTotals p = PhaseAccountant.account(plan, rules(tg, recompute, sequenceParallel, fused,
        megatronLayouts),
        id -> local.get(id) ? t : 1);
    // The replica's mesh is 1 x t: every byte it sends is on the tensor axis (axis 1).
    LayerCost.Builder cost = LayerCost.builder().tensorCommBytes(p.axis1Bytes())
        .forwardCommBytes(p.forwardAxis1Bytes()).forwardSeconds(p.forwardSeconds())
        .backwardSeconds(p.backwardSeconds()).recomputeSeconds(p.recomputeSeconds())
        .tensorCommSeconds(p.commSeconds()).forwardCommSeconds(p.forwardCommSeconds())
        .modelFlops(p.modelFlops()).hardwareFlops(p.hardwareFlops())
        .accumulateSeconds(p.accumulateSeconds());
    double params = addWeights(tg, plan, env, t, cost, shared);
    addMemory(tg, plan, env, t, params, p.savedBytes(), cost);
    return cost.build();
  }

  /**
   * How a training graph's phases are counted. Without the optimizer in the graph, its optimizer
   * phase is the fp32 gradient accumulation, which runs every microbatch (the update itself is
   * priced per iteration by the stage builder). Without recomputation the backward rules still
   * re-derive a few cheap elementwise values; that is backward work, not recomputation. The
   * backward pass (recomputation included) keeps the forward values that are neither weights nor
   * constants. Under Megatron-LM's layouts the fused projections' collectives count once ({@link
   * #fusedGemms}) and a value gathered for several readers of one phase is gathered once.
   */
  private static PhaseAccountant.Rules rules(TrainingGraph tg, boolean recompute,
      boolean sequenceParallel, int[] fused, boolean megatronLayouts) {
    Graph g = tg.graph();
    boolean[] residual = sequenceParallel ? residualStream(tg) : new boolean[g.size()];
    return new PhaseAccountant.Rules(id -> switch (tg.phase(id)) {
      case FORWARD -> PhaseAccountant.Bucket.FORWARD;
      case BACKWARD -> PhaseAccountant.Bucket.BACKWARD;
      case RECOMPUTE -> recompute ? PhaseAccountant.Bucket.RECOMPUTE
          : PhaseAccountant.Bucket.BACKWARD;
      case OPTIMIZER -> PhaseAccountant.Bucket.ACCUMULATE;
    }, id -> tg.phase(id) == Phase.BACKWARD || tg.phase(id) == Phase.RECOMPUTE,
        op -> tg.phase(op) == Phase.FORWARD && !weight(tg, op)
            && g.get(op).opcode() != Opcode.CONSTANT,
        op -> true, id -> residual[id], tg::keptInFp8, id -> fused[id], megatronLayouts);
  }

  /**
   * The products that compute the gradients of the split weights: each weight's gradient traced
   * back through casts, transposes, reshapes, copies and sums of its size to the dots that make
   * it. Megatron-LM computes a tensor-parallel weight shard's gradient whole on its GPU, from the
   * gathered output gradient of a row-parallel layer or the gathered input of a column-parallel
   * one; it never reduces a partial weight gradient over the tensor-parallel group.
   *
   * @param tg the layer's training graph
   * @param pinned the split weights
   * @return the ids of those products
   */
  static java.util.BitSet weightGradientProducts(TrainingGraph tg, java.util.BitSet pinned) {
    Graph g = tg.graph();
    java.util.BitSet out = new java.util.BitSet();
    for (WeightTensors w : tg.weights()) {
      if (!pinned.get(w.weight()) || w.gradient() < 0) {
        continue;
      }
      long size = g.get(w.weight()).tensorShape().elementCount();
      java.util.ArrayDeque<Integer> todo = new java.util.ArrayDeque<>(List.of(w.gradient()));
      java.util.BitSet seen = new java.util.BitSet();
      while (!todo.isEmpty()) {
        int id = todo.pop();
        if (seen.get(id) || !(g.get(id).shape() instanceof TensorShape t)
            || t.elementCount() != size) {
          continue;
        }
        seen.set(id);
        Instruction ins = g.get(id);
        switch (ins.opcode()) {
          case DOT -> out.set(id);
          case CONVERT, TRANSPOSE, RESHAPE, COPY, ADD -> ins.operands().forEach(todo::push);
          default -> { }
        }
      }
    }
    return out;
  }

  /**
   * The fused GEMMs of a layer in Megatron-LM's layouts, by instruction id (-1 for none): the
   * backward input-gradient products of the split weights that read one forward input, keyed by
   * that input's id. Megatron-LM runs such projections as one GEMM (the query, key and value
   * projections as {@code linear_qkv}, gate and up as {@code linear_fc1}, a Mamba mixer's input
   * projections as its {@code in_proj}), whose backward reduce-scatters the input gradient once
   * (tensor_parallel/layers.py, {@code LinearWithGradAccumulationAndAsyncCommunication}); and
   * torchtitan, which keeps them apart, sums their partial input gradients before the one
   * redistribution of its module input. The graph has a product per projection, each reducing its
   * own part, so the parts' collectives count once ({@link PhaseAccountant.Rules#fused}).
   *
   * @param tg the layer's training graph
   * @param pinned the split weights
   * @return the fused GEMM of each instruction id, or -1
   */
  static int[] fusedGemms(TrainingGraph tg, java.util.BitSet pinned) {
    Graph g = tg.graph();
    int[] fused = new int[g.size()];
    java.util.Arrays.fill(fused, -1);
    if (pinned.isEmpty()) {
      return fused;
    }
    // The weight each value is computed from alone (a cast, transpose or scale of it), or -1.
    int[] root = AutoSharding.derivedRoots(g, pinned);
    // The forward input each split weight multiplies.
    Map<Integer, Integer> input = new HashMap<>();
    for (Instruction ins : g.instructions()) {
      if (ins.opcode() == Opcode.DOT && tg.phase(ins.id()) == Phase.FORWARD
          && ins.operands().size() == 2) {
        int a = ins.operand(0);
        int b = ins.operand(1);
        if (root[b] >= 0 && root[a] < 0) {
          input.putIfAbsent(root[b], a);
        } else if (root[a] >= 0 && root[b] < 0) {
          input.putIfAbsent(root[a], b);
        }
      }
    }
    Map<Integer, List<Integer>> groups = new java.util.TreeMap<>();
    for (Instruction ins : g.instructions()) {
      if (ins.opcode() != Opcode.DOT || tg.phase(ins.id()) != Phase.BACKWARD) {
        continue;
      }
      for (int o : ins.operands()) {
        Integer x = root[o] >= 0 ? input.get(root[o]) : null;
        if (x != null) {
          groups.computeIfAbsent(x, k -> new ArrayList<>()).add(ins.id());
          break;
        }
      }
    }
    for (Map.Entry<Integer, List<Integer>> e : groups.entrySet()) {
      if (e.getValue().size() > 1) {
        for (int id : e.getValue()) {
          fused[id] = e.getKey();
        }
      }
    }
    return fused;
  }

  /** Whether a value is a weight: a graph parameter other than the activation and batch inputs. */
  private static boolean weight(TrainingGraph tg, int op) {
    return tg.role(op).map(r -> r != ParamRole.INPUT_ACTIVATION
        && r != ParamRole.TOKENS && r != ParamRole.LABELS).orElse(false);
  }

  /**
   * The weights and gradient accumulators one GPU holds, the all-gather of weights whose
   * gradients are split more finely, and the weights' layouts, largest first. A multi-token
   * prediction module's LM head is the head layer's, held and updated there: its weights are
   * left out, as is a prediction module's token table on a stage that holds the embedding's: the
   * weights whose names start with {@code shared}, if not null. Their gradient's accumulation and
   * the kernels stay.
   *
   * @return the weights one GPU holds, elements of the storage type (a QLoRA base's 4-bit
   *     weights by their bytes, {@link #storageElements})
   */
  private double addWeights(TrainingGraph tg, ShardingPlan plan, MeshEnv env, int t,
      LayerCost.Builder cost, String shared) {
    Graph g = tg.graph();
    double params = 0;
    double gradParams = 0;
    double gather = 0;
    double gatherBytes = 0;
    double frozen = 0;
    List<TensorSharding> tensors = new ArrayList<>();
    java.util.BitSet local = plan.local();
    List<WeightTensors> ws = new ArrayList<>(tg.weights());
    ws.sort(Comparator.comparingDouble((WeightTensors w) ->
        -g.get(w.weight()).tensorShape().elementCount()).thenComparing(WeightTensors::name));
    for (WeightTensors w : ws) {
      if (shared != null && w.name().startsWith(shared)) {
        continue;
      }
      TensorShape shape = g.get(w.weight()).tensorShape();
      ShardingSpec spec = plan.spec(w.weight());
      int wTiles = spec.totalTiles(env.mesh());
      // The GPU's share of the weight, in elements of the storage type (its true bytes).
      double held = storageElements(shape) / wTiles;
      params += held;
      if (!w.trained()) {
        frozen += held;
      }
      int gTiles = w.accumulator() >= 0 ? plan.spec(w.accumulator()).totalTiles(env.mesh())
          : wTiles;
      if (w.trained()) {
        gradParams += shape.elementCount() / (double) gTiles;
      }
      if (w.trained() && gTiles > wTiles) {
        // The weight's own bytes: two a weight in the storage type, one for a weight kept in FP8
        // (Lora#fp8Weights), which Megatron-FSDP gathers so under --fp8-param-gather.
        double gathered = held * io.meshplan.model.Fp8Training.storage(computeType).bytes();
        gather += env.comm().allGather(gathered, 1);
        gatherBytes += io.meshplan.cluster.BusBytesCommModel.bytesSent(
            io.meshplan.cluster.Collective.ALL_GATHER, gathered, t);
      }
      tensors.add(new TensorSharding(w.name(), shape.toHlo(), plan.hloSharding(w.weight()),
          local.get(w.weight()) ? "each GPU's own " + shape.dim(0) + " of the experts"
          : words(spec, shape, env.mesh(), w.name())));
    }
    cost.parameters(params).gradientParameters(gradParams).frozenParameters(frozen)
        .updateGatherSeconds(gather)
        .updateGatherBytes(gatherBytes).tensors(tensors);
    return params;
  }

  /**
   * A weight's size in elements of the storage type: its elements, or for a weight held in
   * another type (the packed codes and constants of a QLoRA base, {@link
   * io.meshplan.model.Nf4}) its bytes over the storage type's, so that memory and the
   * all-gathers of sharded weights move its true bytes.
   */
  private double storageElements(TensorShape shape) {
    io.meshplan.graph.DType storage = io.meshplan.model.Fp8Training.storage(computeType);
    return shape.dtype() == storage ? shape.elementCount()
        : shape.byteSize() / (double) storage.bytes();
  }

  /**
   * Saved activations, the working memory beyond weights, saved values and parameters, the
   * activation sent to the next stage and the input kept under full recomputation.
   *
   * @param params the weights one GPU holds, elements
   * @param saved the values kept for the backward pass, bytes per GPU
   */
  private void addMemory(TrainingGraph tg, ShardingPlan plan, MeshEnv env, int t, double params,
      double saved, LayerCost.Builder cost) {
    Graph g = tg.graph();
    double weightBytes = params * io.meshplan.model.Fp8Training.storage(computeType).bytes();
    double temp = Math.max(0, plan.evaluation().peakMemoryBytes() - weightBytes - saved
        - parameterBytes(tg, plan));
    double boundary = 0;
    if (tg.output() >= 0 && g.get(tg.output()).shape() instanceof TensorShape out
        && out.rank() == 3) {
      // Megatron-LM's scatter/gather optimization (Narayanan et al. SC'21, section 4.1): a
      // replicated boundary activation is sent in t slices and gathered again over NVLink.
      boundary = plan.spec(tg.output()).localBytes(out, env.mesh())
          / (plan.spec(tg.output()).isReplicated() ? t : 1);
    }
    double input = 0;
    if (tg.input() >= 0 && g.get(tg.input()).shape() instanceof TensorShape in) {
      input = plan.spec(tg.input()).localBytes(in, env.mesh());
    }
    cost.savedActivationBytes(saved).temporaryBytes(temp).boundaryBytes(boundary)
        .inputBytes(input);
  }

  /** Bytes of every non-activation parameter (weights, incoming gradients) under its layout. */
  private static double parameterBytes(TrainingGraph tg, ShardingPlan plan) {
    double bytes = 0;
    for (Map.Entry<Integer, ParamRole> e : tg.roles().entrySet()) {
      if (tg.graph().get(e.getKey()).shape() instanceof TensorShape shape
          && e.getValue() != ParamRole.INPUT_ACTIVATION) {
        bytes += plan.spec(e.getKey()).localBytes(shape, plan.env().mesh());
      }
    }
    return bytes;
  }

  /**
   * A layout in words, e.g. "column-parallel over 4 GPUs".
   *
   * @param spec the layout
   * @param shape the tensor's shape
   * @param mesh the logical mesh
   * @param name the tensor's name (an embedding's rows are its vocabulary)
   * @return the words
   */
  public static String words(ShardingSpec spec, TensorShape shape, LogicalMesh mesh, String name) {
    if (spec.isReplicated()) {
      return "replicated";
    }
    int tiles = spec.totalTiles(mesh);
    if (shape.rank() == 2 && spec.axes(1) != 0 && spec.axes(0) == 0) {
      return "column-parallel over " + tiles + " GPUs";
    }
    if (shape.rank() == 2 && spec.axes(0) != 0 && spec.axes(1) == 0) {
      return (name.endsWith("embedding") ? "vocabulary-parallel" : "row-parallel") + " over "
          + tiles + " GPUs";
    }
    StringBuilder sb = new StringBuilder("split");
    for (int d = 0; d < shape.rank(); d++) {
      if (spec.axes(d) != 0) {
        sb.append(" dim ").append(d);
      }
    }
    return sb.append(" over ").append(tiles).append(" GPUs").toString();
  }

  /**
   * How the cost model casts FP8 GEMM operands under a model's FP8 recipe.
   *
   * @param s the recipe
   * @return its quantization
   */
  static io.meshplan.cluster.Fp8Quantization fp8Quantization(io.meshplan.model.Fp8Scaling s) {
    return switch (s) {
      case DELAYED -> io.meshplan.cluster.Fp8Quantization.DELAYED;
      case TENSORWISE -> io.meshplan.cluster.Fp8Quantization.CURRENT;
      case MXFP8 -> io.meshplan.cluster.Fp8Quantization.MX_BLOCK;
      case NVFP4 -> io.meshplan.cluster.Fp8Quantization.NVFP4;
    };
  }
}
