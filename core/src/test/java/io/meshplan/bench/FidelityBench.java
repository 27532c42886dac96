package io.meshplan.bench;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.TrainingJob;
import io.meshplan.sim.SimulationResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Predicted against measured on public sets of real training runs: {@code simulate} states each
 * run as it was run and prints the published figure beside the prediction, the error of each row,
 * and each set's mean absolute percentage error. Nothing here is fitted: the sets only check the
 * cost model.
 *
 * <ul>
 *   <li>Narayanan et al., SC'21, Table 1 (Megatron-LM, A100 80 GB): TP = min(MP, 8), PP = MP /
 *       TP, DP = GPUs / MP, the published global batch, fp16, full recomputation, micro-batch 1 (not
 *       published; one rule for every row), unfused attention (2021). The paper's TFLOP/s count the
 *       FLOPs executed with recomputation: compared with the simulator's hardware TFLOP/s.
 *   <li>llm-foundry's MPT benchmarks on A100 80 GB (set {@code mpt}) and on H100 80 GB (set
 *       {@code mpth}, the same models, sequences and stack): FSDP FULL_SHARD (ZeRO-3 over every
 *       GPU), bf16, the published micro-batch and global batch, activation checkpointing as
 *       published (full or none), fused attention as llm-foundry ran it. MPT has ALiBi, which
 *       meshplan does not model: the runs are stated with rotary positions, a few elementwise
 *       operations on Q and K, no parameters, as ALiBi has none. Compared on tokens per second
 *       per GPU.
 *   <li>Megatron-Core's weak scaling on H100 (Megatron-LM README): published as model TFLOP/s
 *       by Megatron's formula of the time, {@code 72 B s l h^2 (1 + s/(6h) + V/(12 l h))}, which
 *       counts attention over the whole score matrix; the prediction is stated in the same count
 *       (the formula over the predicted iteration time), so the comparison is one of throughput.
 *   <li>Dense Llama models in FP8 on H100 from NeMo's (24.07) and Megatron-Bridge's (25.11,
 *       26.04.01) performance summaries, on tokens per second per GPU, stated with their recipes'
 *       overlaps and loss (the data file's columns).
 *   <li>Mixture-of-experts runs of NVIDIA Megatron-Bridge's performance summary on H100 (GPT-OSS
 *       120B in bf16, Qwen3 30B-A3B and 235B-A22B in FP8) on tokens per second per GPU, with
 *       balanced routing as those benchmarks force it; and Llama 3 405B's 131,072-token
 *       context-parallel row (Dubey et al. 2024, Table 4) in the PaLM FLOP count Meta states. The
 *       data file's header says how each is stated.
 * </ul>
 *
 * <p>Run: {@code mvn -q -B -DskipTests package && mvn -q -B test-compile && java -Xmx4g -cp
 * "core/target/test-classes:core/target/meshplan.jar:core/target/lib/*"
 * io.meshplan.bench.FidelityBench}.
 */
public final class FidelityBench {
  private static final double GIB = 1024.0 * 1024 * 1024;

  private FidelityBench() {}

  /** One run as published and as meshplan states it. */
  private record Run(String set, String name, ModelSpec model, String cluster, ParallelConfig c,
      DType dtype, Attention attention, double measured, String unit, Overlaps recipe) {
    Run(String set, String name, ModelSpec model, String cluster, ParallelConfig c, DType dtype,
        Attention attention, double measured, String unit) {
      this(set, name, model, cluster, c, dtype, attention, measured, unit, null);
    }
  }

  /** A run's prediction. */
  private record Result(Run run, double predicted, double peakGib, boolean fits) {
    double error() {
      return predicted / run.measured() - 1;
    }
  }

