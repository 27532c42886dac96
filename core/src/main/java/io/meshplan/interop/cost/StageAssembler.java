package io.meshplan.interop.cost;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.KernelTimeModel;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.plan.AxisBytes;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.sim.CommVolume;
import io.meshplan.sim.P2pCost;
import io.meshplan.sim.PipelineSimulator;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationInput;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Puts planned layers together into stages and stages into a simulated pipeline; shared by the
 * planner and the simulation of fixed configurations so that both price alike.
 */
public final class StageAssembler {
  private final PlanRequest req;
  private final LayerCostModel layers;
  /** The request's send/recv prices, built once: a search simulates thousands of pipelines. */
  private final io.meshplan.cluster.SendRecvModel sendRecv;
  /** The layers of one multi-token prediction module's block ({@link #mtpBlock}), found once. */
  private final List<LayerCostModel.Kind> mtpBlock;
  /**
   * Spans by flags and first block, then by block count, each built once: the stage search asks
   * for the span of every block range on every submesh. A row is made when first asked for; an
   * assembler serves one search task, on one thread.
   */
  private final Span[][] spans;
  /**
   * One span per distinct value, which every stage alike in it gets ({@link #span}), so that the
   * searches' memos key their entries by reference.
   */
  private final java.util.Map<Span, Span> alike = new java.util.HashMap<>();
  /**
   * Layer prices by setting, the same object, and kind ({@link #cost}): a search asks for the
   * layers of every block range under each of its settings, which it builds once per mesh, and
   * comparing settings by reference keeps this cheaper than the model's own lookup by value.
   */
  private final java.util.Map<LayerSetting, Object[]> priced = new java.util.IdentityHashMap<>();
  /**
   * Each full-recomputation setting's twin keeping every activation, made once per setting (by
   * reference): partial recomputation asks for it at every count of recomputed blocks, and one
   * object per twin keeps {@link #priced} small.
   */
  private final java.util.Map<LayerSetting, LayerSetting> keeping =
      new java.util.IdentityHashMap<>();
  /** What {@link #priced} holds for a kind that cannot take a setting. */
  private static final Object UNPRICED = new Object();

  /**
   * Creates the assembler.
   *
   * @param req the model, cluster and prices
   * @param layers prices layers
   */
  public StageAssembler(PlanRequest req, LayerCostModel layers) {
    this.req = Require.nonNull(req, "request");
    this.layers = Require.nonNull(layers, "layers");
    this.sendRecv = req.p2p();
    this.mtpBlock = mtpBlock(req.model());
    this.spans = new Span[Math.multiplyExact(4, req.model().layers() + 1)][];
  }

  /**
   * The layers of the stage of blocks {@code first..last}: the embedding when it starts the
   * model; its blocks, the dense ones of a mixture-of-experts model first ({@link
   * LayerCostModel.Kind#DENSE_BLOCK}; the order does not change the stage's sums); and when it ends
   * the model, the head and after it the multi-token prediction modules, each its input ({@link
   * LayerCostModel.Kind#MTP}), an expert block and its head ({@link
   * LayerCostModel.Kind#MTP_HEAD}), which Megatron-Core places on the last stage; on a stage that
   * also starts the model the module reads the embedding's own table ({@link
   * LayerCostModel.Kind#MTP_FIRST_STAGE}).
   *
   * @param ls the layers' setting
   * @param first the stage's first block, from 0
   * @param last its last block, inclusive
   * @return the list, or null when a layer cannot take the setting
   */
  public List<LayerCost> stageLayers(LayerSetting ls, int first, int last) {
    io.meshplan.model.ModelSpec model = req.model();
    Require.that(first >= 0 && first <= last && last < model.layers(), () -> "blocks " + first
        + ".." + last + " are not a range of the model's " + model.layers());
    return stageLayers(ls, first, last - first + 1, first == 0, last == model.layers() - 1);
  }

