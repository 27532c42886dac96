package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.export.CostPredictor;
import io.meshplan.export.ExportInput;
import io.meshplan.export.ExportResult;
import io.meshplan.export.ExportTarget;
import io.meshplan.export.Exporter;
import io.meshplan.export.FittingNearest;
import io.meshplan.interop.PlanSimulator;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.sim.MemoryFit;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.ShellQuote;
import io.meshplan.util.Units;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code meshplan export}: a plan or a Megatron-style configuration as a framework config. */
@Command(
    name = "export",
    mixinStandardHelpOptions = true,
    description = {
      "Writes a Megatron-LM argument file, a torchtitan config, a DeepSpeed launch file (its"
          + " JSON and the Megatron-DeepSpeed arguments) or an Alpa training program for a plan"
          + " (--plan) or for the flags simulate takes.",
      "Alpa (--to alpa) runs a plan's stages as planned, each on its own submesh with its own"
          + " setting: alpa.PipeshardParallel with a ManualStageOption, on a Ray cluster; 'plan"
          + " --for alpa' plans only what it runs.",
      "torchtitan's config is by default its main branch's form (--framework-version main):"
          + " a Python module whose function returns a Trainer.Config, run with torchrun -m"
          + " torchtitan.train --module/--config; --framework-version 0.2.2 writes the job TOML"
          + " of v0.2.2, its last release that reads TOML.",
      "A configuration the framework cannot express is never approximated: exit code 3 names"
          + " what is missing and prints the nearest configuration it can express.",
      "Exit codes: 0 written, 2 bad input, 3 not expressible or does not fit in GPU memory."
    })
final class ExportCommand implements Callable<Integer> {
  /** Predicts the cost of the nearest expressible configuration; null: the simulator. */
  private final CostPredictor predictor;

  /** The command as picocli creates it: predictions come from the schedule simulator. */
  ExportCommand() {
    this(null);
  }

  /**
   * The command with another cost predictor (tests).
   *
   * @param predictor predicts the nearest expressible configuration's cost
   */
  ExportCommand(CostPredictor predictor) {
    this.predictor = predictor;
  }

  @Spec CommandSpec spec;

  @Mixin ModelOptions model = new ModelOptions();

  @Mixin RetiredBatchOption retiredBatch = new RetiredBatchOption();

  @Option(names = "--plan", paramLabel = "FILE", description = "A plan written by 'plan --out'.")
  Path plan;

  @Mixin ClusterOptions clusterOptions = new ClusterOptions();

  /** Whether the plan file's model, attention and overlaps are ones the target runs. */
  private boolean planForHelps;

  /** The cluster the export prices (its GPU names the prices line of a prediction). */
  private ClusterSpec priced;

  /** {@code --plan} as read, once: the plan's export and its nearest configuration. */
  private PlanFile planFile;

  @Option(names = "--to", required = true, paramLabel = "TARGET",
      completionCandidates = Choices.ExportTargets.class,
      description = "One of: ${COMPLETION-CANDIDATES}.")
  String to;

  @Mixin ParallelOptions parallel = new ParallelOptions();

  @Mixin AttentionOptions attention = new AttentionOptions();

  @Option(names = "--framework-version", paramLabel = "VERSION",
      description = "The framework release the file is for; torchtitan only: main (default;"
          + " also current or b5bcd76: the Python config of its main branch, as of commit"
          + " b5bcd76, 2026-08-21) or 0.2.2 (also v0.2.2 or 0.2: its last TOML release)."
          + " One of: ${COMPLETION-CANDIDATES}.",
      completionCandidates = Choices.FrameworkVersions.class)
  String frameworkVersion;

  @Option(names = "--out", paramLabel = "FILE", description = "Write here (default: stdout)."
      + OutputPaths.DASH_IS_STDOUT)
  Path out;

  @Option(names = "--force", description = ForceOption.DESCRIPTION)
  boolean force;

