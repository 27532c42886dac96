package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.calibrate.Profile;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.interop.hlo.HloLayering;
import io.meshplan.interop.hlo.HloPlanResult;
import io.meshplan.intraop.ShardResult;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.AlpaMlpBuilder;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.plan.PlanSource;
import io.meshplan.planner.ModuleJob;
import io.meshplan.planner.ModulePlanner;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.ShardJob;
import io.meshplan.planner.TrainingJob;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The planner's entry points, called by hand with the library's defaults, answer what the
 * commands print for the same job to the last digit: a request built in a test gets the
 * product's defaults from the library, not from a restatement of them.
 */
class EntryPointsCliTest {
  private static final String STEP = "examples/train_step.hlo";

  @Test
  void theProfileOrTheCatalogIsChosenInOnePlace() {
    Profile p = new Profile(Profile.VERSION, "1x8:a100-80gb", List.of());
    assertThat(Pricing.of(Optional.empty())).isEqualTo(Pricing.catalog());
    assertThat(Pricing.of(Optional.of(p))).isEqualTo(Pricing.calibrated(p));
  }

  @Test
  void aShardJobWithTheLibrarysDefaultsIsWhatShardPrints() throws Exception {
    CliRun r = CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    ModelSpec ms = Presets.get("alpa-mlp");
    Graph g = AlpaMlpBuilder.build(ms.layers(), ms.batch(), ms.hidden(), ms.dtype());
    // shard's defaults, from the library: alpha and beta 1 on both axes, 32 GiB, the default
    // solver, parameters resident for the whole step.
    ShardResult s = Planner.shard(new ShardJob(g, new LogicalMesh(new int[] {2, 2}),
        ShardJob.Units.ones(2), ShardJob.UNITS_MEMORY_BYTES, SolverOptions.defaults(), true,
        Map.of()));
    JsonNode printed = new ObjectMapper().readTree(r.out());
    assertThat(printed.get("objective").asDouble())
        .isEqualTo(((ShardResult.Planned) s).description().objective());
  }

  @Test
  void aShardJobOnAClusterPricesTheCatalogsCollectives() throws Exception {
    CliRun r = CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "1x4", "--cluster",
        "1x4:a100-80gb", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    ModelSpec ms = Presets.get("alpa-mlp");
    Graph g = AlpaMlpBuilder.build(ms.layers(), ms.batch(), ms.hidden(), ms.dtype());
    ClusterSpec cs = ClusterSpec.parse("1x4:a100-80gb");
    ShardResult s = Planner.shard(new ShardJob(g, new LogicalMesh(new int[] {1, 4}),
        new ShardJob.OnCluster(cs, Pricing.of(Optional.empty())), cs.gpu().hbmBytes(),
        SolverOptions.defaults(), true, Map.of()));
    assertThat(new ObjectMapper().readTree(r.out()).get("objective").asDouble())
        .isEqualTo(((ShardResult.Planned) s).description().objective());
  }

  @Test
  void aModuleJobWithTheLibrarysDefaultsIsWhatPlanHloPrintsAndItsPlanSimulatesAlike()
      throws Exception {
    CliRun r = CliRun.of("plan", "--hlo", STEP, "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    ClusterSpec cs = ClusterSpec.parse("1x4:a100-80gb");
    HloInput in = HloInput.read(Path.of(STEP), "--hlo", new PrintWriter(new StringWriter()));
    HloLayering lay = HloLayering.of(in.graph(), STEP);
    // The job's defaults: the catalog's prices, the GPU's usable memory (TrainingJob.of's), no
    // overlap of the gradient reduction.
    ModuleJob job = new ModuleJob(in.graph(), cs, Pricing.of(Optional.empty()),
        TrainingJob.of(Presets.get("llama2-7b"), cs).memoryPerGpu(), false);
    HloPlanResult planned = ModulePlanner.plan(job, lay, new PlanSource.HloModule(
        in.graph().name(), STEP, in.sha256(), lay.names()), 4, PlannerOptions.defaults());
    double printed = new ObjectMapper().readTree(r.out()).get("iterationSeconds").asDouble();
    assertThat(planned.simulation().iterationSeconds()).isEqualTo(printed);
    assertThat(ModulePlanner.simulate(job, lay, planned.plan()).iterationSeconds())
        .isEqualTo(printed);
  }

  @Test
  void theDensePeakIsTheTrainingPrecisionsOrFp8s() {
    ClusterSpec a100 = ClusterSpec.parse("1x8:a100-80gb");
    // A100: 312 TFLOP/s dense in bf16, its default training precision (NVIDIA A100 datasheet).
    assertThat(Planner.densePeakFlopsPerGpu(TrainingJob.of(Presets.get("llama2-7b"), a100)))
        .isEqualTo(312e12);
    ClusterSpec h100 = ClusterSpec.parse("1x8:h100-80gb");
    TrainingJob fp8 = TrainingJob.of(Presets.get("llama2-7b"), h100)
        .withDtype(io.meshplan.model.Fp8Training.RECIPE);
    // H100 SXM: 989 TFLOP/s dense in bf16, twice that in FP8 (NVIDIA H100 datasheet).
    assertThat(Planner.densePeakFlopsPerGpu(fp8)).isGreaterThan(
        Planner.densePeakFlopsPerGpu(TrainingJob.of(Presets.get("llama2-7b"), h100)));
  }
}
