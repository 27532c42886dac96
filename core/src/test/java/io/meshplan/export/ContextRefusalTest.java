package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ContextExchange;
import io.meshplan.plan.ParallelConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Context parallelism in the torchtitan and DeepSpeed exports. torchtitan runs one form of it,
 * each rank's keys and values all-gathered over the context-parallel ranks ({@link
 * TorchtitanContext}: main's FlexAttention, {@code models/common/attention.py:795-799} at b5bcd76;
 * v0.2.2's allgather rotation, {@code config/job_config.py:446}), with FSDP over {@code dp_shard x
 * cp} ({@code distributed/parallel_dims.py:644-645} on main): that form is written, Megatron-Core's
 * {@code p2p} ring is refused with the same split all-gathered as its nearest. DeepSpeed has none
 * that meshplan prices: its nearest runs each sequence's GPUs as data-parallel replicas.
 */
class ContextRefusalTest {
  private static final ModelSpec LLAMA8B_32K = Presets.get("llama3.1-8b").withSequence(32768);
  private static final ClusterSpec TWO_NODES = ClusterSpec.parse("2x8:h100-80gb");

  /** Llama 3.1 8B at 32k tokens on 16 H100s: TP 2 x CP 4 x DP 2, ZeRO-3, the p2p ring. */
  private static final ExportInput CP = new ExportInput(LLAMA8B_32K, TWO_NODES,
      new ParallelConfig(2, 1, 2, 1, 1, 16, Recompute.SELECTIVE, true, 3, 0, 0, 1, 1, 4, false));

  @Test
  void torchtitanRefusesTheRingAndItsNearestAllGathersTheSameSplit() {
    for (FrameworkWriter w : List.of(new TorchtitanPython(), new TorchtitanToml())) {
      assertThat(w.missing(CP)).as(w.getClass().getSimpleName()).hasValueSatisfying(m ->
          assertThat(m).contains("all-gathers a sequence's keys and values",
              "it has no ring passing them from rank to rank (the p2p form)"));
      ExportInput n = w.nearest(CP).orElseThrow();
      assertThat(n.config()).isEqualTo(CP.config().withContext(4, ContextExchange.ALL_GATHER));
      assertThat(w.missing(n)).isEmpty();
    }
  }

  @Test
  void theAllGatherFileFillsTheWorldWithItsContextDegree() {
    ExportInput ag = CP.withConfig(CP.config().withContext(4, ContextExchange.ALL_GATHER));
    TorchtitanPythonFile t = TorchtitanPythonFile.parse(new TorchtitanPython().write(ag));
    long product = t.integer("parallelism.data_parallel_replicate_degree")
        * t.integer("parallelism.data_parallel_shard_degree")
        * t.integer("parallelism.context_parallel_degree")
        * t.integer("parallelism.tensor_parallel_degree")
        * t.integer("parallelism.pipeline_parallel_degree");
    // parallel_dims.py:182: 1 x 2 x 4 x 2 x 1 = 16, the world.
    assertThat(product).isEqualTo(16);
    assertThat(t.integer("parallelism.context_parallel_degree")).isEqualTo(4);
    assertThat(t.integer("parallelism.data_parallel_shard_degree")).isEqualTo(2);
    assertThat(t.text("parallelism.context_parallel_load_balancer")).isEqualTo("headtail");
    // Tokens per dp rank are the replica's: 1 sequence of 32,768, split 4 ways by torchtitan;
    // trainer.py:301's divisor is tp 2 x 2 cp 8 = 16, and 32768 / 16 = 2048.
    assertThat(t.integer("training.num_tokens_per_microbatch_per_dp_rank")).isEqualTo(32768);
    assertThat(TorchtitanMain.tokenDivisor(2, true, 4)).isEqualTo(16);
    // 16 sequences x 32,768 tokens per step over dp 2: accumulation 524288 / (32768 x 1 x 2) = 8,
    // the plan's 16 / (1 x 2) microbatches.
    assertThat(t.integer("training.num_tokens_per_train_step")).isEqualTo(16L * 32768);
    assertThat(TorchtitanMain.accumulation(16L * 32768, 32768, 1, 2)).isEqualTo(8);
  }