  /**
   * Prints the table.
   *
   * @param args unused
   * @throws IOException when a data file cannot be read
   */
  public static void main(String[] args) throws IOException {
    List<Run> runs = new ArrayList<>(megatron());
    runs.addAll(mpt("mpt", "/fidelity/llmfoundry_mpt_a100.csv", "a100-80gb"));
    runs.addAll(mpt("mpth", "/fidelity/llmfoundry_mpt_h100.csv", "h100-80gb"));
    runs.addAll(megatronH100());
    runs.addAll(recipeRuns("/fidelity/dense_fp8_h100.csv"));
    runs.addAll(recipeRuns("/fidelity/moe_cp_h100.csv"));
    System.out.printf(Locale.ROOT, "%-5s %-12s %-16s %-26s %9s %9s %8s %9s %-5s%n", "set",
        "run", "cluster", "tp/pp/dp mb gb recompute", "measured", "predicted", "error",
        "peak GiB", "fits");
    List<Result> results = new ArrayList<>();
    for (Run r : runs) {
      Result res = simulate(r);
      results.add(res);
      ParallelConfig c = r.c();
      System.out.printf(Locale.ROOT, "%-5s %-12s %-16s %-26s %9.1f %9.1f %+7.1f%% %9.1f %-5s%n",
          r.set(), r.name(), r.cluster(), c.tensorParallel() + "/" + c.pipelineParallel() + "/"
              + c.dataParallel() + (c.virtualStages() > 1 ? " v" + c.virtualStages() : "")
              + (c.contextParallel() > 1 ? " cp" + c.contextParallel() : "")
              + (c.expertParallel() > 1 ? " ep" + c.expertParallel() : "") + " "
              + c.microBatchSize() + " " + c.globalBatchSize() + " "
              + recompute(c), r.measured(), res.predicted(), 100 * res.error(),
          res.peakGib(), res.fits() ? "yes" : "NO");
    }
    System.out.println();
    for (String set : List.of("sc21", "mpt", "mpth", "h100", "fp8", "moe", "cp")) {
      double sum = 0;
      double max = 0;
      int n = 0;
      int fit = 0;
      for (Result r : results) {
        if (r.run().set().equals(set)) {
          sum += Math.abs(r.error());
          max = Math.max(max, Math.abs(r.error()));
          n++;
          fit += r.fits() ? 1 : 0;
        }
      }
      String unit = results.stream().filter(r -> r.run().set().equals(set)).findFirst()
          .map(r -> r.run().unit()).orElse("");
      System.out.printf(Locale.ROOT, "%-5s %2d runs (%s): MAPE %.1f%%, max %.1f%%, %d of %d fit "
          + "in memory%n", set, n, unit, 100 * sum / n, 100 * max, fit, n);
    }
  }

  /** The recomputation, with Megatron's modules where they are not the default. */
  private static String recompute(ParallelConfig c) {
    return c.recompute().label()
        + (c.recomputeModules().equals(io.meshplan.model.RecomputeModule.DEFAULT) ? ""
        : "(" + io.meshplan.model.RecomputeModule.labels(c.recomputeModules()) + ")");
  }

  private static Result simulate(Run r) {
    ClusterSpec cs = ClusterSpec.parse(r.cluster());
    // SC'21 ran Megatron-LM of early 2021: no overlapped gradient reduction and no
    // gradient-accumulation fusion (added to Megatron-LM in February 2022, commit 83b1e42f30).
    // llm-foundry runs PyTorch FSDP with its default prefetch: the frameworks' defaults, and its
    // MPT's default loss, fused_crossentropy (FlashAttention's fused kernel).
    // Megatron-Core's H100 weak scaling (r0.8.0) ran with every overlap it has and Megatron's
    // fp32 cross-entropy (cross_entropy_loss_fusion off by default).
    Overlaps overlaps = switch (r.set()) {
      case "sc21" -> Overlaps.NONE;
      case "h100" -> new Overlaps(true, true, true, true, true);
      // The recipe rows state their overlaps and loss in their data file's columns.
      case "fp8", "moe", "cp" -> r.recipe();
      default -> Overlaps.DEFAULTS.withLossFusion(true);
    };
    TrainingJob job = TrainingJob.of(r.model(), cs).withGlobalBatch(r.c().globalBatchSize())
        .withDtype(r.dtype()).withAttention(r.attention()).withOverlaps(overlaps);
    PricedJob priced = Planner.price(job, Pricing.catalog(), PlannerOptions.defaults());
    r.c().check(cs.gpuCount(), r.model().layers(), r.model().heads(), r.model().kvHeads());
    SimulationResult s = Planner.simulate(priced, r.c(), false)
        .orElseThrow().simulation();
    double predicted = switch (r.set()) {
      case "sc21" -> s.hardwareTflopsPerGpu();
      // Megatron's published TFLOP/s count the FLOPs of its formula of 2024 (the SC'21 formula,
      // attention over the whole s x s matrix), while meshplan's own model FLOPs skip what causal
      // fused attention skips: the measured figure is turned into the same count by applying
      // Megatron's formula to the predicted iteration time, so the two compare on throughput.
      case "h100" -> io.meshplan.model.ModelFlops.megatronModelFlops(r.c().globalBatchSize(),
          r.model().seq(), r.model().layers(), r.model().hidden(), r.model().vocab())
          / s.iterationSeconds() / cs.gpuCount() / 1e12;
      // Meta's TFLOP/s count 6N + 12 L H Q T FLOPs per token (PaLM, appendix B): the prediction
      // in that count.
      case "cp" -> palmFlopsPerToken(r.model()) * s.tokensPerSecond() / cs.gpuCount() / 1e12;
      default -> s.tokensPerSecond() / cs.gpuCount();
    };
    double peak = s.peakMemoryBytesPerGpu();
    return new Result(r, predicted, peak / GIB, peak <= cs.gpu().hbmBytes());
  }

