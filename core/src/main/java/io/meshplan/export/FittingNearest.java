package io.meshplan.export;

import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The nearest configuration a framework can express, made to fit in GPU memory where it does not.
 * A writer's nearest configuration changes only what the framework lacks (LoRA adapters dropped,
 * an interleaved schedule undone, a ZeRO stage another framework has), and the change can cost
 * memory: a framework that trains every weight keeps gradients and optimizer state for all of
 * them. {@code export} refuses a configuration that does not fit, so a nearest configuration
 * printed as it is would be refused when run as printed. The memory-saving changes are tried in
 * the order of how little they change the job, and the first the framework expresses and that
 * fits is the one given:
 *
 * <ol>
 *   <li>the configuration as the writer gave it;
 *   <li>the optimizer state sharded over the data-parallel GPUs (ZeRO stage 1, Megatron-LM's
 *       distributed optimizer), where it was not and there is more than one data-parallel GPU:
 *       the same arithmetic, the state spread;
 *   <li>full recomputation of every layer, where the configuration recomputed less (selectively,
 *       or only some layers of each chunk): only the blocks' inputs are kept, the forward pass
 *       run again in the backward;
 *   <li>both;
 *   <li>the weights, gradients and optimizer state sharded (ZeRO stage 3, FSDP), where they were
 *       not and there is more than one data-parallel GPU, then that with full recomputation: the
 *       weights gathered for each layer's passes.
 * </ol>
 *
 * A fit is the planners' rule ({@code io.meshplan.sim.MemoryFit#fits}, which {@code export}
 * applies to what it writes): the predicted peak per GPU at most the memory one GPU may use.
 * When none of them fits, or the predictor cannot price them, the writer's configuration is kept
 * and said not to fit.
 *
 * @param input the configuration to print
 * @param prediction its predicted cost, empty when the predictor cannot price it
 * @param change what was changed to make it fit, empty when nothing was
 * @param fits whether the prediction fits; false also when there is no prediction
 */
public record FittingNearest(ExportInput input, Optional<PipelinePlan.Prediction> prediction,
    Optional<String> change, boolean fits) {
  /** Checks the parts. */
  public FittingNearest {
    Require.nonNull(input, "input");
    Require.nonNull(prediction, "prediction");
    Require.nonNull(change, "change");
  }

  /**
   * The first of the writer's nearest configuration and its memory-saving variants that the
   * writer expresses and that fits.
   *
   * @param writer the framework's writer, which must express {@code nearest}
   * @param nearest the writer's nearest configuration
   * @param cost the predictor
   * @param capacityBytes the memory one GPU may use, bytes
   * @return the configuration to print, with its prediction
   */
  public static FittingNearest of(FrameworkWriter writer, ExportInput nearest, CostPredictor cost,
      double capacityBytes) {
    Require.nonNull(writer, "writer");
    Require.nonNull(nearest, "nearest configuration");
    Require.nonNull(cost, "cost predictor");
    Require.that(capacityBytes > 0 && Double.isFinite(capacityBytes),
        "capacityBytes must be positive and finite");
    Optional<PipelinePlan.Prediction> first = cost.predict(nearest);
    if (first.isEmpty() || fits(first.get(), capacityBytes)) {
      return new FittingNearest(nearest, first, Optional.empty(), first.isPresent());
    }
    for (Variant v : variants(nearest.config())) {
      Optional<ExportInput> in = expressed(writer, nearest, v.config());
      if (in.isEmpty()) {
        continue;
      }
      Optional<PipelinePlan.Prediction> p = cost.predict(in.get());
      if (p.isPresent() && fits(p.get(), capacityBytes)) {
        return new FittingNearest(in.get(), p, Optional.of(v.words()), true);
      }
    }
    return new FittingNearest(nearest, first, Optional.empty(), false);
  }

  private static boolean fits(PipelinePlan.Prediction p, double capacityBytes) {
    return p.peakMemoryBytesPerGpu() <= capacityBytes;
  }

  /** A memory-saving change and its words. */
  private record Variant(ParallelConfig config, String words) {}

  /** The memory-saving changes of the class comment, in its order. */
  private static List<Variant> variants(ParallelConfig c) {
    List<Variant> out = new ArrayList<>();
    boolean shard = c.zeroStage() == 0 && c.dataParallel() > 1;
    // Full recomputation of only the first layers of each chunk (--recompute-num-layers) keeps
    // the other layers' activations: recomputing every layer saves more.
    boolean recompute = c.recompute() != Recompute.FULL || c.recomputeLayers() > 0;
    if (shard) {
      out.add(new Variant(c.withZeroStage(1), "the optimizer state sharded (ZeRO stage 1)"));
    }
    if (recompute) {
      out.add(new Variant(fullRecompute(c), "full recomputation"));
    }
    if (shard && recompute) {
      out.add(new Variant(fullRecompute(c.withZeroStage(1)),
          "the optimizer state sharded (ZeRO stage 1) and full recomputation"));
    }
    if (c.zeroStage() < 3 && c.dataParallel() > 1) {
      ParallelConfig z3 = c.withZeroStage(3);
      out.add(new Variant(z3, "the weights, gradients and optimizer state sharded (ZeRO stage 3)"));
      if (recompute) {
        out.add(new Variant(fullRecompute(z3), "the weights, gradients and "
            + "optimizer state sharded (ZeRO stage 3) and full recomputation"));
      }
    }
    return out;
  }

  /** Full recomputation of every layer of each chunk. */
  private static ParallelConfig fullRecompute(ParallelConfig c) {
    return c.withRecompute(Recompute.FULL).withRecomputeLayers(0);
  }

  /** The variant as the writer's input, when it binds and the writer expresses it. */
  private static Optional<ExportInput> expressed(FrameworkWriter writer, ExportInput base,
      ParallelConfig config) {
    try {
      ExportInput in = base.withConfig(config);
      return writer.missing(in).isEmpty() ? Optional.of(in) : Optional.empty();
    } catch (InputException | InfeasibleException e) {
      // A variant the configuration's rules refuse is not a candidate.
      return Optional.empty();
    }
  }
}
