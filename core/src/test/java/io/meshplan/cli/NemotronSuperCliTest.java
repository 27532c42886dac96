package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.model.ModelFlops;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nemotron 3 Super as a user meets it: its released config.json simulates as the preset, its
 * multi-token prediction module (an attention and an expert layer) is priced on the last stage
 * only, its plan file keeps the module and the experts' latent width, and Megatron-LM's export
 * writes both.
 */
class NemotronSuperCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path CONFIG = Path.of("core/src/test/resources/hf/"
      + "nemotron-3-super-120b-a12b.json");

  @TempDir Path dir;

  private static List<String> simulate(String model) {
    return List.of("simulate", "--model", model, "--cluster", "8x8:h100-80gb", "--tp", "2",
        "--pp", "2", "--dp", "16", "--ep", "32", "--micro-batch", "1", "--global-batch", "64",
        "--seq", "4096", "--sequence-parallel", "--distributed-optimizer", "--recompute", "full",
        "--json");
  }

  /**
   * A plan file simulated again and exported to Megatron-LM, both exiting 0.
   *
   * @return the export's text
   */
  private String simulatedAndExported(Path plan) throws Exception {
    CliRun again = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(again.code()).as(again.err()).isZero();
    Path out = dir.resolve(plan.getFileName() + ".sh");
    CliRun e = CliRun.of("export", "--to", "megatron", "--plan", plan.toString(), "--out",
        out.toString());
    assertThat(e.code()).as(e.err()).isZero();
    return Files.readString(out);
  }

  private static JsonNode stages(CliRun r) throws Exception {
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out()).get("stages");
  }

  @Test
  void thePredictionModuleIsPricedOnTheLastStageAndTheConfigReadsAsThePreset() throws Exception {
    JsonNode preset = stages(CliRun.of(simulate("nemotron-3-super-120b-a12b")));
    JsonNode released = stages(CliRun.of(simulate(CONFIG.toString())));
    assertThat(released.toString()).isEqualTo(preset.toString());
    ObjectNode c = (ObjectNode) JSON.readTree(CONFIG.toFile());
    c.put("num_nextn_predict_layers", 0);
    Path without = dir.resolve("config.json");
    Files.writeString(without, JSON.writeValueAsString(c));
    JsonNode backbone = stages(CliRun.of(simulate(without.toString())));
    // The first stage is the same; the last pays the module: its input, an attention and an
    // expert layer, and the LM head and loss again, recomputed as its blocks are.
    assertThat(preset.get(0).get("busyComputeSeconds").asDouble())
        .isEqualTo(backbone.get(0).get("busyComputeSeconds").asDouble());
    double last = preset.get(1).get("busyComputeSeconds").asDouble();
    double lastWithout = backbone.get(1).get("busyComputeSeconds").asDouble();
    assertThat(last).isGreaterThan(lastWithout);
    // The closed form: the module adds 3 x (an attention layer + an expert layer + 2 x 2h^2 +
    // 2 V h) FLOPs per token to training; at sequence 4096 that is 3 x (2 x 35,651,584 + 2 x
    // 4096 x 32 x 256 + 2 x (2,097,152 + 22 x 5,505,024 + 44,040,192 + 8,388,608) + 67,108,864 +
    // 1,073,741,824) = 3 x (71,303,168 + 67,108,864 + 351,272,960 + 67,108,864 + 1,073,741,824)
    // = 3 x 1,630,535,680.
    ModelSpec m = Presets.get("nemotron-3-super-120b-a12b");
    ModelSpec b = m.withArchitecture(m.arch().withMtp(0));
    assertThat(b.arch().mtpDepth()).isZero();
    // --layers keeps the module while the first layers hold its kinds: "MEMEMEM*" has an
    // attention and an expert layer, "MEMEMEM" no attention.
    assertThat(m.withLayers(8).arch().mtpDepth()).isEqualTo(1);
    assertThat(m.withLayers(8).arch().hybrid().mtp()).isEqualTo("*E");
    assertThat(m.withLayers(7).arch().mtpDepth()).isZero();
    assertThat(ModelFlops.trainingFlopsPerToken(m, 4096)
        - ModelFlops.trainingFlopsPerToken(b, 4096)).isEqualTo(3 * 1_630_535_680.0);
  }

  /**
   * Megatron-Bridge's recipes train Super's one module for 2 depths on one set of weights
   * (mtp_num_layers 2, mtp_use_repeated_layer): the second depth computes as the first and holds
   * no weights, gradients or optimizer state of its own; without the flag it holds its own.
   */
  @Test
  void repeatedDepthsShareOneModulesWeights() throws Exception {
    List<String> base = List.of("simulate", "--model", "nemotron-3-super-120b-a12b",
        "--cluster", "8x8:h100-80gb", "--tp", "2", "--pp", "2", "--dp", "16", "--ep", "32",
        "--micro-batch", "1", "--global-batch", "64", "--seq", "4096", "--sequence-parallel",
        "--distributed-optimizer", "--recompute", "full", "--json");
    JsonNode one = stages(CliRun.of(base));
    JsonNode shared = stages(CliRun.of(base, "--mtp-num-layers", "2",
        "--mtp-use-repeated-layer"));
    JsonNode own = stages(CliRun.of(base, "--mtp-num-layers", "2"));
    double w1 = one.get(1).get("memory").get("weights").asDouble();
    assertThat(shared.get(1).get("memory").get("weights").asDouble()).isEqualTo(w1);
    assertThat(shared.get(1).get("memory").get("optimizerState").asDouble())
        .isEqualTo(one.get(1).get("memory").get("optimizerState").asDouble());
    assertThat(own.get(1).get("memory").get("weights").asDouble()).isGreaterThan(w1);
    double c1 = one.get(1).get("busyComputeSeconds").asDouble();
    double c2 = shared.get(1).get("busyComputeSeconds").asDouble();
    // The second depth's compute is the first's: the same in both, and more than one depth.
    assertThat(c2).isGreaterThan(c1)
        .isEqualTo(own.get(1).get("busyComputeSeconds").asDouble());
    ModelSpec m = Presets.get("nemotron-3-super-120b-a12b");
    ModelSpec twice = m.withArchitecture(m.arch().withMtp(2).withMtpShared(true));
    // One module's 2,942,324,736 parameters; the active count passes its experts once.
    assertThat(twice.parameterCount()).isEqualTo(m.parameterCount());
    assertThat(twice.activeParameterCount()).isEqualTo(m.activeParameterCount());
    ModelSpec apart = m.withArchitecture(m.arch().withMtp(2));
    assertThat(apart.parameterCount()).isEqualTo(m.parameterCount() + 2_942_324_736L);
    // Megatron-LM: two identical parts after "/" and the flag (transformer_config.py:82).
    Path out = dir.resolve("m.sh");
    CliRun e = CliRun.of("export", "--to", "megatron", "--model", "nemotron-3-super-120b-a12b",
        "--cluster", "8x8:h100-80gb", "--tp", "2", "--pp", "2", "--dp", "16", "--ep", "32",
        "--micro-batch", "1", "--global-batch", "64", "--seq", "4096", "--sequence-parallel",
        "--distributed-optimizer", "--recompute", "full", "--mtp-num-layers", "2",
        "--mtp-use-repeated-layer", "--out", out.toString());
    assertThat(e.code()).as(e.err()).isZero();
    assertThat(Files.readString(out)).containsPattern("EME/\\*E/\\*E'\n")
        .contains("--mtp-num-layers 2\n", "--mtp-use-repeated-layer\n");
    // Bad values and models without a module are refused in one line.
    CliRun.of(base, "--mtp-num-layers", "17").refusedInOneLine(2, "from 0 to 16");
    CliRun.of(base, "--mtp-num-layers", "-1").refusedInOneLine(2, "from 0 to 16");
    CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--mtp-num-layers", "1").refusedInOneLine(2, "no multi-token prediction module");
    CliRun.of(base, "--mtp-num-layers", "0", "--mtp-use-repeated-layer")
        .refusedInOneLine(2, "no multi-token prediction depth");
    // torchtitan writes no such model; the reason names the shared depths.
    CliRun t = CliRun.of("export", "--to", "torchtitan", "--model", "deepseek-v3", "--cluster",
        "32x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "256", "--ep", "64",
        "--micro-batch", "1", "--global-batch", "256", "--seq", "4096", "--recompute", "full",
        "--zero-stage", "3", "--mtp-num-layers", "2", "--mtp-use-repeated-layer", "--out",
        dir.resolve("t.py").toString());
    assertThat(t.code()).isEqualTo(3);
    assertThat(t.err()).contains("prediction depths sharing one module's weights");
  }

  @Test
  void itsPlanFileKeepsTheModuleAndTheLatentWidthAndMegatronWritesThem() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "nemotron-3-super-120b-a12b", "--cluster",
        "1xnvl64:gb300", "--global-batch", "128", "--seq", "4096", "--for", "megatron", "--out",
        plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode arch = JSON.readTree(plan.toFile()).get("model").get("architecture");
    assertThat(arch.get("mtpLayers").asInt()).isEqualTo(1);
    assertThat(arch.get("hybrid").get("mtpPattern").asText()).isEqualTo("*E");
    assertThat(arch.get("moe").get("latentWidth").asInt()).isEqualTo(1024);
    String text = simulatedAndExported(plan);
    assertThat(text).containsPattern("--hybrid-layer-pattern '[ME*|]+/\\*E'\n")
        .contains("--mtp-num-layers 1\n", "--moe-latent-size 1024\n", "pretrain_hybrid.py");
    // A plan file whose module names a layer the model lacks is refused in one line.
    String bad = Files.readString(plan).replace("\"mtpPattern\" : \"*E\"",
        "\"mtpPattern\" : \"*-\"");
    Path badPlan = dir.resolve("bad.json");
    Files.writeString(badPlan, bad);
    CliRun.of("simulate", "--plan", badPlan.toString()).refusedInOneLine(2, "'-'");
  }
  /**
   * Megatron-Bridge's Nemotron 3.5 Lightning recipes train Nemotron 3 Nano's layers with a
   * prediction module of an attention and an expert layer at 2 repeated depths
   * (perf_recipes/nemotronh/gb200/nemotronh.py at 067f987: mtp_num_layers 2,
   * mtp_hybrid_override_pattern "*E", mtp_use_repeated_layer). --mtp-hybrid-override-pattern
   * states the module on a hybrid preset that has none.
   */
  @Test
  void aHybridTakesAPredictionModuleOfTheLayersAPatternNames() throws Exception {
    Path plan = dir.resolve("lightning.json");
    CliRun p = CliRun.of("plan", "--model", "nemotron-3-nano-30b-a3b", "--cluster",
        "1xnvl8:gb200", "--global-batch", "64", "--seq", "4096", "--for", "megatron",
        "--mtp-num-layers", "2", "--mtp-use-repeated-layer", "--mtp-hybrid-override-pattern",
        "*E", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode arch = JSON.readTree(plan.toFile()).get("model").get("architecture");
    assertThat(arch.get("mtpLayers").asInt()).isEqualTo(2);
    assertThat(arch.get("mtpShared").asBoolean()).isTrue();
    assertThat(arch.get("hybrid").get("mtpPattern").asText()).isEqualTo("*E");
    ModelSpec nano = Presets.get("nemotron-3-nano-30b-a3b");
    ModelSpec lightning = io.meshplan.plan.PlanJson.read(plan.toString(),
        Files.readString(plan)).model();
    // One module of Nano's widths (h 2688; 32 query heads and 2 key/value groups of 128; 128
    // experts of 1856 and a shared expert of 3712, squared ReLU): its input projection 2h x h
    // = 14,450,688 and 2 norms 5,376; the attention layer 2688 x 4096 x 2 + 2688 x 256 x 2 =
    // 23,396,352 and its norm 2,688; the expert layer 128 x 2 x 2688 x 1856 = 1,277,165,568,
    // the shared expert 2 x 2688 x 3712 = 19,955,712, the router 2688 x 128 = 344,064 and its
    // norm 2,688; the final norm 2,688: 1,335,325,824 in all, once for the 2 repeated depths.
    assertThat(lightning.parameterCount() - nano.parameterCount()).isEqualTo(1_335_325_824L);
    // Megatron-LM: the module's layers after the unified pattern's '/', once per depth.
    assertThat(simulatedAndExported(plan))
        .containsPattern("--hybrid-layer-pattern '[ME*|]+/\\*E/\\*E'\n")
        .contains("--mtp-num-layers 2\n", "--mtp-use-repeated-layer\n");
    // Refusals, one line each: an ordinary decoder, no depth to run the module, a kind of
    // layer Nano lacks, none or too many layers.
    List<String> nanoRun = List.of("simulate", "--model", "nemotron-3-nano-30b-a3b",
        "--cluster", "1xnvl8:gb200", "--tp", "1", "--pp", "1", "--dp", "8", "--ep", "8",
        "--micro-batch", "1", "--global-batch", "64", "--seq", "4096");
    CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--mtp-num-layers", "1", "--mtp-hybrid-override-pattern", "*")
        .refusedInOneLine(2, "not a hybrid");
    CliRun.of(nanoRun, "--mtp-hybrid-override-pattern", "*E")
        .refusedInOneLine(2, "give --mtp-num-layers N");
    CliRun.of(nanoRun, "--mtp-num-layers", "0", "--mtp-hybrid-override-pattern", "*E")
        .refusedInOneLine(2, "--mtp-num-layers 0 trains none");
    CliRun.of(nanoRun, "--mtp-num-layers", "1", "--mtp-hybrid-override-pattern", "*-")
        .refusedInOneLine(2, "layer 1 is '-'");
    CliRun.of(nanoRun, "--mtp-num-layers", "1", "--mtp-hybrid-override-pattern", "*\u001b")
        .refusedInOneLine(2, "layer 1 is U+001B");
    CliRun.of(nanoRun, "--mtp-num-layers", "1", "--mtp-hybrid-override-pattern", "")
        .refusedInOneLine(2, "must name 1 to 64 layers, got 0");
    CliRun.of(nanoRun, "--mtp-num-layers", "1", "--mtp-hybrid-override-pattern",
        "E".repeat(65)).refusedInOneLine(2, "must name 1 to 64 layers, got 65");
    // A character outside the Basic Multilingual Plane (U+1D544, two UTF-16 units) is one layer,
    // named whole: not half of its pair, and 64 of them are 64 layers, not 128.
    CliRun.of(nanoRun, "--mtp-num-layers", "1", "--mtp-hybrid-override-pattern",
        "*\uD835\uDD44").refusedInOneLine(2, "layer 1 is U+1D544");
    CliRun.of(nanoRun, "--mtp-num-layers", "1", "--mtp-hybrid-override-pattern",
        "\uD835\uDD44".repeat(65)).refusedInOneLine(2, "must name 1 to 64 layers, got 65");
    // --layers 3 keeps "MEM", no attention layer: the module asked for would vanish, so the
    // flags are refused; 8 layers ("MEMEM*EM") keep both kinds and the module.
    CliRun.of(nanoRun, "--layers", "3", "--mtp-num-layers", "1",
        "--mtp-hybrid-override-pattern", "*E").refusedInOneLine(2, "--layers 3 keeps the layers "
        + "'MEM', which lack a kind of layer of the prediction module '*E'");
    CliRun eight = CliRun.of(nanoRun, "--layers", "8", "--mtp-num-layers", "1",
        "--mtp-hybrid-override-pattern", "*E");
    assertThat(eight.code()).as(eight.err()).isZero();
  }
}
