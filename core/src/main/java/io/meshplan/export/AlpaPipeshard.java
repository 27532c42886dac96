package io.meshplan.export;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.RuntimeSpace;
import io.meshplan.plan.StagePlan;
import io.meshplan.util.InputException;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An Alpa training program (Zheng et al., OSDI'22; Alpa at b8078a9 on Ray) that runs a plan as it
 * was planned: {@code alpa.PipeshardParallel} with a {@code ManualStageOption} giving each stage
 * its layers, its submesh's physical and logical shapes and its auto-sharding options, one marked
 * layer per transformer block ({@code alpa.mark_pipeline_boundary} with {@code
 * layer_option="manual"}), the plan's microbatches, and each stage's recomputation in the model
 * code ({@link AlpaProgram}). A heterogeneous plan, whose stages differ in mesh and setting, is
 * what Alpa runs natively; a Megatron-style configuration is the special case of equal stages.
 *
 * <p>What Alpa runs, restated from its code at b8078a9, is {@link #SPACE}, which {@code plan --for
 * alpa} searches:
 *
 * <ul>
 *   <li>Recomputation: none, full (the block under {@code jax.checkpoint}, as {@code
 *       ManualLayerOption(remat_layer=True)} does for every layer) or selective (the attention
 *       core under {@code jax.checkpoint}); no per-op policy like torchtitan's.
 *   <li>Layouts: the auto-sharding ILP chooses them ({@code alpa/shard_parallel/auto_sharding.py},
 *       {@code AutoShardingOption}); no option fixes Megatron-LM's column/row layouts, and none
 *       splits norms and residuals by sequence over the tensor-parallel GPUs (sequence
 *       parallelism).
 *   <li>ZeRO: 0 ({@code prefer_reduce_scatter=False}: gradients all-reduced) or 1 ({@code
 *       prefer_reduce_scatter=True}: the accumulated gradients reduce-scattered once per
 *       iteration, the update sharded, the weights all-gathered; {@code
 *       reduce_scatter_grad_acc_friendly} and the gradient-accumulation rewrite keep the reduction
 *       out of the microbatch loop). There is no per-microbatch reduce-scatter (ZeRO-2), and {@code
 *       force_zero_stage_3} is data-parallel only (it flattens the logical mesh) and marked
 *       experimental ({@code parallel_method.py}: {@code Zero3Parallel}, "not fully tested").
 *   <li>No context or expert parallelism, no interleaved schedule ({@code pipeline_schedule} is
 *       {@code 1f1b}, {@code gpipe} or {@code inference}), no fused attention kernel (JAX 0.3.22
 *       computes attention as separate matmuls and a softmax), no FP8.
 *   <li>The overlaps meshplan prices for Megatron-LM (gradient reduction under the backward pass,
 *       the distributed optimizer's gather, tensor-parallel overlap, bf16 gradient reduction, the
 *       fused loss): Alpa's pipeline reduces gradients after the last microbatch.
 *   <li>Submeshes: Alpa places them largest first ({@link AlpaStages}); smaller than a node they
 *       need a node of a power-of-two GPU count.
 * </ul>
 */
public final class AlpaPipeshard implements FrameworkWriter {
  /** Alpa's commit whose code this writer restates. */
  static final String COMMIT = "b8078a9";

  /** What Alpa runs, as the planner's search takes it. */
  public static final RuntimeSpace SPACE = new RuntimeSpace(false,
      EnumSet.of(Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL), false, true, false,
      Set.of(0, 1), false, false, false, EnumSet.of(Attention.UNFUSED), true);

  /** Creates the writer; it holds no state. */
  public AlpaPipeshard() {}

  @Override
  public Optional<String> missing(ExportInput input) {
    Optional<String> job = missingJob(input.model(), input.attention(), input.overlaps());
    if (job.isPresent()) {
      return job;
    }
    if (input.cluster().rackScale()) {
      // Alpa's device meshes are Ray hosts of GPUs; an NVLink domain across hosts is not one.
      return Optional.of("Alpa meshes hosts of GPUs, and an NVLink domain of "
          + input.cluster().gpusPerNode() + " GPUs spans " + input.cluster().gpusPerNode()
          / input.cluster().hostGpus() + " hosts");
    }
    ParallelConfig c = input.config();
    Optional<RuntimeSpace.Feature> f = SPACE.refused(c.tensorParallel(), c.recompute(),
        c.sequenceParallel(), false, c.contextParallel(), c.expertParallel());
    if (f.isEmpty() && !SPACE.allowsZero(c.zeroStage())) {
      f = Optional.of(RuntimeSpace.Feature.ZERO_STAGE);
    }
    if (f.isPresent()) {
      return Optional.of(reason(f.get(), "the configuration", c.recompute(), c.zeroStage()));
    }
    if (c.virtualStages() > 1) {
      return Optional.of(noInterleaving());
    }
    ClusterSpec cl = input.cluster();
    Optional<List<AlpaStages.Stage>> stages = AlpaStages.of(c, input.model().layers(),
        cl.gpusPerNode());
    if (stages.isEmpty()) {
      return Optional.of("a stage of " + (long) c.tensorParallel() * c.dataParallel()
          + " GPUs is neither whole nodes of " + cl.gpusPerNode() + " nor a part of one node that"
          + " divides it; Alpa's submeshes are (1, m) inside a node or (n, "
          + cl.gpusPerNode() + ")");
    }
    return AlpaStages.check(stages.get(), input.model().layers(), cl.nodes(), cl.gpusPerNode());
  }

  /**
   * Why Alpa cannot run a plan as planned.
   *
   * @param plan the plan of a model (not of an HLO module)
   * @param cluster the cluster it runs on
   * @return one sentence, or empty when it can
   */
  public Optional<String> missing(PipelinePlan plan, ClusterSpec cluster) {
    Optional<String> job = missingJob(plan.model(), plan.attention(), plan.overlaps());
    if (job.isPresent()) {
      return job;
    }
    if (cluster.rackScale()) {
      return Optional.of("Alpa meshes hosts of GPUs, and an NVLink domain of "
          + cluster.gpusPerNode() + " GPUs spans " + cluster.gpusPerNode() / cluster.hostGpus()
          + " hosts");
    }
    if (plan.virtualStages() > 1) {
      return Optional.of(noInterleaving());
    }
    for (int i = 0; i < plan.stages().size(); i++) {
      StagePlan s = plan.stages().get(i);
      Optional<RuntimeSpace.Feature> f = SPACE.refused(s);
      if (f.isPresent()) {
        return Optional.of(reason(f.get(), "stage " + i, s.recompute(), s.zeroStage()));
      }
    }
    return AlpaStages.check(AlpaStages.of(plan), plan.model().layers(), cluster.nodes(),
        cluster.gpusPerNode());
  }

  /**
   * What no layout changes: the model, the precision, the attention kernel and the overlaps.
   *
   * @param m the model in its training precision
   * @param attention how the attention core runs
   * @param o what the plan overlaps and fuses
   * @return one sentence, or empty
   */
  static Optional<String> missingJob(ModelSpec m, Attention attention, Overlaps o) {
    Optional<String> model = missingModel(m);
    if (model.isPresent()) {
      return model;
    }
    if (Fp8Training.on(m.dtype())) {
      return Optional.of("Alpa (JAX 0.3.22, XLA of 2022) has no FP8 training; its precisions are"
          + " fp32, fp16 and bf16");
    }
    if (attention == Attention.FLASH) {
      return Optional.of("Alpa's JAX 0.3.22 computes attention as separate matmuls and a softmax;"
          + " it has no fused (FlashAttention) kernel, which the plan prices (--attention"
          + " unfused plans without it)");
    }
    String noOverlap = "Alpa's pipeline reduces gradients after the last microbatch, in the"
        + " apply-gradient step (alpa/pipeline_parallel/apply_grad.py); the plan prices ";
    if (o.gradReduce() || o.paramGather()) {
      return Optional.of(noOverlap + (o.gradReduce() ? "the reduction under the backward pass"
          + " (--overlap-grad-reduce)" : "the weight gather under the next forward pass"
          + " (--overlap-param-gather)"));
    }
    if (o.bf16GradReduce()) {
      return Optional.of(noOverlap + "it in bf16 (--grad-reduce-in-bf16), which Alpa has no"
          + " switch for");
    }
    if (o.tensorComm() || o.moeComm()) {
      return Optional.of("Alpa's auto-sharding has no tensor-parallel or expert communication"
          + " overlap, which the plan prices (--tp-comm-overlap, --overlap-moe-expert-parallel-"
          + "comm)");
    }
    if (o.lossFusion()) {
      return Optional.of("this export computes the cross-entropy loss on fp32 logits; the plan"
          + " prices one fused kernel over the 16-bit logits (--fused-cross-entropy)");
    }
    return Optional.empty();
  }

  /** The decoders {@link AlpaProgram} writes: LLaMA-style and GPT-style, dense. */
  private static Optional<String> missingModel(ModelSpec m) {
    if (m.family() == ModelSpec.Family.ALPA_MLP) {
      return Optional.of("meshplan's Alpa export writes decoder language models; " + m.name()
          + " (Alpa's MLP test model) is not one");
    }
    List<String> beyond = m.arch().beyondLlama();
    if (!beyond.isEmpty()) {
      return Optional.of("meshplan's Alpa export writes LLaMA- and GPT-style decoders; "
          + m.name() + " has " + String.join(", ", beyond) + ", which it does not write");
    }
    Architecture a = m.arch();
    if (m.family() == ModelSpec.Family.GPT && a.positions() == Architecture.Positions.ROTARY) {
      return Optional.of("meshplan's Alpa export writes GPT-style decoders with learned"
          + " positions; " + m.name() + " is GPT-NeoX-style (rotary on part of each head, a"
          + " parallel residual), which meshplan's model does not state");
    }
    io.meshplan.model.Numerics n = a.numerics();
    if (!(n.ropeScaling() instanceof io.meshplan.model.RopeScaling.None)
        || n.rotaryFraction() != 1 || n.dropout() || n.parallelResidual()
        || !n.multipliers().equals(io.meshplan.model.Numerics.Multipliers.NONE)) {
      return Optional.of("meshplan's Alpa export writes plain rotary positions on whole heads,"
          + " no dropout, sequential residuals and no multipliers; " + m.name() + " has "
          + alpaMissingNumerics(n) + ", which it does not write");
    }
    if (m.hidden() % m.heads() != 0 || m.heads() % m.kvHeads() != 0) {
      return Optional.of(m.name() + "'s " + m.heads() + " heads do not split its hidden size "
          + m.hidden() + " or share its " + m.kvHeads() + " key/value heads evenly");
    }
    return Optional.empty();
  }

  /** The numbers of {@code n} that the Alpa program does not write, in words. */
  private static String alpaMissingNumerics(io.meshplan.model.Numerics n) {
    List<String> out = new java.util.ArrayList<>();
    if (!(n.ropeScaling() instanceof io.meshplan.model.RopeScaling.None)) {
      out.add("RoPE scaling");
    }
    if (n.rotaryFraction() != 1) {
      out.add("rotary positions on " + n.rotaryFraction() + " of each head");
    }
    if (n.dropout()) {
      out.add("dropout");
    }
    if (n.parallelResidual()) {
      out.add("a parallel residual");
    }
    if (!n.multipliers().equals(io.meshplan.model.Numerics.Multipliers.NONE)) {
      out.add(n.multipliers().words());
    }
    return String.join(", ", out);
  }

  /** Why Alpa cannot run one setting of a stage, as its code at b8078a9 shows. */
  private static String reason(RuntimeSpace.Feature f, String where, Recompute r, int zero) {
    return switch (f) {
      case RECOMPUTE -> "Alpa recomputes whole layers or what jax.checkpoint wraps; " + where
          + " recomputes by torchtitan's per-op policy (--recompute " + r.label() + "), which it"
          + " has no form of";
      case SEQUENCE_PARALLEL -> "Alpa's auto-sharding (AutoShardingOption) has no option that"
          + " splits norms and residuals by sequence over the tensor-parallel GPUs; " + where
          + " is priced with sequence parallelism";
      case MEGATRON_LAYOUTS -> "Alpa's auto-sharding ILP chooses each stage's weight layouts and"
          + " has no option that fixes Megatron-LM's column/row split, which " + where
          + " is priced with (layouts: megatron)";
      case ILP_LAYOUTS -> "Alpa lays out " + where + " by its ILP";
      case ZERO_STAGE -> zero == 2 ? "Alpa reduce-scatters gradients once per iteration, after"
          + " the last microbatch (prefer_reduce_scatter: ZeRO-1); " + where + " is priced with"
          + " ZeRO-2's reduce-scatter every microbatch" : "Alpa's ZeRO-3 (force_zero_stage_3) is"
          + " data-parallel only and marked experimental (Zero3Parallel: \"not fully tested\");"
          + " " + where + " shards weights (ZeRO-" + zero + ")";
      case CONTEXT_PARALLEL -> "Alpa has no context parallelism (no ring or all-gather of keys"
          + " and values over a split sequence); " + where + " splits each sequence";
      case EXPERT_PARALLEL -> "meshplan's Alpa export writes dense models; " + where
          + " spreads experts";
    };
  }

  private static String noInterleaving() {
    return "Alpa's pipeline schedules are 1f1b and gpipe (PipeshardParallel"
        + " pipeline_schedule); it has no interleaved schedule (virtual stages)";
  }

  /**
   * The nearest input Alpa runs: sequence parallelism off, ZeRO-1 for ZeRO-2 and ZeRO-3 (only
   * the optimizer state stays sharded), one chunk per stage, full recomputation for the per-op
   * mode (which keeps more), unfused attention, bf16 for FP8, and none of the overlaps Alpa lacks.
   */
  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    if (missingModel(input.model()).isPresent()) {
      return Optional.empty();
    }
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    Overlaps o = input.overlaps();
    try {
      ParallelConfig n = new ParallelConfig(c.tensorParallel(), c.pipelineParallel(),
          c.dataParallel() * c.contextParallel(), 1, c.microBatchSize(), c.globalBatchSize(),
          c.recompute().layerwise(), false, Math.min(c.zeroStage(), 1), c.firstStageLayers(),
          c.lastStageLayers());
      ExportInput near = new ExportInput(Fp8Training.on(m.dtype())
          ? m.withTraining(m.batch(), DType.BF16) : m, input.cluster(), n, Attention.UNFUSED,
          new Overlaps(false, false, false, o.fsdpPrefetch(), o.gradAccumFusion()),
          input.gpipe());
      return missing(near).isEmpty() ? Optional.of(near) : Optional.empty();
    } catch (InputException e) {
      // The stages do not split the layers without the virtual stages.
      return Optional.empty();
    }
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    ParallelConfig c = input.config();
    ClusterSpec cl = input.cluster();
    List<AlpaStages.Stage> stages = AlpaStages.of(c, input.model().layers(), cl.gpusPerNode())
        .orElseThrow();
    return new AlpaProgram(input.model(), cl, stages, c.globalBatchSize(), c.microbatches(),
        input.gpipe(), "the configuration tp " + c.tensorParallel() + " x pp "
            + c.pipelineParallel() + " x dp " + c.dataParallel(), Optional.empty()).text();
  }

  /**
   * Writes the program of a plan.
   *
   * @param plan a plan for which {@link #missing(PipelinePlan, ClusterSpec)} is empty
   * @param cluster the cluster it runs on
   * @return the Python file's content, ending in a newline
   */
  public String write(PipelinePlan plan, ClusterSpec cluster) {
    missing(plan, cluster).ifPresent(why -> {
      throw new IllegalArgumentException(why);
    });
    return new AlpaProgram(plan.model(), cluster, AlpaStages.of(plan), plan.globalBatchSize(),
        plan.microbatches(), false, "meshplan's plan of " + plan.stages().size() + " stages",
        Optional.of(plan.prediction())).text();
  }
}
