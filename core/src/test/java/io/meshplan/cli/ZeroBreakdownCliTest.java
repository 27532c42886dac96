package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * The breakdown of {@code simulate --json} under each ZeRO stage, with and without a pipeline
 * (issue #36, section 2: ZeRO-2 on 16 stages reported its per-microbatch gradient reduce-scatter
 * as tensor-parallel communication). ZeRO-2's reduce-scatter and ZeRO-3's gathers run inside every
 * microbatch's passes on the data-parallel axis: they are data-parallel communication, so the
 * tensor-parallel part is the same under every ZeRO stage of one layout. (The arithmetic of the
 * attribution is pinned in {@code PipelineSimulatorTest.zeroShardWorkCountsAsDataParallel} and
 * {@code StageCostBuilderTest}.)
 */
class ZeroBreakdownCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode breakdown(String pp, String dp, int zero) throws Exception {
    java.util.List<String> a = new java.util.ArrayList<>(java.util.List.of("simulate", "--model",
        "llama2-7b", "--layers", "4", "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", pp,
        "--dp", dp, "--micro-batch", "1", "--global-batch", "16", "--zero-stage",
        Integer.toString(zero), "--json"));
    if (zero >= 2) {
      // The prefetch exists under ZeRO-2 and ZeRO-3 only (the flag is refused below them).
      a.add("--no-fsdp-prefetch");
    }
    CliRun r = CliRun.of(a.toArray(String[]::new));
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out()).get("breakdown");
  }

  @Test
  void perMicrobatchShardWorkIsDataParallelWithAndWithoutPipelines() throws Exception {
    for (String[] layout : new String[][] {{"2", "2"}, {"1", "4"}}) {
      JsonNode[] b = new JsonNode[4];
      for (int z = 0; z < 4; z++) {
        b[z] = breakdown(layout[0], layout[1], z);
        String where = "pp " + layout[0] + ", ZeRO-" + z;
        // The exposed communication is partitioned by its parts.
        assertThat(b[z].get("tensorParallel").asDouble() + b[z].get("pipeline").asDouble()
            + b[z].get("dataParallel").asDouble()
            + b[z].get("expertAndContextExchange").asDouble()).as(where)
            .isCloseTo(b[z].get("exposedCommunication").asDouble(), within(1e-9));
        assertThat(b[z].get("tensorParallel").asDouble()).as(where)
            .isCloseTo(b[0].get("tensorParallel").asDouble(), within(1e-12));
      }
      // 8 microbatches (16 sequences / (1 x DP 2)) or 4 (DP 4), each reduce-scattering its
      // gradients under ZeRO-2 and also gathering the weights twice under ZeRO-3: more
      // data-parallel time than ZeRO-1's once-per-iteration reduce-scatter and gather.
      assertThat(b[2].get("dataParallel").asDouble())
          .isGreaterThan(b[1].get("dataParallel").asDouble());
      assertThat(b[3].get("dataParallel").asDouble())
          .isGreaterThan(b[2].get("dataParallel").asDouble());
    }
  }

  /**
   * The issue's case: Llama 3.1 405B on 1,024 x 8 H100, TP 8, 16 stages (7, 8 x 14, 7 blocks), DP
   * 64, 2,048 sequences: 32 microbatches. ZeRO-2 reported 9.0 s of tensor-parallel communication
   * against 1.3 s under ZeRO-1; the difference is its gradient reduce-scatter. Stage 0 holds 7
   * blocks of 3.19e9 parameters and the 2.10e9 embedding, an eighth of each per GPU under TP 8:
   * 3.05e9 fp32 gradients, 12.2 GB, reduce-scattered over 64 GPUs of 64 nodes, whose 400 GB/s of
   * NICs serve 8 such groups (one per TP rank): (63/64) x 12.2e9 / 50e9 = 0.24 s per microbatch,
   * 7.7 s over 32, plus the once-per-iteration gather of the 6.1 GB of 16-bit weights, 0.12 s:
   * about 7.8 s of data-parallel communication, and the tensor-parallel part stays ZeRO-1's (1.8
   * s with the full recomputation ZeRO-1 needs to fit, which runs the forward's collectives
   * again).
   */
  @Test
  void theIssuesZeroTwoPipelineCountsItsReduceScatterAsDataParallel() throws Exception {
    JsonNode[] b = new JsonNode[2];
    for (int z = 1; z <= 2; z++) {
      java.util.List<String> a = new java.util.ArrayList<>(java.util.List.of("simulate",
          "--model", "llama3.1-405b", "--cluster", "1024x8:h100-80gb:ib-ndr400", "--tp", "8",
          "--pp", "16", "--dp", "64", "--sequence-parallel", "--micro-batch", "1",
          "--global-batch", "2048", "--first-stage-layers", "7", "--last-stage-layers", "7",
          "--zero-stage", Integer.toString(z), "--recompute", "full", "--json"));
      if (z == 2) {
        a.add("--no-fsdp-prefetch");
      }
      CliRun r = CliRun.of(a.toArray(String[]::new));
      assertThat(r.code()).as(r.err()).isZero();
      b[z - 1] = JSON.readTree(r.out()).get("breakdown");
    }
    assertThat(b[1].get("tensorParallel").asDouble())
        .isCloseTo(b[0].get("tensorParallel").asDouble(), within(1e-9));
    assertThat(b[1].get("tensorParallel").asDouble()).isLessThan(2.0);
    assertThat(b[1].get("dataParallel").asDouble()).isCloseTo(7.8, within(0.3));
  }

  /**
   * DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 ({@code deepspeed/runtime/pipe/
   * engine.py}:76-77 at edaa722: "ZeRO-2 and ZeRO-3 are incompatible with pipeline
   * parallelism"): the DeepSpeed export exits 3 with the nearest configuration (ZeRO-1). The
   * Megatron-LM export writes Megatron-FSDP's {@code optim_grads}, which its argument check
   * accepts with a pipeline ({@code megatron/training/arguments.py} at d98e8a6 refuses pipelines
   * only for {@code --use-torch-fsdp2}, 1034-1035), and which reduce-scatters every microbatch as
   * the simulation prices it.
   */
  @Test
  void deepSpeedRefusesZeroTwoAndThreeUnderAPipeline() {
    for (String zero : new String[] {"2", "3"}) {
      String[] args = {"export", "--to", "deepspeed", "--model", "llama2-7b", "--layers", "4",
          "--cluster", "1x8:h100-80gb", "--tp", "2", "--pp", "2", "--dp", "2", "--zero-stage",
          zero, "--micro-batch", "1", "--global-batch", "16"};
      CliRun r = CliRun.of(args);
      assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
      assertThat(r.err().lines()).hasSize(1);
      assertThat(r.err()).contains("DeepSpeed's pipeline engine refuses ZeRO-" + zero,
          "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism");
      assertThat(r.nearestExport()).contains("--pp 2", "--distributed-optimizer");
      args[2] = "megatron";
      CliRun m = CliRun.of(args);
      assertThat(m.code()).as(m.err()).isZero();
      assertThat(m.out()).contains("--use-megatron-fsdp",
          zero.equals("2") ? "optim_grads" : "optim_grads_params");
    }
  }
}
