package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.cost.StageCostBuilder;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanSource;
import io.meshplan.plan.StagePlan;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A pipeline of {@code depth} equal device groups placed one after another on the cluster, every
 * group running {@code chunks.length / depth} model chunks under one setting: a Megatron-LM
 * configuration when the chunks hold equal numbers of layers and the layouts are Megatron-LM's, an
 * interleaved candidate of the planner otherwise. Chunk {@code k} holds {@code chunkLayers[k]}
 * consecutive blocks (the embedding with chunk 0, the LM head with the last chunk) and runs on
 * group {@code k mod depth} (Narayanan et al., SC'21, section 2.2.2).
 */
final class UniformPipeline {
  private final int depth;
  private final int dataParallel;
  private final int tensorParallel;
  private final LayerSetting setting;
  private final int zeroStage;
  private final int[] chunkLayers;
  /** Under ZeRO-3, the replicas each copy of the state is sharded over; 0 for all of them. */
  private final int shardGroup;
  /**
   * Under full recomputation, the first blocks of each chunk recomputed, the others keeping their
   * activations (Megatron-LM's block method); 0 for every block.
   */
  private final int recomputeLayers;

  /**
   * Describes the pipeline.
   *
   * @param depth device groups (pipeline stages)
   * @param dataParallel replicas in one group
   * @param tensorParallel GPUs of one replica
   * @param setting the layers' setting
   * @param zeroStage the ZeRO stage over each group's replicas
   * @param chunkLayers blocks per chunk in layer order; a multiple of {@code depth} chunks, each
   *     at least 1 but the first (which may hold the embedding alone) and the last (the head alone)
   */
  UniformPipeline(int depth, int dataParallel, int tensorParallel, LayerSetting setting,
      int zeroStage, int[] chunkLayers) {
    this(depth, dataParallel, tensorParallel, setting, zeroStage, chunkLayers, 0, 0);
  }

  private UniformPipeline(int depth, int dataParallel, int tensorParallel, LayerSetting setting,
      int zeroStage, int[] chunkLayers, int shardGroup, int recomputeLayers) {
    Require.that(recomputeLayers == 0 || setting.recompute() == Recompute.FULL,
        "recomputing some layers needs full recomputation");
    Require.positive(depth, "pipeline depth");
    Require.that(chunkLayers.length % depth == 0, "chunks must split evenly over the stages");
    for (int k = 0; k < chunkLayers.length; k++) {
      boolean end = k == 0 || k == chunkLayers.length - 1;
      if (chunkLayers[k] < (end ? 0 : 1)) {
        throw new IllegalArgumentException("chunk " + k + " holds no block");
      }
    }
    this.depth = depth;
    this.dataParallel = dataParallel;
    this.tensorParallel = tensorParallel;
    this.setting = Require.nonNull(setting, "setting");
    this.zeroStage = zeroStage;
    this.chunkLayers = chunkLayers.clone();
    this.shardGroup = shardGroup;
    this.recomputeLayers = recomputeLayers;
  }

  /**
   * This pipeline with its ZeRO-3 state sharded inside groups of {@code g} replicas (hybrid
   * sharding, {@link io.meshplan.plan.ParallelConfig#shardGroup}).
   *
   * @param g the shard group, 0 for all the replicas
   * @return the pipeline
   */
  UniformPipeline withShardGroup(int g) {
    return new UniformPipeline(depth, dataParallel, tensorParallel, setting, zeroStage,
        chunkLayers, g, recomputeLayers);
  }

  /**
   * The pipeline's stages (device groups).
   *
   * @return the depth
   */
  int depth() {
    return depth;
  }

  /**
   * This pipeline recomputing only the first {@code n} blocks of each chunk ({@link
   * io.meshplan.plan.ParallelConfig#withRecomputeLayers}).
   *
   * @param n blocks recomputed per chunk, 0 for every block
   * @return the pipeline
   */
  UniformPipeline withRecomputeLayers(int n) {
    return new UniformPipeline(depth, dataParallel, tensorParallel, setting, zeroStage,
        chunkLayers, shardGroup, n);
  }

  /**
   * Blocks per chunk for {@code chunks} chunks of {@code layers} blocks, as even as possible: every
   * chunk gets {@code layers / chunks}, and chunks 1, 2, ... one more each until all are placed, so
   * that the first chunk (with the embedding) never holds an extra block and the last one (with the
   * LM head) only when every other chunk does. Consecutive chunks run on consecutive stages, so the
   * extra blocks spread over the stages.
   *
   * @param layers blocks of the model
   * @param chunks chunks, at most {@code layers}
   * @return blocks per chunk
   */
  static int[] evenChunks(int layers, int chunks) {
    Require.that(chunks >= 1 && chunks <= layers, () -> "between 1 and " + layers + " chunks");
    int[] out = new int[chunks];
    int base = layers / chunks;
    int extra = layers % chunks;
    for (int k = 0; k < chunks; k++) {
      out[k] = base + (k >= 1 && k <= extra ? 1 : 0);
    }
    return out;
  }

  /**
   * Model chunks per stage.
   *
   * @return {@code chunkLayers.length / depth}
   */
  int chunksPerStage() {
    return chunkLayers.length / depth;
  }

  /**
   * The chunks' costs.
   *
   * @param asm prices the chunks' layers
   * @return one cost per chunk in layer order, or null when a layer cannot take the setting
   */
  List<StageCost> costs(StageAssembler asm) {
    // Each replica's sequences are split over its CP GPUs: the stage's data-parallel axis (its
    // gradient reduction and ZeRO sharding) spans replicas and CP GPUs alike.
    int dpCp = dataParallel * setting.contextParallel();
    StageCostBuilder builder = asm.builder(dpCp, tensorParallel);
    List<StageCost> out = new ArrayList<>(chunkLayers.length);
    // Spans alike are one object (StageAssembler#span).
    java.util.Map<StageAssembler.Span, StageCost> memo = new java.util.IdentityHashMap<>();
    int first = 0;
    for (int k = 0; k < chunkLayers.length; k++) {
      int from = first;
      int count = chunkLayers[k];
      first += count;
      StageAssembler.Span key = asm.span(from, count, k == 0, k == chunkLayers.length - 1);
      StageCost c = memo.get(key);
      if (c == null) {
        List<LayerCost> layers = asm.stageLayers(setting, from, count, key.embedding(), key.head(),
            recomputeLayers);
        if (layers == null) {
          return null;
        }
        c = builder.build(layers, dpCp, tensorParallel, zeroStage, shardGroup,
            setting.sequenceParallel(), key.head());
        memo.put(key, c);
      }
      out.add(c);
    }
    return out;
  }

  /**
   * Simulates the pipeline and writes it as a plan.
   *
   * @param req the model, cluster and prices
   * @param asm prices the chunks' layers
   * @param costs {@link #costs} of this pipeline
   * @param globalBatch sequences per iteration
   * @param microbatches microbatches per iteration
   * @param schedule the schedule ({@link Schedule#chunks()} equal to {@link #chunksPerStage()})
   * @return the plan and its simulation
   */
  PlanSimulator.Evaluated evaluate(PlanRequest req, StageAssembler asm, List<StageCost> costs,
      int globalBatch, int microbatches, Schedule schedule) {
    SimulationResult sim = simulate(asm, costs, globalBatch, microbatches, schedule);
    return new PlanSimulator.Evaluated(plan(req, asm, costs, sim, globalBatch, microbatches), sim);
  }

  /**
   * Simulates the pipeline, each group on its devices in cluster order.
   *
   * @param asm prices the chunks' layers
   * @param costs {@link #costs} of this pipeline
   * @param globalBatch sequences per iteration
   * @param microbatches microbatches per iteration
   * @param schedule the schedule ({@link Schedule#chunks()} equal to {@link #chunksPerStage()})
   * @return the simulation
   */
  SimulationResult simulate(StageAssembler asm, List<StageCost> costs, int globalBatch,
      int microbatches, Schedule schedule) {
    Require.that(schedule.chunks() == chunksPerStage(), () -> "the schedule runs "
        + schedule.chunks() + " chunks per stage, the pipeline has " + chunksPerStage());
    return asm.simulate(costs, firstDevices(), globalBatch, microbatches, schedule);
  }

  /**
   * Refuses device groups that cross a node they do not fill. Megatron-LM numbers ranks tensor,
   * then context, then data-parallel fastest and gives pipeline stage {@code k} the ranks {@code
   * k * g} to {@code (k + 1) * g - 1} of {@code g = TP x CP x DP}; a stage is priced inside one
   * node or on whole nodes (its logical mesh placed from a node boundary), which holds for every
   * stage exactly when {@code g} divides the GPUs per node or is a multiple of them. Otherwise some
   * stage would straddle two nodes and run its collectives over the network, slower than priced.
   *
   * @param groupDevices GPUs of one stage, {@code TP x CP x DP}
   * @param depth pipeline stages
   * @param cluster the cluster
   * @throws InputException naming the first stage that crosses a node
   */
  static void checkNodes(int groupDevices, int depth, ClusterSpec cluster) {
    int m = cluster.gpusPerNode();
    if (fitsNodes(groupDevices, cluster)) {
      return;
    }
    for (long k = 0; k < depth; k++) {
      long first = k * groupDevices;
      long last = first + groupDevices - 1;
      boolean crosses = groupDevices < m ? first / m != last / m : first % m != 0
          || (last + 1) % m != 0;
      if (crosses) {
        throw new InputException("pipeline stage " + k + "'s " + groupDevices + " GPUs (tensor"
            + " x context x data-parallel size) take devices " + first + "-" + last + ", across"
            + " nodes " + first / m + " to " + last / m + " of " + cluster.toShortString()
            + "; meshplan prices a stage inside one node or on whole nodes: choose sizes whose"
            + " product per stage divides " + m + " or is a multiple of it");
      }
    }
  }

  /**
   * Whether stages of {@code groupDevices} GPUs, laid one after another from device 0, each lie
   * inside one node or on whole nodes ({@link #checkNodes} refuses the others): the stage size
   * divides the node or is a multiple of it.
   *
   * @param groupDevices GPUs of one stage
   * @param cluster the cluster
   * @return true when no stage crosses a node boundary
   */
  static boolean fitsNodes(int groupDevices, ClusterSpec cluster) {
    int m = cluster.gpusPerNode();
    return groupDevices % m == 0 || m % groupDevices == 0;
  }

  /** The first device of each chunk's group: groups follow one another on the cluster. */
  private int[] firstDevices() {
    int groupDevices = dataParallel * setting.contextParallel() * tensorParallel;
    int[] out = new int[chunkLayers.length];
    for (int k = 0; k < chunkLayers.length; k++) {
      out[k] = (k % depth) * groupDevices;
    }
    return out;
  }

  /**
   * The pipeline as a plan, with the figures of its simulation.
   *
   * @param req the model, cluster and prices
   * @param asm prices the chunks' layers
   * @param costs {@link #costs} of this pipeline
   * @param sim {@link #simulate} of this pipeline
   * @param globalBatch sequences per iteration
   * @param microbatches microbatches per iteration
   * @return the plan: its stages are the chunks in layer order
   */
  PipelinePlan plan(PlanRequest req, StageAssembler asm, List<StageCost> costs,
      SimulationResult sim, int globalBatch, int microbatches) {
    int groupDevices = dataParallel * setting.contextParallel() * tensorParallel;
    int[] firstDevice = firstDevices();
    // A group of whole nodes is an n x M submesh; a smaller one is one row.
    int gpn = req.cluster().gpusPerNode();
    int n = groupDevices % gpn == 0 ? groupDevices / gpn : 1;
    int m = groupDevices / n;
    List<StagePlan> stages = new ArrayList<>();
    int first = 0;
    for (int k = 0; k < chunkLayers.length; k++) {
      StageCost sc = costs.get(k);
      int g = k % depth;
      int last = first + chunkLayers[k] - 1;
      stages.add(new StagePlan(first, last, n, m, firstDevice[k], dataParallel, tensorParallel,
          setting.recompute(), setting.sequenceParallel(), zeroStage, setting.megatron(),
          sc.forwardSeconds(), sc.backwardSeconds(), sim.stages().get(g).memory().totalBytes(),
          PlanFigures.largestTensors(asm.stageLayers(setting, first, chunkLayers[k], k == 0,
              k == chunkLayers.length - 1)),
          Optional.of(StageAssembler.axisBytes(sim.stages().get(g).commBytesPerGpu())),
          setting.expertParallel(), setting.expertTensorParallel(), setting.contextParallel(),
          setting.cpExchange(), shardGroup,
          StagePlan.recomputeLayersOf(recomputeLayers, chunkLayers[k])));
      first = last + 1;
    }
    return new PipelinePlan(PlanSource.Preset.of(req.model(), req.attention(),
        req.overlaps(), req.pricing().attentionKernel()),
        req.cluster().toShortString(), globalBatch,
        setting.microBatch() * dataParallel, microbatches, chunksPerStage(), stages,
        StageAssembler.prediction(sim));
  }
}
