package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.Mla;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-LM export of DeepSeek-style models (latent attention, dense blocks among expert
 * blocks, multi-token prediction) against Megatron-LM's rules at d98e8a6, restated here (the
 * sources are not read at test time). Seeded random small models and configurations that {@link
 * ExportInput} accepts are exported; each file keeps {@link MegatronMoeConformanceTest}'s rules
 * and these:
 *
 * <ul>
 *   <li>latent attention is {@code --multi-latent-attention} with its sizes, never beside {@code
 *       --group-query-attention} ({@code megatron/training/arguments.py:1973-1974}); no {@code
 *       --q-lora-rank} means uncompressed queries ({@code
 *       megatron/core/transformer/multi_latent_attention.py:508}); the latents' norms are {@code
 *       --qk-layernorm} ({@code megatron/core/models/gpt/gpt_layer_specs.py:244-255}); the
 *       rope type {@code rope} comes with {@code --no-rope-fusion} ({@code
 *       megatron/core/transformer/transformer_config.py:3345-3346}); {@code --kv-channels} is
 *       set when the hidden size is not a multiple of the heads ({@code arguments.py:1331-1333});
 *   <li>{@code --moe-layer-freq} uses only digits, brackets, commas, {@code +} and {@code *}
 *       ({@code arguments.py:249-251}), evaluates to one entry per block ({@code
 *       gpt_layer_specs.py:651-657}), 0 exactly on the dense blocks, whose MLP is {@code
 *       --ffn-hidden-size};
 *   <li>{@code --mtp-num-layers} needs rotary positions ({@code arguments.py:882-886}), full
 *       recomputation of one layer ({@code multi_token_prediction.py:1621-1627}), and its block is
 *       the last decoder block's ({@code gpt_builders.py:80-84}): a dense last block is refused;
 *   <li>uneven first and last stages leave the middle stages equal ({@code
 *       transformer_config.py:2294-2353}).
 * </ul>
 */
class MegatronDeepseekConformanceTest {
  private static final Pattern PATTERN_CHARS = Pattern.compile("[^,\\d\\[\\]()+*]");

  @Test
  void seededRandomDeepseekLikeExportsKeepMegatronsRules() {
    Random rnd = new Random(20261128);
    int written = 0;
    int refused = 0;
    int perOp = 0;
    int[] seen = new int[4];
    for (int i = 0; i < 3000; i++) {
      ExportInput in = randomInput(rnd);
      if (in == null) {
        continue;
      }
      ModelSpec m = in.model();
      ExportResult r = new Exporter().export(ExportTarget.MEGATRON, in);
      if (in.config().recompute() == Recompute.OP) {
        // torchtitan's per-op checkpointing: refused, whole-layer recomputation the nearest.
        assertThat(r).isInstanceOf(ExportResult.NotExpressible.class);
        assertThat(((ExportResult.NotExpressible) r).missing()).contains("--recompute op");
        perOp++;
        continue;
      }
      if (r instanceof ExportResult.NotExpressible n) {
        // The only refusal of these models: a prediction module after a dense last block.
        assertThat(m.arch().mtpDepth()).as(n.missing()).isPositive();
        assertThat(m.arch().moe().denseLayer(m.layers() - 1)).as(n.missing()).isTrue();
        assertThat(n.missing()).contains("gpt_builders.py:80-84").contains(" is dense;");
        assertThat(n.nearest()).isEmpty();
        refused++;
        continue;
      }
      written++;
      seen[0] += m.arch().attn().mla().qLoraRank() == 0 ? 1 : 0;
      seen[1] += m.hidden() % m.heads() != 0 ? 1 : 0;
      seen[2] += m.arch().mtpDepth() > 0 && in.config().recompute() == Recompute.FULL ? 1 : 0;
      seen[3] += in.config().unevenStages() ? 1 : 0;
      String text = ((ExportResult.Exported) r).text();
      Map<String, String> a = MegatronMoeConformanceTest.args(in);
      MegatronMoeConformanceTest.check(in, a, text);
      checkLatent(m, a);
      checkBlocks(m, a);
      checkStages(in.config(), m, a);
    }
    assertThat(written).isGreaterThan(300);
    assertThat(refused).isGreaterThan(10);
    assertThat(perOp).isGreaterThan(10);
    // Uncompressed queries, hidden % heads != 0, MTP under full recompute, uneven stages.
    assertThat(java.util.Arrays.stream(seen).min().orElseThrow()).isGreaterThan(20);
  }

