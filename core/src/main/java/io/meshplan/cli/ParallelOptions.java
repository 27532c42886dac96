package io.meshplan.cli;

import io.meshplan.model.Recompute;
import io.meshplan.model.RecomputeModule;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelineLayout;
import io.meshplan.plan.PipelineSplit;
import io.meshplan.plan.SplitAccounting;
import io.meshplan.plan.TrainingConfig;
import io.meshplan.util.InputException;
import picocli.CommandLine.Option;

/** The Megatron-LM style parallel flags of {@code simulate} and {@code export}. */
final class ParallelOptions {
  @Option(names = "--tp", description = "Tensor-parallel size.")
  Integer tp;

  @Option(names = "--pp", description = "Pipeline-parallel size.")
  Integer pp;

  @Option(names = "--dp", description = "Data-parallel size.")
  Integer dp;

  @Option(names = "--vpp", description = "Model chunks per pipeline stage (interleaved 1F1B; "
      + "default 1).")
  Integer vpp;

  @Option(names = "--schedule", completionCandidates = Choices.Schedules.class,
      description = "1f1b (default), or gpipe (all forwards, then all backwards); --vpp above 1"
      + " selects interleaved 1F1B. One of: ${COMPLETION-CANDIDATES}.")
  String schedule;

  @Option(names = "--micro-batch", description = "Sequences per microbatch per replica.")
  Integer microBatch;

  @Option(names = "--global-batch", description = "Sequences per iteration.")
  Integer globalBatch;

  @Option(names = "--recompute", completionCandidates = Choices.Recomputes.class,
      description = "none, selective (Megatron-LM's), full, op (torchtitan's per-op selective"
      + " checkpointing), or maxtext:POLICY, MaxText's remat_policy on a dense model (what it"
      + " saves: docs/simulating.md) (default none). One of: ${COMPLETION-CANDIDATES}.")
  String recompute;

  @Option(names = "--recompute-modules", paramLabel = "LIST",
      completionCandidates = Choices.RecomputeModules.class, description = "With --recompute"
      + " selective, the submodules recomputed, as Megatron-LM's --recompute-modules names them,"
      + " comma-separated (core_attn by default), each one of: ${COMPLETION-CANDIDATES}.")
  String recomputeModules;

  @Option(names = "--recompute-num-layers", paramLabel = "N", description = "With --recompute "
      + "full: recompute only the first N transformer layers of each pipeline stage (each model "
      + "chunk), the others keeping their activations, as Megatron-LM's --recompute-method block "
      + "--recompute-num-layers N runs it (default: every layer).")
  Integer recomputeNumLayers;

  @Option(names = "--sequence-parallel", description = "Sequence parallelism in the "
      + "tensor-parallel group.")
  boolean sequenceParallel;

  @Option(names = "--distributed-optimizer", description = "Shard the optimizer state over the"
      + " data-parallel group (ZeRO-1).")
  boolean distributedOptimizer;

  @Option(names = "--zero-stage", paramLabel = "N", description = "ZeRO stage over the"
      + " data-parallel group: 0 (none, the default), 1 (optimizer state; the same as"
      + " --distributed-optimizer), 2 (gradients and optimizer state, as DeepSpeed stage 2) or 3"
      + " (weights, gradients and optimizer state, as FSDP).")
  Integer zeroStage;

  @Option(names = "--shard-group", paramLabel = "G", description = "With --zero-stage 3: shard"
      + " the model state inside groups of G consecutive data-parallel GPUs and replicate it"
      + " across the --dp/G groups (hybrid sharding, HSDP: torchtitan's"
      + " data_parallel_shard_degree, Megatron-FSDP's --num-distributed-optimizer-instances"
      + " --dp/G); G divides --dp, 1 < G < --dp.")
  Integer shardGroup;

  @Option(names = "--first-stage-layers", paramLabel = "N", description = "Transformer layers"
      + " on the first pipeline stage (Megatron-LM's --decoder-first-pipeline-num-layers); the"
      + " other stages share the rest evenly.")
  Integer firstStageLayers;

  @Option(names = "--last-stage-layers", paramLabel = "N", description = "Transformer layers"
      + " on the last pipeline stage (Megatron-LM's --decoder-last-pipeline-num-layers).")
  Integer lastStageLayers;

  @Option(names = "--account-for-embedding-in-pipeline-split", description = "Count the"
      + " embedding as a layer when splitting the layers over pipeline stages and model chunks:"
      + " the first chunk holds one transformer layer fewer (as Megatron-LM's flag).")
  boolean embeddingInSplit;

  @Option(names = "--account-for-loss-in-pipeline-split", description = "Count the LM head and"
      + " loss as a layer in the split: the last chunk holds one transformer layer fewer (as"
      + " Megatron-LM's flag).")
  boolean lossInSplit;

