package io.meshplan.planner;

import io.meshplan.calibrate.ComputeScale;
import io.meshplan.calibrate.Profile;
import io.meshplan.calibrate.RunModel;
import io.meshplan.calibrate.RunParallel;
import io.meshplan.calibrate.TrainingRun;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.interop.PlanSimulator;
import io.meshplan.model.Attention;
import io.meshplan.model.Overlaps;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.Checked;
import io.meshplan.util.InputException;
import java.util.List;

/**
 * A training run read from a log, stated as {@code meshplan simulate --tp .. --pp ..} states a
 * job, and simulated exactly as {@code simulate} does ({@link Planner#price}, {@link
 * PlanSimulator}) with the GPU's kernels scaled through a calibration profile ({@link
 * Pricing#calibrated}): the training-run simulation of {@code calibrate --train}, priced here in
 * the planner as every other job is, so that the command line only reads logs and prints.
 *
 * @param run the run
 * @param cluster the cluster it ran on: --cluster's GPU and fabric, as many GPUs as the run used
 * @param model the meshplan model
 * @param config the parallel configuration
 */
public record TrainRunSimulator(TrainingRun run, ClusterSpec cluster, ModelSpec model,
    ParallelConfig config) {

  /**
   * States a run on --cluster's hardware.
   *
   * @param run the run
   * @param base --cluster
   * @return the job to simulate
   * @throws InputException when the run does not fit --cluster or meshplan's model
   */
  public static TrainRunSimulator of(TrainingRun run, ClusterSpec base) {
    RunParallel p = run.parallel();
    // Sizes from a log are up to 2^31 - 1 each: their products are exact.
    java.math.BigInteger mp = Checked.product(p.tensorParallel(), p.pipelineParallel(),
        p.contextParallel());
    java.math.BigInteger cluster = java.math.BigInteger.valueOf(base.gpuCount());
    int dp = p.dataParallel() > 0 ? p.dataParallel() : cluster.divide(mp).intValue();
    java.math.BigInteger used = dp <= 0 ? mp : mp.multiply(java.math.BigInteger.valueOf(dp));
    if (dp <= 0 || used.compareTo(cluster) > 0) {
      throw new InputException(run.source() + ": the run used " + used + " GPUs, more than "
          + "--cluster " + base.toShortString() + " has (" + base.gpuCount() + ")");
    }
    int gpus = used.intValue();
    int perNode = Math.min(gpus, base.gpusPerNode());
    if (gpus % perNode != 0) {
      throw new InputException(run.source() + ": the run's " + gpus + " GPUs do not fill whole "
          + "nodes of " + base.gpusPerNode() + " GPUs");
    }
    ClusterSpec cs = new ClusterSpec(gpus / perNode, perNode, base.gpu(), base.fabric());
    long globalBatch = (long) p.localBatch() * dp;
    if (globalBatch > Integer.MAX_VALUE) {
      throw new InputException(run.source() + ": the run's global batch, " + p.localBatch()
          + " sequences on each of " + dp + " data-parallel replicas, is past 2^31 - 1");
    }
    int global = (int) globalBatch;
    ModelSpec m;
    try {
      m = model(run.model(), global);
    } catch (IllegalArgumentException | InputException e) {
      throw new InputException(run.source() + ": " + e.getMessage(), e);
    }
    // What --cluster's GPU cannot train (fp8 without FP8 tensor cores) is --cluster's refusal,
    // not the log's: the job's rules of the binding, run first without the log's name.
    io.meshplan.plan.BoundConfig.checkJob(cs, global, 0, m.dtype(), attention(run, cs),
        overlaps(run));
    try {
      ParallelConfig c = new ParallelConfig(p.tensorParallel(), p.pipelineParallel(), dp,
          p.virtualStages(), p.microBatch(), global, Recompute.valueOf(
              p.recompute().toUpperCase(java.util.Locale.ROOT)), p.sequenceParallel(),
          p.zeroStage()).withStageLayers(p.split().firstStageLayers(),
              p.split().lastStageLayers()).withSplit(split(p))
          .withContext(p.contextParallel(), io.meshplan.plan.ContextExchange.ofWord(
              p.cpCommType()).orElseThrow())
          .withExperts(p.expertParallel(), p.expertTensorParallel())
          .withRecomputeLayers(p.recomputeLayers());
      if (p.shardReplicas() > 1) {
        if (dp % p.shardReplicas() != 0) {
          throw new InputException("data_parallel_replicate_degree " + p.shardReplicas()
              + " does not divide the data-parallel size " + dp);
        }
        c = c.withShardGroup(dp / p.shardReplicas());
      }
      if (!p.recomputeModules().isEmpty()) {
        // A log's module named twice is harmless: Megatron-LM only asks whether a module is in
        // its --recompute-modules list (megatron/core/transformer/transformer_config.py).
        c = c.withRecomputeModules(io.meshplan.model.RecomputeModule.parseList(
            String.join(",", p.recomputeModules().stream().distinct().toList())));
      }
      // The run's layout, bound as every command binds one (BoundConfig).
      io.meshplan.plan.BoundConfig b = io.meshplan.plan.TrainingConfig.of(c, false)
          .withDtype(m.dtype()).withAttention(java.util.Optional.of(attention(run, cs)))
          .withOverlaps(overlaps(run)).bind(m, cs);
      return new TrainRunSimulator(run, cs, m, b.parallel());
    } catch (IllegalArgumentException | InputException e) {
      // What the run's arguments break is the log's fault: name it.
      throw new InputException(run.source() + ": " + e.getMessage(), e);
    }
  }

  /** The run's split: its layout, or the embedding and loss counted, or neither. */
  private static io.meshplan.plan.PipelineSplit split(RunParallel p) {
    if (!p.split().layout().isEmpty()) {
      try {
        return io.meshplan.plan.PipelineLayout.parse(p.split().layout(), p.pipelineParallel());
      } catch (InputException e) {
        // The layout came from the log's arguments, not from a flag: say so.
        throw new InputException("argument pipeline_model_parallel_layout: " + e.getMessage()
            .replace("--pipeline-model-parallel-layout ", ""), e);
      }
    }
    return new io.meshplan.plan.SplitAccounting(p.split().embeddingInSplit(),
        p.split().lossInSplit());
  }

  private static ModelSpec model(RunModel rm, int global) {
    ModelSpec m = dims(rm, global)
        .withFp8Scaling(io.meshplan.model.Fp8Scaling.ofPrecision(rm.dtype()));
    // Weights kept and gathered in FP8 (Megatron-LM's fp8_param_gather), as --fp8-param-gather.
    return rm instanceof RunModel.Dims d && d.fp8Weights()
        ? m.withLora(io.meshplan.model.Lora.FP8_WEIGHTS) : m;
  }

  private static ModelSpec dims(RunModel rm, int global) {
    DType dtype = switch (io.meshplan.model.Fp8Scaling.stripRecipe(rm.dtype())) {
      case "bf16" -> DType.BF16;
      case "f16" -> DType.F16;
      case "fp8" -> io.meshplan.model.Fp8Training.RECIPE;
      default -> DType.F32;
    };
    if (rm instanceof RunModel.Preset p) {
      return Presets.get(p.name()).withWorkload(p.seq(), global).withTraining(global, dtype);
    }
    RunModel.Dims d = (RunModel.Dims) rm;
    ModelSpec dense = new ModelSpec("megatron-" + d.layers() + "x" + d.hidden(),
        d.swiglu() ? ModelSpec.Family.LLAMA : ModelSpec.Family.GPT, d.layers(), d.hidden(),
        d.heads(), d.kvHeads(), d.ffn(), d.vocab(), d.seq(), global, dtype);
    RunModel.Moe e = d.moe();
    if (!e.routed()) {
      return dense;
    }
    // As the presets state a mixture-of-experts model: its feed-forward size is an expert's,
    // its dense blocks' size is the layer's (Megatron-LM's ffn_hidden_size).
    io.meshplan.model.MoeShape moe = new io.meshplan.model.MoeShape(e.experts(), e.topK(),
        e.ffn(), e.sharedFfn(), false, e.capacityFactor(), 1)
        .withDenseLayers(e.denseLayers(), e.denseLayers().isEmpty() ? 0 : d.ffn());
    return new ModelSpec(dense.name(), dense.family(), d.layers(), d.hidden(), d.heads(),
        d.kvHeads(), e.ffn(), d.vocab(), d.seq(), global, dtype, dense.arch().withMoe(moe));
  }

  /**
   * The simulated iteration time with the GPU's kernels {@code scale} times faster than modelled.
   *
   * @param scale the compute scale, > 0
   * @return seconds
   */
  public double iterationSeconds(double scale) {
    Profile profile = new Profile(Profile.VERSION, cluster.toShortString(), List.of())
        .withCompute(cluster.gpu().architecture(), new ComputeScale(scale, 1));
    TrainingJob job = TrainingJob.of(io.meshplan.plan.TrainingConfig.of(config, false)
        .withDtype(model.dtype()).withAttention(java.util.Optional.of(attention(run, cluster)))
        .withOverlaps(overlaps(run)).bind(model, cluster));
    PricedJob priced = Planner.price(job, Pricing.calibrated(profile),
        PlannerOptions.defaults());
    return Planner.simulate(priced, config, false)
        .orElseThrow(() -> new InputException(run.source() + ": tensor-parallel size "
            + config.tensorParallel() + " cannot split this model's layers evenly"))
        .simulation().iterationSeconds();
  }

  /**
   * The largest compute scale the fit may give the run's GPU: past it the scaled kernels would
   * beat the GPU's dense peak in the run's precision ({@link
   * io.meshplan.cluster.KernelTimeModel#maxScale}).
   *
   * @return the scale bound, > 0
   */
  public double maxScale() {
    return Math.min(ComputeScale.MAX, io.meshplan.cluster.KernelTimeModel.of(cluster.gpu(),
        model.dtype().bytes()).maxScale());
  }

  /** The attention the run ran: fused when its log says so and the GPU has the kernels. */
  private static Attention attention(TrainingRun run, ClusterSpec cs) {
    return run.model().flash()
        && io.meshplan.cluster.FusedAttentionKernels.of(cs.gpu()).isPresent()
        ? Attention.FLASH : Attention.UNFUSED;
  }

  /**
   * The overlaps the run's framework ran with, on top of the frameworks' defaults; Megatron-FSDP
   * reduces hybrid sharding's replicas once per step ({@link Overlaps#hsdpStepReduce}).
   */
  private static Overlaps overlaps(TrainingRun run) {
    io.meshplan.calibrate.RunParallel p = run.parallel();
    Overlaps d = Overlaps.DEFAULTS;
    return new Overlaps(p.overlapGradReduce(), p.overlapParamGather(), p.tpCommOverlap(),
        d.fsdpPrefetch(), p.gradAccumFusion(), p.moeOverlap(), p.lossFusion(),
        p.bf16GradReduce(), io.meshplan.model.ExpertDispatcher.of(p.dispatcher()).orElseThrow(),
        p.shardReplicas() > 1 && run.framework().equals("megatron"));
  }
}