  private static void checkLatent(ModelSpec m, Map<String, String> a) {
    Mla mla = m.arch().attn().mla();
    assertThat(a).containsKey("--multi-latent-attention").doesNotContainKey(
        "--group-query-attention").doesNotContainKey("--num-query-groups");
    assertThat(a.get("--q-lora-rank")).isEqualTo(mla.qLoraRank() == 0 ? null
        : Integer.toString(mla.qLoraRank()));
    assertThat(a).containsEntry("--kv-lora-rank", Integer.toString(mla.kvLoraRank()))
        .containsEntry("--qk-head-dim", Integer.toString(mla.nopeDim()))
        .containsEntry("--qk-pos-emb-head-dim", Integer.toString(mla.ropeDim()))
        .containsEntry("--v-head-dim", Integer.toString(mla.valueDim()))
        .containsKey("--qk-layernorm").containsEntry("--rope-type", "rope")
        .containsKey("--no-rope-fusion");
    assertThat(a.containsKey("--kv-channels")).isEqualTo(m.hidden() % m.heads() != 0);
  }

  private static void checkBlocks(ModelSpec m, Map<String, String> a) {
    MoeShape moe = m.arch().moe();
    List<Integer> kinds = a.containsKey("--moe-layer-freq")
        ? evaluate(a.get("--moe-layer-freq")) : java.util.Collections.nCopies(m.layers(), 1);
    assertThat(kinds).hasSize(Integer.parseInt(a.get("--num-layers")));
    for (int l = 0; l < m.layers(); l++) {
      assertThat(kinds.get(l)).as("block " + l).isEqualTo(moe.denseLayer(l) ? 0 : 1);
    }
    assertThat(a).containsEntry("--ffn-hidden-size", Integer.toString(
        moe.denseLayers().isEmpty() ? m.ffn() : moe.denseFfn()));
    int mtp = m.arch().mtpDepth();
    assertThat(a.get("--mtp-num-layers")).isEqualTo(mtp == 0 ? null : Integer.toString(mtp));
    if (mtp > 0) {
      assertThat(a).containsEntry("--position-embedding-type", "rope");
      assertThat(kinds.get(kinds.size() - 1)).isEqualTo(1);
      if ("full".equals(a.get("--recompute-granularity"))) {
        assertThat(a).containsEntry("--recompute-method", "uniform")
            .containsEntry("--recompute-num-layers", "1");
      }
    }
  }

  private static void checkStages(ParallelConfig c, ModelSpec m, Map<String, String> a) {
    if (!a.containsKey("--decoder-first-pipeline-num-layers")) {
      return;
    }
    int first = Integer.parseInt(a.get("--decoder-first-pipeline-num-layers"));
    int last = Integer.parseInt(a.get("--decoder-last-pipeline-num-layers"));
    int middle = m.layers() - first - last;
    int stages = c.pipelineParallel() - 2;
    assertThat(first).isPositive();
    assertThat(last).isPositive();
    assertThat(middle != 0).isEqualTo(stages != 0);
    assertThat(stages == 0 || middle % stages == 0).isTrue();
  }

  /**
   * A list expression of the form Megatron-LM's help shows, restricted to runs {@code [d]*n}
   * joined by {@code +}, after Megatron-LM's own character check.
   */
  static List<Integer> evaluate(String pattern) {
    assertThat(PATTERN_CHARS.matcher(pattern).find()).as(pattern).isFalse();
    List<Integer> out = new ArrayList<>();
    for (String run : pattern.split("\\+")) {
      assertThat(run).matches("\\[\\d+\\]\\*\\d+");
      int value = Integer.parseInt(run.substring(1, run.indexOf(']')));
      out.addAll(java.util.Collections.nCopies(Integer.parseInt(run.substring(
          run.indexOf('*') + 1)), value));
    }
    return out;
  }