  /**
   * The layers of a stage of {@code count} blocks from {@code first}, which may be none (a chunk
   * that holds only the embedding, or only the head and what follows it), as {@link
   * #stageLayers(LayerSetting, int, int)} lists them.
   *
   * @param ls the layers' setting
   * @param first the stage's first block, from 0
   * @param count its blocks, >= 0
   * @param embedding whether it holds the embedding
   * @param head whether it holds the head (and the multi-token prediction modules)
   * @return the list, or null when a layer cannot take the setting
   */
  public List<LayerCost> stageLayers(LayerSetting ls, int first, int count, boolean embedding,
      boolean head) {
    io.meshplan.model.ModelSpec model = req.model();
    requireBlocks(first, count);
    List<LayerCost> list = new ArrayList<>(count + 2);
    if (embedding && !add(list, LayerCostModel.Kind.EMBEDDING, ls, 1)) {
      return null;
    }
    List<Integer> counts = span(first, count, embedding, head).blockCounts();
    for (int k = 0; k < counts.size(); k++) {
      if (!add(list, LayerCostModel.Kind.BLOCKS.get(k), ls, counts.get(k))) {
        return null;
      }
    }
    if (head && !add(list, LayerCostModel.Kind.HEAD, ls, 1)) {
      return null;
    }
    for (int k = 0; head && k < model.arch().mtpDepth(); k++) {
      // Depths after the first that share its module's weights hold none of their own.
      boolean shared = k > 0 && model.arch().mtpShared();
      if (!add(list, embedding ? LayerCostModel.Kind.MTP_FIRST_STAGE : LayerCostModel.Kind.MTP,
          ls, shared)) {
        return null;
      }
      // The module's block: an expert block, or a hybrid's prediction layers, each priced as the
      // model's own layers of its kind.
      for (LayerCostModel.Kind kind : mtpBlock) {
        if (!add(list, kind, ls, shared)) {
          return null;
        }
      }
      if (!add(list, LayerCostModel.Kind.MTP_HEAD, ls, shared)) {
        return null;
      }
    }
    return list;
  }

  /**
   * The layers of a stage under partial full recomputation (Megatron-Core's block method): its
   * first {@code recomputed} blocks recomputed, with the embedding where the stage has it, and the
   * rest keeping their activations, with the head, each priced as {@link
   * #stageLayers(LayerSetting, int, int, boolean, boolean)} prices it.
   *
   * @param ls the stage's setting; with {@code recomputed > 0} its recomputation is full
   * @param first the stage's first block, from 0
   * @param count its blocks, >= 0
   * @param embedding whether it holds the embedding
   * @param head whether it holds the head
   * @param recomputed the blocks recomputed, from the first; 0 (or {@code count} and more) for
   *     every block under {@code ls}'s recomputation
   * @return the list, or null when a layer cannot take the setting
   */
  public List<LayerCost> stageLayers(LayerSetting ls, int first, int count, boolean embedding,
      boolean head, int recomputed) {
    Require.that(recomputed >= 0, "recomputed blocks must be >= 0");
    if (recomputed == 0 || recomputed >= count) {
      return stageLayers(ls, first, count, embedding, head);
    }
    Require.that(ls.recompute() == io.meshplan.model.Recompute.FULL,
        "only full recomputation recomputes some blocks");
    List<LayerCost> recomputedLayers = stageLayers(ls, first, recomputed, embedding, false);
    List<LayerCost> kept = stageLayers(keeping.computeIfAbsent(ls,
        k -> k.withRecompute(io.meshplan.model.Recompute.NONE)), first + recomputed,
        count - recomputed, false, head);
    if (recomputedLayers == null || kept == null) {
      return null;
    }
    List<LayerCost> out = new ArrayList<>(recomputedLayers);
    out.addAll(kept);
    return out;
  }

  /**
   * What decides the layers of a stage ({@link #stageLayers}): stages alike in it hold the same
   * layers, whichever blocks they are.
   *
   * @param blocks the stage's blocks
   * @param blockCounts how many of them are of each kind of {@link LayerCostModel.Kind#BLOCKS}
   * @param embedding whether the stage starts the model
   * @param head whether it ends the model
   */
  public record Span(int blocks, List<Integer> blockCounts, boolean embedding, boolean head) {
    /** Copies the counts. */
    public Span {
      blockCounts = List.copyOf(blockCounts);
    }
  }

