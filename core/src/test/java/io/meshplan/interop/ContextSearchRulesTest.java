package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The context-parallel sizes the search takes: chunks of at least one attention tile, and one
 * sequence per replica once sequences are split (a replica of {@code CP} GPUs with {@code b > 1}
 * sequences is dominated by {@code CP / 2} GPUs with {@code b / 2}).
 */
class ContextSearchRulesTest {
  private static PlanRequest request(int seq, String cluster) {
    ModelSpec m = Requests.training(new ModelSpec("tiny", ModelSpec.Family.LLAMA, 4, 512, 8, 8,
        1376, 1024, seq, 1, DType.BF16), 1024, DType.BF16);
    return Requests.of(m, cluster, 1024, false).withAttention(Attention.FLASH);
  }

  @Test
  void chunksHoldAtLeastOneAttentionTile() {
    // 32,768 tokens in 2 x CP chunks of >= 128 tokens: CP <= 32768 / 256 = 128, so a stage of
    // 16,384 GPUs per tensor rank takes 1, 2, 4, ..., 128 and not 256 to 16,384.
    PlanRequest req = request(32_768, "2048x8:h100-80gb");
    assertThat(SearchRules.contextDegrees(req, 16_384))
        .containsExactly(1, 2, 4, 8, 16, 32, 64, 128);
    // 65,536 tokens: up to 256; below 32,768 tokens none at all.
    assertThat(SearchRules.contextDegrees(request(65_536, "2048x8:h100-80gb"), 16_384))
        .endsWith(128, 256);
    assertThat(SearchRules.contextDegrees(request(16_384, "2048x8:h100-80gb"), 16_384))
        .containsExactly(1);
  }

  @Test
  void splitSequencesGoOneToAReplica() {
    // d = 16 GPUs per tensor rank sharing microbatches of g = 8 sequences: CP 1 gives 16
    // replicas for 8 sequences (none); CP 2 gives 8 replicas of 1; CP 4, 4 replicas of 2
    // (dominated by CP 2 with 1); CP 8, 2 of 4; CP 16, 1 of 8. Only CP 2 is kept.
    PlanRequest req = request(32_768, "2x8:h100-80gb");
    List<LayerSetting> s = SearchRules.stageSettings(req, 16, 1, 8);
    assertThat(s).isNotEmpty().allMatch(ls -> ls.contextParallel() == 2 && ls.microBatch() == 1);
  }

  /**
   * Every split setting comes with each exchange Megatron-Core's cp_comm_type has where it
   * applies: the tiny model's 8 query and 8 key/value heads split 2 ways on one tensor rank, so
   * the ring, the all-gather and Ulysses' all-to-alls; over 4 tensor ranks each holds 2 of each,
   * which do not split 4 ways (CP 4 of a stage of 16 GPUs per rank), so no all-to-alls there.
   * Packed documents keep the ring and the all-gather; a latent-attention model (DeepSeek-V3) the
   * ring alone.
   */
  @Test
  void splitSettingsTryEveryExchangeThatApplies() {
    PlanRequest req = request(32_768, "2x8:h100-80gb");
    List<LayerSetting> s = SearchRules.stageSettings(req, 16, 1, 8);
    for (io.meshplan.plan.ContextExchange e : io.meshplan.plan.ContextExchange.values()) {
      assertThat(s).anyMatch(ls -> ls.contextParallel() == 2 && ls.cpExchange() == e);
    }
    assertThat(s.stream().filter(ls -> ls.contextParallel() > 1).count())
        .isEqualTo(3 * s.stream().filter(ls -> ls.contextParallel() > 1
            && ls.cpExchange() == io.meshplan.plan.ContextExchange.P2P).count());
    PlanRequest wide = request(65_536, "8x8:h100-80gb");
    List<LayerSetting> tp4 = SearchRules.stageSettings(wide, 16, 4, 4);
    assertThat(tp4).anyMatch(ls -> ls.contextParallel() == 4)
        .noneMatch(ls -> ls.cpExchange() == io.meshplan.plan.ContextExchange.ALL_TO_ALL);
    ModelSpec tiny = req.model();
    assertThat(io.meshplan.plan.ContextExchange.searched(
        tiny.withPacking(io.meshplan.model.Packing.meanLength(1024)), 1, 2)).containsExactly(
        io.meshplan.plan.ContextExchange.P2P, io.meshplan.plan.ContextExchange.ALL_GATHER);
    assertThat(io.meshplan.plan.ContextExchange.searched(
        io.meshplan.model.Presets.get("deepseek-v3"), 1, 2))
        .containsExactly(io.meshplan.plan.ContextExchange.P2P);
  }

  /**
   * On seeded stages and microbatches, every setting with context parallelism takes one
   * sequence per replica, and every one the rule drops is dominated, through halvings of CP and
   * sequences alike, by a kept one: CP / b with one sequence, or no split with b / CP.
   */
  @Test
  void everyDroppedSettingHasAKeptOneAtHalfTheSplit() {
    Random rnd = new Random(3636);
    PlanRequest req = request(65_536, "64x8:h100-80gb");
    for (int i = 0; i < 200; i++) {
      int d = 1 << rnd.nextInt(10);
      int g = 1 << rnd.nextInt(10);
      List<LayerSetting> kept = SearchRules.stageSettings(req, d, 1, g);
      assertThat(kept).allMatch(ls -> ls.contextParallel() == 1 || ls.microBatch() == 1);
      for (int cp : SearchRules.contextDegrees(req, d)) {
        int b = SearchRules.replicaMicrobatch(g, d / cp);
        if (cp > 1 && b > 1) {
          int keptCp = Math.max(1, cp / b);
          int keptB = Math.max(1, b / cp);
          assertThat(kept).as("d %d g %d cp %d b %d", d, g, cp, b)
              .anyMatch(ls -> ls.contextParallel() == keptCp && ls.microBatch() == keptB);
        }
      }
    }
  }
}