  @Override
  public Integer call() {
    ExportTarget target = withFrameworkVersion(ExportTarget.parse(to), frameworkVersion);
    attention.kernel().ifPresent(ExportCommand::refuseKernel);
    out = OutputPaths.stdout(out);
    if (out != null) {
      Map<String, Path> inputs = new LinkedHashMap<>(
          clusterOptions.inputFiles());
      if (model != null) {
        inputs.putAll(model.inputFiles());
      }
      if (plan != null) {
        inputs.put("--plan", plan);
        inputs.putAll(PlanFiles.namedFiles(plan));
      }
      ExportFiles.checkWritable(out, force, inputs);
    }
    ExportResult result = plan != null ? fromPlan(target) : fromFlags(target);
    PrintWriter o = spec.commandLine().getOut();
    Optional<String> text = result instanceof ExportResult.Exported e ? Optional.of(e.text())
        : result instanceof ExportResult.PlanExported p ? Optional.of(p.text())
        : Optional.empty();
    if (text.isPresent()) {
      if (out != null) {
        ExportFiles.write(out, text.get());
      } else {
        o.print(text.get());
      }
      o.flush();
      return ExitCodes.OK;
    }
    ExportResult.NotExpressible n = (ExportResult.NotExpressible) result;
    spec.commandLine().getErr().println("meshplan: infeasible: " + ExceptionMapper.oneLine(
        target.label() + " cannot express this configuration: " + n.missing()));
    spec.commandLine().getErr().flush();
    if (n.nearest().isEmpty()) {
      o.println("no configuration " + target.label() + " can express is near it"
          + (planForHelps ? "; plan again with the plan's flags and --for " + target.label()
              + ", which searches only what " + target.label() + " launches" : ""));
    } else {
      CostPredictor cost = predictor != null ? predictor : this::simulate;
      ExportInput writers = n.nearest().get();
      // A plan's export is judged by the memory the plan was searched within.
      double capacity = planFile != null
          ? planFile.memoryPerGpu(clusterOptions, writers.cluster())
          : clusterOptions.memoryPerGpu(writers.cluster());
      // Printed where it is not the GPU's default, so that the command runs as it was judged.
      String memoryFlag = capacity == writers.cluster().gpu().usableMemoryBytes() ? ""
          : " --memory " + memoryWord(capacity);
      FittingNearest near = FittingNearest.of(Exporter.writer(target), writers, cost, capacity);
      ExportInput nearest = near.input();
      String fitted = near.change().map(c -> ", with " + c + " so that it fits").orElse("");
      Optional<String> modelWord = modelWord(nearest.model());
      if (modelWord.isPresent()) {
        o.println("nearest configuration " + target.label() + " can express" + fitted + ":");
        o.println("  meshplan export --to " + target.label()
            + (target == ExportTarget.TORCHTITAN_V022 ? " --framework-version 0.2.2 " : " ")
            + flags(nearest, modelWord.get(), clusterWord(nearest)) + memoryFlag);
      } else {
        // No command line is printed that would not run: the plan does not say where its
        // model's config.json is.
        o.println("nearest configuration " + target.label() + " can express" + fitted
            + " (the plan's model " + nearest.model().name() + " is no preset: add --model with"
            + " its config.json to these flags):");
        o.println("  " + flags(nearest, null, clusterWord(nearest)) + memoryFlag);
      }
      if (!clusterOptions.clusterGiven()
          && !clusterOptions.spec(nearest.cluster().toShortString()).equals(nearest.cluster())) {
        // The plan embeds a cluster file whose figures a cluster string does not carry.
        o.println("  (priced on the plan's cluster file, embedded as clusterDescription: give"
            + " that file as --cluster, where " + nearest.cluster().toShortString() + " names the"
            + " catalog's figures)");
      }
      o.println(prediction(near.prediction()));
      if (near.prediction().isPresent() && !near.fits()) {
        // Said rather than left to the reader: export refuses it when run as printed.
        o.println("it does not fit: it needs " + Units.formatBytes(
            near.prediction().get().peakMemoryBytesPerGpu()) + " per GPU, and "
            + Units.formatBytes(capacity) + " is available, also with its state sharded (ZeRO)"
            + " and full recomputation where " + target.label() + " has them");
      }
      if (priced != null) {
        o.println(clusterOptions.pricing().describe(priced.gpu()));
      }
    }
    o.flush();
    return ExitCodes.INFEASIBLE;
  }

  /**
   * A memory capacity as {@code --memory} reads it back exactly: whole gibibytes as {@code
   * NGiB}, else whole bytes.
   *
   * @param bytes the capacity, bytes
   * @return e.g. {@code 40GiB} or {@code 42500000000B}
   */
  static String memoryWord(double bytes) {
    long b = (long) bytes;
    long gib = 1L << 30;
    return b % gib == 0 ? b / gib + "GiB" : b + "B";
  }

  /**
   * A named attention kernel, which no writer states (each writes its framework's own fused
   * kernel, the one {@code --attention flash} prices): refused in one line.
   */
  private static void refuseKernel(io.meshplan.cluster.AttentionKernel k) {
    throw new InfeasibleException("export writes no named attention kernel (--attention "
        + k.word() + "): each export states its framework's own fused kernel, which "
        + "--attention flash prices; give --attention flash");
  }

