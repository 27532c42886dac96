package io.meshplan.cli;

import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.CallInliner;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloModule;
import io.meshplan.graph.HloParser;
import io.meshplan.graph.HloPrinter;
import io.meshplan.graph.Instruction;
import io.meshplan.intraop.IntraOpPlanJson;
import io.meshplan.intraop.IntraOpPlanText;
import io.meshplan.intraop.IntraOpResult;
import io.meshplan.intraop.ShardResult;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.intraop.ilp.IlpProblemJson;
import io.meshplan.model.AlpaMlpBuilder;
import io.meshplan.model.LlamaForwardBuilder;
import io.meshplan.model.ModelSpec;
import io.meshplan.planner.Planner;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.ShardJob;
import io.meshplan.sharding.KeptShardings;
import io.meshplan.sharding.ShardingSpec;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code meshplan shard}: intra-operator auto-sharding of one computation on one device mesh. */
@Command(name = "shard", mixinStandardHelpOptions = true,
    description = {"Choose a sharding for every operator of a model on a device mesh (Alpa's "
        + "intra-operator ILP).",
        "One of --model (a preset) or --hlo (an XLA HLO text module) is required."},
    footer = {"", "Exit codes: 0 plan printed, 2 bad input, 3 infeasible (nothing fits in "
        + "memory), 1 internal error."})
