package io.meshplan.cli;

import io.meshplan.cluster.FailureRates;
import io.meshplan.sim.Goodput;
import io.meshplan.util.InputException;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The flags of the time to train with interruptions: where checkpoints go and how fast, how often
 * the job is interrupted, how long a restart takes, and what a GPU-hour costs. They apply with
 * {@code --train-tokens}; the arithmetic is {@link Goodput}'s.
 */
final class TimeToTrainOptions {
  /**
   * The smallest checkpoint bandwidth accepted, GB/s: 0.1, below one hard disk's sequential
   * write (about 0.2 GB/s); a 10^12-parameter model's 14 TB then write in 1.4e5 s, where a
   * bandwidth of 1e-300 GB/s took 1e301 s.
   */
  static final double MIN_GBPS = 0.1;
  /**
   * The largest checkpoint bandwidth accepted, GB/s: 10^6 (1 PB/s), far above any storage
   * system (the largest parallel file systems write some 10 TB/s).
   */
  static final double MAX_GBPS = 1e6;
  /** The longest restart, MTBF or repair accepted, hours: a century. */
  static final double MAX_HOURS = 876_600;
  /**
   * The shortest {@code --mtbf-node}, hours: 0.1 (six minutes), below which the default restart
   * of ten minutes alone outlasts the time between interruptions; a job's MTBF is this over its
   * nodes (at most 2^20), so at least 0.34 ms and finite everywhere it divides.
   */
  static final double MIN_MTBF_HOURS = 0.1;
  /** The shortest {@code --node-repair-hours}: 0.01 (36 s), within any restart. */
  static final double MIN_REPAIR_HOURS = 0.01;
  /**
   * The range of {@code --gpu-hour-price}, USD: a tenth of a cent (below any GPU-hour rented,
   * some dollars) to 10^6.
   */
  static final double MIN_PRICE = 0.001;
  /** The highest {@code --gpu-hour-price}, USD ({@link #MIN_PRICE}). */
  static final double MAX_PRICE = 1e6;
  /**
   * The most tokens {@code --train-tokens} may name: 10^16, 250 times the largest published
   * pre-training run (Llama 4 Scout's about 40 trillion tokens, Meta's model card). A run past it
   * is a typing slip, and its times would print as day counts of a dozen digits.
   */
  static final long MAX_TRAIN_TOKENS = 10_000_000_000_000_000L;
  /**
   * The most iterations {@code --train-iterations} may name: 10^10, {@link #MAX_TRAIN_TOKENS} in
   * iterations of a million tokens, the order of today's global batches; for the same reason.
   */
  static final long MAX_TRAIN_ITERATIONS = 10_000_000_000L;

  @Option(names = "--checkpoint-bandwidth", paramLabel = "GBPS", description = "With "
      + "--train-tokens: the storage's aggregate write (and read) bandwidth for checkpoints, GB/s;"
      + " with it, the expected time to train with interruptions is printed.")
  Double aggregateGbps;

  @Option(names = "--checkpoint-bandwidth-per-node", paramLabel = "GBPS", description = "As "
      + "--checkpoint-bandwidth, per node (times the nodes).")
  Double perNodeGbps;

  @Option(names = "--checkpoint-interval", paramLabel = "ITERATIONS", description = "Iterations"
      + " between checkpoints (default: the interval that minimizes the expected time).")
  Long interval;

  @Option(names = "--mtbf-node", paramLabel = "HOURS", description = "Mean time between "
      + "interruptions of one node, hours (default: Meta's Llama 3 record, 466 interruptions in 54"
      + " days on 16,384 GPUs, Dubey et al. 2024 Table 5).")
  Double mtbfNodeHours;

  @Option(names = "--failure-rates", paramLabel = "FILE", description = "Interruption counts by "
      + "cause over an exposure (YAML: source, gpus, days, causes: {name: count}), in place of "
      + "the default.")
  Path failureRates;

  @Option(names = "--restart-minutes", paramLabel = "MIN", description = "Time from an "
      + "interruption to training again, before the checkpoint is read back (default: 10, the "
      + "restart of Daly's worked examples).")
  Double restartMinutes;