  /** The plan file's export, refused when the plan does not fit its cluster's memory. */
  private ExportResult fromPlan(ExportTarget target) {
    List<String> given = JobFlags.given(model, parallel);
    if (!given.isEmpty()) {
      throw new InputException("give --plan or the model and parallel flags, not both ("
          + String.join(", ", given) + ")");
    }
    if (attention.chosen().isPresent()) {
      throw new InputException("--plan carries the attention it was planned with; drop "
          + "--attention");
    }
    if (clusterOptions.anyOverlapFlag()) {
      throw new InputException("--plan carries the overlaps it was planned with; drop the "
          + "overlap flags");
    }
    planFile = PlanFile.read(plan);
    PipelinePlan p = planFile.plan();
    p.attentionKernel().ifPresent(ExportCommand::refuseKernel);
    // The nearest configuration is priced as the plan was.
    planFile.defaultPrices(clusterOptions, spec.commandLine().getErr());
    ClusterSpec c = planFile.cluster(clusterOptions);
    PlanFiles.checkDevices(plan, p, c);
    // The memory the plan was searched within is read now: a fault in it is refused before
    // anything is written or printed.
    planFile.memoryPerGpu(clusterOptions, c);
    clusterOptions.warnIfProfileForeign(c, spec.commandLine().getErr());
    priced = c;
    ExportResult result = new Exporter().export(target, p, c);
    // Planning again for the target helps when the target runs this model at all.
    planForHelps = io.meshplan.export.LaunchChecks.of(target, c)
        .missing(p.model(), p.attention(), p.overlaps()).isEmpty();
    if (!(result instanceof ExportResult.NotExpressible)) {
      PlanFiles saved = PlanFiles.simulate(planFile, clusterOptions, Optional.empty(),
          spec.commandLine().getErr());
      requireFits(saved.plan().source().title(), saved.cluster(), saved.simulation(),
          saved.memoryPerGpu());
    }
    return result;
  }

  /** The flags' export, refused when the configuration does not fit in memory. */
  private ExportResult fromFlags(ExportTarget target) {
    ExportInput in = input();
    model.printWarnings(spec.commandLine().getErr());
    clusterOptions.warnIfProfileForeign(in.cluster(), spec.commandLine().getErr());
    priced = in.cluster();
    ExportResult result = new Exporter().export(target, in);
    if (result instanceof ExportResult.Exported) {
      requireFits(in);
    }
    return result;
  }

  /**
   * The target a framework version selects: torchtitan's main branch (the Python config that
   * {@code torchtitan/config/manager.py} loads from {@code --module}/{@code --config}) by default,
   * or v0.2.2, the last release whose job config is a TOML ({@code torchtitan/config/job_config.py}
   * at tag v0.2.2).
   */
  static ExportTarget withFrameworkVersion(ExportTarget target, String version) {
    if (version == null) {
      return target;
    }
    if (target != ExportTarget.TORCHTITAN) {
      throw new InputException("--framework-version applies to --to torchtitan only; "
          + target.label() + " is written for its current release");
    }
    // main: the Python config of torchtitan's main branch (--module/--config, as of commit
    // b5bcd76, 2026-08-21); 0.2.2: v0.2.2, its last release that reads TOML.
    return Choices.FrameworkVersions.MAIN.contains(Choices.pick("--framework-version", version,
        new Choices.FrameworkVersions())) ? ExportTarget.TORCHTITAN : ExportTarget.TORCHTITAN_V022;
  }

  private ExportInput input() {
    if (clusterOptions.cluster == null) {
      throw new InputException("--cluster is required without --plan");
    }
    // The file states what simulate prices for the same flags: the one binding of the job's
    // training precision (the GPU's bf16 or fp16 unless --dtype says otherwise), attention,
    // overlaps and layout.
    return ExportInput.of(JobFlags.bind(model, clusterOptions, attention, parallel));
  }

  /**
   * The cluster as a printed command names it: {@code --cluster} as given (a cluster file's path
   * keeps the file's figures), else the cluster's name, which is all a plan's embedded cluster
   * file ({@code clusterDescription}) has on a command line.
   *
   * @param in the nearest input
   * @return the value
   */
  private String clusterWord(ExportInput in) {
    return clusterOptions.clusterGiven() ? clusterOptions.clusterText()
        : in.cluster().toShortString();
  }

  /**
   * The {@code --model} value that rebuilds a model on this command line: the config.json path
   * the user gave (a config's name is no preset), else the model's name where it is a preset.
   *
   * @param m the model of the nearest input
   * @return the value, or empty for the plan of a config.json model (the plan has no path)
   */
  private Optional<String> modelWord(ModelSpec m) {
    if (plan == null && model.model != null && !io.meshplan.model.Presets.contains(model.model)) {
      return Optional.of(model.model);
    }
    return io.meshplan.model.Presets.contains(m.name()) ? Optional.of(m.name())
        : Optional.empty();
  }