final class ShardCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Mixin ModelOptions model = new ModelOptions(ModelOptions.SHARD_FAMILIES);

  /**
   * Sets the batch of the forward graph.
   *
   * @param sequences the batch, sequences
   */
  @Option(names = "--batch", paramLabel = "N", description = "Override the batch of the forward "
      + "graph (sequences).")
  void batch(Integer sequences) {
    model.batch = sequences;
  }

  @Mixin CatalogOption catalog = new CatalogOption();

  @Mixin ForceOption force = new ForceOption();

  @Option(names = "--mesh", required = true, description = "Logical mesh shape, e.g. 50x4 or 4.")
  String mesh;

  @Option(names = "--alpha", description = "Latency per mesh axis, e.g. 1,1 (default: 1 per axis).")
  String alpha;

  @Option(names = "--beta", description = "Inverse bandwidth per mesh axis, e.g. 1,0.01 "
      + "(default: 1 per axis).")
  String beta;

  @Option(names = "--memory",
      description = "Memory capacity per device, e.g. 32GiB or 1000MB; with --cluster at most "
          + "the GPU's physical memory (default: the GPU's memory with --cluster, else 32GiB).")
  String memory;

  @Option(names = "--cluster", description = "Price on a cluster NODESxGPUS:gpu[:fabric] or a "
      + "YAML file (fields nodes, gpusPerNode, gpu, and optionally fabric, nvlinkBandwidth, "
      + "hbmBandwidth, nicBandwidth, nicsPerNode, fabricLatency): costs in seconds from the "
      + "catalog, compute by roofline.")
  String cluster;

  @Option(names = "--profile", description = "With --cluster: a calibration profile from "
      + "'meshplan calibrate'; its measured collectives replace catalog prices.")
  java.nio.file.Path profile;

  @Option(names = "--force-replicated-output",
      description = "Require the model output to be replicated on every device.")
  boolean forceReplicatedOutput;

  @Option(names = "--solver", defaultValue = "reducing",
      completionCandidates = Choices.Solvers.class,
      description = "reducing (exact reductions, then CP-SAT on the core), cpsat, or fast "
          + "(exact reductions, then local search on the core instead of CP-SAT: "
          + "deterministic and quick on large modules) (default: ${DEFAULT-VALUE}). One of:"
          + " ${COMPLETION-CANDIDATES}.")
  String solver;

  @Option(names = "--time-limit", defaultValue = "60",
      description = "CP-SAT time limit in seconds (default: ${DEFAULT-VALUE}).")
  double timeLimit;

  @Option(names = "--workers", defaultValue = "1",
      description = "CP-SAT search workers; 1 is deterministic (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(names = "--param-liveness", defaultValue = "resident",
      completionCandidates = Choices.ParamLiveness.class,
      description = "resident: parameters occupy memory for the whole step (default); alpa: as "
          + "in Alpa's prototype, from their position in the graph to their last use. One of:"
          + " ${COMPLETION-CANDIDATES}.")
  String paramLiveness;

  @Option(names = "--dump-ilp", description = "Also write the ILP (node and edge costs, memory "
      + "constraint) as versioned JSON to this file, to replay or compare solvers."
      + OutputPaths.FILE_ONLY)
  java.nio.file.Path dumpIlp;

  @Option(names = "--quiet", description = "Draw no progress line on standard error (none is"
      + " drawn anyway when standard error is not a terminal).")
  boolean quiet;

  @Option(names = "--json", description = "Print the plan as JSON (with every instruction's "
      + "compute, communication and resharding cost and bytes per mesh axis).")
  boolean json;

  @Option(names = "--costs", description = "Add columns to the table: each instruction's "
      + "compute, communication and resharding cost (in the objective's unit) and the bytes one "
      + "GPU sends per mesh axis.")
  boolean costs;

  @Option(names = "--hlo", description = "Plan an XLA HLO text module instead of a preset "
      + "(the model overrides do not apply to it).")
  java.nio.file.Path hlo;

  @Option(names = "--out", description = "With --hlo: write the module back with sharding={...} "
      + "on every instruction." + OutputPaths.FILE_ONLY)
  java.nio.file.Path outFile;

  @Option(names = "--keep-shardings", description = "With --hlo: keep the shardings already in "
      + "the module as fixed constraints.")
  boolean keepShardings;

  @Override
  public Integer call() throws Exception {
    long t0 = System.nanoTime();
    int[] shape = CliValues.mesh("--mesh", mesh);
    LogicalMesh lm = new LogicalMesh(shape);
    double[] a = alpha == null ? ones(shape.length) : CliValues.numbers("--alpha", alpha);
    double[] b = beta == null ? ones(shape.length) : CliValues.numbers("--beta", beta);
    ClusterSpec cs = checkPricing(shape, lm, a, b);
    double mem = memory != null
        ? cs != null ? CliValues.memoryOf(memory, cs.gpu()) : CliValues.bytes("--memory", memory)
        : cs != null ? cs.gpu().hbmBytes() : ShardJob.UNITS_MEMORY_BYTES;
    SolverOptions.Kind kind = solverKind();
    checkSolverAndInputs(cs);
    List<String> warnings = new ArrayList<>();
    Input in = read(lm, warnings);
    ShardJob job = new ShardJob(in.graph(), lm, prices(cs, a, b, warnings), mem,
        new SolverOptions(kind, timeLimit, workers), residentParameters(), in.fixed());
    ShardResult result = Progress.during(spec.commandLine().getErr(), quiet, "shard: solving",
        () -> Planner.shard(job));
    if (result instanceof ShardResult.Infeasible inf) {
      throw new InfeasibleException(message(inf.reason()));
    }
    ShardResult.Planned planned = (ShardResult.Planned) result;
    warnings.addAll(planned.warnings());
    render(in, planned, warnings, t0);
    return ExitCodes.OK;
  }

  /** What was read: the graph to plan, and for an HLO module the module and its inlining. */
  private record Input(String name, Graph graph, Map<Integer, ShardingSpec> fixed,
      HloModule module, CallInliner.Result inlined) {}

  /** Checks the pricing flags against the mesh; returns the cluster, or null without one. */
  private ClusterSpec checkPricing(int[] shape, LogicalMesh lm, double[] a, double[] b) {
    if (a.length != shape.length || b.length != shape.length) {
      throw new InputException("--mesh " + mesh + " has " + shape.length + " axes but --alpha has "
          + a.length + " and --beta has " + b.length + " values; give one value per axis");
    }
    if (cluster != null && (alpha != null || beta != null)) {
      throw new InputException("--cluster prices the mesh itself; drop --alpha and --beta");
    }
    if (profile != null && cluster == null) {
      throw new InputException("--profile needs --cluster C to place the mesh on the nodes");
    }
    ClusterSpec cs = cluster == null ? null
        : catalog.cluster(cluster);
    if (cs != null && lm.deviceCount() > cs.gpuCount()) {
      throw new InputException("--mesh " + mesh + " needs " + lm.deviceCount()
          + " GPUs but --cluster " + cluster + " has " + cs.gpuCount());
    }
    return cs;
  }

  private SolverOptions.Kind solverKind() {
    return SolverOptions.Kind.valueOf(Choices.pick("--solver", solver, new Choices.Solvers())
        .toUpperCase(Locale.ROOT));
  }

  /** Checks the solver limits, the choice of input and the files to read and write. */
  private void checkSolverAndInputs(ClusterSpec cs) {
    if (!(timeLimit > 0 && timeLimit <= SolverOptions.MAX_TIME_LIMIT_SECONDS)) {
      throw new InputException("--time-limit must be more than 0 and at most "
          + (long) SolverOptions.MAX_TIME_LIMIT_SECONDS + " seconds, got " + timeLimit);
    }
    if (workers <= 0) {
      throw new InputException("--workers must be positive, got " + workers);
    }
    if (workers > MAX_WORKERS) {
      throw new InputException("--workers " + workers + " is more than " + MAX_WORKERS
          + "; CP-SAT gains nothing from more workers than cores");
    }
    if (hlo != null && model.model != null) {
      throw new InputException("give either --model or --hlo, not both");
    }
    if (hlo == null && model.model == null) {
      throw new InputException("give --model M (one of " + String.join(", ",
          model.presets()) + ") or --hlo FILE");
    }
    if (hlo != null && model.overrides() != null) {
      throw new InputException(model.overrides() + " changes a --model preset; an --hlo module"
          + " has its own shapes, so drop it");
    }
    if (forceReplicatedOutput && hlo != null) {
      throw new InputException("--force-replicated-output applies to a --model preset; for --hlo"
          + " put sharding={replicated} on the root and use --keep-shardings");
    }
    if (hlo == null && (outFile != null || keepShardings)) {
      throw new InputException("--out and --keep-shardings need --hlo FILE");
    }
    new OutputPaths().force(force.force).output("--out", outFile).output("--dump-ilp", dumpIlp)
        .input("--hlo", hlo).input("--profile", profile)
        .input("--cluster", cs == null ? null : CliValues.existingFile(cluster))
        .input("--catalog", catalog.file).check();
  }

  /** The graph of --hlo or of the --model preset, within the size limit. */
  private Input read(LogicalMesh lm, List<String> warnings) {
    Input in = hlo != null ? readHlo(lm, warnings) : buildPreset();
    if (in.graph().size() > MAX_INSTRUCTIONS) {
      throw new InputException((hlo != null ? "--hlo " + hlo : "--model " + model.model) + " has "
          + in.graph().size() + " instructions after inlining, more than the limit of "
          + MAX_INSTRUCTIONS);
    }
    return in;
  }

  /** Parses the --hlo module, inlines its calls and, with --keep-shardings, reads its layouts. */
  private Input readHlo(LogicalMesh lm, List<String> warnings) {
    HloModule module = new HloParser().parse(hlo);
    warnings.addAll(module.warnings());
    CallInliner.Result inlined = CallInliner.inline(module);
    inlined.depthWarning().ifPresent(warnings::add);
    Map<Integer, ShardingSpec> fixed = Map.of();
    if (keepShardings) {
      KeptShardings kept = KeptShardings.read(module.entry(), inlined::map, lm);
      fixed = kept.layouts();
      warnings.addAll(kept.warnings());
    }
    return new Input(module.name(), inlined.graph(), fixed, module, inlined);
  }

  private Input buildPreset() {
    ModelSpec ms = model.spec();
    checkGraphSize(ms);
    Graph g = build(ms);
    // After the model is known to be one shard builds, so that a refusal is the only line.
    model.printWarnings(spec.commandLine().getErr());
    return new Input(ms.name(), g, Map.of(), null, null);
  }

  /** The mesh's prices: --alpha and --beta, or the cluster's catalog or --profile prices. */
  private ShardJob.Prices prices(ClusterSpec cs, double[] a, double[] b, List<String> warnings) {
    if (cs == null) {
      return ShardJob.Units.of(a, b);
    }
    io.meshplan.calibrate.Profile prof = null;
    if (profile != null) {
      prof = ProfileFiles.read(profile);
      prof.measuredElsewhere(profile.toString(), cs.toShortString()).ifPresent(warnings::add);
    }
    return new ShardJob.OnCluster(cs, Pricing.of(java.util.Optional.ofNullable(prof)));
  }

  private boolean residentParameters() {
    return Choices.pick("--param-liveness", paramLiveness, new Choices.ParamLiveness())
        .equals("resident");
  }

  /** The fix of each cause of infeasibility in this command's flags. */
  private static String message(IntraOpResult.Infeasible inf) {
    String fix = switch (inf.cause()) {
      case TIME_LIMIT -> "; raise --time-limit";
      case FIXED_LAYOUTS -> "; drop --keep-shardings or change the mesh";
      case MEMORY -> " (raise --memory or use a larger mesh)";
      case PRICES_OVERFLOW -> inf.cause().fix();
    };
    return inf.diagnosis() + fix;
  }

  /** Writes the --dump-ilp and --out files, then prints the warnings and the plan. */
  private void render(Input in, ShardResult.Planned planned, List<String> warnings, long t0) {
    ShardingPlan plan = planned.plan();
    PrintWriter out = spec.commandLine().getOut();
    if (dumpIlp != null) {
      write("--dump-ilp", dumpIlp, IlpProblemJson.write(plan.costGraph().problem()));
    }
    if (outFile != null) {
      Map<Integer, String> texts = new java.util.HashMap<>();
      for (Instruction ins : in.module().entry().instructions()) {
        texts.put(ins.id(), plan.hloSharding(in.inlined().map(ins.id())));
      }
      write("--out", outFile, HloPrinter.withShardings(texts).print(in.module()));
    }
    double total = (System.nanoTime() - t0) / 1e9;
    PrintWriter err = spec.commandLine().getErr();
    for (String w : warnings) {
      err.println(ExceptionMapper.warning(w));
    }
    err.flush();
    if (json) {
      out.println(IntraOpPlanJson.write(in.name(), planned.description(), total, warnings));
    } else {
      out.print(IntraOpPlanText.write(in.name(), planned.description(), total, costs));
      if (outFile != null) {
        out.println("wrote " + outFile);
      }
    }
  }

  /**
   * The largest graph planned: 200,000 instructions, four times the 50,000-instruction module of
   * HloParseBench (planned in about 7 s), so that planning stays within minutes and the heap.
   */
  static final int MAX_INSTRUCTIONS = 200_000;

  /** The most CP-SAT workers: each is a search thread with its own memory. */
  static final int MAX_WORKERS = 256;

  private Graph build(ModelSpec ms) {
    if (io.meshplan.model.Fp8Training.on(ms.dtype())) {
      throw new InputException("--dtype fp8 is a training recipe (FP8 GEMMs in a bf16 step) that"
          + " plan, simulate, export and sweep price; shard plans a forward graph in one element"
          + " type: use --dtype bf16");
    }
    return switch (ms.family()) {
      case ALPA_MLP -> AlpaMlpBuilder.build(ms.layers(), ms.batch(), ms.hidden(), ms.dtype());
      case LLAMA -> {
        if (!ms.arch().beyondLlama().isEmpty()) {
          throw new InputException("--model " + model.model + ": shard builds LLaMA's forward "
              + "graph, and this model has " + String.join(", ", ms.arch().beyondLlama())
              + "; it is planned by meshplan plan");
        }
        yield LlamaForwardBuilder.build(ms, forceReplicatedOutput);
      }
      case GPT -> throw new InputException("--model " + model.model + ": shard plans the forward "
          + "graph of LLaMA-family models and alpa-mlp; GPT, OPT and GPT-NeoX models are "
          + "planned by meshplan plan");
    };
  }

  /**
   * Estimates the graph size before building it: the graphs of one and two layers give the
   * instructions outside the layers and per layer, and the graph grows linearly in the layers.
   */
  private void checkGraphSize(ModelSpec ms) {
    if (ms.layers() <= 2) {
      return;
    }
    int one = build(ms.withLayers(1)).size();
    int perLayer = build(ms.withLayers(2)).size() - one;
    long estimate = one + (long) perLayer * (ms.layers() - 1);
    if (estimate > MAX_INSTRUCTIONS) {
      throw new InputException("--layers " + ms.layers() + " gives a graph of about " + estimate
          + " instructions (" + perLayer + " per layer), more than the limit of "
          + MAX_INSTRUCTIONS + "; use fewer layers");
    }
  }

  private static void write(String flag, java.nio.file.Path file, String text) {
    OutputPaths.write(flag, file, text);
  }

  /** shard's default alpha or beta: the library's, one unit per axis. */
  private static double[] ones(int axes) {
    return ShardJob.Units.ones(axes).alphas();
  }
}
