package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.model.Presets;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DeepSeek-V3 at the command line: the report's own configuration (PP 16, EP 64, ZeRO-1 over the
 * data-parallel GPUs; DeepSeek-AI 2024, section 3.2) simulates and fits on 256 nodes of 8 H100;
 * a plan of a cut-down model saves its latent attention, dense blocks and prediction module, and
 * re-simulates to the same time; bad flags are one line.
 */
class DeepseekCliTest {
  /**
   * 61 blocks on 16 stages: 3 + 14 * 4 + 2. GBS 4096 over DP 128 at micro-batch 1 is 32
   * microbatches. Full recomputation stands in for the report's recomputation of norms and the
   * latent up-projections, which meshplan does not state.
   */
  @Test
  void reportConfigurationFits() {
    CliRun r = CliRun.of("simulate", "--model", "deepseek-v3", "--seq", "4096", "--cluster",
        "256x8:h100-80gb:ib-ndr400", "--tp", "1", "--pp", "16", "--dp", "128", "--ep", "64",
        "--micro-batch", "1", "--global-batch", "4096", "--distributed-optimizer",
        "--recompute", "full", "--first-stage-layers", "3", "--last-stage-layers", "2");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("schedule 1f1b, 32 microbatches, 16 stages")
        .contains("fits: stage ")
        .contains("layers per stage: 3 4 4 4 4 4 4 4 4 4 4 4 4 4 4 2");
  }

  /** A saved plan keeps the model and re-simulates to its own iteration time. */
  @Test
  void savedPlanRoundTrips(@TempDir Path dir) throws IOException {
    Path plan = dir.resolve("ds.json");
    CliRun p = CliRun.of("plan", "--model", "deepseek-v3", "--layers", "5", "--hidden", "1024",
        "--heads", "8", "--seq", "1024", "--cluster", "1x8:h100-80gb", "--global-batch", "16",
        "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    PipelinePlan saved = PlanJson.read(plan.toString(), Files.readString(plan));
    var m = ((io.meshplan.plan.PlanSource.Preset) saved.source()).model();
    var full = Presets.get("deepseek-v3").arch();
    assertThat(m.arch().attn().mla()).isEqualTo(full.attn().mla());
    assertThat(m.arch().moe().denseLayers()).containsExactly(0, 1, 2);
    assertThat(m.arch().mtpDepth()).isEqualTo(1);
    CliRun s = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(s.code()).as(s.err()).isZero();
    String line = p.out().lines().filter(l -> l.startsWith("iteration ")).findFirst()
        .orElseThrow();
    assertThat(s.out()).contains(line);
    // Hostile edits of the saved model: one line and exit 2 each, never an internal error.
    String json = Files.readString(plan);
    String[][] bad = {
        {"\"kvLoraRank\" : 512", "\"kvLoraRank\" : 2147483647",
            "latent attention ranks and head sizes must be at most 65536"},
        {"\"heads\" : 8", "\"heads\" : 16777216",
            "attention heads must be at most 65536, got 16777216"},
        {"\"qkRopeHeadDim\" : 64", "\"qkRopeHeadDim\" : 63", "qk_rope_head_dim must be even"},
        {"\"mtpLayers\" : 1", "\"mtpLayers\" : 17", "multi-token prediction depth must be"},
        {"\"denseFfn\" : 18432", "\"denseFfn\" : 0", "dense blocks among expert blocks need"}};
    for (String[] b : bad) {
      assertThat(json).contains(b[0]);
      Path edited = dir.resolve("bad.json");
      Files.writeString(edited, json.replace(b[0], b[1]));
      CliRun.of("simulate", "--plan", edited.toString()).refusedInOneLine(2, b[2]);
      assertThat(Files.readString(edited)).isEqualTo(json.replace(b[0], b[1]));
    }
  }

  /** Cutting the model to its dense blocks leaves a dense model; EP then is refused. */
  @Test
  void denseCutRefusesExperts() {
    CliRun.of("simulate", "--model", "deepseek-v3", "--layers", "2", "--hidden", "1024",
        "--heads", "8", "--seq", "1024", "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1",
        "--dp", "8", "--ep", "8", "--micro-batch", "1", "--global-batch", "8")
        .refusedInOneLine(2, "expert parallelism needs a mixture-of-experts model; this model is "
            + "dense");
  }
}