  /**
   * The span of the stage of blocks {@code first..last}.
   *
   * @param first the first block, from 0
   * @param last the last block, inclusive
   * @return the span
   */
  public Span span(int first, int last) {
    return span(first, last - first + 1, first == 0, last == req.model().layers() - 1);
  }

  /**
   * The span of a stage of {@code count} blocks from {@code first}, which may be none. Spans
   * alike are one object: an assembler's callers may key spans by reference.
   *
   * @param first the first block, from 0
   * @param count the blocks, >= 0
   * @param embedding whether the stage holds the embedding
   * @param head whether it holds the head
   * @return the span
   */
  public Span span(int first, int count, boolean embedding, boolean head) {
    requireBlocks(first, count);
    int l = req.model().layers();
    int row = ((embedding ? 2 : 0) + (head ? 1 : 0)) * (l + 1) + first;
    if (spans[row] == null) {
      spans[row] = new Span[l - first + 1];
    }
    Span span = spans[row][count];
    if (span == null) {
      span = alike.computeIfAbsent(new Span(count, countList(first, count), embedding, head),
          k -> k);
      spans[row][count] = span;
    }
    return span;
  }

  /** Refuses {@code count} blocks from {@code first} that are not all in the model. */
  private void requireBlocks(int first, int count) {
    int l = req.model().layers();
    Require.that(first >= 0 && count >= 0 && first + (long) count <= l,
        () -> count + " blocks from " + first + " are not in the model's " + l);
  }

  /** The counts of each block kind among {@code count} blocks from {@code first}. */
  private List<Integer> countList(int first, int count) {
    io.meshplan.model.ModelSpec model = req.model();
    List<Integer> counts = new ArrayList<>(LayerCostModel.Kind.BLOCKS.size());
    for (LayerCostModel.Kind k : LayerCostModel.Kind.BLOCKS) {
      counts.add(count(model, k, first, first + count - 1));
    }
    return List.copyOf(counts);
  }

  /**
   * The blocks of one kind among {@code first..last}: a hybrid's layers of the kind's pattern
   * symbol; an ordinary decoder's listed dense blocks ({@link LayerCostModel.Kind#DENSE_BLOCK})
   * and the others ({@link LayerCostModel.Kind#BLOCK}).
   */
  private static int count(io.meshplan.model.ModelSpec model, LayerCostModel.Kind kind,
      int first, int last) {
    io.meshplan.model.HybridPattern hp = model.arch().hybrid();
    if (hp.on()) {
      return kind.symbol() == 0 ? 0 : hp.count(kind.symbol(), first, last);
    }
    int dense = last < first ? 0 : model.arch().moe().denseIn(first, last);
    return switch (kind) {
      case DENSE_BLOCK -> dense;
      case BLOCK -> last - first + 1 - dense;
      default -> 0;
    };
  }

  /**
   * The layers of one multi-token prediction module's block: an expert block, or the kinds of a
   * hybrid's prediction layers ({@link io.meshplan.model.HybridPattern#mtp}) in order.
   *
   * @param model the model
   * @return the kinds
   */
  static List<LayerCostModel.Kind> mtpBlock(io.meshplan.model.ModelSpec model) {
    io.meshplan.model.HybridPattern hp = model.arch().hybrid();
    if (!hp.on()) {
      return List.of(LayerCostModel.Kind.BLOCK);
    }
    List<LayerCostModel.Kind> kinds = new ArrayList<>();
    for (char c : hp.mtp().toCharArray()) {
      kinds.add(LayerCostModel.Kind.ofSymbol(c));
    }
    return kinds;
  }

