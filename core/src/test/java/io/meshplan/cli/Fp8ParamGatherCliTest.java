package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --fp8-param-gather} in full FP8 training (Megatron-LM's flag, as MLPerf Training's FP8
 * Llama 3.1 8B submissions run it): the trained block projections kept in FP8, their memory,
 * the distributed optimizer's FP8 all-gather, the plan file, the Megatron-LM export and the
 * refusals.
 */
class Fp8ParamGatherCliTest {
  @TempDir Path dir;

  private static final List<String> RUN = List.of("simulate", "--model", "llama3.1-8b",
      "--cluster", "1x8:h200-141gb", "--seq", "8192", "--tp", "1", "--pp", "1", "--dp", "8",
      "--micro-batch", "1", "--global-batch", "8", "--prices", "kernel");

  private static final List<String> FP8 = java.util.stream.Stream.concat(RUN.stream(),
      java.util.stream.Stream.of("--dtype", "fp8")).toList();

  /**
   * Llama 3.1 8B's block projections: 32 x (4,096 x (4,096 + 1,024 + 1,024 + 4,096) + 3 x 4,096 x
   * 14,336) = 32 x 218,103,808 = 6,979,321,856 weights; the embedding and head 2 x 128,256 x
   * 4,096 = 1,050,673,152 and 65 norms of 4,096, 266,240; 8,030,261,248 in all. In bf16:
   * 16,060,522,496 bytes, 14.96 GiB. With the projections in FP8: 6,979,321,856 + 1,050,939,392 x
   * 2 = 9,081,200,640 bytes, 8.46 GiB. The gradients (fp32 here, 4 x 8,030,261,248 = 29.92 GiB)
   * and Adam's state sharded over 8 (12 x 8,030,261,248 / 8 = 11.22 GiB) do not change. The
   * distributed optimizer's all-gather of the updated weights moves 7/8 of them per GPU, one byte
   * a projection weight instead of two: 6,979,321,856 x 7/8 = 6,106,906,624 bytes, 5.69 GiB less
   * (39.26 - 33.58 = 5.68 GiB as printed, each figure rounded).
   */
  @Test
  void theTrainedProjectionsTakeOneByteAndGatherInFp8() {
    CliRun bf16 = CliRun.of(FP8, "--distributed-optimizer");
    assertThat(bf16.code()).as(bf16.err()).isZero();
    assertThat(bf16.out()).contains("weights 14.96 + gradients 29.92 + optimizer state 11.22",
        "dp 39.26 GiB");
    CliRun fp8 = CliRun.of(FP8, "--distributed-optimizer", "--fp8-param-gather");
    assertThat(fp8.code()).as(fp8.err()).isZero();
    assertThat(fp8.out()).contains("weights 8.46 + gradients 29.92 + optimizer state 11.22",
        "dp 33.58 GiB");
    CliRun json = CliRun.of(FP8, "--distributed-optimizer", "--fp8-param-gather", "--json");
    assertThat(json.out()).contains("\"mode\" : \"full\"", "\"fp8ParamGather\" : true",
        "\"trainableParameters\" : 8030261248");
  }

  @Test
  void itIsRefusedWhereMegatronRefusesIt() {
    CliRun.of(FP8, "--fp8-param-gather").refusedInOneLine(2, "--fp8-param-gather in full "
        + "training needs a sharded optimizer (--distributed-optimizer or --zero-stage 1-3), as "
        + "in Megatron-LM");
    CliRun.of("simulate", "--model", "llama3.1-8b", "--cluster", "1x8:b200", "--seq", "8192",
        "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "8", "--dtype",
        "fp8", "--fp8-recipe", "nvfp4",
        "--distributed-optimizer", "--fp8-param-gather").refusedInOneLine(2, "--fp8-param-gather "
        + "under --fp8-recipe nvfp4 is not modelled: Megatron-LM gathers NVFP4 weights with "
        + "--fp4-param-gather");
    CliRun.of(FP8, "--distributed-optimizer", "--fp8-param-gather", "--optimizer-state", "bf16")
        .refusedInOneLine(2, "--fp8-param-gather keeps FP8 weights beside an fp32 master that "
            + "the optimizer updates; --optimizer-state bf16 has no master");
    CliRun.of(RUN, "--distributed-optimizer", "--fp8-param-gather", "--dtype", "bf16")
        .refusedInOneLine(2, "--fp8-param-gather stores the weights in FP8 for FP8 training; it "
            + "needs --dtype fp8, and the precision is bf16");
  }

  @Test
  void aPlanKeepsItAndOnlyMegatronExportsIt() throws Exception {
    Path plan = dir.resolve("p.json");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--cluster", "1x8:h100-80gb",
        "--seq", "8192", "--global-batch", "16", "--dtype", "fp8", "--fp8-param-gather",
        "--for", "megatron", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    String json = Files.readString(plan);
    assertThat(json).contains("\"fp8ParamGather\" : true");
    CliRun again = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(again.code()).as(again.err()).isIn(0, 3);
    assertThat(again.out()).contains("\"fp8ParamGather\" : true");
    Path args = dir.resolve("m.sh");
    CliRun m = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron", "--out",
        args.toString());
    assertThat(m.code()).as(m.err()).isZero();
    assertThat(Files.readString(args)).contains("--fp8-param-gather");
    Path t = dir.resolve("t.py");
    CliRun tt = CliRun.of("export", "--plan", plan.toString(), "--to", "torchtitan", "--out",
        t.toString());
    assertThat(tt.code()).isEqualTo(3);
    assertThat(tt.err()).contains("writes no FP8 weights (--fp8-param-gather)");
    assertThat(t).doesNotExist();
    Path bf16 = dir.resolve("bf16.json");
    Files.writeString(bf16, json.replace("\"dtype\" : \"fp8\"", "\"dtype\" : \"bf16\"")
        .replaceAll(",\\s*\"fp8Recipe\" : \"[a-z]+\"", ""));
    CliRun.of("simulate", "--plan", bf16.toString()).refusedInOneLine(2,
        "model.fp8ParamGather: is true, but model.dtype is 'bf16', not fp8");
    Path bf16State = dir.resolve("state.json");
    Files.writeString(bf16State, json.replaceFirst("\"fp8ParamGather\" : true,",
        "\"fp8ParamGather\" : true, \"optimizerState\" : \"bf16\","));
    CliRun.of("simulate", "--plan", bf16State.toString()).refusedInOneLine(2,
        "model.fp8ParamGather: is true, but model.optimizerState is 'bf16'");
    Path unsharded = dir.resolve("zero0.json");
    Files.writeString(unsharded, json.replaceAll("\"zeroStage\" : [0-9]", "\"zeroStage\" : 0"));
    CliRun.of("simulate", "--plan", unsharded.toString()).refusedInOneLine(2,
        "zeroStage: 0: model.fp8ParamGather needs a sharded optimizer (ZeRO stage 1-3)");
    assertThat(Files.readString(plan)).isEqualTo(json);
  }
}
