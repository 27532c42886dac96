package io.meshplan.plan;

import io.meshplan.model.Overlaps;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;

/**
 * A whole-cluster training plan: pipeline stages (layer ranges on submeshes with logical meshes),
 * the batch split and schedule, and the predicted performance. This value is the only contract
 * between the planner and what comes after it (simulation, reports, exports, launch manifests); its
 * JSON form is {@link PlanJson}.
 *
 * @param source what the plan trains: a model, or an HLO module whose batch is one microbatch
 * @param cluster the cluster string, e.g. {@code 128x8:h100-80gb:ib-ndr400}
 * @param globalBatchSize sequences per iteration; for an HLO module, the microbatches (the module
 *     does not say which of its dimensions are sequences)
 * @param microbatchSequences sequences in one microbatch over all replicas of a stage (a stage of
 *     {@code d} data-parallel replicas gives each {@code microbatchSequences / d}); 1 for an HLO
 *     module, whose microbatch is one call of the module
 * @param microbatches microbatches each pipeline runs per iteration
 * @param virtualStages model chunks per stage (1 = 1F1B; more = interleaved 1F1B)
 * @param stages the pipeline stages in order; blocks are numbered 0..layers-1, the embedding runs
 *     on the first stage and the LM head on the last. With {@code v = virtualStages > 1} these are
 *     the {@code p * v} model chunks in layer order (Narayanan et al., SC'21, section 2.2.2): chunk
 *     {@code k} runs on the devices of pipeline stage {@code k mod p}, so chunk {@code k} has the
 *     submesh, first device and logical mesh of chunk {@code k mod p}
 * @param prediction the simulator's figures for this plan
 */
