package io.meshplan.bench;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.MegatronGrid;
import io.meshplan.interop.PlanResult;
import io.meshplan.model.ModelSpec;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.TrainingJob;
import io.meshplan.model.Presets;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Locale;

/**
 * Whole-cluster planning speed and quality: for each case, the time and heap of {@code meshplan
 * plan} (as the command runs it, through {@link Planner}: bf16, catalog prices, 95% of the GPU memory, the preset's
 * sequence length), its layer solves and DP runs, and the plan's
 * schedule (1F1B, or interleaved with v chunks per stage) and predicted throughput beside the
 * best Megatron-LM configuration of the exhaustive grid
 * ({@link MegatronGrid}) in the same simulator.
 *
 * <p>Run: {@code mvn -q -DskipTests package && mvn -q test-compile && java -Xmx4g
 * -XX:+UseSerialGC -cp core/target/test-classes:core/target/meshplan.jar:core/target/lib/* io.meshplan.bench.PlanBench
 * [CASE...]} with cases {@code 13b}, {@code 70b}, {@code 405b}, {@code moe}, {@code cp},
 * {@code deepseek} and {@code racks} (default: all). DeepSeek-V3's row compares the plan with the DeepSeek-V3
 * report's own configuration (section 3.2: PP 16, EP 64, ZeRO-1 over the data-parallel GPUs;
 * 61 blocks as 3 + 14 x 4 + 2, full recomputation for the report's recomputed norms and
 * up-projections, micro-batch 1) in place of the exhaustive grid, whose space on 2,048 GPUs with
 * 256 experts is too large to enumerate here.
 */
public final class PlanBench {
  private PlanBench() {}

  private record Case(String key, String preset, String cluster, int globalBatch, int seq) {
    Case(String key, String preset, String cluster, int globalBatch) {
      this(key, preset, cluster, globalBatch, 0);
    }
  }

  // 1,024 sequences do not split evenly over any data-parallel group of the 200-GPU cluster
  // (every tensor x pipeline size that divides 40 layers leaves a factor 5 in the data-parallel
  // size), so no Megatron-LM configuration exists there; the comparison row uses 1,000.
  private static final Case[] CASES = {
      new Case("13b", "llama2-13b", "50x4:v100-32gb", 1024),
      new Case("13b", "llama2-13b", "50x4:v100-32gb", 1000),
      new Case("70b", "llama2-70b", "128x8:h100-80gb:ib-ndr400", 1024),
      new Case("405b", "llama3.1-405b", "2048x8:h100-80gb:ib-ndr400", 1024),
      new Case("405b", "llama3.1-405b", "2048x8:h100-80gb:ib-ndr400", 2048),
      // Mixture-of-experts models (expert layouts in the search) and a long sequence (context
      // parallelism in the search).
      new Case("moe", "mixtral-8x7b", "8x8:h100-80gb:ib-ndr400", 256, 4096),
      new Case("moe", "qwen3-30b-a3b", "2x8:h100-80gb:ib-ndr400", 1024, 4096),
      new Case("cp", "llama3-8b", "2x8:h100-80gb:ib-ndr400", 16, 65536),
      new Case("deepseek", "deepseek-v3", "256x8:h100-80gb:ib-ndr400", 4096, 4096),
      // Rack-scale NVLink: 8 GB200 NVL72 racks against the same GPUs in 8-GPU NVLink domains,
      // and racks run with 64 of their 72 GPUs.
      new Case("racks", "deepseek-v3", "8xnvl72:gb200", 4608, 4096),
      new Case("racks", "deepseek-v3", "72xnvl8:gb200", 4608, 4096),
      new Case("racks", "deepseek-v3", "8xnvl64:gb200", 4096, 4096)};

