package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * An export states what {@code simulate} priced for the same flags, defaults included (issue 36):
 * the training precision (the GPU's bf16, or fp16 on a V100, unless {@code --dtype} says
 * otherwise; the LLaMA 2 presets' own element type is Alpa's fp32), the attention kernel, the
 * recomputation, the overlaps and every degree. Each seeded case simulates the flags, exports
 * them to Megatron-LM and to DeepSpeed, reads back from each file the precision, attention,
 * recomputation, gradient-reduction overlap and degrees it states, and simulates those: the two
 * simulations must agree to the byte and the second, so the file trains what was priced.
 */
class PricedSettingsExportCliTest {
  private static final String[] PRESETS = {"llama2-7b", "llama2-13b", "llama3-8b", "mistral-7b",
      "gpt-1.7b"};
  private static final String[] CLUSTERS = {"1x8:v100-32gb", "1x8:a100-80gb", "1x8:h100-80gb",
      "2x8:h100-80gb", "1x4:a100-40gb"};
  private static final int CASES = 24;

  /** The example: simulate priced bf16 at 341 TFLOP/s; the file said nothing (fp32). */
  @Test
  void llama2OnH100sExportsTheBf16ItWasPricedIn() {
    String[] flags = {"--model", "llama2-7b", "--cluster", "2x8:h100-80gb", "--tp", "2", "--pp",
        "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "64"};
    CliRun m = CliRun.of(with(new String[] {"export", "--to", "megatron"}, flags));
    assertThat(m.code()).as(m.err()).isZero();
    assertThat(m.out()).contains("\n  --attention-backend flash\n  --bf16\n)\n");
    CliRun d = CliRun.of(with(new String[] {"export", "--to", "deepspeed"}, flags));
    assertThat(d.code()).as(d.err()).isZero();
    assertThat(d.out()).contains("\"bf16\" : {\n    \"enabled\" : true\n  }", "\n  --bf16\n");
    // On V100s, which have no bf16, simulate prices fp16 with dynamic loss scaling.
    String[] v100 = {"--model", "llama2-7b", "--cluster", "4x8:v100-32gb", "--tp", "8", "--pp",
        "1", "--dp", "4", "--micro-batch", "1", "--global-batch", "64",
        "--distributed-optimizer"};
    CliRun mv = CliRun.of(with(new String[] {"export", "--to", "megatron", "--recompute",
        "full"}, v100));
    assertThat(mv.code()).as(mv.err()).isZero();
    assertThat(mv.out()).contains("\n  --attention-backend unfused\n  --fp16\n)\n")
        .doesNotContain("--bf16");
    // --dtype f32 is priced and written as fp32: neither switch.
    CliRun f32 = CliRun.of(with(new String[] {"export", "--to", "megatron", "--dtype", "f32",
        "--recompute", "full"}, v100));
    assertThat(f32.code()).as(f32.err()).isZero();
    assertThat(f32.out()).doesNotContain("--fp16").doesNotContain("--bf16");
  }

  @Test
  void seededExportsStateWhatSimulatePriced() {
    Random rnd = new Random(36);
    int compared = 0;
    for (int i = 0; i < CASES; i++) {
      List<String> flags = randomFlags(rnd);
      CliRun sim = CliRun.of(with(new String[] {"simulate", "--json"}, flags));
      if (sim.code() != 0) {
        continue; // a configuration that does not fit: nothing priced to export
      }
      for (String to : List.of("megatron", "deepspeed")) {
        CliRun ex = CliRun.of(with(new String[] {"export", "--to", to}, flags));
        if (ex.code() == ExitCodes.INFEASIBLE) {
          continue; // the framework lacks a feature and says which
        }
        assertThat(ex.code()).as(to + " " + flags + ": " + ex.err()).isZero();
        List<String> back = stated(to, ex.out(), flags);
        CliRun again = CliRun.of(with(new String[] {"simulate", "--json"}, back));
        assertThat(again.code()).as(back + ": " + again.err()).isZero();
        assertThat(again.out()).as(to + " " + flags + " -> " + back).isEqualTo(sim.out());
        assertThat(dtypeWord(to, ex.out())).as(to + " " + flags).isEqualTo(pricedDtype(flags));
        compared++;
      }
    }
    // 24 cases over 5 presets x 5 clusters; the count pins the seed's mix.
    assertThat(compared).isGreaterThanOrEqualTo(20);
  }

  /** A preset, cluster and configuration, sometimes with an explicit precision. */
  private static List<String> randomFlags(Random rnd) {
    String preset = PRESETS[rnd.nextInt(PRESETS.length)];
    String cluster = CLUSTERS[rnd.nextInt(CLUSTERS.length)];
    boolean v100 = cluster.contains("v100");
    int gpus = cluster.startsWith("2x8") ? 16 : cluster.startsWith("1x4") ? 4 : 8;
    int tp = new int[] {1, 2, 4}[rnd.nextInt(3)];
    int pp = new int[] {1, 2}[rnd.nextInt(2)];
    int dp = gpus / (tp * pp);
    List<String> f = new ArrayList<>(List.of("--model", preset, "--layers", "4", "--seq",
        "1024", "--cluster", cluster, "--tp", String.valueOf(tp), "--pp", String.valueOf(pp),
        "--dp", String.valueOf(dp), "--micro-batch", "1", "--global-batch",
        String.valueOf(2 * dp), "--recompute", new String[] {"none", "selective", "full"}[
            rnd.nextInt(3)]));
    int dtype = rnd.nextInt(4);
    if (dtype == 1) {
      f.addAll(List.of("--dtype", "f32"));
    } else if (dtype == 2) {
      f.addAll(List.of("--dtype", v100 ? "f16" : "bf16"));
    }
    if (!v100 && rnd.nextBoolean()) {
      f.addAll(List.of("--attention", "unfused"));
    }
    if (tp > 1 && rnd.nextBoolean()) {
      f.add("--sequence-parallel");
    }
    if (dp > 1 && rnd.nextBoolean()) {
      f.addAll(List.of("--distributed-optimizer", "--overlap-grad-reduce"));
    }
    return f;
  }

  /** The precision simulate prices: --dtype's, else the GPU's (fp16 on a V100, else bf16). */
  private static String pricedDtype(List<String> flags) {
    int at = flags.indexOf("--dtype");
    if (at >= 0) {
      return flags.get(at + 1);
    }
    return flags.get(flags.indexOf("--cluster") + 1).contains("v100") ? "f16" : "bf16";
  }

  /** The precision a file states: its bf16 or fp16 switch, else fp32. */
  private static String dtypeWord(String to, String file) {
    Map<String, String> a = ExportRoundTripCliTest.arguments(file, to.equals("megatron")
        ? "MEGATRON_ARGS=(" : "DS_ARGS=(");
    String args = a.containsKey("--bf16") ? "bf16" : a.containsKey("--fp16") ? "f16" : "f32";
    if (to.equals("deepspeed")) {
      // The JSON's precision block is the arguments' (precision_config.py:41-47, 100-160).
      String json = file.contains("\"bf16\" : {\n    \"enabled\" : true") ? "bf16"
          : file.contains("\"fp16\" : {\n    \"enabled\" : true") ? "f16" : "f32";
      assertThat(json).isEqualTo(args);
    }
    return args;
  }

  /**
   * simulate's flags for what a file states: the model flags of the case (the file states the
   * same dimensions) with the file's precision, attention, recomputation, overlap and degrees.
   */
  private static List<String> stated(String to, String file, List<String> flags) {
    boolean megatron = to.equals("megatron");
    Map<String, String> a = ExportRoundTripCliTest.arguments(file, megatron ? "MEGATRON_ARGS=("
        : "DS_ARGS=(");
    List<String> f = new ArrayList<>(flags.subList(0, flags.indexOf("--tp")));
    int tp = Integer.parseInt(a.get("--tensor-model-parallel-size"));
    int pp = Integer.parseInt(a.get("--pipeline-model-parallel-size"));
    int world = Integer.parseInt(flags.get(flags.indexOf("--tp") + 1))
        * Integer.parseInt(flags.get(flags.indexOf("--pp") + 1))
        * Integer.parseInt(flags.get(flags.indexOf("--dp") + 1));
    f.addAll(List.of("--tp", String.valueOf(tp), "--pp", String.valueOf(pp), "--dp",
        String.valueOf(world / (tp * pp)), "--micro-batch", a.get("--micro-batch-size"),
        "--global-batch", a.get("--global-batch-size"), "--dtype", dtypeWord(to, file),
        "--recompute", a.getOrDefault("--recompute-granularity", "none"), "--attention",
        megatron ? a.get("--attention-backend") : a.containsKey("--use-flash-attn-v2")
            ? "flash" : "unfused"));
    if (a.containsKey("--sequence-parallel")) {
      f.add("--sequence-parallel");
    }
    boolean zero1 = megatron ? a.containsKey("--use-distributed-optimizer")
        : "1".equals(a.get("--zero-stage"));
    if (zero1) {
      f.add("--distributed-optimizer");
    }
    boolean overlap = megatron ? a.containsKey("--overlap-grad-reduce")
        : file.contains("\"overlap_comm\" : true");
    if (overlap) {
      f.add("--overlap-grad-reduce");
    }
    return f;
  }

  private static String[] with(String[] head, List<String> tail) {
    List<String> all = new ArrayList<>(List.of(head));
    all.addAll(tail);
    return all.toArray(String[]::new);
  }

  private static String[] with(String[] head, String[] tail) {
    return with(head, List.of(tail));
  }
}