  @Option(names = "--node-repair-hours", paramLabel = "HOURS", description = "Time to repair or "
      + "replace a node that an interruption takes out of service (the failure rates' nodeLoss "
      + "causes; every interruption with --mtbf-node): the job waits that long unless a spare "
      + "node stands in (plan --spare-nodes). Default: replaced within the restart.")
  Double repairHours;

  @Option(names = "--async-checkpoint", description = "Checkpoints are written in the "
      + "background (PyTorch DCP async_save, Megatron-LM --async-save): training stops only for "
      + "the copy of each GPU's shard to host memory over PCIe; a checkpoint counts once written, "
      + "so an interruption also loses the write's time, and the next checkpoint waits for it.")
  boolean asyncCheckpoint;

  @Option(names = "--train-iterations", paramLabel = "N", description = "Iterations the whole "
      + "run trains for, 1 to 10^10, in place of --train-tokens.")
  Long trainIterations;

  /**
   * The run's iterations: {@code --train-iterations}, or the iterations that train on {@code
   * --train-tokens} (rounded up), or empty when neither was given.
   *
   * @param trainTokens --train-tokens, or null
   * @param globalBatch sequences per iteration
   * @param seq tokens per sequence
   * @return the iterations
   */
  java.util.OptionalLong iterations(Long trainTokens, int globalBatch, int seq) {
    if (trainIterations != null && trainTokens != null) {
      throw new InputException("give --train-tokens or --train-iterations, not both");
    }
    if (trainIterations != null) {
      runLength("--train-iterations", trainIterations, MAX_TRAIN_ITERATIONS, "iterations");
      return java.util.OptionalLong.of(trainIterations);
    }
    if (trainTokens == null) {
      return java.util.OptionalLong.empty();
    }
    checkTrainTokens(trainTokens);
    return java.util.OptionalLong.of(io.meshplan.plan.TrainingConfig.iterations(trainTokens,
        globalBatch, seq));
  }

  /** {@code --gpu-hour-price} for plan and simulate (sweep declares its own). */
  static final class Price {
    @Option(names = "--gpu-hour-price", paramLabel = "USD", description = "Price of one GPU for "
        + "one hour: the run's cost (with --train-tokens).")
    Double usd;

    /** The price, refused in one line when it is no price. */
    Double checked() {
      ranged("--gpu-hour-price", usd, MIN_PRICE, MAX_PRICE, "USD");
      return usd;
    }
  }

  /**
   * One run to price: its length and iteration time, the model's size and precision, the
   * cluster, and the spares held back ({@code plan --spare-nodes}).
   *
   * @param iterations the run's iterations, >= 1
   * @param iterationSeconds one iteration without interruptions, seconds
   * @param parameters the model's parameters
   * @param fp32 whether it trains in fp32 (no separate master weights)
   * @param gpus the job's GPUs
   * @param nodes the job's nodes
   * @param gpu the job's GPU (its host link prices --async-checkpoint)
   * @param spares nodes held back as spares, 0 for none
   */
  record Run(long iterations, double iterationSeconds, long parameters, boolean fp32, long gpus,
      int nodes, io.meshplan.cluster.GpuSpec gpu, int spares) {
    /**
     * A model's run on a cluster, without spares.
     *
     * @param iterations the run's iterations
     * @param iterationSeconds one iteration, seconds
     * @param m the model, at its training precision
     * @param cs the cluster it runs on
     * @return the run
     */
    static Run of(long iterations, double iterationSeconds, io.meshplan.model.ModelSpec m,
        io.meshplan.cluster.ClusterSpec cs) {
      return new Run(iterations, iterationSeconds, m.parameterCount(),
          m.dtype() == io.meshplan.graph.DType.F32, cs.gpuCount(), cs.nodes(), cs.gpu(), 0);
    }

    /** This run with spares held back. */
    Run withSpares(int k) {
      return new Run(iterations, iterationSeconds, parameters, fp32, gpus, nodes, gpu, k);
    }
  }

  /** Each run's numbers, computed once (a command prints, writes and draws the same run). */
  private final java.util.Map<Run, Result> results = new java.util.HashMap<>();
  /** --failure-rates or the default, read once. */
  private FailureRates rates;

