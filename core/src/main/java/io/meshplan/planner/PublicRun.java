package io.meshplan.planner;

import io.meshplan.calibrate.Profile;
import io.meshplan.cluster.AttentionKernel;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * One published, measured training run, stated as {@code meshplan simulate} states a job: the
 * model, the cluster it ran on, its parallel layout, precision, attention kernel and overlaps,
 * and the figure its authors published.
 *
 * @param fold the public fold: the software stack the run was measured with ({@link
 *     PublicFolds})
 * @param set the published table within the fold, for tables of results (e.g. {@code mpth})
 * @param name the run's name in its table
 * @param model the model, with the run's sequence, global batch and precision
 * @param cluster the GPUs it ran on
 * @param config its parallel layout
 * @param dtype its training precision
 * @param attention fused or unfused attention
 * @param kernel the fused attention kernel it ran, or empty for its architecture's default
 * @param overlaps the overlaps and loss its stack ran with
 * @param measured the published figure
 * @param figure what the figure counts
 */
public record PublicRun(String fold, String set, String name, ModelSpec model,
    ClusterSpec cluster, ParallelConfig config, DType dtype, Attention attention,
    Optional<AttentionKernel> kernel, Overlaps overlaps, double measured, Figure figure) {

  /** Validates the fields. */
  public PublicRun {
    Require.nonNull(fold, "fold");
    Require.nonNull(set, "set");
    Require.nonNull(name, "name");
    Require.nonNull(model, "model");
    Require.nonNull(cluster, "cluster");
    Require.nonNull(config, "config");
    Require.nonNull(dtype, "dtype");
    Require.nonNull(attention, "attention");
    Require.nonNull(kernel, "kernel");
    Require.nonNull(overlaps, "overlaps");
    Require.that(measured > 0 && Double.isFinite(measured), "measured figure must be > 0");
    Require.nonNull(figure, "figure");
  }

  /**
   * What a published figure counts. Every figure is a throughput: work per second, with the work
   * fixed by the run, so that measured over predicted figure is predicted over measured time.
   */
  public enum Figure {
    /** Tokens per second per GPU. */
    TOKENS_PER_GPU("tokens/s per GPU"),
    /**
     * The FLOPs the hardware executed (recomputation included) per second per GPU, counted by
     * meshplan's graph for the run, as SC'21's Table 1 counts them by its formula.
     */
    HARDWARE_TFLOPS("hardware TFLOP/s per GPU"),
    /**
     * Model TFLOP/s per GPU by Megatron-LM's formula of 2024 ({@link
     * io.meshplan.model.ModelFlops#megatronModelFlops}), attention over the whole score matrix.
     */
    MEGATRON_MODEL_TFLOPS("model TFLOP/s per GPU, Megatron's formula"),
    /**
     * TFLOP/s per GPU counting {@code 6N + 12 L H Q T} FLOPs per token (Chowdhery et al., PaLM,
     * appendix B), as Meta counts Llama 3's.
     */
    PALM_TFLOPS("TFLOP/s per GPU (PaLM count)"),
    /**
     * TFLOP/s per GPU counting {@code 6N + 6 L H Q T} FLOPs per token, causal attention's half of
     * PaLM's term, as MaxText counted them in 2024 ({@code MaxText/maxtext_utils.py}, {@code
     * calculate_tflops_training_per_device}, at AI-Hypercomputer/maxtext efb6d9e4a).
     */
    MAXTEXT_TFLOPS("TFLOP/s per GPU (MaxText count)");

    private final String unit;

    Figure(String unit) {
      this.unit = unit;
    }

    /**
     * The unit, for tables.
     *
     * @return e.g. {@code tokens/s per GPU}
     */
    public String unit() {
      return unit;
    }
  }

  /**
   * The run's figure in a simulation of it.
   *
   * @param s the simulation
   * @return the predicted figure, in {@link #figure}'s unit
   */
  public double predicted(SimulationResult s) {
    int gpus = cluster.gpuCount();
    return switch (figure) {
      case TOKENS_PER_GPU -> s.tokensPerSecond() / gpus;
      case HARDWARE_TFLOPS -> s.hardwareTflopsPerGpu();
      case MEGATRON_MODEL_TFLOPS -> io.meshplan.model.ModelFlops.megatronModelFlops(
          config.globalBatchSize(), model.seq(), model.layers(), model.hidden(), model.vocab())
          / s.iterationSeconds() / gpus / 1e12;
      case PALM_TFLOPS -> countedTflops(s, gpus, 12);
      case MAXTEXT_TFLOPS -> countedTflops(s, gpus, 6);
    };
  }

  /**
   * TFLOP/s per GPU counting {@code 6N + c L H Q T} FLOPs per token: PaLM's count with {@code c
   * = 12}, MaxText's causal one with {@code c = 6}.
   */
  private double countedTflops(SimulationResult s, int gpus, double attentionCoefficient) {
    return (6.0 * model.parameterCount() + attentionCoefficient * model.layers() * model.heads()
        * model.headDim() * model.seq()) * s.tokensPerSecond() / gpus / 1e12;
  }

  /**
   * Simulates the run as {@code simulate} would with the given compute prices: the catalog's
   * collectives, the run's attention kernel, and the profile's compute scale for the GPU's
   * architecture (none: kernel-level prices).
   *
   * @param compute compute scales, or empty for kernel-level prices
   * @return the simulation
   */
  public SimulationResult simulate(Optional<Profile> compute) {
    TrainingJob job = TrainingJob.of(model, cluster).withGlobalBatch(config.globalBatchSize())
        .withDtype(dtype).withAttention(attention).withOverlaps(overlaps);
    Pricing p = compute.<Pricing>map(Pricing::fitted).orElseGet(Pricing::catalog);
    if (kernel.isPresent()) {
      p = p.withAttentionKernel(kernel.get());
    }
    PricedJob priced = Planner.price(job, p, PlannerOptions.defaults().withThreads(1));
    config.check(cluster.gpuCount(), model.layers(), model.heads(), model.kvHeads());
    return Planner.simulate(priced, config, false).orElseThrow(() -> new IllegalStateException(
        name + ": tensor-parallel size " + config.tensorParallel() + " does not split its "
        + "layers")).simulation();
  }

  /**
   * The measured iteration time: the simulated time times predicted over measured figure (both
   * throughputs of the same work).
   *
   * @param s a simulation of the run, at any prices
   * @return seconds
   */
  public double measuredSeconds(SimulationResult s) {
    return s.iterationSeconds() * predicted(s) / measured;
  }
}