  /**
   * The flags that reproduce an input on this command line, shell-quoted.
   *
   * @param in the input
   * @param modelWord the {@code --model} value (a preset or a config.json path), or null to
   *     leave {@code --model} out
   * @param clusterWord the {@code --cluster} value (a cluster string or a cluster file's path)
   * @return the flags
   */
  static String flags(ExportInput in, String modelWord, String clusterWord) {
    ModelSpec m = in.model();
    ParallelConfig c = in.config();
    List<String> w = new ArrayList<>();
    if (modelWord != null) {
      w.addAll(List.of("--model", modelWord));
    }
    w.addAll(List.of(
        "--layers", Integer.toString(m.layers()), "--hidden", Integer.toString(m.hidden()),
        "--heads", Integer.toString(m.heads()), "--kv-heads", Integer.toString(m.kvHeads()),
        "--ffn", Integer.toString(m.ffn()), "--vocab", Integer.toString(m.vocab()),
        "--seq", Integer.toString(m.seq()), "--dtype", io.meshplan.model.Fp8Training.word(m.dtype()),
        "--cluster", clusterWord,
        "--tp", Integer.toString(c.tensorParallel()),
        "--pp", Integer.toString(c.pipelineParallel()),
        "--dp", Integer.toString(c.dataParallel())));
    if (io.meshplan.model.Fp8Training.on(m.dtype())
        && m.fp8Scaling() != io.meshplan.model.Fp8Scaling.DELAYED) {
      w.addAll(List.of("--fp8-recipe", m.fp8Scaling().word()));
    }
    if (m.optimizerState() != io.meshplan.model.OptimizerState.FP32) {
      w.addAll(List.of("--optimizer-state", m.optimizerState().word()));
    }
    if (m.lora().on()) {
      w.addAll(List.of("--finetune", m.lora().quantized() ? "qlora" : "lora", "--lora-rank",
          Integer.toString(m.lora().rank()), "--lora-alpha", Double.toString(m.lora().alpha()),
          "--lora-targets", m.lora().targets()));
    }
    if (m.lora().fp8Base()) {
      w.add("--fp8-param-gather");
    }
    if (m.fp8ActivationInput()) {
      w.add("--activation-func-fp8-input-store");
    }
    if (m.arch().mtpDepth() > 0) {
      // The model's prediction depths (the preset's, or --mtp-num-layers' own), and a hybrid's
      // prediction layers (the preset's, or --mtp-hybrid-override-pattern's).
      w.addAll(List.of("--mtp-num-layers", Integer.toString(m.arch().mtpDepth())));
      if (!m.arch().hybrid().mtp().isEmpty()) {
        w.addAll(List.of("--mtp-hybrid-override-pattern", m.arch().hybrid().mtp()));
      }
      if (m.arch().mtpShared()) {
        w.add("--mtp-use-repeated-layer");
      }
    }
    if (c.virtualStages() > 1) {
      w.addAll(List.of("--vpp", Integer.toString(c.virtualStages())));
    }
    expertAndContextFlags(in, w);
    if (in.gpipe()) {
      w.addAll(List.of("--schedule", "gpipe"));
    }
    if (c.firstStageLayers() > 0) {
      w.addAll(List.of("--first-stage-layers", Integer.toString(c.firstStageLayers())));
    }
    if (c.lastStageLayers() > 0) {
      w.addAll(List.of("--last-stage-layers", Integer.toString(c.lastStageLayers())));
    }
    c.split().megatronArgs().forEach(w::addAll);
    w.addAll(List.of("--micro-batch", Integer.toString(c.microBatchSize()),
        "--global-batch", Integer.toString(c.globalBatchSize()),
        "--recompute", c.recompute().label()));
    if (c.recomputeLayers() > 0) {
      w.addAll(List.of("--recompute-num-layers", Integer.toString(c.recomputeLayers())));
    }
    if (!c.recomputeModules().equals(io.meshplan.model.RecomputeModule.DEFAULT)) {
      w.addAll(List.of("--recompute-modules",
          io.meshplan.model.RecomputeModule.labels(c.recomputeModules())));
    }
    if (c.sequenceParallel()) {
      w.add("--sequence-parallel");
    }
    if (c.zeroStage() == 1) {
      w.add("--distributed-optimizer");
    } else if (c.zeroStage() >= 2) {
      w.addAll(List.of("--zero-stage", Integer.toString(c.zeroStage())));
    }
    if (c.shardGroup() > 0) {
      w.addAll(List.of("--shard-group", Integer.toString(c.shardGroup())));
      if (in.overlaps().hsdpStepReduce()) {
        w.add("--hsdp-step-reduce");
      }
    }
    w.addAll(List.of("--attention", in.attention().label()));
    List<String> overlaps = c.megatronOverlapFlags(in.overlaps());
    if (!in.overlaps().fsdpPrefetch() && c.zeroStage() >= 2) {
      // Before the fusion flag, where the Megatron-style flags would have put it; only where it
      // times something (simulate refuses it under ZeRO-0 and ZeRO-1).
      overlaps.add(overlaps.indexOf("--no-gradient-accumulation-fusion") < 0 ? overlaps.size()
          : overlaps.size() - 1, "--no-fsdp-prefetch");
    }
    w.addAll(overlaps);
    if (in.overlaps().lossFusion()) {
      w.add("--fused-cross-entropy");
    }
    return ShellQuote.join(w);
  }