  /**
   * Whether a model has layers of a kind: dense blocks only among the experts of a
   * mixture-of-experts model that lists them, multi-token prediction modules only when it trains
   * them.
   *
   * @param model the model
   * @param kind the kind
   * @return true when some stage holds such a layer
   */
  public static boolean present(io.meshplan.model.ModelSpec model, LayerCostModel.Kind kind) {
    if (LayerCostModel.Kind.BLOCKS.contains(kind)) {
      return count(model, kind, 0, model.layers() - 1) > 0;
    }
    return switch (kind) {
      case MTP, MTP_FIRST_STAGE, MTP_HEAD -> model.arch().mtpDepth() > 0;
      default -> true;
    };
  }

  /**
   * The model the stages hold.
   *
   * @return the request's model
   */
  public io.meshplan.model.ModelSpec model() {
    return req.model();
  }

  /**
   * Adds one layer of a kind, without weights of its own when {@code shared}; false when the
   * kind cannot take the setting.
   */
  private boolean add(List<LayerCost> list, LayerCostModel.Kind kind, LayerSetting ls,
      boolean shared) {
    LayerCost c = cost(kind, ls);
    if (c == null) {
      return false;
    }
    list.add(shared ? c.sharingWeights() : c);
    return true;
  }

  /** Adds {@code n} layers of a kind; false when the kind cannot take the setting. */
  private boolean add(List<LayerCost> list, LayerCostModel.Kind kind, LayerSetting ls, int n) {
    if (n == 0) {
      return true;
    }
    LayerCost c = cost(kind, ls);
    if (c == null) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      list.add(c);
    }
    return true;
  }

  /** A layer's price ({@link LayerCostModel#cost}), remembered by the setting's reference. */
  private LayerCost cost(LayerCostModel.Kind kind, LayerSetting ls) {
    Object[] row = priced.computeIfAbsent(ls,
        k -> new Object[LayerCostModel.Kind.values().length]);
    Object c = row[kind.ordinal()];
    if (c == null) {
      LayerCost p = layers.cost(kind, ls);
      c = p == null ? UNPRICED : p;
      row[kind.ordinal()] = c;
    }
    return c == UNPRICED ? null : (LayerCost) c;
  }

  /**
   * The most forward and backward steps one simulation may take (microbatches times model chunks,
   * twice): the simulator keeps an event per step, and this many fit the launcher's 1 GiB heap
   * with room to spare (2,000,000 steps take about 0.5 GB and 4 s). Real jobs stay far below: a
   * 1F1B plan of 80 stages with 2,048 microbatches takes 327,680.
   */
  static final long MAX_SIMULATED_STEPS = 1L << 21;

  /**
   * Whether a simulation of this size may run.
   *
   * @param microbatches microbatches per iteration
   * @param chunks model chunks (virtual stages) over all groups
   * @return whether {@code 2 * microbatches * chunks} is within {@link #MAX_SIMULATED_STEPS}
   */
  public static boolean simulationFits(int microbatches, int chunks) {
    return steps(microbatches, chunks) <= MAX_SIMULATED_STEPS;
  }

  /** Forward and backward steps of a simulation: {@code 2 * microbatches * chunks}, exact. */
  private static long steps(int microbatches, int chunks) {
    return 2L * microbatches * chunks;
  }

  /**
   * Refuses a simulation larger than {@link #MAX_SIMULATED_STEPS}.
   *
   * @param microbatches microbatches per iteration
   * @param chunks model chunks over all groups
   */
  public static void checkSimulationSize(int microbatches, int chunks) {
    if (!simulationFits(microbatches, chunks)) {
      throw new io.meshplan.util.InputException("simulating " + microbatches + " microbatches "
          + "through " + chunks + " pipeline stages and model chunks takes "
          + steps(microbatches, chunks) + " forward and backward steps, more than the limit of "
          + MAX_SIMULATED_STEPS + "; use fewer microbatches, pipeline stages or model chunks");
    }
  }

  private final java.util.Map<Long, StageCostBuilder> builders = new java.util.HashMap<>();

  /**
   * The stage builder for a logical mesh {@code d x t} placed on the cluster.
   *
   * @param d data-parallel size (axis 0)
   * @param t tensor-parallel size (axis 1)
   * @return the builder, made once per mesh
   */
  public StageCostBuilder builder(int d, int t) {
    return builders.computeIfAbsent((long) d << 32 | t, k -> newBuilder(d, t));
  }

  private StageCostBuilder newBuilder(int d, int t) {
    CommModel comm = req.comm().apply(LogicalMesh.of(d, t));
    KernelTimeModel k = KernelTimeModel.of(req.cluster().gpu(), req.weightBytes())
        .scaled(req.pricing().computeScale(req.cluster().gpu()));
    return new StageCostBuilder(comm, req.comm(), req.cluster(),
        k.hbmBandwidth() * k.memoryEfficiency(), req.weightBytes(), req.overlaps(),
        req.model().optimizerState());
  }

  /**
   * Simulates virtual stages whose groups start at the given devices.
   *
   * @param costs the virtual stages in pipeline order
   * @param firstDevice the first device of each virtual stage's group
   * @param globalBatch sequences per iteration
   * @param microbatches microbatches per iteration
   * @param schedule the schedule
   * @return the simulation
   */
  public SimulationResult simulate(List<StageCost> costs, int[] firstDevice, int globalBatch,
      int microbatches, Schedule schedule) {
    checkSimulationSize(microbatches, costs.size());
    ClusterSpec cluster = req.cluster();
    int groups = costs.size() / schedule.chunks();
    P2pCost p2p = p2p(cluster, sendRecv, costs, firstDevice);
    Require.that(groups > 0, "no stages");
    double peak = KernelTimeModel.densePeak(cluster.gpu(), req.weightBytes());
    double tokens = (double) globalBatch * req.model().seq();
    // FP8 GEMMs may run past the bf16 peak that MFU is stated against.
    double ceiling = io.meshplan.model.Fp8Training.on(req.model().dtype())
        ? Math.max(peak, io.meshplan.cluster.Fp8Gemms.of(cluster.gpu())
            .map(io.meshplan.cluster.Fp8Gemms::peakFlops).orElse(peak)) : peak;
    return new PipelineSimulator(new SimulationInput(costs, schedule, microbatches, p2p,
        cluster.gpuCount(), peak, tokens, ceiling)).simulate();
  }

  /**
   * Prices transfers between device groups placed at the given devices: NVLink when both groups
   * sit in one node, the inter-node fabric otherwise, with one pair of GPUs per GPU of a node
   * sending at once.
   *
   * @param cluster the cluster
   * @param model send/recv prices
   * @param costs the virtual stages in pipeline order
   * @param firstDevice the first device of each virtual stage's group
   * @return the price
   */
  public static P2pCost p2p(ClusterSpec cluster, io.meshplan.cluster.SendRecvModel model,
      List<StageCost> costs, int[] firstDevice) {
    int m = cluster.gpusPerNode();
    return (from, to, bytes) -> {
      int a0 = firstDevice[from];
      int a1 = a0 + costs.get(from).devices() - 1;
      int b0 = firstDevice[to];
      int b1 = b0 + costs.get(to).devices() - 1;
      boolean oneNode = a0 / m == a1 / m && b0 / m == b1 / m && a0 / m == b0 / m;
      int pairs = Math.min(m, costs.get(from).devices());
      return model.sendRecv(bytes, pairs, oneNode ? LinkLevel.INTRA_NODE : LinkLevel.INTER_NODE);
    };
  }

  /**
   * The plan's prediction from its simulation.
   *
   * @param sim the simulation
   * @return the prediction
   */
  public static PipelinePlan.Prediction prediction(SimulationResult sim) {
    return new PipelinePlan.Prediction(sim.iterationSeconds(), sim.tokensPerSecond(),
        sim.tflopsPerGpu(), sim.mfu(), sim.peakMemoryBytesPerGpu(),
        Optional.of(axisBytes(sim.commBytes())));
  }

  /**
   * The simulator's communication volume in the plan's terms.
   *
   * @param v the volume
   * @return bytes per mesh axis
   */
  public static AxisBytes axisBytes(CommVolume v) {
    return new AxisBytes(v.tensorParallelBytes(), v.dataParallelBytes(), v.pipelineBytes(),
        v.expertParallelBytes(), v.contextParallelBytes());
  }
}
