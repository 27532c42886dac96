package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --fp8-recipe}: FP8 training with current scaling ({@code tensorwise}, Megatron-Bridge's
 * {@code fp8_cs}) runs the norm and experts'-activation recomputation that Megatron-Core refuses
 * under delayed scaling ({@code transformer_config.py} at d98e8a6, {@code __post_init__}), is
 * priced with its own casts, is kept in the plan file and is written to Megatron-LM's {@code
 * --fp8-recipe}.
 */
class Fp8RecipeCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> SIM = List.of("simulate", "--model", "llama3-8b",
      "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "1", "--dp", "4", "--micro-batch", "1",
      "--global-batch", "32", "--seq", "4096", "--zero-stage", "1", "--dtype", "fp8", "--json");

  @TempDir Path dir;

  @Test
  void currentScalingRecomputesNormsAndPaysItsCasts() throws Exception {
    String[] norms = {"--recompute", "selective", "--recompute-modules", "core_attn,layernorm"};
    CliRun delayed = CliRun.of(SIM, norms);
    assertThat(delayed.code()).isEqualTo(2);
    assertThat(delayed.err()).hasLineCount(1).contains("delayed scaling")
        .contains("--fp8-recipe tensorwise");
    CliRun current = CliRun.of(SIM, "--recompute", "selective", "--recompute-modules",
        "core_attn,layernorm", "--fp8-recipe", "tensorwise");
    assertThat(current.code()).as(current.err()).isZero();
    // Current scaling's casts cost more than delayed scaling's (Transformer Engine's measured
    // GEMMs with their casts on an H200 NVL: 1.578x bf16 against 1.687x, cluster.Fp8Quantization),
    // so the same step is slower, by less than the GEMMs alone (1.687 / 1.578 = 1.069).
    double a = JSON.readTree(CliRun.of(SIM).out()).get("iterationSeconds").asDouble();
    double b = JSON.readTree(CliRun.of(SIM, "--fp8-recipe", "tensorwise").out())
        .get("iterationSeconds").asDouble();
    assertThat(b / a).isGreaterThan(1.0).isLessThan(1.069);
    // Under FP8 each linear keeps its own FP8 copy of the norm's output (Transformer Engine
    // saves the cast input), so the recomputed norms free no activation and cost no time here.
    assertThat(JSON.readTree(current.out()).get("iterationSeconds").asDouble()).isEqualTo(b);
  }

  @Test
  void badRecipesAreRefusedInOneLine() {
    CliRun bf16 = CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--global-batch", "32", "--seq", "4096", "--dtype",
        "bf16",
        "--fp8-recipe", "tensorwise");
    assertThat(bf16.code()).isEqualTo(2);
    assertThat(bf16.err()).hasLineCount(1).contains("--fp8-recipe").contains("--dtype fp8");
    for (String w : List.of("blockwise", "", "delayed,tensorwise", "TENSOR", "mx\nfp8")) {
      CliRun r = CliRun.of(SIM, "--fp8-recipe", w);
      assertThat(r.code()).as(w).isEqualTo(2);
      assertThat(r.err()).as(w).hasLineCount(1).contains("delayed, tensorwise, mxfp8 or nvfp4");
    }
    // Any case of a valid word is the word.
    assertThat(CliRun.of(SIM, "--fp8-recipe", "TensorWise").code()).isZero();
  }

  @Test
  void thePlanKeepsTheRecipeAndMegatronLmIsToldIt() throws Exception {
    List<String> flags = List.of("--model", "llama3-8b", "--cluster", "1x8:h100-80gb", "--tp",
        "2", "--pp", "1", "--dp", "4", "--micro-batch", "1", "--global-batch", "32", "--seq",
        "4096", "--zero-stage", "1", "--dtype", "fp8");
    CliRun t = CliRun.of(java.util.stream.Stream.concat(java.util.stream.Stream.of("export"),
        flags.stream()).toList(), "--to", "megatron", "--fp8-recipe", "tensorwise");
    assertThat(t.code()).as(t.err()).isZero();
    assertThat(t.out()).contains("--fp8-recipe tensorwise").doesNotContain("--fp8-amax");
    CliRun d = CliRun.of(java.util.stream.Stream.concat(java.util.stream.Stream.of("export"),
        flags.stream()).toList(), "--to", "megatron");
    assertThat(d.code()).as(d.err()).isZero();
    assertThat(d.out()).contains("--fp8-recipe delayed").contains("--fp8-amax-history-len 1024");

    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--layers", "4", "--cluster",
        "1x8:h100-80gb", "--global-batch", "32", "--seq", "4096", "--dtype", "fp8", "--fp8-recipe",
        "tensorwise", "--for", "megatron", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    String text = Files.readString(plan);
    assertThat(JSON.readTree(text).at("/model/fp8Recipe").asText()).isEqualTo("tensorwise");
    CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron");
    assertThat(e.code()).as(e.err()).isZero();
    assertThat(e.out()).contains("--fp8-recipe tensorwise");

    // A recipe the reader does not know, or one on a plan that does not train in FP8: one line,
    // exit 2, the file untouched.
    for (Object[] bad : new Object[][] {
        {"fp8Recipe", "bogus", "expected delayed, tensorwise, mxfp8 or nvfp4"},
        {"dtype", "bf16", "not fp8"}, {"fp8Recipe", 3, "fp8Recipe"}}) {
      Path f = dir.resolve("bad-" + bad[0] + ".json");
      JsonNode root = JSON.readTree(text);
      ((ObjectNode) root.at("/model")).set((String) bad[0], JSON.valueToTree(bad[1]));
      String written = JSON.writeValueAsString(root);
      Files.writeString(f, written);
      CliRun r = CliRun.of("simulate", "--plan", f.toString());
      assertThat(r.code()).as(r.err()).isEqualTo(2);
      assertThat(r.err()).hasLineCount(1).contains((String) bad[2]);
      assertThat(Files.readString(f)).isEqualTo(written);
    }
  }

  /**
   * MXFP8 block scaling runs on Blackwell only (Megatron-Core {@code transformer_config.py} at
   * d98e8a6: "'mxfp8' for Blackwell architecture only"), is priced by its own measured casts and
   * GEMMs, is kept in the plan, is written to Megatron-LM in E4M3 as Megatron-Bridge's {@code
   * bf16_with_mxfp8_mixed} runs it, and is refused by the exports that write per-tensor FP8 or
   * none (exit 3, nothing written). MXFP8's GEMMs with their casts ran 1.420x bf16 on a B300,
   * current scaling's 1.395x ({@code cluster.Fp8Quantization}): a little faster, by less than the
   * GEMMs' 1.420 / 1.395 = 1.018. Megatron-Core's choices (transformer_config.py at d98e8a6): fp8
   * 'e4m3' or 'hybrid' (lines 587-592), fp8_recipe one of 'tensorwise', 'delayed', 'mxfp8',
   * 'blockwise', 'custom' (594).
   */
  @Test
  void mxfp8RunsOnBlackwellOnlyIsPricedByItsCastsAndOnlyMegatronWritesIt() throws Exception {
    blockScaledRecipe("mxfp8", 1.0, 1.018, "runs on Blackwell GPUs only",
        List.of("--fp8-format e4m3", "--fp8-recipe mxfp8"), List.of("--fp8-amax"),
        "writes no MXFP8 block scaling");
  }

  /**
   * NVFP4 runs on Blackwell only (Megatron-Core {@code transformer_config.py} at d98e8a6:
   * "NVFP4BlockScaling recipe for Blackwell+ architecture"), is priced by Transformer Engine's
   * measured 4-bit GEMMs with their casts, is kept in the plan, is written to Megatron-LM as its
   * FP4 mode ({@code --fp4-format e2m1 --fp4-recipe nvfp4}, transformer_config.py:673-679, with no
   * {@code --fp8-format}, which arguments.py:1100-1101 refuses beside it), and is refused by the
   * exports that write per-tensor FP8 or none (exit 3, nothing written). NVFP4's GEMMs with their
   * casts ran 1.977x bf16 on a B300, current scaling's 1.395x: faster, by less than the GEMMs'
   * 1.977 / 1.395 = 1.417, as attention and the memory-bound kernels do not speed up.
   */
  @Test
  void nvfp4RunsOnBlackwellOnlyIsPricedByItsCastsAndOnlyMegatronWritesIt() throws Exception {
    blockScaledRecipe("nvfp4", 1.1, 1.417, "nvfp4 (4-bit block scaling) runs on Blackwell "
        + "GPUs only", List.of("--fp4-format e2m1", "--fp4-recipe nvfp4"),
        List.of("--fp8-format", "--fp8-recipe"), "writes no NVFP4 training");
  }

  /**
   * A Blackwell-only recipe end to end: its iteration on 8 GB200s is faster than current
   * scaling's by a ratio in {@code (low, high)}, it is refused in one line on the H100 and H200,
   * a plan keeps it, the Megatron-LM export writes {@code written} and none of {@code absent},
   * and the DeepSpeed export exits 3 with {@code refusal}, writing nothing.
   */
  private void blockScaledRecipe(String recipe, double low, double high, String hopperRefusal,
      List<String> written, List<String> absent, String refusal) throws Exception {
    List<String> gb200 = List.of("simulate", "--model", "llama3-8b", "--cluster", "1xnvl8:gb200",
        "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "2", "--global-batch", "128",
        "--seq", "8192", "--dtype", "fp8", "--zero-stage", "1", "--json");
    CliRun run = CliRun.of(gb200, "--fp8-recipe", recipe);
    assertThat(run.code()).as(run.err()).isZero();
    double tw = JSON.readTree(CliRun.of(gb200, "--fp8-recipe", "tensorwise").out())
        .get("iterationSeconds").asDouble();
    double seconds = JSON.readTree(run.out()).get("iterationSeconds").asDouble();
    assertThat(tw / seconds).isGreaterThan(low).isLessThan(high);
    // The JSON names the recipe it priced.
    assertThat(JSON.readTree(run.out()).at("/prices/fp8Recipe").asText()).isEqualTo(recipe);
    assertThat(JSON.readTree(run.out()).at("/prices/dtype").asText()).isEqualTo("fp8");
    for (String cluster : List.of("1x8:h100-80gb", "1x8:h200-141gb")) {
      CliRun r = CliRun.of(SIM.stream().map(a -> a.equals("1x8:h100-80gb") ? cluster : a)
          .toList(), "--fp8-recipe", recipe);
      assertThat(r.code()).as(cluster).isEqualTo(2);
      assertThat(r.err()).hasLineCount(1).contains(hopperRefusal).contains("(hopper)");
    }
    Path plan = dir.resolve(recipe + ".json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--layers", "4", "--cluster",
        "1xnvl8:gb200", "--global-batch", "32", "--seq", "4096", "--dtype", "fp8",
        "--fp8-recipe", recipe, "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(JSON.readTree(Files.readString(plan)).at("/model/fp8Recipe").asText())
        .isEqualTo(recipe);
    CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron");
    assertThat(e.code()).as(e.err()).isZero();
    for (String w : written) {
      assertThat(e.out()).contains(w);
    }
    for (String w : absent) {
      assertThat(e.out()).doesNotContain(w);
    }
    Path out = dir.resolve(recipe + "-ds.sh");
    CliRun ds = CliRun.of("export", "--plan", plan.toString(), "--to", "deepspeed", "--out",
        out.toString());
    assertThat(ds.code()).isEqualTo(3);
    assertThat(ds.err()).hasLineCount(1).contains(refusal);
    assertThat(out).doesNotExist();
  }
}