  /** The DeepSeek-V3 report's configuration on the deepseek case's 2,048 GPUs. */
  private static final io.meshplan.plan.ParallelConfig DEEPSEEK_REPORT =
      new io.meshplan.plan.ParallelConfig(1, 16, 128, 1, 1, 4096,
          io.meshplan.model.Recompute.FULL, false, 1, 3, 2, 64, 1);

  /**
   * Runs the benchmark.
   *
   * @param args case keys
   */
  public static void main(String[] args) {
    java.util.Set<String> want = new java.util.HashSet<>(java.util.List.of(args));
    System.out.printf(Locale.ROOT,
        "%-14s %-27s %5s %7s %8s %7s %5s %-8s %9s %11s %6s %9s %11s %6s %7s%n",
        "model", "cluster", "batch", "plan s", "heap MiB", "solves", "DPs", "schedule", "iter s",
        "tokens/s", "MFU", "grid s", "grid tok/s", "MFU", "ratio");
    for (Case c : CASES) {
      if (!want.isEmpty() && !want.contains(c.key())) {
        continue;
      }
      run(c);
    }
  }

  private static void run(Case c) {
    ModelSpec p = Presets.get(c.preset());
    if (c.seq() > 0) {
      p = p.withSequence(c.seq());
    }
    int gb = c.globalBatch();
    ClusterSpec cs = ClusterSpec.parse(c.cluster());
    // The product's defaults (TrainingJob.of): the GPU's training precision, 95% of its memory.
    TrainingJob job = TrainingJob.of(p, cs).withGlobalBatch(gb);
    PlannerOptions options = PlannerOptions.defaults();
    System.gc();
    resetPeaks();
    long t0 = System.nanoTime();
    PricedJob priced = Planner.price(job, Pricing.catalog(), options);
    PlanResult r = Planner.plan(priced, options);
    double seconds = (System.nanoTime() - t0) / 1e9;
    double heap = peakHeap() / (1024.0 * 1024);
    if (!(r instanceof PlanResult.Planned planned)) {
      System.out.printf(Locale.ROOT, "%-14s %-27s %5d %7.1f %8.0f infeasible: %s%n", c.preset(),
          c.cluster(), gb, seconds, heap, ((PlanResult.Infeasible) r).message());
      return;
    }
    var pred = planned.plan().prediction();
    if (c.key().equals("deepseek")) {
      var report = Planner.simulate(priced, DEEPSEEK_REPORT, false).orElseThrow().simulation();
      System.out.printf(Locale.ROOT,
          "%-14s %-27s %5d %7.1f %8.0f %7d %5d %-8s %9.3f %11.0f %5.1f%% %9.3f %11.0f %5.1f%% %7.3f%n",
          c.preset(), c.cluster(), gb, seconds, heap, planned.stats().layerSolves(),
          planned.stats().dpRuns(), "1f1b", pred.iterationSeconds(), pred.tokensPerSecond(),
          100 * pred.mfu(), report.iterationSeconds(), report.tokensPerSecond(),
          100 * report.mfu(), pred.iterationSeconds() / report.iterationSeconds());
      System.out.printf(Locale.ROOT, "  report configuration: %s; peak %.1f GiB per GPU%n",
          describe(DEEPSEEK_REPORT), report.peakMemoryBytesPerGpu() / (1024.0 * 1024 * 1024));
      return;
    }
    if (c.key().equals("racks")) {
      // No grid: its space on 576 GPUs with 256 experts is too large to enumerate here.
      System.out.printf(Locale.ROOT,
          "%-14s %-27s %5d %7.1f %8.0f %7d %5d %-8s %9.3f %11.0f %5.1f%%%n",
          c.preset(), c.cluster(), gb, seconds, heap, planned.stats().layerSolves(),
          planned.stats().dpRuns(), planned.plan().virtualStages() > 1
              ? "v=" + planned.plan().virtualStages() : "1f1b", pred.iterationSeconds(),
          pred.tokensPerSecond(), 100 * pred.mfu());
      int domain = cs.gpusPerNode();
      StringBuilder stages = new StringBuilder();
      boolean inside = true;
      for (var st : planned.plan().stages()) {
        int group = st.expertParallel() * st.expertTensorParallel();
        // The stage's expert groups are runs of EP x ETP devices from its first device
        // (Megatron-Core's expert rank order): each lies in one domain when they tile it.
        inside &= domain % group == 0 && st.firstDevice() % group == 0;
        stages.append(stages.length() == 0 ? "" : " ").append(st.expertParallel());
      }
      System.out.printf(Locale.ROOT, "  stages' EP: %s; every expert group inside one NVLink "
          + "domain of %d: %s%n", stages, domain, inside ? "yes" : "no");
      return;
    }
    var grid = Planner.megatronGrid(priced).best();
    double gs = grid.map(g -> g.evaluated().simulation().iterationSeconds()).orElse(Double.NaN);
    double gt = grid.map(g -> g.evaluated().simulation().tokensPerSecond()).orElse(Double.NaN);
    double gm = grid.map(g -> g.evaluated().simulation().mfu()).orElse(Double.NaN);
    System.out.printf(Locale.ROOT,
        "%-14s %-27s %5d %7.1f %8.0f %7d %5d %-8s %9.3f %11.0f %5.1f%% %9.3f %11.0f %5.1f%% %7.3f%n",
        c.preset(), c.cluster(), gb, seconds, heap, planned.stats().layerSolves(),
        planned.stats().dpRuns(), planned.plan().virtualStages() > 1
            ? "v=" + planned.plan().virtualStages() : "1f1b", pred.iterationSeconds(), pred.tokensPerSecond(),
        100 * pred.mfu(), gs, gt, 100 * gm, pred.iterationSeconds() / gs);
    grid.ifPresent(g -> System.out.println("  best grid point: " + describe(g.config())));
  }