  /** A small random DeepSeek-like model and configuration, or null when ExportInput refuses. */
  private static ExportInput randomInput(Random rnd) {
    ModelSpec m = randomModel(rnd);
    ClusterSpec cluster = ClusterSpec.parse((1 << rnd.nextInt(3)) + "x8:"
        + (rnd.nextBoolean() ? "a100-80gb" : "h100-80gb"));
    int tp = 1 << rnd.nextInt(3);
    int pp = 1 << rnd.nextInt(3);
    int cp = 1 << rnd.nextInt(2);
    if (cluster.gpuCount() % (tp * pp * cp) != 0) {
      return null;
    }
    int dp = cluster.gpuCount() / (tp * pp * cp);
    int first = 0;
    int last = 0;
    if (pp > 2 && rnd.nextBoolean()) {
      int middle = (m.layers() - 2) / (pp - 2);
      first = 1 + rnd.nextInt(2);
      last = m.layers() - first - middle * (pp - 2);
      if (last <= 0 || middle <= 0) {
        return null;
      }
    }
    // The frameworks' modes: MaxText's policies, refused by every export, aside.
    Recompute[] r = java.util.Arrays.stream(Recompute.values()).filter(x -> !x.maxText())
        .toArray(Recompute[]::new);
    ParallelConfig c = new ParallelConfig(tp, pp, dp, 1, 1, dp * (1 + rnd.nextInt(4)),
        r[rnd.nextInt(r.length)], tp > 1, rnd.nextInt(2), first, last, 1 << rnd.nextInt(3),
        1 << rnd.nextInt(2), cp, rnd.nextBoolean());
    try {
      return new ExportInput(m, cluster, c);
    } catch (InputException e) {
      return null;
    }
  }

