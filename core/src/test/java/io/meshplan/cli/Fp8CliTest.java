package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --dtype fp8}: refusals, its speed against bf16, the plan file and the exports. */
class Fp8CliTest {
  /**
   * The catalog GPUs whose architecture has FP8 tensor cores, which the refusal lists: b200,
   * h100-80gb and h200-141gb among them, and more as catalog.yaml grows.
   */
  private static final String WITH_FP8 = fp8Gpus();

  private static String fp8Gpus() {
    java.util.List<String> names = io.meshplan.cluster.GpuCatalog.names().stream()
        .filter(n -> io.meshplan.cluster.GpuCatalog.find(n).orElseThrow().architecture()
            .prices(io.meshplan.cluster.Precision.FP8)).toList();
    // CDNA 3 prices FP8 from hipBLASLt's measured GEMMs; CDNA 4 (mi355x) is not priced at all.
    org.assertj.core.api.Assertions.assertThat(names).contains("b200", "h100-80gb",
        "h200-141gb", "mi300x", "mi325x").doesNotContain("v100-32gb", "a100-80gb", "mi355x");
    return String.join(", ", names);
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] SMALL = {"--model", "llama2-7b", "--tp", "2", "--pp", "1",
      "--dp", "4", "--micro-batch", "1", "--global-batch", "8", "--dtype", "fp8"};

  @TempDir Path dir;

  private static String[] with(String[] head, String... tail) {
    String[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
    System.arraycopy(tail, 0, all, head.length, tail.length);
    return all;
  }

  @Test
  void gpusWithoutFp8AreRefusedInOneLine() {
    for (String gpu : new String[] {"v100-32gb", "a100-80gb"}) {
      String line = "--dtype fp8 needs FP8 tensor cores, which the " + gpu + " does not have;"
          + " use --dtype " + (gpu.startsWith("v100") ? "f16" : "bf16")
          + ", or a GPU that has them: " + WITH_FP8;
      CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:" + gpu, "--dtype", "fp8")
          .refusedInOneLine(2, line);
      CliRun.of(with(new String[] {"simulate", "--cluster", "1x8:" + gpu}, SMALL))
          .refusedInOneLine(2, line);
      CliRun.of(with(new String[] {"export", "--to", "megatron", "--cluster", "1x8:" + gpu},
          SMALL)).refusedInOneLine(2, line);
    }
    CliRun.of("plan", "--model", "llama2-7b", "--cluster", "1x8:h100-80gb", "--dtype", "fp9")
        .refusedInOneLine(2, "--dtype 'fp9' is unknown; use f32, bf16, f16 or fp8");
  }

  private static double computeSeconds(String dtype) throws Exception {
    CliRun r = CliRun.of("simulate", "--model", "llama3-70b", "--layers", "2", "--cluster",
        "1x8:h100-80gb", "--tp", "8", "--pp", "1", "--dp", "1", "--micro-batch", "1",
        "--global-batch", "8", "--sequence-parallel", "--dtype", dtype, "--json");
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out()).get("breakdown").get("compute").asDouble();
  }

  /**
   * Two Llama 3 70B blocks (h 8192, ffn 28672, seq 8192) with its embedding and head at TP 8 on
   * H100: the linear GEMMs run at most 1979 * 0.75 / (989.5 * 0.8) = 1.875x faster, while
   * attention, norms, the LM head and the casts do not speed up (the casts add time). The
   * compute time must drop, by more than 1.1x and less than 1.875x.
   */
  @Test
  void fp8ComputeIsFasterThanBf16ByABoundedFactor() throws Exception {
    double ratio = computeSeconds("bf16") / computeSeconds("fp8");
    assertThat(ratio).isBetween(1.1, 1.875);
  }