  /** A configuration in Megatron-LM's words: sizes, schedule, memory options, uneven stages. */
  static String describe(io.meshplan.plan.ParallelConfig c) {
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "tp %d pp %d dp %d",
        c.tensorParallel(), c.pipelineParallel(), c.dataParallel()));
    if (c.virtualStages() > 1) {
      sb.append(" vpp ").append(c.virtualStages());
    }
    if (c.expertParallel() > 1) {
      sb.append(" ep ").append(c.expertParallel()).append(" etp ")
          .append(c.expertTensorParallel());
    }
    if (c.contextParallel() > 1) {
      sb.append(" cp ").append(c.contextParallel());
      if (c.cpExchange() != io.meshplan.plan.ContextExchange.P2P) {
        sb.append(" ").append(c.cpExchange().word());
      }
    }
    sb.append(String.format(Locale.ROOT, ", micro-batch %d, recompute %s, %s, ZeRO-%d",
        c.microBatchSize(), c.recompute().label() + (c.recomputeLayers() > 0
            ? " of the first " + c.recomputeLayers() + " blocks of each chunk" : ""),
        c.sequenceParallel() ? "sequence parallel" : "no sequence parallelism", c.zeroStage()));
    if (c.firstStageLayers() > 0 || c.lastStageLayers() > 0) {
      sb.append(String.format(Locale.ROOT, ", first/last stage layers %d/%d",
          c.firstStageLayers(), c.lastStageLayers()));
    }
    return sb.toString();
  }

  static void resetPeaks() {
    for (MemoryPoolMXBean b : ManagementFactory.getMemoryPoolMXBeans()) {
      if (b.getType() == MemoryType.HEAP) {
        b.resetPeakUsage();
      }
    }
  }

  static long peakHeap() {
    long sum = 0;
    for (MemoryPoolMXBean b : ManagementFactory.getMemoryPoolMXBeans()) {
      if (b.getType() == MemoryType.HEAP) {
        sum += b.getPeakUsage().getUsed();
      }
    }
    return sum;
  }
}