  /**
   * The run's first line: its iterations, where they come from, and its hours without
   * interruptions.
   *
   * @param run the run
   * @param tokensPerIteration the tokens of one iteration
   * @return the line, ending in a newline
   */
  String runLine(Run run, long tokensPerIteration) {
    double hours = run.iterations() * run.iterationSeconds() / 3600;
    return trainIterations != null ? String.format(Locale.ROOT, "training run: %d iterations "
        + "(--train-iterations), %.1f h at this iteration time%n", run.iterations(), hours)
        : String.format(Locale.ROOT, "training run: %d iterations (--train-tokens over %d tokens "
            + "per iteration), %.1f h at this iteration time%n", run.iterations(),
            tokensPerIteration, hours);
  }

  /**
   * The files these flags read, which no output may name.
   *
   * @return {@code --failure-rates} by flag, if given
   */
  java.util.Map<String, Path> inputFiles() {
    return failureRates == null ? java.util.Map.of() : java.util.Map.of("--failure-rates",
        failureRates);
  }

  /** Whether any flag was given. */
  boolean any() {
    return given().isPresent();
  }

  /**
   * The first time-to-train flag given, in the order of {@code --help}.
   *
   * @return the flag, empty when none is given
   */
  java.util.Optional<String> given() {
    String flag = aggregateGbps != null ? "--checkpoint-bandwidth"
        : perNodeGbps != null ? "--checkpoint-bandwidth-per-node"
        : interval != null ? "--checkpoint-interval"
        : mtbfNodeHours != null ? "--mtbf-node"
        : failureRates != null ? "--failure-rates"
        : restartMinutes != null ? "--restart-minutes"
        : repairHours != null ? "--node-repair-hours"
        : asyncCheckpoint ? "--async-checkpoint" : null;
    return java.util.Optional.ofNullable(flag);
  }

  /**
   * The refusal of a time-to-train flag given without the length of the run, naming the flag the
   * user gave.
   *
   * @param gpuHourPrice whether --gpu-hour-price was given
   * @return the refusal
   */
  private io.meshplan.util.InputException withoutRun(boolean gpuHourPrice) {
    String flag = given().orElse(gpuHourPrice ? "--gpu-hour-price" : "a time-to-train flag");
    return new io.meshplan.util.InputException(flag
        + " prices a whole run: it needs --train-tokens or --train-iterations");
  }

  /**
   * A run's expected wall-clock time and ETTR ({@link #text}'s numbers).
   *
   * @param run the run
   * @return the outcome
   */
  io.meshplan.sweep.TrainingOutcome outcome(Run run) {
    Result r = compute(run);
    return new io.meshplan.sweep.TrainingOutcome(run.iterations(), r.wallSeconds,
        r.goodput == null || !Double.isFinite(r.wallSeconds) ? Double.NaN
            : r.goodput.productiveSeconds() / r.wallSeconds);
  }