  /**
   * FLOPs per token as Chowdhery et al. (PaLM, appendix B) count them: {@code 6N + 12 L H Q T},
   * N the parameters, L layers, H heads, Q the head size, T the sequence (the whole score matrix).
   */
  private static double palmFlopsPerToken(ModelSpec m) {
    return 6.0 * m.parameterCount() + 12.0 * m.layers() * m.heads() * m.headDim() * m.seq();
  }

  /**
   * Runs stated as their recipes ran them (the dense FP8 rows of NeMo's and Megatron-Bridge's
   * performance summaries, the mixture-of-experts rows of Megatron-Bridge's, Llama 3's
   * context-parallel row), with the overlaps and loss their data file's columns give.
   */
  private static List<Run> recipeRuns(String resource) throws IOException {
    List<Run> out = new ArrayList<>();
    for (String[] f : rows(resource)) {
      ModelSpec m = Presets.get(f[1]);
      int seq = Integer.parseInt(f[4]);
      int batch = Integer.parseInt(f[5]);
      m = m.withSequence(seq).withTraining(batch, m.dtype());
      int tp = Integer.parseInt(f[7]);
      int pp = Integer.parseInt(f[8]);
      String splitText = f[20].replace("\"", "");
      io.meshplan.plan.PipelineSplit split = splitText.startsWith("layout=")
          ? io.meshplan.plan.PipelineLayout.parse(splitText.substring("layout=".length()), pp)
          : new io.meshplan.plan.SplitAccounting(splitText.contains("embedding"),
              splitText.contains("loss"));
      // The recompute column: a mode, or selective=module+module (Megatron's recompute_modules).
      String[] rc = f[15].split("=");
      ParallelConfig c = new ParallelConfig(tp, pp, Integer.parseInt(f[9]),
          Integer.parseInt(f[19]), Integer.parseInt(f[6]), batch, Recompute.parse(rc[0]), tp > 1,
          Integer.parseInt(f[14]), Integer.parseInt(f[12]), Integer.parseInt(f[13]),
          Integer.parseInt(f[11]), 1, Integer.parseInt(f[10]), false, split,
          rc.length > 1 ? io.meshplan.model.RecomputeModule.parseList(rc[1].replace('+', ','))
              : io.meshplan.model.RecomputeModule.DEFAULT);
      DType dtype = io.meshplan.model.Fp8Training.parse(f[3]);
      // The distributed optimizer's parameter gather overlaps with the gradient reduction under
      // ZeRO-1; FSDP (ZeRO-3) prefetches its gathers instead.
      boolean dp = f[21].equals("yes");
      Overlaps recipe = new Overlaps(dp, dp && c.zeroStage() == 1, f[22].equals("yes"), true,
          true, f[16].equals("yes"), f[23].equals("fused"), f[24].equals("bf16"));
      out.add(new Run(f[0], f[1], m, Integer.parseInt(f[2]) / 8 + "x8:h100-80gb:ib-ndr400", c,
          dtype, Attention.FLASH, Double.parseDouble(f[17]), f[18], recipe));
    }
    return out;
  }

