package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --fp8-param-gather} under LoRA: the frozen base's block projections stored in FP8, as
 * MLPerf Training's Llama 2 70B LoRA runs keep them; its memory, its plan file and its refusals.
 */
class Fp8BaseLoraCliTest {
  @TempDir Path dir;

  private static final List<String> RUN = List.of("simulate", "--model", "llama2-70b",
      "--cluster", "1x8:mi325x", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
      "--global-batch", "8", "--seq", "8192", "--finetune", "lora", "--lora-rank", "16",
      "--lora-targets", "attention", "--dtype", "fp8");

  /**
   * Llama 2 70B's weights: 80 blocks of 8,192 x (8,192 + 1,024 + 1,024 + 8,192) attention and 3 x
   * 8,192 x 28,672 MLP weights, 855,638,016 a block, 68,451,041,280 in all; the embedding and the
   * head (2 x 32,000 x 8,192) and 161 norms of 8,192, 525,606,912; the adapters on q, k, v and o,
   * each A (8,192 x 16) and B (16 x its output: 8,192, 1,024, 1,024, 8,192), 80 x 819,200 =
   * 65,536,000. In bf16 that is
   * (68,451,041,280 + 525,606,912 + 65,536,000) x 2 = 138,084,368,384 bytes, 128.60 GiB; with
   * the block projections in FP8, 68,451,041,280 + (525,606,912 + 65,536,000) x 2 =
   * 69,633,327,104 bytes, 64.85 GiB. The run then fits the MI325X's memory, as it ran.
   */
  @Test
  void theFrozenBaseTakesOneByteAWeight() {
    CliRun bf16Base = CliRun.of(RUN);
    assertThat(bf16Base.out()).contains("weights 128.60 ");
    CliRun fp8Base = CliRun.of(RUN, "--fp8-param-gather");
    assertThat(fp8Base.code()).as(fp8Base.err()).isZero();
    assertThat(fp8Base.out()).contains("weights 64.85 ", "fits: ",
        "fine-tuning: LoRA (FP8 base) rank 16, alpha 32, targets q_proj,k_proj,v_proj,o_proj",
        "65,536,000 trainable of 69,042,184,192 parameters");
  }

  @Test
  void aPlanFileKeepsTheBaseAndRefusesItWithoutFp8() throws Exception {
    Path plan = dir.resolve("p.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-70b", "--cluster", "1x8:mi325x", "--seq",
        "8192", "--global-batch", "8", "--finetune", "lora", "--lora-targets", "attention",
        "--dtype", "fp8", "--fp8-param-gather", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    String json = Files.readString(plan);
    assertThat(json).contains("\"base\" : \"fp8\"");
    CliRun again = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(again.code()).as(again.err()).isIn(0, 3);
    assertThat(again.out()).contains("LoRA (FP8 base)");
    Path bf16 = dir.resolve("bf16.json");
    Files.writeString(bf16, json.replace("\"dtype\" : \"fp8\"", "\"dtype\" : \"bf16\"")
        .replaceAll(",\\s*\"fp8Recipe\" : \"[a-z]+\"", ""));
    CliRun.of("simulate", "--plan", bf16.toString())
        .refusedInOneLine(2, "model.lora.base: is 'fp8', but model.dtype is 'bf16', not fp8");
    Path other = dir.resolve("other.json");
    Files.writeString(other, json.replace("\"base\" : \"fp8\"", "\"base\" : \"fp4\""));
    CliRun.of("simulate", "--plan", other.toString())
        .refusedInOneLine(2, "must be nf4 (QLoRA's 4-bit base) or fp8 (a base stored in FP8), "
            + "got 'fp4'");
    assertThat(Files.readString(plan)).isEqualTo(json);
  }

  @Test
  void itIsRefusedWhereItMeansNothing() {
    List<String> full = RUN.subList(0, RUN.indexOf("--finetune"));
    CliRun.of(full, "--finetune", "qlora", "--dtype", "fp8", "--fp8-param-gather")
        .refusedInOneLine(2, "--fp8-param-gather stores the base in FP8 and --finetune qlora in "
            + "NF4; give one");
    CliRun.of(full, "--finetune", "lora", "--dtype", "bf16", "--fp8-param-gather")
        .refusedInOneLine(2, "--fp8-param-gather stores the weights in FP8 for FP8 training; "
            + "it needs --dtype fp8, and the precision is bf16");
  }

  /** No export writes an FP8 base beside LoRA: torchtitan, which writes LoRA, refuses it. */
  @Test
  void noExportWritesIt() throws Exception {
    Path plan = dir.resolve("q.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--global-batch", "16", "--finetune", "lora", "--dtype", "fp8", "--fp8-param-gather",
        "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    Path out = dir.resolve("t.py");
    CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", "torchtitan", "--out",
        out.toString());
    assertThat(e.code()).isEqualTo(3);
    assertThat(e.err()).contains("writes no FP8 base beside LoRA adapters (--fp8-param-gather)");
    assertThat(out).doesNotExist();
  }
}