  /**
   * The time to train, in lines of text.
   *
   * @param run the run
   * @param gpuHourPrice the price of a GPU-hour, or null
   * @return the lines, each ending in a newline
   */
  String text(Run run, Double gpuHourPrice) {
    Result r = compute(run);
    long iterations = run.iterations();
    double iterationSeconds = run.iterationSeconds();
    long gpus = run.gpus();
    StringBuilder b = new StringBuilder();
    double hours = r.goodput == null ? iterations * iterationSeconds / 3600
        : r.wallSeconds / 3600;
    if (r.goodput == null) {
      b.append(String.format(Locale.ROOT, "time to train: %.1f days without interruptions "
          + "(--checkpoint-bandwidth for the expected time with them)%n", hours / 24));
    } else {
      Goodput g = r.goodput;
      b.append(String.format(Locale.ROOT, "interruptions: one per %.2f h on %d GPUs (%s)%n",
          g.mtbfSeconds() / 3600, gpus, r.source));
      b.append(r.waits);
      b.append(String.format(Locale.ROOT, "checkpoint: %s (%s per GPU), %.3g s %s; "
          + "every %d iterations (%.1f min; Young %.1f, Daly %.1f)%n", bytes(r.checkpointBytes),
          bytes(r.checkpointBytes / gpus), g.checkpointSeconds(), asyncCheckpoint
              ? "blocking (to host; written in the background)" : "to write and read", r.interval,
          r.interval * iterationSeconds / 60, g.youngSeconds() / 60, g.dalySeconds() / 60));
      if (Double.isInfinite(r.wallSeconds)) {
        b.append("expected wall-clock: unbounded: interruptions come faster than a segment "
            + "between checkpoints completes\n");
      } else {
        double prod = g.productiveSeconds();
        double ckpt = r.segments * g.checkpointSeconds();
        b.append(String.format(Locale.ROOT, "expected wall-clock: %.2f days (productive %.2f,"
            + " checkpoints %.2f, lost work and restarts %.2f), %.0f interruption%s, ETTR %.1f%%%n",
            r.wallSeconds / 86400, prod / 86400, ckpt / 86400,
            (r.wallSeconds - prod - ckpt) / 86400, g.interruptions(r.wallSeconds),
            Math.round(g.interruptions(r.wallSeconds)) == 1 ? "" : "s",
            100 * prod / r.wallSeconds));
      }
    }
    if (!Double.isInfinite(hours)) {
      double gpuHours = hours * gpus;
      b.append(String.format(Locale.ROOT, "GPU-hours: %.4g%s%n", gpuHours, gpuHourPrice == null
          ? "" : String.format(Locale.ROOT, ", cost $%.4g at $%s per GPU-hour",
              gpuHours * gpuHourPrice, gpuHourPrice)));
    }
    return b.toString();
  }

  /**
   * The same as JSON fields.
   *
   * @param o the object to add to
   * @param run the run
   * @param gpuHourPrice the price of a GPU-hour, or null
   */
  void json(com.fasterxml.jackson.databind.node.ObjectNode o, Run run, Double gpuHourPrice) {
    Result r = compute(run);
    long iterations = run.iterations();
    double iterationSeconds = run.iterationSeconds();
    long gpus = run.gpus();
    o.put("iterations", iterations);
    o.put("productiveSeconds", iterations * iterationSeconds);
    if (r.goodput != null) {
      Goodput g = r.goodput;
      o.put("failureSource", r.source);
      o.put("mtbfSeconds", g.mtbfSeconds());
      o.put("checkpointBytes", r.checkpointBytes);
      o.put("checkpointSeconds", g.checkpointSeconds());
      o.put("restartSeconds", g.restartSeconds());
      o.put("downtimeSeconds", g.downtimeSeconds());
      o.put("checkpointIntervalIterations", r.interval);
      o.put("youngSeconds", g.youngSeconds());
      o.put("dalySeconds", g.dalySeconds());
      if (Double.isFinite(r.wallSeconds)) {
        o.put("expectedSeconds", r.wallSeconds);
        o.put("expectedInterruptions", g.interruptions(r.wallSeconds));
        o.put("ettr", g.productiveSeconds() / r.wallSeconds);
      } else {
        o.putNull("expectedSeconds");
      }
    }
    double wall = r.goodput == null ? iterations * iterationSeconds : r.wallSeconds;
    if (Double.isFinite(wall)) {
      o.put("gpuHours", wall / 3600 * gpus);
      if (gpuHourPrice != null) {
        o.put("costUsd", wall / 3600 * gpus * gpuHourPrice);
      }
    }
  }

  /**
   * The run for the report, where interruptions are priced.
   *
   * @param run the run
   * @return the report's run, or empty without a checkpoint bandwidth
   */
  java.util.Optional<io.meshplan.report.TrainingRun> report(Run run) {
    Result r = compute(run);
    return r.goodput == null ? java.util.Optional.empty() : java.util.Optional.of(
        new io.meshplan.report.TrainingRun(r.goodput, r.interval, (int) run.gpus(),
            perNodeGbps != null));
  }

  /** The numbers both renderings print. */
  private record Result(Goodput goodput, String source, double checkpointBytes, long interval,
      long segments, double wallSeconds, String waits) {}

  private Result compute(Run run) {
    check();
    return results.computeIfAbsent(run, this::result);
  }

