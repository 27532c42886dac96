package io.meshplan.bench;

import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.CallInliner;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloModule;
import io.meshplan.graph.HloParser;
import io.meshplan.graph.HloPrinter;
import io.meshplan.interop.hlo.HloLayering;
import io.meshplan.interop.hlo.HloPlanResult;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.PlanResult;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.model.TrainingOptions;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.Function;

/**
 * Planning HLO training steps ({@code meshplan plan --hlo}): for each case, the time to read the
 * module, the time and heap of the plan (layer clustering, ILP solves of each distinct layer on
 * each logical mesh, the stage DP, the simulation), the counts, and the predicted iteration and
 * MFU. Two kinds of module:
 *
 * <ul>
 *   <li>{@code examples/gpt_train_step.hlo}, a JAX dump of a 4-block GPT with Adam;
 *   <li>meshplan's own LLaMA-2 7B training step (cut to a few blocks, forward, backward and Adam)
 *       printed as HLO text and read back. For these the same model is also planned from its
 *       preset ({@code plan --model}, 1F1B, the same microbatches), and the table gives the
 *       ratio of the two predicted iteration times: the HLO path prices the same graph without
 *       knowing it is a transformer.
 * </ul>
 *
 * <p>Run: {@code mvn -q -DskipTests package && mvn -q test-compile && java -Xmx4g
 * -XX:+UseSerialGC -cp core/target/test-classes:core/target/meshplan.jar:core/target/lib/*
 * io.meshplan.bench.HloPlanBench}.
 */
public final class HloPlanBench {
  private HloPlanBench() {}

  /**
   * A case: a JAX dump ({@code blocks} 0) or meshplan's LLaMA-2 7B step of {@code blocks} blocks
   * with {@code sequences} per microbatch.
   */
  private record Case(String module, int blocks, int sequences, String cluster,
      int microbatches) {}

  private static final Case[] CASES = {
      new Case("examples/gpt_train_step.hlo", 0, 0, "1x4:a100-80gb", 8),
      new Case("examples/gpt_train_step.hlo", 0, 0, "2x8:a100-80gb", 16),
      new Case("llama2-7b", 4, 4, "1x8:a100-80gb", 8),
      new Case("llama2-7b", 8, 4, "2x8:h100-80gb:ib-ndr400", 16)};

  /**
   * Runs the benchmark.
   *
   * @param args unused
   */
  public static void main(String[] args) {
    System.out.printf(Locale.ROOT, "%-28s %-24s %4s %6s %8s %6s %6s %6s %7s %8s %6s %9s %6s"
        + " %9s %6s %6s%n", "module", "cluster", "B", "layers", "distinct", "meshes", "solves",
        "read s", "plan s", "heap MiB", "stages", "iter s", "MFU", "model s", "MFU", "ratio");
    for (Case c : CASES) {
      run(c);
    }
  }

  private static void run(Case c) {
    ClusterSpec cs = ClusterSpec.parse(c.cluster());
    Function<LogicalMesh, CommModel> comm = mesh -> ClusterCommModels.catalog(cs, mesh);
    ModelSpec m = null;
    System.gc();
    PlanBench.resetPeaks();
    long t0 = System.nanoTime();
    Graph g;
    String name;
    if (c.blocks() == 0) {
      HloModule module = new HloParser().parse(Path.of(c.module()));
      g = CallInliner.inline(module).graph();
      name = Path.of(c.module()).getFileName().toString();
    } else {
      ModelSpec p = Presets.get(c.module());
      m = new ModelSpec(p.name(), p.family(), c.blocks(), p.hidden(), p.heads(), p.kvHeads(),
          p.ffn(), p.vocab(), p.seq(), c.sequences() * c.microbatches(), DType.BF16, p.arch());
      Graph built = TrainingGraphBuilder.build(m, TrainingOptions.of(m)
          .withComputeDtype(DType.BF16).withWorkload(c.sequences(), m.seq())).graph();
      String text = new HloPrinter().print(built);
      g = CallInliner.inline(new HloParser().parse(text, c.module())).graph();
      name = c.module() + " x" + c.blocks() + " mb " + c.sequences();
    }
    double read = (System.nanoTime() - t0) / 1e9;
    long t1 = System.nanoTime();
    HloLayering lay = HloLayering.of(g, name);
    HloPlanResult plan;
    plan = io.meshplan.planner.ModulePlanner.plan(new io.meshplan.planner.ModuleJob(g, cs,
        io.meshplan.planner.Pricing.catalog(), cs.gpu().usableMemoryBytes(), false), lay,
        new io.meshplan.plan.PlanSource.HloModule(g.name(), name, "0".repeat(64), lay.names()),
        c.microbatches(), io.meshplan.planner.PlannerOptions.defaults());
    double seconds = (System.nanoTime() - t1) / 1e9;
    double heap = PlanBench.peakHeap() / (1024.0 * 1024);
    double modelIter = Double.NaN;
    double modelMfu = Double.NaN;
    if (m != null) {
      PlanRequest req = new PlanRequest(m, cs, m.batch(), c.microbatches(),
          0.95 * cs.gpu().hbmBytes(), io.meshplan.planner.Pricing.catalog(), 2, false)
          .withInterleaving(false);
      PlanResult r = new InterOpPlanner(new IlpLayerCostModel(m, cs, comm, DType.BF16,
          SolverOptions.defaults()), x -> { }).plan(req);
      if (r instanceof PlanResult.Planned p) {
        modelIter = p.simulation().iterationSeconds();
        modelMfu = p.simulation().mfu();
      }
    }
    var sim = plan.simulation();
    System.out.printf(Locale.ROOT, "%-28s %-24s %4d %6d %8d %6d %6d %6.2f %7.1f %8.0f %6d %9.4f"
        + " %5.1f%% %9.4f %5.1f%% %6.3f%n", name, c.cluster(), c.microbatches(), lay.layers(),
        plan.stats().distinctLayers(), plan.stats().meshes(), plan.stats().layerSolves(), read,
        seconds, heap, plan.plan().stages().size(), sim.iterationSeconds(), 100 * sim.mfu(), modelIter,
        100 * modelMfu, sim.iterationSeconds() / modelIter);
  }
}