  /** The flags of a mixture-of-experts model's routing, its expert layout and the context split. */
  private static void expertAndContextFlags(ExportInput in, List<String> w) {
    ParallelConfig c = in.config();
    io.meshplan.model.MoeShape moe = in.model().arch().moe();
    if (moe.routed()) {
      if (moe.capacityFactor() > 0) {
        w.addAll(List.of("--moe-capacity-factor", Double.toString(moe.capacityFactor())));
      }
      if (moe.imbalance() != 1) {
        w.addAll(List.of("--moe-imbalance", Double.toString(moe.imbalance())));
      }
      w.addAll(List.of("--ep", Integer.toString(c.expertParallel()),
          "--etp", Integer.toString(c.expertTensorParallel())));
    }
    if (c.contextParallel() > 1) {
      w.addAll(List.of("--cp", Integer.toString(c.contextParallel()),
          "--cp-comm-type", c.cpExchange().word()));
    }
  }

  /**
   * Refuses a configuration whose simulated peak memory exceeds what a GPU may use, as {@code
   * simulate} judges the same flags. A configuration the simulator cannot evaluate is left to
   * the exporter.
   */
  private void requireFits(ExportInput in) {
    PricedJob setup = JobFlags.priced(model, clusterOptions, attention, null,
        in.config().globalBatchSize(), 0, PlannerOptions.defaults());
    Optional<PlanSimulator.Evaluated> e = Planner.simulate(setup, in.config(), in.gpipe());
    if (e.isPresent()) {
      requireFits(in.model().name(), setup.cluster(), e.get().simulation(),
          setup.request().memoryPerGpu());
    }
  }

  private static void requireFits(String subject, ClusterSpec cs, SimulationResult sim,
      double memoryPerGpu) {
    MemoryFit fit = MemoryFit.of(sim, memoryPerGpu);
    if (!fit.fits()) {
      throw new InfeasibleException(SimulateCommand.doesNotFit(subject, cs, fit));
    }
  }

  /** The schedule simulator's prediction, as {@code simulate} would print it. */
  private Optional<PipelinePlan.Prediction> simulate(ExportInput in) {
    try {
      // On the input's own cluster: a plan's embedded cluster file keeps its figures.
      PricedJob setup = Planner.price(JobFlags.job(in.model(), true, clusterOptions,
          Optional.of(in.attention()), in.cluster(), in.config().globalBatchSize(), 0,
          in.overlaps()), clusterOptions.pricing(), PlannerOptions.defaults());
      return Planner.simulate(setup, in.config(), in.gpipe())
          .map(PlanSimulator.Evaluated::simulation)
          .map(r -> new PipelinePlan.Prediction(r.iterationSeconds(), r.tokensPerSecond(),
              r.tflopsPerGpu(), r.mfu(), r.peakMemoryBytesPerGpu()));
    } catch (InputException | InfeasibleException e) {
      return Optional.empty();
    }
  }

  private static String prediction(Optional<PipelinePlan.Prediction> p) {
    if (p.isEmpty()) {
      return "predicted cost: unavailable (the simulator cannot evaluate this configuration)";
    }
    PipelinePlan.Prediction x = p.get();
    return String.format(Locale.ROOT, "predicted cost: %.3f s per iteration, %.0f tokens/s,"
        + " %.1f TFLOP/s per GPU, MFU %.1f%%, peak memory %s per GPU", x.iterationSeconds(),
        x.tokensPerSecond(), x.tflopsPerGpu(), 100 * x.mfu(),
        Units.formatBytes(x.peakMemoryBytesPerGpu()));
  }
}