  @Test
  void thePlanFileSaysFp8AndSimulatesTheSame() throws Exception {
    Path plan = dir.resolve("p.json");
    CliRun r = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x4:h100-80gb", "--global-batch", "8", "--dtype", "fp8", "--out", plan.toString(),
        "--json");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode p = JSON.readTree(Files.readString(plan));
    assertThat(p.get("model").get("dtype").asText()).isEqualTo("fp8");
    CliRun same = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(same.code()).as(same.err()).isZero();
    assertThat(JSON.readTree(same.out()).get("iterationSeconds").asDouble())
        .isEqualTo(p.get("iterationSeconds").asDouble());
  }

  /**
   * A sweep grid's {@code dtype} axis: fp8 plans on H100 and is rejected on A100 with the
   * library's reason; every row names its precision.
   */
  @Test
  void sweepGridsHaveADtypeAxis() throws Exception {
    Path grid = dir.resolve("grid.yaml");
    Files.writeString(grid, "models: [opt-125m]\nseq: [512]\ngpus: [a100-80gb, h100-80gb]\n"
        + "clusters: [1x2]\nglobalBatch: [8]\ndtype: [bf16, fp8]\n");
    Path rows = dir.resolve("sweep.jsonl");
    CliRun r = CliRun.of("sweep", "--grid", grid.toString(), "--threads", "1", "--jsonl",
        rows.toString());
    assertThat(r.code()).as(r.err()).isZero();
    java.util.List<String> lines = Files.readAllLines(rows);
    assertThat(lines).hasSize(4);
    java.util.List<String> seen = new java.util.ArrayList<>();
    for (String line : lines) {
      JsonNode row = JSON.readTree(line);
      seen.add(row.get("gpu").asText() + " " + row.get("dtype").asText() + " "
          + row.get("status").asText());
      if (row.get("gpu").asText().equals("a100-80gb") && row.get("dtype").asText().equals("fp8")) {
        assertThat(row.get("message").asText()).startsWith("fp8 training needs FP8 tensor cores");
      }
    }
    assertThat(seen).containsExactly("a100-80gb bf16 ok", "a100-80gb fp8 rejected",
        "h100-80gb bf16 ok", "h100-80gb fp8 ok");
    Files.writeString(grid, "models: [opt-125m]\nseq: [512]\ngpus: [h100-80gb]\n"
        + "clusters: [1x2]\nglobalBatch: [8]\ndtype: [fp4]\n");
    CliRun bad = CliRun.of("sweep", "--grid", grid.toString());
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err().lines()).hasSize(1);
    assertThat(bad.err()).contains("expected auto, bf16, f16, f32, fp8 or fp8:RECIPE (RECIPE "
        + "delayed, tensorwise, mxfp8 or nvfp4), got 'fp4'");
  }

  /**
   * Megatron-LM: TE's layers with the hybrid format and TE's DelayedScaling defaults (1024
   * steps of amax history, max), on bf16; torchtitan v0.2.2: the float8 converter with the LM
   * head left out; DeepSpeed has no FP8 switch: exit 3, one line, and the bf16 nearest.
   */
  @Test
  void exportsStateFp8OrSayTheyCannot() {
    CliRun m = CliRun.of(with(new String[] {"export", "--to", "megatron", "--cluster",
        "1x8:h100-80gb"}, SMALL));
    assertThat(m.code()).as(m.err()).isZero();
    assertThat(m.out()).contains("  --bf16\n  --transformer-impl transformer_engine\n"
        + "  --fp8-format hybrid\n  --fp8-recipe delayed\n  --fp8-amax-history-len 1024\n"
        + "  --fp8-amax-compute-algo max\n");
    // torchtitan trains only its llama3 flavors: the same layout on Llama 3.1 8B (flavor 8B, whose
    // RoPE scaling v0.2.2's TOML cannot remove).
    String[] llama3 = SMALL.clone();
    llama3[1] = "llama3.1-8b";
    CliRun t = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--framework-version",
        "0.2.2", "--cluster", "1x8:h100-80gb"}, with(llama3, "--sequence-parallel", "--zero-stage",
        "3")));
    assertThat(t.code()).as(t.err()).isZero();
    assertThat(t.out()).contains("mixed_precision_param = 'bfloat16'",
        "[model]\nname = 'llama3'\nflavor = '8B'\nhf_assets_path = './assets/hf/Llama-3.1-8B'\n"
            + "converters = ['quantize.linear.float8']\n",
        "[quantize.linear.float8]\nrecipe_name = 'tensorwise'\nfilter_fqns = ['output']\n");
    // torchtitan's main: the same torchao converter, on the model spec of the Python config.
    CliRun tm = CliRun.of(with(new String[] {"export", "--to", "torchtitan", "--cluster",
        "1x8:h100-80gb"}, with(llama3, "--sequence-parallel", "--zero-stage", "3")));
    assertThat(tm.code()).as(tm.err()).isZero();
    assertThat(tm.out()).contains("    config.model_spec = model_registry(\n        \"8B\",\n"
        + "        converters=[\n            Float8LinearConverter.Config(\n"
        + "                filter_fqns=[\"lm_head\"],\n",
        "    config.training.mixed_precision_param = \"bfloat16\"\n");
    CliRun d = CliRun.of(with(new String[] {"export", "--to", "deepspeed", "--cluster",
        "1x8:h100-80gb"}, SMALL));
    assertThat(d.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(d.err().lines()).hasSize(1);
    assertThat(d.err()).contains("DeepSpeed's configuration has no FP8 training switch");
    assertThat(d.out()).contains("--dtype bf16");
  }
}