  @Option(names = "--pipeline-model-parallel-layout", paramLabel = "LAYOUT", description = "The"
      + " layers of every model chunk, as Megatron-LM's flag of that name writes them: chunks in"
      + " layer order separated by |, E the embedding, t a transformer layer, m a multi-token"
      + " prediction module, L the loss; x*n and (...)*n repeat (e.g. 'Et|(tt|)*30mL'). The"
      + " chunks over --pp give the virtual stages.")
  String layout;

  @Option(names = "--ep", paramLabel = "N", description = "Expert-parallel size of a"
      + " mixture-of-experts model (Megatron-LM's --expert-model-parallel-size; default 1).")
  Integer ep;

  @Option(names = "--etp", paramLabel = "N", description = "Expert tensor-parallel size"
      + " (Megatron-LM's --expert-tensor-parallel-size; default 1).")
  Integer etp;

  @Option(names = "--cp", paramLabel = "N", description = "Context-parallel size: GPUs each"
      + " sequence is split over (Megatron-LM's --context-parallel-size; default 1).")
  Integer cp;

  @Option(names = "--cp-comm-type", paramLabel = "TYPE",
      completionCandidates = Choices.CpCommTypes.class, description = "How context"
      + " parallelism moves keys and values: p2p (a ring under the attention, the default),"
      + " all_gather (allgather, torchtitan's name, is the same) or a2a (DeepSpeed-Ulysses:"
      + " all-to-alls trade sequence shares for heads, and each GPU's attention runs over the"
      + " whole sequence for 1/CP of the heads); Megatron-LM's --cp-comm-type."
      + " One of: ${COMPLETION-CANDIDATES}.")
  String cpCommType;

  @Option(names = "--train-tokens", paramLabel = "N", description = "Tokens the whole run"
      + " trains on, 1 to 10^16: simulate prints the run's iterations and time, and the exports"
      + " set their iterations (Megatron-LM's --train-iters, torchtitan's training.steps) to"
      + " cover them.")
  Long trainTokens;

  /** Whether {@code --schedule gpipe} was asked for. */
  boolean gpipe() {
    if (schedule == null || schedule.equalsIgnoreCase("1f1b")) {
      return false;
    }
    Choices.pick("--schedule", schedule, new Choices.Schedules());
    if (vpp != null && vpp > 1) {
      throw new InputException("--schedule gpipe has no virtual stages; drop --vpp " + vpp);
    }
    int chunks = layout != null && pp != null && pp >= 1
        ? PipelineLayout.parse(layout, pp).virtualStages(pp) : 1;
    if (chunks > 1) {
      throw new InputException("--schedule gpipe has no virtual stages, and the "
          + "--pipeline-model-parallel-layout gives " + chunks + " chunks per pipeline stage");
    }
    return true;
  }

  /**
   * The flags given, in the order of the help text's groups.
   *
   * @return their names, such as {@code --tp}
   */
  java.util.List<String> given() {
    Object[][] flags = {{"--schedule", schedule}, {"--tp", tp}, {"--pp", pp}, {"--dp", dp},
        {"--vpp", vpp}, {"--micro-batch", microBatch}, {"--global-batch", globalBatch},
        {"--recompute", recompute}, {"--recompute-modules", recomputeModules},
        {"--recompute-num-layers", recomputeNumLayers},
        {"--sequence-parallel", sequenceParallel ? true : null},
        {"--distributed-optimizer", distributedOptimizer ? true : null},
        {"--zero-stage", zeroStage}, {"--shard-group", shardGroup},
        {"--first-stage-layers", firstStageLayers}, {"--last-stage-layers", lastStageLayers},
        {"--account-for-embedding-in-pipeline-split", embeddingInSplit ? true : null},
        {"--account-for-loss-in-pipeline-split", lossInSplit ? true : null},
        {"--pipeline-model-parallel-layout", layout}, {"--ep", ep}, {"--etp", etp},
        {"--cp", cp}, {"--cp-comm-type", cpCommType}, {"--train-tokens", trainTokens}};
    return CliValues.given(flags);
  }

  /**
   * The training configuration these flags state: the layout ({@link #config}) and its schedule
   * ({@link #gpipe}), in the frameworks' default overlaps and the GPU's precision and attention
   * until the other flags say otherwise. A training option of the layout's flags is added here
   * and in {@link TrainingConfig} only.
   *
   * @return the configuration, not yet bound
   */
  TrainingConfig training() {
    ParallelConfig c = config();
    TimeToTrainOptions.checkTrainTokens(trainTokens);
    return TrainingConfig.of(c, gpipe()).withTrainTokens(trainTokens == null ? 0 : trainTokens);
  }