  private Result result(Run run) {
    long iterations = run.iterations();
    double iterationSeconds = run.iterationSeconds();
    long gpus = run.gpus();
    int nodes = run.nodes();
    int spareNodes = run.spares();
    if (aggregateGbps == null && perNodeGbps == null) {
      return new Result(null, "", 0, 0, 0, iterations * iterationSeconds, "");
    }
    // Mixed-precision Adam keeps, once across data-parallel replicas (distributed checkpoints
    // save each shard once): the weights in the training type (2 bytes), fp32 master weights and
    // two fp32 moments (12 bytes); fp32 training has no separate master (4 + 8 bytes).
    double checkpointBytes = (double) run.parameters() * (run.fp32() ? 12 : 14);
    double gbps = aggregateGbps != null ? aggregateGbps : perNodeGbps * nodes;
    double seconds = checkpointBytes / (gbps * 1e9);
    double mtbf;
    String source;
    double nodeLoss;
    if (mtbfNodeHours != null) {
      mtbf = mtbfNodeHours * 3600 / nodes;
      source = String.format(Locale.ROOT, "--mtbf-node %s h over %d nodes", mtbfNodeHours, nodes);
      nodeLoss = 1;
    } else {
      if (rates == null) {
        rates = failureRates != null ? FailureRates.read(failureRates) : FailureRates.llama3();
      }
      mtbf = rates.jobMtbfSeconds(gpus);
      source = failureRates != null ? String.valueOf(failureRates)
          : "Llama 3's record: Dubey et al. 2024, Table 5";
      nodeLoss = rates.nodeLossFraction();
    }
    double restart = (restartMinutes == null ? 10 : restartMinutes) * 60 + seconds;
    double blocking = seconds;
    long fewest = 1;
    if (asyncCheckpoint) {
      // Training stops for the device-to-host copy of each GPU's shard; the write to storage
      // follows in the background. An interruption during it falls back one checkpoint further:
      // charged as the write's time on every restart. The next checkpoint starts after it ends.
      blocking = checkpointBytes / gpus / hostBytesPerSecond(run.gpu());
      restart += seconds;
      fewest = Math.max(1, (long) Math.ceil(seconds / iterationSeconds));
    }
    double downtime = 0;
    String waits = "";
    if (repairHours != null) {
      // Nodes in repair at a random moment: Poisson with mean (node losses per second) x (repair
      // time), the occupancy of an M/G/infinity queue (Takacs 1962). A node loss waits for its
      // repair only when every spare is out; charged the whole repair (an upper bound).
      double repair = repairHours * 3600;
      double inRepair = nodeLoss / mtbf * repair;
      double allOut = spareNodes == 0 ? 1 : poissonAtLeast(inRepair, spareNodes);
      downtime = nodeLoss * repair * allOut;
      waits = String.format(Locale.ROOT, "node losses: %.0f%% of interruptions, each waiting %s h"
          + " for repair%s%n", 100 * nodeLoss, repairHours, spareNodes == 0 ? " (no spare)"
          : String.format(Locale.ROOT, " only when all %d spares are out (P = %.2g)", spareNodes,
              allOut));
    }
    Goodput g = new Goodput(iterationSeconds, iterations, mtbf, blocking, restart, downtime);
    // The expected time is quasi-convex in the interval: below a floor, the floor is best.
    long k = interval != null ? interval : Math.min(iterations,
        Math.max(fewest, g.optimalInterval()));
    if (k > iterations) {
      throw new InputException("--checkpoint-interval " + k + " is longer than the run's "
          + iterations + " iterations");
    }
    if (k < fewest) {
      throw new InputException("--checkpoint-interval " + k + " is shorter than the background "
          + "write of a checkpoint (" + fewest + " iterations)");
    }
    long segments = iterations / k + (iterations % k > 0 ? 1 : 0);
    return new Result(g, source, checkpointBytes, k, segments, g.expectedSeconds(k), waits);
  }

