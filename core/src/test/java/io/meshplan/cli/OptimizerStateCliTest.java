package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --optimizer-state bf16}: the bf16 weights are Adam's own, its moments and the kept
 * gradients bf16 (NeMo AutoModel's MoE recipes, {@code torch.optim.Adam} on a bf16 model). The
 * per-GPU model state and the optimizer step follow ({@link io.meshplan.model.OptimizerState}),
 * the plan file keeps it, no export can state it, and bad input is refused in one line.
 */
class OptimizerStateCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** llama3-8b: P = 8,030,261,248 parameters, all trained; 8 GPUs data-parallel. */
  private static final long P = 8_030_261_248L;

  @TempDir Path dir;

  private static List<String> sim(int zero, String... more) {
    List<String> a = new ArrayList<>(List.of("simulate", "--model", "llama3-8b", "--cluster",
        "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
        "--global-batch", "32", "--seq", "4096", "--zero-stage", Integer.toString(zero)));
    a.addAll(List.of(more));
    return a;
  }

  private static JsonNode json(List<String> args) throws Exception {
    List<String> a = new ArrayList<>(args);
    a.add("--json");
    CliRun r = CliRun.of(a);
    assertThat(r.code()).as(r.err()).isIn(0, 3);
    return JSON.readTree(r.out());
  }

  /**
   * Per GPU under ZeRO-1 (state sharded over 8) and ZeRO-3 (weights, gradients and state
   * sharded), in bytes, and the optimizer step's 30 and 14 bytes per updated parameter.
   */
  @Test
  void modelStateAndTheStepFollowThePrecision() throws Exception {
    JsonNode f1 = json(sim(1));
    JsonNode b1 = json(sim(1, "--optimizer-state", "bf16"));
    // ZeRO-1: weights 2P = 16,060,522,496 either way; gradients 4P = 32,121,044,992 (fp32
    // accumulator, unsharded) against 2P; state 12P / 8 = 12,045,391,872 against 4P / 8 =
    // 4,015,130,624.
    assertThat(f1.at("/memory/weights").asLong()).isEqualTo(2 * P);
    assertThat(b1.at("/memory/weights").asLong()).isEqualTo(2 * P);
    assertThat(f1.at("/memory/gradients").asLong()).isEqualTo(4 * P);
    assertThat(b1.at("/memory/gradients").asLong()).isEqualTo(2 * P);
    assertThat(f1.at("/memory/optimizerState").asLong()).isEqualTo(12 * P / 8);
    assertThat(b1.at("/memory/optimizerState").asLong()).isEqualTo(4 * P / 8);
    // fp32 state does not fit in 80 GB here (exit 3); bf16 frees 16P + 8P/8 = 24.1 GB of it.
    assertThat(f1.at("/fits/fits").asBoolean()).isFalse();
    assertThat(b1.at("/fits/fits").asBoolean()).isTrue();
    assertThat(f1.get("peakMemoryBytesPerGpu").asDouble()
        - b1.get("peakMemoryBytesPerGpu").asDouble()).isEqualTo(2.0 * P + 8.0 * P / 8);
    // ZeRO-3: everything over 8: weights 2P / 8, gradients 4P / 8 against 2P / 8, state 12P / 8
    // against 4P / 8.
    JsonNode f3 = json(sim(3));
    JsonNode b3 = json(sim(3, "--optimizer-state", "bf16"));
    assertThat(b3.at("/memory/weights").asLong()).isEqualTo(2 * P / 8);
    assertThat(f3.at("/memory/gradients").asLong()).isEqualTo(4 * P / 8);
    assertThat(b3.at("/memory/gradients").asLong()).isEqualTo(2 * P / 8);
    assertThat(f3.at("/memory/optimizerState").asLong()).isEqualTo(12 * P / 8);
    assertThat(b3.at("/memory/optimizerState").asLong()).isEqualTo(4 * P / 8);
    // The step streams P / 8 updated parameters at one HBM rate: 30 against 14 bytes each.
    for (JsonNode[] pair : new JsonNode[][] {{f1, b1}, {f3, b3}}) {
      assertThat(pair[1].at("/breakdown/optimizer").asDouble() * 30 / 14)
          .isCloseTo(pair[0].at("/breakdown/optimizer").asDouble(),
              org.assertj.core.data.Percentage.withPercentage(1e-9));
    }
    // Under ZeRO-1 the gradient accumulation is fused into the weight-gradient GEMMs: the
    // compute is the same; under ZeRO-3 each microbatch adds its bf16 gradient to a bf16
    // accumulator, half the bytes of the fp32 one and no cast: less compute.
    assertThat(b1.at("/breakdown/compute").asDouble())
        .isCloseTo(f1.at("/breakdown/compute").asDouble(),
            org.assertj.core.data.Percentage.withPercentage(1e-9));
    assertThat(b3.at("/breakdown/compute").asDouble())
        .isLessThan(f3.at("/breakdown/compute").asDouble());
  }

  /** fp32 is the default: stated or not, the same output, byte for byte. */
  @Test
  void fp32IsTodaysStep() {
    CliRun plain = CliRun.of(sim(3));
    CliRun stated = CliRun.of(sim(3, "--optimizer-state", "FP32"));
    assertThat(plain.code()).isZero();
    assertThat(stated.out()).isEqualTo(plain.out());
  }

  /**
   * The plan file keeps the precision (model.optimizerState, written only for bf16); simulate
   * --plan reads it; a plan without the field is fp32; a bad value is refused in one line, the
   * file untouched; every export refuses bf16 state, exit 3, nothing written.
   */
  @Test
  void thePlanKeepsItAndNoExportWritesIt() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--layers", "4", "--cluster",
        "1x8:h100-80gb", "--global-batch", "32", "--seq", "4096", "--optimizer-state", "bf16",
        "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    String text = Files.readString(plan);
    JsonNode saved = JSON.readTree(text);
    assertThat(saved.at("/model/optimizerState").asText()).isEqualTo("bf16");
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    JsonNode sj = JSON.readTree(s.out());
    assertThat(sj.get("iterationSeconds").asDouble())
        .isEqualTo(saved.get("iterationSeconds").asDouble());
    // Without the field the same plan is mixed-precision Adam: more state per GPU.
    JsonNode old = JSON.readTree(text);
    ((ObjectNode) old.at("/model")).remove("optimizerState");
    Path oldPlan = dir.resolve("old.json");
    Files.writeString(oldPlan, JSON.writeValueAsString(old));
    CliRun o = CliRun.of("simulate", "--plan", oldPlan.toString(), "--json");
    assertThat(o.code()).as(o.err()).isIn(0, 3);
    assertThat(JSON.readTree(o.out()).at("/memory/optimizerState").asDouble())
        .isEqualTo(3 * sj.at("/memory/optimizerState").asDouble());
    for (Object bad : new Object[] {"bogus", "bf\n16", 3}) {
      Path f = dir.resolve("bad.json");
      JsonNode root = JSON.readTree(text);
      ((ObjectNode) root.at("/model")).set("optimizerState", JSON.valueToTree(bad));
      String written = JSON.writeValueAsString(root);
      Files.writeString(f, written);
      CliRun r = CliRun.of("simulate", "--plan", f.toString());
      assertThat(r.code()).as(r.err()).isEqualTo(2);
      assertThat(r.err()).hasLineCount(1).contains("optimizerState");
      assertThat(Files.readString(f)).isEqualTo(written);
    }
    // torchtitan has no 4-layer llama3 flavor and Alpa no fused attention, which they say first;
    // torchtitan is asked below.
    for (String to : List.of("megatron", "deepspeed", "accelerate")) {
      Path out = dir.resolve("out-" + to);
      CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", to, "--out",
          out.toString());
      assertThat(e.code()).as(to).isEqualTo(3);
      assertThat(e.err()).as(to).hasLineCount(1).contains("cannot state bf16 optimizer state")
          .doesNotContain("\tat ");
      assertThat(Files.exists(out)).as(to).isFalse();
    }
  }

  /**
   * Megatron-LM's precision-aware optimizer keeps a master copy: {@code --main-params-dtype}
   * takes fp32 or fp16 only, where {@code --exp-avg-dtype} and {@code --exp-avg-sq-dtype} take
   * bf16 (NVIDIA/Megatron-LM megatron/training/arguments.py at d98e8a6, the arguments of the
   * precision-aware optimizer); so its export refuses bf16 state and says why.
   */
  @Test
  void megatronLmCannotDropTheMasterCopy() {
    for (String to : List.of("megatron", "torchtitan")) {
      Path out = dir.resolve("full-" + to);
      CliRun e = CliRun.of("export", "--to", to, "--model", "llama3-8b", "--cluster",
          "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
          "--global-batch", "32", "--seq", "4096", "--zero-stage", "1", "--optimizer-state",
          "bf16", "--out", out.toString());
      assertThat(e.code()).as(to).isEqualTo(3);
      assertThat(e.err()).as(to).hasLineCount(1)
          .contains(to + " export keeps an fp32 master copy")
          .contains("--main-params-dtype takes fp32 or fp16 only");
      assertThat(Files.exists(out)).as(to).isFalse();
    }
  }

  @Test
  void badInputIsRefusedInOneLine() {
    List<List<String>> cases = List.of(
        sim(3, "--optimizer-state", "bf16", "--optimizer-state", "fp32"),
        sim(3, "--optimizer-state", "bf16", "--optimizer-state", "bf16"),
        sim(3, "--optimizer-state", "fp16"),
        sim(3, "--optimizer-state", ""),
        sim(3, "--optimizer-state", "bf\n16"),
        sim(3, "--optimizer-state", "bf16\u2028"),
        sim(3, "--optimizer-state", "bf16", "--dtype", "f32"),
        sim(3, "--optimizer-state", "bf16", "--dtype", "f16"));
    for (List<String> c : cases) {
      CliRun r = CliRun.of(c);
      assertThat(r.code()).as(c.toString()).isEqualTo(2);
      assertThat(r.err()).as(c.toString()).hasLineCount(1).startsWith("meshplan: ")
          .contains("--optimizer-state");
    }
    // V100 trains in fp16 unless told otherwise: its weights cannot be the state.
    CliRun v = CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "1x8:v100-32gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "32",
        "--seq", "2048", "--optimizer-state", "bf16");
    assertThat(v.code()).isEqualTo(2);
    assertThat(v.err()).hasLineCount(1).contains("needs bf16 training").contains("not f16");
    CliRun sh = CliRun.of("shard", "--model", "llama3-8b", "--mesh", "1x8", "--cluster",
        "1x8:h100-80gb", "--optimizer-state", "bf16");
    assertThat(sh.code()).isEqualTo(2);
    assertThat(sh.err()).hasLineCount(1).contains("--optimizer-state");
  }
}