  /** The configuration; every size flag is required. */
  ParallelConfig config() {
    require("--tp", tp);
    require("--pp", pp);
    require("--dp", dp);
    require("--micro-batch", microBatch);
    require("--global-batch", globalBatch);
    Recompute r = recompute == null ? Recompute.NONE : Recompute.parse(recompute);
    if (recomputeNumLayers != null && recomputeNumLayers < 1) {
      throw new InputException("--recompute-num-layers must be at least 1, got "
          + recomputeNumLayers);
    }
    if (recomputeModules != null) {
      // Checked here as well as with the model: the default list (core_attn) given by name
      // without selective recomputation would otherwise pass as if not given.
      RecomputeModule.requireSelective(r);
    }
    if (recomputeNumLayers != null && r != Recompute.FULL) {
      throw new InputException("--recompute-num-layers recomputes the first layers of each "
          + "stage in full: it needs --recompute full, and the mode is " + r.label());
    }
    if (zeroStage != null && (zeroStage < 0 || zeroStage > 3)) {
      throw new InputException("--zero-stage " + zeroStage + " is not a ZeRO stage meshplan"
          + " models; use 0, 1, 2 or 3");
    }
    if (zeroStage != null && distributedOptimizer && zeroStage != 1) {
      throw new InputException("--distributed-optimizer is ZeRO stage 1 but --zero-stage is "
          + zeroStage + "; give one of them");
    }
    if (shardGroup != null && shardGroup < 2) {
      throw new InputException("--shard-group must be at least 2 GPUs, got " + shardGroup
          + " (without it, ZeRO-3 shards over the whole data-parallel group)");
    }
    if (shardGroup != null && (zeroStage == null || zeroStage != 3)) {
      throw new InputException("--shard-group shards the whole model state inside groups: it "
          + "needs --zero-stage 3");
    }
    positive("--first-stage-layers", firstStageLayers);
    positive("--last-stage-layers", lastStageLayers);
    int zero = zeroStage != null ? zeroStage : distributedOptimizer ? 1 : 0;
    positive("--ep", ep);
    positive("--etp", etp);
    positive("--cp", cp);
    io.meshplan.plan.ContextExchange exchange = cpExchange();
    try {
      PipelineSplit split = split();
      int chunks = split instanceof PipelineLayout l ? l.virtualStages(pp) : vpp == null ? 1 : vpp;
      return new ParallelConfig(tp, pp, dp, chunks, microBatch, globalBatch, r,
          sequenceParallel, zero, firstStageLayers == null ? 0 : firstStageLayers,
          lastStageLayers == null ? 0 : lastStageLayers, ep == null ? 1 : ep,
          etp == null ? 1 : etp, cp == null ? 1 : cp, exchange, split,
          recomputeModules == null ? RecomputeModule.DEFAULT
              : RecomputeModule.parseList(recomputeModules), shardGroup == null ? 0 : shardGroup,
          recomputeNumLayers == null ? 0 : recomputeNumLayers);
    } catch (IllegalArgumentException e) {
      throw new InputException(FlagWords.reword(e.getMessage(), FlagWords.PARALLEL));
    }
  }

  /**
   * The pipeline split: a layout (with no {@code --vpp} but the one it gives, and not with the
   * counted split, as Megatron-LM's arguments.py asserts), or the counted split.
   */
  private PipelineSplit split() {
    if (layout == null) {
      return new SplitAccounting(embeddingInSplit, lossInSplit);
    }
    if (embeddingInSplit || lossInSplit) {
      throw new InputException("--pipeline-model-parallel-layout cannot be given with "
          + "--account-for-embedding-in-pipeline-split or --account-for-loss-in-pipeline-split,"
          + " as in Megatron-LM");
    }
    PipelineLayout l = PipelineLayout.parse(layout, pp);
    if (vpp != null && vpp != l.virtualStages(pp)) {
      throw new InputException("--vpp " + vpp + " disagrees with --pipeline-model-parallel-layout"
          + ", whose " + l.chunks().size() + " chunks over --pp " + pp + " give "
          + l.virtualStages(pp) + "; drop --vpp");
    }
    return l;
  }

  /** {@code --cp-comm-type}: p2p, all_gather or a2a; only with {@code --cp} above 1. */
  private io.meshplan.plan.ContextExchange cpExchange() {
    if (cpCommType == null) {
      return io.meshplan.plan.ContextExchange.P2P;
    }
    if (cp == null || cp == 1) {
      throw new InputException("--cp-comm-type needs --cp above 1");
    }
    return io.meshplan.plan.ContextExchange.parse(Choices.pick("--cp-comm-type", cpCommType,
        new Choices.CpCommTypes())).orElseThrow();
  }

  /** Megatron-Core refuses a stated stage of no layers ("must be larger than 0"). */
  private static void positive(String flag, Integer v) {
    if (v != null && v < 1) {
      throw new InputException(flag + " must be at least 1, got " + v);
    }
  }

  private static void require(String flag, Integer v) {
    if (v == null) {
      throw new InputException(flag + " is required (or give --plan FILE)");
    }
  }
}
