package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import org.junit.jupiter.api.Test;

/**
 * The Qwen3 mixture-of-experts flavors of torchtitan main (b5bcd76, {@code
 * models/qwen3/__init__.py:516-595}) against meshplan's presets, and pinned examples of the expert
 * rules {@link TorchtitanQwen3Moe} restates.
 */
class TorchtitanQwen3MoeTest {
  private static final ClusterSpec EIGHT_NODES = ClusterSpec.parse("8x8:h100-80gb");

  @Test
  void thePresetsAreTheFlavorsAndNoOtherMoeModelIs() {
    assertThat(TorchtitanQwen3Moe.flavor(Presets.get("qwen3-30b-a3b")).orElseThrow().name())
        .isEqualTo("30B-A3B");
    assertThat(TorchtitanQwen3Moe.flavor(Presets.get("qwen3-235b-a22b")).orElseThrow().name())
        .isEqualTo("235B-A22B");
    for (String other : new String[] {"mixtral-8x7b", "gpt-oss-20b", "llama3-8b"}) {
      assertThat(TorchtitanQwen3Moe.flavor(Presets.get(other))).as(other).isEmpty();
    }
    // One dimension off (64 experts instead of 128) is no flavor.
    ModelSpec q = Presets.get("qwen3-30b-a3b");
    MoeShape half = new MoeShape(64, 8, 768, 0, false);
    assertThat(TorchtitanQwen3Moe.flavor(new ModelSpec(q.name(), q.family(), q.layers(),
        q.hidden(), q.heads(), q.kvHeads(), q.ffn(), q.vocab(), q.seq(), q.batch(), q.dtype(),
        q.arch().withMoe(half)))).isEmpty();
  }

  @Test
  void the235bFlavorStartsFromThe30bRecipeWithItsOwnModelAndAssets() {
    // 94 layers do not split into 4 even stages; 2 stages of 47: tp 4 x pp 2 x dp 8 = 64 GPUs,
    // EP 32 within dp_shard 8 x tp 4 = 32.
    ExportInput in = new ExportInput(Presets.get("qwen3-235b-a22b"), EIGHT_NODES,
        new ParallelConfig(4, 2, 8, 1, 1, 64, Recompute.FULL, true, 1, 0, 0, 32, 1));
    String text = ((ExportResult.Exported) new Exporter().export(ExportTarget.TORCHTITAN, in))
        .text();
    TorchtitanPythonFile f = TorchtitanPythonFile.parse(text);
    assertThat(f.recipe()).isEqualTo("qwen3_30b_a3b");
    assertThat(f.flavor()).isEqualTo("235B-A22B");
    assertThat(f.text("hf_assets_path")).isEqualTo("./assets/hf/Qwen3-235B-A22B");
    assertThat(f.integer("parallelism.expert_parallel_degree")).isEqualTo(32);
    assertThat(f.parts()).hasSize(2);
    assertThat(f.layersOf(0)).isEqualTo(47);
    assertThat(text).contains("# experts: 128, 8 per token, dropless; expert parallel 32 within"
        + " dp_shard x cp x tp = 32 GPUs, expert FSDP 1\n");
  }

  @Test
  void aTensorDegreeAboveTheKeyValueHeadsIsRefused() {
    // tp 8 over Qwen3's 4 key/value heads: meshplan (as Megatron-LM) replicates each head on 2
    // ranks, torchtitan main raises (decoder.py:195-199).
    ExportInput in = new ExportInput(Presets.get("qwen3-235b-a22b"), EIGHT_NODES,
        new ParallelConfig(8, 2, 4, 1, 1, 64, Recompute.FULL, true, 1, 0, 0, 32, 1));
    assertThat(new TorchtitanPython().missing(in).orElseThrow())
        .contains("tensor degree 8 to divide the 4 key/value heads");
  }

  @Test
  void expertTensorSizesTorchtitanLacksAreRefusedWithTheOneItHas() {
    ModelSpec m = Presets.get("qwen3-30b-a3b");
    TorchtitanPython w = new TorchtitanPython();
    // EP 4 x ETP 2 divides tp 2 x dp 16 = 32, but torchtitan's experts are whole per EP rank.
    ExportInput etp2 = new ExportInput(m, EIGHT_NODES, new ParallelConfig(2, 2, 16, 1, 1, 64,
        Recompute.FULL, true, 1, 0, 0, 4, 2));
    assertThat(w.missing(etp2).orElseThrow()).contains("whole on each of the 4 expert-parallel"
        + " ranks, which is expert tensor size 1, not 2");
    assertThat(w.nearest(etp2).orElseThrow().config().expertTensorParallel()).isEqualTo(1);
    // Without EP they are tensor-parallel: ETP 1 at TP 2 is refused, ETP 2 is the nearest.
    ExportInput noEp = new ExportInput(m, EIGHT_NODES, new ParallelConfig(2, 2, 16, 1, 1, 64,
        Recompute.FULL, true, 1, 0, 0, 1, 1));
    assertThat(w.missing(noEp).orElseThrow()).contains("tensor-parallel over the 2 tensor ranks");
    ExportInput near = w.nearest(noEp).orElseThrow();
    assertThat(near.config().expertTensorParallel()).isEqualTo(2);
    assertThat(w.missing(near)).isEmpty();
  }

  @Test
  void aCapacityFactorAndASequenceBeyondTheRopeCacheAreRefused() {
    ModelSpec m = Presets.get("qwen3-30b-a3b");
    MoeShape moe = m.arch().moe();
    ModelSpec capped = new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffn(), m.vocab(), m.seq(), m.batch(), m.dtype(), m.arch().withMoe(
            new MoeShape(128, 8, 768, 0, false, 1.25, 1)));
    ParallelConfig c = new ParallelConfig(1, 1, 64, 1, 1, 64, Recompute.FULL, false, 3, 0, 0, 8,
        1);
    TorchtitanPython w = new TorchtitanPython();
    ExportInput in = new ExportInput(capped, EIGHT_NODES, c);
    assertThat(w.missing(in).orElseThrow()).contains("dropless", "capacity factor 1.25");
    // The nearest is the dropless model, the layout unchanged.
    ExportInput near = w.nearest(in).orElseThrow();
    assertThat(near.model().arch().moe()).isEqualTo(moe);
    assertThat(near.config()).isEqualTo(c);
    // 65,536 tokens is past the 40,960 positions of the flavors' RoPE (decoder.py:216-225).
    ExportInput longer = new ExportInput(m.withSequence(65536), EIGHT_NODES, c);
    assertThat(w.missing(longer).orElseThrow()).contains("RoPE for 40960 tokens",
        "the sequence is 65536");
  }
}