public record PipelinePlan(
    PlanSource source,
    String cluster,
    int globalBatchSize,
    int microbatchSequences,
    int microbatches,
    int virtualStages,
    List<StagePlan> stages,
    Prediction prediction) {

  /**
   * What the simulator predicts for a plan.
   *
   * @param iterationSeconds one training iteration, seconds
   * @param tokensPerSecond tokens trained per second over the cluster; for an HLO module,
   *     microbatches (calls of the module) per second
   * @param tflopsPerGpu model TFLOP/s per GPU (10^12 FLOP/s)
   * @param mfu model FLOPs utilization: model FLOP/s over the GPUs' dense peak
   * @param peakMemoryBytesPerGpu the largest peak memory of any GPU, bytes
   * @param commBytes bytes all GPUs send in one iteration, by axis; empty in plans written before
   *     meshplan counted them
   */
  public record Prediction(double iterationSeconds, double tokensPerSecond, double tflopsPerGpu,
      double mfu, double peakMemoryBytesPerGpu, Optional<AxisBytes> commBytes) {
    /** Validates the figures. */
    public Prediction {
      Require.nonNegative(iterationSeconds, "iteration seconds");
      Require.nonNegative(tokensPerSecond, "tokens per second");
      Require.nonNegative(tflopsPerGpu, "TFLOP/s per GPU");
      Require.nonNegative(mfu, "MFU");
      Require.nonNegative(peakMemoryBytesPerGpu, "peak memory");
      Require.nonNull(commBytes, "communication bytes");
    }

    /**
     * Figures without the communication volume.
     *
     * @param iterationSeconds one training iteration, seconds
     * @param tokensPerSecond tokens per second
     * @param tflopsPerGpu model TFLOP/s per GPU
     * @param mfu model FLOPs utilization
     * @param peakMemoryBytesPerGpu the largest peak memory of any GPU, bytes
     */
    public Prediction(double iterationSeconds, double tokensPerSecond, double tflopsPerGpu,
        double mfu, double peakMemoryBytesPerGpu) {
      this(iterationSeconds, tokensPerSecond, tflopsPerGpu, mfu, peakMemoryBytesPerGpu,
          Optional.empty());
    }
  }

  /** Validates the plan's shape. */
  public PipelinePlan {
    Require.nonNull(source, "source");
    boolean preset = source instanceof PlanSource.Preset;
    Require.that(preset || microbatchSequences == 1, "a plan of an HLO module runs one call of the "
        + "module per microbatch");
    Require.nonNull(cluster, "cluster");
    Require.positive(globalBatchSize, "global batch");
    Require.positive(microbatchSequences, "microbatch sequences");
    Require.positive(microbatches, "microbatches");
    Require.positive(virtualStages, "virtual stages");
    Require.nonNull(prediction, "prediction");
    stages = List.copyOf(stages);
    Require.that(!stages.isEmpty(), "a plan needs at least one stage");
    Require.that((long) microbatchSequences * microbatches == globalBatchSize, "the global batch "
        + globalBatchSize + " is not " + microbatches + " microbatches of " + microbatchSequences
        + " sequences");
    int next = 0;
    for (StagePlan s : stages) {
      Require.that(!preset || microbatchSequences % s.dataParallel() == 0, "a microbatch of "
          + microbatchSequences + " sequences does not split over " + s.dataParallel()
          + " replicas");
      Require.that(s.firstLayer() == next, "stages must cover the layers in order: expected a "
          + "stage starting at layer " + next + ", got " + s.firstLayer());
      next = s.lastLayer() + 1;
    }
    Require.that(next == source.layers(), "stages cover " + next + " layers but the "
        + (preset ? "model" : "module") + " has " + source.layers());
    Require.that(stages.size() % virtualStages == 0, "the " + stages.size() + " model chunks "
        + "do not split into " + virtualStages + " chunks per stage");
    int p = stages.size() / virtualStages;
    Require.that(virtualStages == 1 || microbatches % p == 0, "the interleaved schedule needs the "
        + "number of microbatches (" + microbatches + ") to be a multiple of the pipeline depth ("
        + p + ")");
    for (int k = p; k < stages.size(); k++) {
      StagePlan c = stages.get(k);
      StagePlan g = stages.get(k % p);
      Require.that(c.firstDevice() == g.firstDevice() && c.submeshNodes() == g.submeshNodes()
          && c.submeshGpus() == g.submeshGpus() && c.dataParallel() == g.dataParallel()
          && c.tensorParallel() == g.tensorParallel(), "model chunk " + k + " must run on the "
          + "devices and logical mesh of pipeline stage " + (k % p));
    }
  }

  /**
   * A plan of a model.
   *
   * @param model the model, with the sequence length trained
   * @param cluster the cluster string
   * @param globalBatchSize sequences per iteration
   * @param microbatchSequences sequences in one microbatch over all replicas of a stage
   * @param microbatches microbatches each pipeline runs per iteration
   * @param virtualStages model chunks per stage
   * @param stages the pipeline stages (model chunks) in order
   * @param prediction the simulator's figures
   */
  public PipelinePlan(ModelSpec model, String cluster, int globalBatchSize,
      int microbatchSequences, int microbatches, int virtualStages, List<StagePlan> stages,
      Prediction prediction) {
    this(new PlanSource.Preset(model), cluster, globalBatchSize, microbatchSequences,
        microbatches, virtualStages, stages, prediction);
  }

  /**
   * The model of a plan of a preset or configuration.
   *
   * @return the model
   * @throws IllegalStateException for the plan of an HLO module, which has no model to build
   *     (check {@link #source()} first)
   */
  public ModelSpec model() {
    if (source instanceof PlanSource.Preset p) {
      return p.model();
    }
    throw new IllegalStateException("the plan of an HLO module has no model preset");
  }

  /**
   * How the plan's attention core runs: as its model states it, unfused for an HLO module (its own
   * operations say how it runs).
   *
   * @return the attention
   */
  public io.meshplan.model.Attention attention() {
    return source instanceof PlanSource.Preset p ? p.attention()
        : io.meshplan.model.Attention.UNFUSED;
  }

  /**
   * The fused attention kernel the plan was priced as, when one was named.
   *
   * @return the kernel, or empty for the architecture's default (or no fused attention)
   */
  public java.util.Optional<io.meshplan.cluster.AttentionKernel> attentionKernel() {
    return source instanceof PlanSource.Preset p ? java.util.Optional.ofNullable(p.kernel())
        : java.util.Optional.empty();
  }

  /**
   * What the framework overlaps and fuses, as the plan was priced: a model's own; for an HLO
   * module nothing beyond what its operations say.
   *
   * @return the overlaps
   */
  public Overlaps overlaps() {
    return source instanceof PlanSource.Preset p ? p.overlaps() : Overlaps.NONE;
  }

  /**
   * The HLO module this plan trains, if it is the plan of one.
   *
   * @return the module, or empty for a model
   */
  public Optional<PlanSource.HloModule> hloModule() {
    return source instanceof PlanSource.HloModule h ? Optional.of(h) : Optional.empty();
  }

  /**
   * The pipeline depth: the number of device groups, each running {@link #virtualStages} chunks.
   *
   * @return {@code stages().size() / virtualStages()}
   */
  public int pipelineStages() {
    return stages.size() / virtualStages;
  }

  /**
   * The model chunks a pipeline stage runs, in layer order: the stage itself under 1F1B.
   *
   * @param stage a pipeline stage, 0 to {@link #pipelineStages()} - 1
   * @return chunks {@code stage}, {@code stage + p}, ... of {@link #stages()}
   */
  public List<StagePlan> chunksOf(int stage) {
    int p = pipelineStages();
    Require.that(stage >= 0 && stage < p, "stage " + stage + " is outside 0.." + (p - 1));
    List<StagePlan> out = new java.util.ArrayList<>(virtualStages);
    for (int k = stage; k < stages.size(); k += p) {
      out.add(stages.get(k));
    }
    return List.copyOf(out);
  }

  /**
   * The layers a pipeline stage holds, as ranges: {@code 0-12}, or for interleaved chunks {@code
   * 0-1,16-17,32-33}.
   *
   * @param stage a pipeline stage
   * @return the ranges, comma-separated
   */
  public String layersOf(int stage) {
    StringBuilder b = new StringBuilder();
    for (StagePlan c : chunksOf(stage)) {
      if (c.layerCount() == 0) {
        continue;
      }
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(c.firstLayer()).append('-').append(c.lastLayer());
    }
    return b.length() > 0 ? b.toString() : "none";
  }

  /**
   * The GPUs the plan uses.
   *
   * @return the sum of the pipeline stages' devices (each chunk of a stage on the same ones)
   */
  public int gpus() {
    int n = 0;
    for (StagePlan s : stages.subList(0, pipelineStages())) {
      n = Math.addExact(n, s.devices());
    }
    return n;
  }

  /**
   * The Megatron-LM configuration this plan is, if it is one: every stage has the same logical
   * mesh and the same recomputation, sequence parallelism and ZeRO stage, and the stages' layer
   * counts are equal, Megatron-Core's uneven split ({@link #unevenStageLayers}), its counted split
   * ({@link #countedSplit}) or else its layout chunk by chunk ({@link #layoutSplit}). Whether a
   * framework can express that configuration (ZeRO-3, say) is the framework's
   * question, not the plan's.
   *
   * @return the configuration, or empty with {@link #whyNotUniform} saying why
   */
  public Optional<ParallelConfig> asParallelConfig() {
    if (whyNotUniform().isPresent()) {
      return Optional.empty();
    }
    StagePlan s0 = stages.get(0);
    Optional<int[]> uneven = unevenStageLayers();
    int[] firstLast = uneven.orElse(new int[2]);
    return Optional.of(new ParallelConfig(s0.tensorParallel(), stages.size() / virtualStages,
        s0.dataParallel(), virtualStages, microBatchSize(s0), globalBatchSize, s0.recompute(),
        s0.sequenceParallel(), s0.zeroStage(), firstLast[0], firstLast[1], s0.expertParallel(),
        s0.expertTensorParallel(), s0.contextParallel(), false)
        .withCpExchange(s0.cpExchange())
        .withSplit(uneven.isPresent() ? SplitAccounting.NONE : countedSplit()
            .<PipelineSplit>map(x -> x).orElseGet(() -> layoutSplit().orElseThrow()))
        .withShardGroup(s0.shardGroup()).withRecomputeLayers(recomputeLayers()));
  }

  /**
   * The first blocks each stage recomputes under partial full recomputation: the most any stage
   * recomputes that way ({@link StagePlan#recomputeLayers}), 0 when every stage recomputes all
   * its blocks or none. A stage with fewer blocks recomputes them all, as Megatron-Core's block
   * method does.
   *
   * @return the count, >= 0
   */
  public int recomputeLayers() {
    int r = 0;
    for (StagePlan s : stages) {
      r = Math.max(r, s.recomputeLayers());
    }
    return r;
  }

  /**
   * The chunks' layer counts written out as Megatron-Core's {@code
   * --pipeline-model-parallel-layout} ({@link PipelineLayout#of}), which states any split whose
   * chunks each hold a layer.
   *
   * @return the layout, or empty when a chunk holds no layer
   */
  public Optional<PipelineLayout> layoutSplit() {
    int[] counts = new int[stages.size()];
    for (int k = 0; k < counts.length; k++) {
      counts[k] = stages.get(k).layerCount();
      if (counts[k] < 1) {
        return Optional.empty();
      }
    }
    return Optional.of(PipelineLayout.of(counts, model().arch().mtpDepth()));
  }

  /**
   * The chunks' layer counts as Megatron-Core's split that counts the embedding or the loss as a
   * layer ({@link SplitAccounting}): every chunk holds the same number of layers but the first,
   * one fewer when the embedding is counted, and the last, one fewer when the loss is.
   *
   * @return the accounting, or empty when the counts are not of this form (or are even)
   */
  public Optional<SplitAccounting> countedSplit() {
    int n = stages.size();
    if (n < 2) {
      return Optional.empty();
    }
    int per = stages.get(1).layerCount();
    for (int k = 1; k < n - 1; k++) {
      if (stages.get(k).layerCount() != per) {
        return Optional.empty();
      }
    }
    int e = per - stages.get(0).layerCount();
    int l = per - stages.get(n - 1).layerCount();
    if (e < 0 || e > 1 || l < 0 || l > 1 || e + l == 0) {
      return Optional.empty();
    }
    return Optional.of(new SplitAccounting(e == 1, l == 1));
  }

  /**
   * The stages' layer counts as Megatron-Core states them ({@code
   * --decoder-first-pipeline-num-layers} and {@code --decoder-last-pipeline-num-layers}): every
   * chunk of a pipeline stage holds the same number of layers, the stages between the first and
   * the last hold equal numbers, and the first and last stage may differ from them. With two
   * stages only the first is stated, and the last holds the rest.
   *
   * @return {first, last} layers per stage, each 0 where the stage holds as many as the middle
   *     ones ({0, 0} for equal stages), or empty when the counts are not of this form
   */
  public Optional<int[]> unevenStageLayers() {
    int p = pipelineStages();
    int[] perStage = new int[p];
    for (int k = 0; k < stages.size(); k++) {
      if (stages.get(k).layerCount() != stages.get(k % p).layerCount()) {
        return Optional.empty();
      }
      perStage[k % p] += stages.get(k).layerCount();
    }
    if (p == 1 || java.util.Arrays.stream(perStage).allMatch(n -> n == perStage[0])) {
      return Optional.of(new int[] {0, 0});
    }
    if (p == 2) {
      return Optional.of(new int[] {perStage[0], 0});
    }
    int middle = perStage[1];
    for (int i = 1; i < p - 1; i++) {
      if (perStage[i] != middle) {
        return Optional.empty();
      }
    }
    return Optional.of(new int[] {perStage[0] != middle ? perStage[0] : 0,
        perStage[p - 1] != middle ? perStage[p - 1] : 0});
  }

  /**
   * The mean communication volume per GPU: the prediction's total over the plan's GPUs.
   *
   * @return bytes per GPU per iteration by axis, or empty when the plan does not carry them
   */
  public Optional<AxisBytes> commBytesPerGpu() {
    double n = gpus();
    return prediction.commBytes().map(b -> new AxisBytes(b.tensorParallel() / n,
        b.dataParallel() / n, b.pipeline() / n, b.expertParallel() / n,
        b.contextParallel() / n));
  }

  /**
   * Sequences per microbatch on one replica of a stage.
   *
   * @param s a stage of this plan
   * @return microbatch sequences / the stage's data-parallel size
   */
  public int microBatchSize(StagePlan s) {
    return microbatchSequences / s.dataParallel();
  }

  /** A stage's recomputed blocks in words: its first {@code n}, or all of them for 0. */
  private static String blocks(int n) {
    return n == 0 ? "all" : "the first " + n;
  }

  /**
   * Why the plan is not a Megatron-LM-style configuration (one that Megatron-LM, torchtitan
   * and DeepSpeed take).
   *
   * @return a sentence, or empty when it is one
   */
  public Optional<String> whyNotUniform() {
    if (source instanceof PlanSource.HloModule h) {
      return Optional.of("the plan trains the XLA module " + h.module() + ", and no framework "
          + "model exists for an XLA module");
    }
    StagePlan s0 = stages.get(0);
    for (StagePlan s : stages) {
      if (s.tensorParallel() > 1 && !s.megatronLayouts()) {
        return Optional.of("stage layouts were chosen by the ILP rather than Megatron-LM's "
            + "column- and row-parallel split, the only tensor parallelism Megatron-LM, torchtitan and"
            + " DeepSpeed have");
      }
      if (s.recompute() != s0.recompute() || s.sequenceParallel() != s0.sequenceParallel()
          || s.zeroStage() != s0.zeroStage() || s.shardGroup() != s0.shardGroup()) {
        return Optional.of("stages use different recomputation, sequence-parallel or optimizer "
            + "sharding settings; the frameworks apply one setting to every stage");
      }
    }
    // Every stage has the same settings; the count of blocks each recomputes is compared only
    // then, so that a stage recomputing none beside one recomputing some is named as above.
    int r = recomputeLayers();
    for (int i = 0; i < stages.size(); i++) {
      StagePlan s = stages.get(i);
      int expected = StagePlan.recomputeLayersOf(r, s.layerCount());
      if (s.recomputeLayers() != expected) {
        return Optional.of("stage " + i + " recomputes " + blocks(s.recomputeLayers())
            + " of its " + s.layerCount() + " blocks, where Megatron-LM's "
            + "--recompute-num-layers " + r + " recomputes " + blocks(expected)
            + " in every stage");
      }
    }
    for (StagePlan s : stages) {
      if (s.dataParallel() != s0.dataParallel() || s.tensorParallel() != s0.tensorParallel()
          || s.expertParallel() != s0.expertParallel()
          || s.expertTensorParallel() != s0.expertTensorParallel()
          || s.contextParallel() != s0.contextParallel()) {
        return Optional.of("stages use different logical meshes (" + mesh(s0) + " and "
            + mesh(s) + "); the frameworks use one tensor, data, expert and context-parallel "
            + "size for all stages");
      }
    }
    if (unevenStageLayers().isEmpty() && countedSplit().isEmpty() && layoutSplit().isEmpty()) {
      return Optional.of("stages hold numbers of layers (" + layerCounts() + ") that are "
          + "neither equal nor equal apart from the first and last stage, nor one fewer in the "
          + "first or last chunk, nor a layout whose every chunk holds a layer, the only uneven"
          + " splits Megatron-LM states");
    }
    return Optional.empty();
  }

  /**
   * A stage's logical mesh, data-parallel x tensor-parallel, with its expert and context
   * parallelism where they are above 1: e.g. {@code 8x1 EP 4}.
   */
  private static String mesh(StagePlan s) {
    return s.dataParallel() + "x" + s.tensorParallel()
        + (s.expertParallel() > 1 ? " EP " + s.expertParallel() : "")
        + (s.expertTensorParallel() > 1 ? " ETP " + s.expertTensorParallel() : "")
        + (s.contextParallel() > 1 ? " CP " + s.contextParallel() : "");
  }

  /** The chunks' layer counts, space-separated. */
  private String layerCounts() {
    StringBuilder b = new StringBuilder();
    for (StagePlan s : stages) {
      b.append(b.length() > 0 ? " " : "").append(s.layerCount());
    }
    return b.toString();
  }
}