  /**
   * The host link a GPU's checkpoint shard is copied over, bytes/s: one PCIe x16 link per
   * direction, 15.75 GB/s for Gen3 (V100), 31.5 for Gen4 (A100) and 63 for Gen5 (H100, H200,
   * B200, and AMD's MI300X, MI325X and MI355X), the PCI Express Base Specification's per-lane
   * rates (8, 16, 32 GT/s, 128b/130b) and the generation each datasheet gives its GPU's host
   * interface (the AMD Instinct datasheets: "PCIe 5.0 x16").
   */
  static double hostBytesPerSecond(io.meshplan.cluster.GpuSpec gpu) {
    return switch (gpu.architecture()) {
      case VOLTA -> 15.75e9;
      case AMPERE -> 31.5e9;
      case HOPPER, BLACKWELL, CDNA3, CDNA4 -> 63e9;
    };
  }

  /** {@code P(X >= k)} for X Poisson with mean {@code mean}. */
  static double poissonAtLeast(double mean, int k) {
    double term = Math.exp(-mean);
    double below = 0;
    for (int i = 0; i < k; i++) {
      below += term;
      term *= mean / (i + 1);
    }
    return Math.max(0, 1 - below);
  }

  /**
   * Refuses the flags as a command was given them, before any work: one of them (or the GPU-hour
   * price) without the run's length ({@link #withoutRun}), then {@link #check()}.
   *
   * @param timed whether the run's length is known (--train-tokens, --train-iterations)
   * @param gpuHourPrice whether --gpu-hour-price was given
   */
  void check(boolean timed, boolean gpuHourPrice) {
    if (!timed && (any() || gpuHourPrice)) {
      throw withoutRun(gpuHourPrice);
    }
    check();
  }

  /** Refuses values no run has, and flags that need a checkpoint bandwidth without one. */
  void check() {
    if (aggregateGbps == null && perNodeGbps == null && given().isPresent()) {
      // given() names the first of the interruption flags here: no bandwidth flag was given.
      throw new InputException(given().get() + " prices interruptions and checkpoints, which "
          + "need --checkpoint-bandwidth or --checkpoint-bandwidth-per-node");
    }
    ranged("--node-repair-hours", repairHours, MIN_REPAIR_HOURS, MAX_HOURS, "hours");
    ranged("--checkpoint-bandwidth", aggregateGbps, MIN_GBPS, MAX_GBPS, "GB/s");
    ranged("--checkpoint-bandwidth-per-node", perNodeGbps, MIN_GBPS, MAX_GBPS, "GB/s");
    ranged("--mtbf-node", mtbfNodeHours, MIN_MTBF_HOURS, MAX_HOURS, "hours");
    ranged("--restart-minutes", restartMinutes, 0, MAX_HOURS * 60, "minutes");
    if (interval != null && interval < 1) {
      throw new InputException("--checkpoint-interval must be at least 1, got " + interval);
    }
    if (aggregateGbps != null && perNodeGbps != null) {
      throw new InputException("give --checkpoint-bandwidth or --checkpoint-bandwidth-per-node, "
          + "not both");
    }
    if (mtbfNodeHours != null && failureRates != null) {
      throw new InputException("give --mtbf-node or --failure-rates, not both");
    }
  }

  /**
   * Refuses a {@code --train-tokens} outside 1 to {@link #MAX_TRAIN_TOKENS}.
   *
   * @param tokens the flag's value, or null when not given
   */
  static void checkTrainTokens(Long tokens) {
    if (tokens != null) {
      runLength("--train-tokens", tokens, MAX_TRAIN_TOKENS, "tokens");
    }
  }

  /** Refuses a run length outside 1 to max in one line naming the flag, the range and unit. */
  private static void runLength(String flag, long v, long max, String unit) {
    if (v < 1 || v > max) {
      throw new InputException(flag + " must be a whole number from 1 to "
          + io.meshplan.util.Units.figure(max) + " " + unit + ", got " + v);
    }
  }

  /** Refuses a value outside [min, max] in one line naming the flag, the range and its unit. */
  static void ranged(String flag, Double v, double min, double max, String unit) {
    if (v != null && !(v >= min && v <= max)) {
      throw new InputException(flag + " must be " + io.meshplan.util.Units.range(min, max, unit)
          + ", got " + v);
    }
  }

  /** Bytes in decimal units. */
  private static String bytes(double b) {
    String[] units = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    while (b >= 1000 && u < units.length - 1) {
      b /= 1000;
      u++;
    }
    return String.format(Locale.ROOT, "%.3g %s", b, units[u]);
  }
}