  @Test
  void replicatedWeightsUnderContextParallelismAreRefusedWithFsdpAsTheNearest() {
    ExportInput ddp = CP.withConfig(CP.config().withContext(4, ContextExchange.ALL_GATHER)
        .withZeroStage(0));
    for (FrameworkWriter w : List.of(new TorchtitanPython(), new TorchtitanToml())) {
      assertThat(w.missing(ddp).orElseThrow()).as(w.getClass().getSimpleName())
          .contains("FSDP over its dp 2 x cp 4 = 8 ranks", "replicated weights (ZeRO-0)");
      assertThat(w.nearest(ddp).orElseThrow().config().zeroStage()).isEqualTo(3);
    }
  }

  @Test
  void oneReplicaSplitOverContextRanksShardsOverThem() {
    // TP 2 x CP 8 x DP 1: ZeRO-3 shards over the 8 context-parallel GPUs, as meshplan prices it
    // (PlanSimulator's data-parallel group is data x context) and torchtitan's FSDP runs it.
    ExportInput one = new ExportInput(LLAMA8B_32K, TWO_NODES, new ParallelConfig(2, 1, 1, 1, 1,
        8, Recompute.SELECTIVE, true, 3, 0, 0, 1, 1, 8, true));
    assertThat(new TorchtitanPython().missing(one)).isEmpty();
    ExportInput replicated = new ExportInput(LLAMA8B_32K, TWO_NODES, one.config()
        .withZeroStage(0));
    assertThat(new TorchtitanPython().missing(replicated).orElseThrow())
        .contains("FSDP over its dp 1 x cp 8 = 8 ranks", "replicated weights (ZeRO-0)");
    ExportResult r = new Exporter().export(ExportTarget.TORCHTITAN, replicated);
    assertThat(((ExportResult.NotExpressible) r).nearest().orElseThrow().config().zeroStage())
        .isEqualTo(3);
  }

  @Test
  void v022AsksTheSequenceToDivideByTensorTimesTwiceContextAndMainAMicrobatch() {
    // 32,760 tokens split into 2 x 4 = 8 chunks (4,095 each), but not 2 x 8 = 16 (2,047.5):
    // v0.2.2's parallelize.py:69-74 refuses it; main divides a microbatch of 2 sequences,
    // 65,520 = 16 x 4,095 tokens (trainer.py:296-308).
    ParallelConfig two = new ParallelConfig(2, 1, 2, 1, 2, 16, Recompute.SELECTIVE, true, 3, 0,
        0, 1, 1, 4, true);
    ExportInput in = new ExportInput(LLAMA8B_32K.withSequence(32760), TWO_NODES, two);
    assertThat(new TorchtitanToml().missing(in).orElseThrow())
        .contains("divide by tensor degree x 2 x context degree = 16");
    assertThat(new TorchtitanPython().missing(in)).isEmpty();
    ExportInput one = in.withConfig(new ParallelConfig(2, 1, 2, 1, 1, 16, Recompute.SELECTIVE,
        true, 3, 0, 0, 1, 1, 4, true));
    assertThat(new TorchtitanPython().missing(one).orElseThrow()).contains("(1 x 32760) to"
        + " divide by 16");
  }

  @Test
  void deepSpeedFoldsContextParallelismIntoDataParallelism() {
    DeepSpeedConfig w = new DeepSpeedConfig();
    assertThat(w.missing(CP)).hasValueSatisfying(m -> assertThat(m).contains(
        "context parallelism"));
    // 16 GPUs / (TP 2 x PP 1) = 8 replicas; the 16 sequences are 8 x 1 x 2 microbatches.
    ExportInput n = w.nearest(CP).orElseThrow();
    assertThat(n.config()).isEqualTo(new ParallelConfig(2, 1, 8, 1, 1, 16, Recompute.SELECTIVE,
        true, 3));
    assertThat(w.missing(n)).isEmpty();
  }

  @Test
  void aGlobalBatchTheFoldedReplicasCannotShareHasNoDeepSpeedNearest() {
    // 4 sequences over DP 2 x CP 4 = 8 folded replicas: not a whole microbatch each. torchtitan
    // keeps the split, 4 / (1 x 2) = 2 microbatches, so its nearest (all-gathered) exists.
    ExportInput four = new ExportInput(LLAMA8B_32K, TWO_NODES, new ParallelConfig(2, 1, 2, 1, 1,
        4, Recompute.SELECTIVE, true, 3, 0, 0, 1, 1, 4, false));
    assertThat(new DeepSpeedConfig().nearest(four)).isEmpty();
    assertThat(new TorchtitanPython().nearest(four).orElseThrow().config().microbatches())
        .isEqualTo(2);
  }
}