  /** SC'21 Table 1. */
  private static List<Run> megatron() throws IOException {
    List<Run> out = new ArrayList<>();
    ModelSpec gpt = Presets.get("gpt-1.7b");
    for (String[] f : rows("/fidelity/megatron_sc21_table1.csv")) {
      int hidden = Integer.parseInt(f[2]);
      int layers = Integer.parseInt(f[3]);
      int heads = Integer.parseInt(f[4]);
      int mp = Integer.parseInt(f[5]);
      int gpus = Integer.parseInt(f[6]);
      int batch = Integer.parseInt(f[7]);
      ModelSpec m = new ModelSpec("gpt-" + f[0], gpt.family(), layers, hidden, heads, heads,
          4 * hidden, gpt.vocab(), 2048, batch, DType.F16, gpt.arch());
      int tp = Math.min(mp, 8);
      ParallelConfig c = new ParallelConfig(tp, mp / tp, gpus / mp, 1, 1, batch, Recompute.FULL,
          false, false);
      out.add(new Run("sc21", f[0], m, gpus / 8 + "x8:a100-80gb", c, DType.F16,
          Attention.UNFUSED, Double.parseDouble(f[8]), "hardware TFLOP/s per GPU"));
    }
    return out;
  }

  /**
   * Megatron-Core's weak scaling on H100: GPT with LayerNorm, GeLU and a 4h feed-forward, fused
   * attention, sequence parallelism with tensor parallelism, the distributed optimizer, micro
   * batch 1 (one rule for every row; the table does not say), no recomputation.
   */
  private static List<Run> megatronH100() throws IOException {
    List<Run> out = new ArrayList<>();
    ModelSpec gpt = Presets.get("gpt-1.7b");
    for (String[] f : rows("/fidelity/megatron_h100_weak_scaling.csv")) {
      int heads = Integer.parseInt(f[1]);
      int hidden = Integer.parseInt(f[2]);
      int layers = Integer.parseInt(f[3]);
      int tp = Integer.parseInt(f[4]);
      int pp = Integer.parseInt(f[5]);
      int dp = Integer.parseInt(f[6]);
      int gpus = Integer.parseInt(f[7]);
      int batch = Integer.parseInt(f[8]);
      ModelSpec m = new ModelSpec("gpt-" + f[0], gpt.family(), layers, hidden, heads, heads,
          4 * hidden, 131072, 4096, batch, DType.BF16, gpt.arch().forSequence(4096));
      ParallelConfig c = new ParallelConfig(tp, pp, dp, 1, 1, batch, Recompute.NONE, tp > 1, 1);
      out.add(new Run("h100", f[0], m, gpus / 8 + "x8:h100-80gb:ib-ndr400", c, DType.BF16,
          Attention.FLASH, Double.parseDouble(f[9]), "model TFLOP/s per GPU, Megatron's formula"));
    }
    return out;
  }

  /**
   * One of llm-foundry's MPT tables, as set {@code set} on GPUs of catalog name {@code gpu}.
   */
  private static List<Run> mpt(String set, String resource, String gpu) throws IOException {
    List<Run> out = new ArrayList<>();
    Architecture arch = new Architecture(Architecture.Mlp.GELU, Architecture.Norm.LAYER,
        Architecture.Positions.ROTARY, 0, false, true);
    for (String[] f : rows(resource)) {
      int hidden = Integer.parseInt(f[1]);
      int layers = Integer.parseInt(f[2]);
      int heads = Integer.parseInt(f[3]);
      int gpus = Integer.parseInt(f[7]);
      int micro = Integer.parseInt(f[8]);
      int batch = Integer.parseInt(f[9]);
      ModelSpec m = new ModelSpec(f[0].toLowerCase(Locale.ROOT), ModelSpec.Family.GPT, layers,
          hidden, heads, heads, Integer.parseInt(f[4]), Integer.parseInt(f[5]),
          Integer.parseInt(f[6]), batch, DType.BF16, arch);
      Recompute rc = f[10].equals("full") ? Recompute.FULL : Recompute.NONE;
      ParallelConfig c = new ParallelConfig(1, 1, gpus, 1, micro, batch, rc, false, 3);
      out.add(new Run(set, f[0] + "/" + f[6], m, gpus / 8 + "x8:" + gpu, c, DType.BF16,
          Attention.FLASH, Double.parseDouble(f[12]), "tokens/s per GPU"));
    }
    return out;
  }

  /** The data rows of a shipped CSV file: no comments, no header, quoted commas kept. */
  private static List<String[]> rows(String resource) throws IOException {
    List<String[]> out = new ArrayList<>();
    try (InputStream in = FidelityBench.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IOException("missing resource " + resource);
      }
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      boolean header = true;
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (line.startsWith("#") || line.isBlank()) {
          continue;
        }
        if (header) {
          header = false;
          continue;
        }
        out.add(line.split(",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", -1));
      }
    }
    return out;
  }
}