  private static ModelSpec randomModel(Random rnd) {
    int layers = 2 + rnd.nextInt(11);
    int heads = 4 << rnd.nextInt(3);
    int hidden = rnd.nextInt(4) == 0 ? 1000 : 256 << rnd.nextInt(3);
    Mla mla = new Mla(rnd.nextInt(3) * 64, 32 << rnd.nextInt(2), 32 << rnd.nextInt(2),
        16 << rnd.nextInt(2), 32 << rnd.nextInt(2));
    int experts = 4 << rnd.nextInt(3);
    int expertFfn = 128 << rnd.nextInt(2);
    MoeShape moe = new MoeShape(experts, 1 + rnd.nextInt(4), expertFfn,
        rnd.nextBoolean() ? expertFfn : 0, false);
    List<Integer> dense = new ArrayList<>();
    for (int l = 0; l < layers; l++) {
      if (rnd.nextInt(3) == 0) {
        dense.add(l);
      }
    }
    if (dense.size() < layers && !dense.isEmpty()) {
      moe = moe.withDenseLayers(dense, 1024);
    }
    Architecture arch = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false, AttentionShape.latent(mla), moe,
        rnd.nextInt(3));
    return new ModelSpec("ds-" + layers, ModelSpec.Family.LLAMA, layers, hidden, heads, heads,
        expertFfn, 32000, 1024 << rnd.nextInt(2), 8, DType.BF16, arch);
  }

  /**
   * DeepSeek-V3 as the report trained it (PP 16, EP 64; section 3.2): 61 blocks as 3 + 14 x 4 +
   * 2, the first 3 dense.
   */
  @Test
  void deepseekV3WritesItsLatentAttentionDenseBlocksAndPredictionModule() {
    ExportInput in = new ExportInput(Presets.get("deepseek-v3"),
        ClusterSpec.parse("256x8:h100-80gb:ib-ndr400"), new ParallelConfig(1, 16, 128, 1, 1,
            4096, Recompute.FULL, false, 1, 3, 2, 64, 1));
    Map<String, String> a = MegatronMoeConformanceTest.args(in);
    assertThat(a).containsEntry("--num-layers", "61").containsEntry("--ffn-hidden-size", "18432")
        .containsEntry("--moe-ffn-hidden-size", "2048")
        .containsEntry("--moe-shared-expert-intermediate-size", "2048")
        .containsEntry("--moe-layer-freq", "[0]*3+[1]*58")
        .containsEntry("--q-lora-rank", "1536").containsEntry("--kv-lora-rank", "512")
        .containsEntry("--qk-head-dim", "128").containsEntry("--qk-pos-emb-head-dim", "64")
        .containsEntry("--v-head-dim", "128").containsEntry("--mtp-num-layers", "1")
        .containsEntry("--decoder-first-pipeline-num-layers", "3")
        .containsEntry("--decoder-last-pipeline-num-layers", "2")
        .containsEntry("--moe-router-load-balancing-type", "aux_loss")
        .doesNotContainKey("--kv-channels").doesNotContainKey("--group-query-attention");
    // 7168 = 128 x 56: Megatron-LM's own kv_channels default applies and shapes nothing.
    assertThat(evaluate(a.get("--moe-layer-freq"))).hasSize(61).startsWith(0, 0, 0, 1);
    // The bash file quotes the expression: [ and * are glob characters.
    assertThat(new MegatronArgs().write(in)).contains("\n  --moe-layer-freq '[0]*3+[1]*58'\n")
        .contains("\n# 3 of the 61 blocks have a dense MLP of 18432 (--moe-layer-freq).\n"
            + "# 1 multi-token prediction module on the last pipeline stage.\n");
  }

  /**
   * Qwen3-MoE's {@code mlp_only_layers} (here the first and last of 48 blocks, intermediate 6144)
   * are dense blocks too; before this export wrote them, Megatron-LM would have built 48 expert
   * blocks.
   */
  @Test
  void qwen3MoeDenseLayersAreWrittenAsDenseBlocks() {
    ModelSpec p = Presets.get("qwen3-30b-a3b").withSequence(4096);
    ModelSpec m = new ModelSpec(p.name(), p.family(), p.layers(), p.hidden(), p.heads(),
        p.kvHeads(), p.ffn(), p.vocab(), p.seq(), p.batch(), p.dtype(), p.arch().withMoe(
            p.arch().moe().withDenseLayers(List.of(0, 47), 6144)));
    ExportInput in = new ExportInput(m, ClusterSpec.parse("2x8:h100-80gb"),
        new ParallelConfig(1, 2, 8, 1, 1, 64, Recompute.FULL, false, 1, 0, 0, 8, 1));
    Map<String, String> a = MegatronMoeConformanceTest.args(in);
    assertThat(a).containsEntry("--ffn-hidden-size", "6144")
        .containsEntry("--moe-ffn-hidden-size", "768")
        .containsEntry("--moe-layer-freq", "[0]*1+[1]*46+[0]*1")
        .containsEntry("--kv-channels", "128").containsKey("--qk-layernorm")
        .doesNotContainKey("--multi-latent-attention").doesNotContainKey("--mtp-num-layers");
    MegatronMoeConformanceTest.check(in, a, new MegatronArgs().write(in));
  }

  @Test
  void scatteredDenseBlocksAreOneRunEach() {
    // Blocks 0, 3, 4 and 7 of 9 dense: runs 1 dense, 2 expert, 2 dense, 2 expert, 1 dense, 1.
    MoeShape moe = new MoeShape(8, 2, 256, 0, false).withDenseLayers(List.of(0, 3, 4, 7), 512);
    assertThat(MegatronDeepseekArgs.pattern(moe, 9))
        .isEqualTo("[0]*1+[1]*2+[0]*2+[1]*2+[0]*1+[1]*1");
    assertThat(evaluate(MegatronDeepseekArgs.pattern(moe, 9)))
        .containsExactly(0, 1, 1, 0, 0, 1, 1, 0, 1);
  }
}
