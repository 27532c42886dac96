package io.meshplan.export;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.GdnShape;
import io.meshplan.model.HybridPattern;
import io.meshplan.model.MambaShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Numerics;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelineLayout;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.StagePlan;
import io.meshplan.util.InputException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Megatron-LM export of hybrid models against Megatron-LM's own rules, restated here
 * (NVIDIA/Megatron-LM main at d98e8a6, 2026-08-22; the sources are not read at test time). Each
 * file is run under bash with a stand-in {@code torchrun} that prints its arguments, and:
 *
 * <ul>
 *   <li>it runs {@code pretrain_hybrid.py} ({@code pretrain_mamba.py:2-19} is a deprecated wrapper
 *       of it) with {@code --spec} naming the hybrid stack spec ({@code hybrid_builders.py:17-25};
 *       {@code megatron/core/models/hybrid/hybrid_layer_specs.py:107});
 *   <li>every option is one Megatron-LM defines ({@link MegatronConformanceTest#DEFINED}, {@link
 *       MegatronMoeConformanceTest#DEFINED} and {@link #DEFINED}, with where);
 *   <li>the pattern's symbols are ones {@code hybrid_layer_allocation.py} accepts ({@code M G * D +
 *       - E} and {@code |}, lines 17-26 and 288), without attention beside latent attention
 *       (296-298); the layer count Megatron-LM derives from it (its length without {@code |},
 *       {@code hybrid_layer_allocation.py:128-142}, {@code arguments.py:787-797}) is the model's,
 *       and the symbols are the model's;
 *   <li>the {@code |} segments are a multiple of PP ({@code hybrid_layer_allocation.py:459-464},
 *       {@code arguments.py:849-854}), give {@code segments / PP} virtual stages ({@code
 *       arguments.py:855-862}), and segment {@code v x PP + r} (pipeline rank {@code r}'s chunk
 *       {@code v}, at the offset of the segments before it: {@code
 *       hybrid_layer_allocation.py:466-477}) holds exactly the layers the plan gives that chunk;
 *       PP above 1 always has separators (the pipe-less split is deprecated, 385-400); nothing
 *       {@code arguments.py:803-838} forbids beside them is written;
 *   <li>TP divides the Mamba heads and groups, and the groups the heads ({@code
 *       megatron/core/ssm/mamba_mixer.py:262, 270, 274}); TP x CP divides the Gated DeltaNet key
 *       and value heads ({@code transformer_config.py:1500-1509}), whose layers need the SiLU of
 *       {@code --swiglu} ({@code gated_delta_net/common.py:174}, {@code gdn.py:231});
 *   <li>world size = TP x PP x CP x DP and the global batch divides exactly ({@code
 *       arguments.py:442-448}; {@code num_microbatches_calculator.py:381}).
 * </ul>
 */
class MegatronHybridConformanceTest {
  /** The hybrid options and where Megatron-LM defines them. */
  static final Map<String, String> DEFINED = Map.ofEntries(
      entry("--spec", "megatron/training/arguments.py:3645"),
      entry("--hybrid-layer-pattern", "megatron/training/arguments.py:3652"),
      entry("--squared-relu", "megatron/training/arguments.py:2448"),
      entry("--attention-output-gate", "megatron/core/transformer/transformer_config.py:278"),
      entry("--linear-conv-kernel-dim", "megatron/core/transformer/transformer_config.py:370"),
      entry("--linear-key-head-dim", "megatron/core/transformer/transformer_config.py:373"),
      entry("--linear-value-head-dim", "megatron/core/transformer/transformer_config.py:376"),
      entry("--linear-num-key-heads", "megatron/core/transformer/transformer_config.py:379"),
      entry("--linear-num-value-heads", "megatron/core/transformer/transformer_config.py:382"),
      entry("--moe-shared-expert-gate", "megatron/core/transformer/transformer_config.py:713"),
      entry("--moe-latent-size", "megatron/core/transformer/transformer_config.py:952"),
      entry("--mamba-state-dim", "megatron/core/transformer/transformer_config.py:1259"),
      entry("--mamba-head-dim", "megatron/core/transformer/transformer_config.py:1262"),
      entry("--mamba-num-groups", "megatron/core/transformer/transformer_config.py:1265"),
      entry("--mamba-num-heads", "megatron/core/transformer/transformer_config.py:1268"));

  /** {@code Symbols.VALID_LAYERS} and {@code PIPE} ({@code hybrid_layer_allocation.py:17-26}). */
  private static final String VALID = "MG*D+-E|";

  /** The options {@code arguments.py:803-838} forbids beside a pattern with separators. */
  private static final List<String> FORBIDDEN = List.of("--decoder-first-pipeline-num-layers",
      "--decoder-last-pipeline-num-layers", "--num-layers-per-virtual-pipeline-stage",
      "--num-virtual-stages-per-pipeline-rank", "--pipeline-model-parallel-layout",
      "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split");

  @TempDir Path dir;

  /** Runs the file with every variable set; returns torchrun's words. */
  private List<String> launched(String text) throws Exception {
    return MegatronConformanceTest.launched(dir, text, "nvidia/Nemotron-H-8B-Base-8K");
  }

  private static String value(List<String> words, String flag) {
    int i = words.indexOf(flag);
    assertThat(i).as(flag).isNotNegative();
    return words.get(i + 1);
  }

  /**
   * Checks one written file against Megatron-LM's rules.
   *
   * @param in the input
   * @param chunkLayers the layers the plan gives each model chunk, in layer order
   */
  private void check(ExportInput in, int[] chunkLayers) throws Exception {
    ModelSpec m = in.model();
    ParallelConfig c = in.config();
    String at = m.name() + " " + in.cluster().toShortString() + " " + c;
    List<String> w = launched(new MegatronArgs().write(in));
    int script = w.indexOf("/opt/Megatron-LM/pretrain_hybrid.py");
    assertThat(script).as(at).isPositive();
    List<String> a = w.subList(script + 1, w.size());
    a.stream().filter(s -> s.startsWith("--")).forEach(s -> assertThat(
        MegatronConformanceTest.DEFINED.containsKey(s)
            || MegatronMoeConformanceTest.DEFINED.containsKey(s) || DEFINED.containsKey(s))
        .as(at + ": " + s).isTrue());
    assertThat(a.subList(a.indexOf("--spec") + 1, a.indexOf("--spec") + 3))
        .containsExactly("megatron.core.models.hybrid.hybrid_layer_specs", "hybrid_stack_spec");
    assertThat(a).as(at).doesNotContainAnyElementsOf(FORBIDDEN).doesNotContain("--num-layers");
    int tp = Integer.parseInt(value(a, "--tensor-model-parallel-size"));
    int pp = Integer.parseInt(value(a, "--pipeline-model-parallel-size"));
    int cp = a.contains("--context-parallel-size")
        ? Integer.parseInt(value(a, "--context-parallel-size")) : 1;
    String unified = value(a, "--hybrid-layer-pattern");
    // hybrid_layer_allocation.py:200-268: the main pattern, then one identical part per
    // multi-token prediction depth after each "/", without "|"; the depth is --mtp-num-layers.
    String[] parts = unified.split("/", -1);
    String pattern = parts[0];
    for (int d = 1; d < parts.length; d++) {
      assertThat(parts[d]).as(at).isEqualTo(parts[1]).doesNotContain("|").isNotEmpty();
      parts[d].chars().forEach(ch -> assertThat(VALID.indexOf(ch)).as(at).isNotNegative());
    }
    assertThat(parts.length - 1).as(at).isEqualTo(m.arch().mtpDepth());
    if (parts.length > 1) {
      assertThat(parts[1]).isEqualTo(m.arch().hybrid().mtp());
      assertThat(value(a, "--mtp-num-layers")).isEqualTo(Integer.toString(parts.length - 1));
    }
    pattern.chars().forEach(ch -> assertThat(VALID.indexOf(ch)).as(at + " " + pattern)
        .isNotNegative());
    assertThat(pattern.contains("*") && (pattern.contains("D") || pattern.contains("+")))
        .isFalse();
    String symbols = pattern.replace("|", "");
    assertThat(symbols.length()).as(at).isEqualTo(m.layers());
    assertThat(symbols).isEqualTo(m.arch().hybrid().symbols());
    String[] segments = pattern.split("\\|", -1);
    assertThat(segments.length > 1).as(at).isEqualTo(pp > 1);
    assertThat(segments.length % pp).as(at).isZero();
    assertThat(segments.length / pp).as(at).isEqualTo(c.virtualStages());
    int offset = 0;
    for (int v = 0; v < segments.length / pp; v++) {
      for (int r = 0; r < pp; r++) {
        int k = v * pp + r;
        assertThat(segments[k].length()).as(at + " chunk " + k).isEqualTo(chunkLayers[k]);
        offset += segments[k].length();
      }
    }
    assertThat(offset).isEqualTo(m.layers());
    mixers(m, a, tp, cp, at);
    int world = Integer.parseInt(value(w, "--nnodes")) * Integer.parseInt(value(w,
        "--nproc-per-node"));
    assertThat(world).as(at).isEqualTo(tp * pp * cp * c.dataParallel());
    int micro = Integer.parseInt(value(a, "--micro-batch-size"));
    int global = Integer.parseInt(value(a, "--global-batch-size"));
    assertThat(global % (micro * c.dataParallel())).as(at).isZero();
    assertThat(global / (micro * c.dataParallel())).isEqualTo(c.microbatches());
  }

  /** The mixers' arguments: the model's numbers, split as Megatron-Core asserts. */
  private static void mixers(ModelSpec m, List<String> a, int tp, int cp, String at) {
    MambaShape s = m.arch().hybrid().mamba();
    if (s != null) {
      int heads = Integer.parseInt(value(a, "--mamba-num-heads"));
      int groups = Integer.parseInt(value(a, "--mamba-num-groups"));
      assertThat(heads).isEqualTo(s.heads());
      assertThat(groups).isEqualTo(s.groups());
      assertThat(value(a, "--mamba-head-dim")).isEqualTo(Integer.toString(s.headDim()));
      assertThat(value(a, "--mamba-state-dim")).isEqualTo(Integer.toString(s.state()));
      assertThat(heads % tp).as(at).isZero();
      assertThat(groups % tp).as(at).isZero();
      assertThat(heads % groups).as(at).isZero();
    } else {
      assertThat(a).noneMatch(x -> x.startsWith("--mamba-"));
    }
    GdnShape g = m.arch().hybrid().gdn();
    if (g != null) {
      int kh = Integer.parseInt(value(a, "--linear-num-key-heads"));
      int vh = Integer.parseInt(value(a, "--linear-num-value-heads"));
      assertThat(kh).isEqualTo(g.keyHeads());
      assertThat(vh).isEqualTo(g.valueHeads());
      assertThat(value(a, "--linear-key-head-dim")).isEqualTo(Integer.toString(g.keyHeadDim()));
      assertThat(value(a, "--linear-value-head-dim"))
          .isEqualTo(Integer.toString(g.valueHeadDim()));
      assertThat(value(a, "--linear-conv-kernel-dim"))
          .isEqualTo(Integer.toString(g.convKernel()));
      assertThat(vh % kh).isZero();
      assertThat(kh % (tp * cp)).as(at).isZero();
      assertThat(vh % (tp * cp)).as(at).isZero();
      assertThat(a).as(at).contains("--swiglu");
    } else {
      assertThat(a).noneMatch(x -> x.startsWith("--linear-"));
    }
    assertThat(a.contains("--attention-output-gate")).isEqualTo(m.arch().hybrid().attentionGate());
    assertThat(a.contains("--squared-relu"))
        .isEqualTo(m.arch().mlp() == Architecture.Mlp.RELU2);
    MoeShape moe = m.arch().moe();
    assertThat(a.contains("--moe-shared-expert-gate")).isEqualTo(moe.sharedGate());
    assertThat(a).doesNotContain("--moe-layer-freq");
    if (moe.routed()) {
      assertThat(value(a, "--moe-ffn-hidden-size")).isEqualTo(Integer.toString(moe.expertFfn()));
    }
    // transformer_config.py:952: moe_latent_size, None (absent) for experts in the hidden width;
    // arguments.py:1980-1982: positive, and only with --num-experts.
    if (moe.latent() > 0) {
      assertThat(value(a, "--moe-latent-size")).isEqualTo(Integer.toString(moe.latent()));
      assertThat(a).contains("--num-experts");
    } else {
      assertThat(a).doesNotContain("--moe-latent-size");
    }
  }

  /**
   * A plan of equal meshes whose model chunks hold the given layers, chunk {@code k} on stage
   * {@code k mod pp} (the planner's stage layouts, as {@code plan --out} writes them).
   */
  static PipelinePlan plan(ModelSpec m, int[] chunkLayers, int pp, int tp, int dp, int cp,
      int ep, int microbatches) {
    int perStage = tp * dp * cp;
    List<StagePlan> stages = new ArrayList<>();
    int first = 0;
    for (int k = 0; k < chunkLayers.length; k++) {
      int nodes = perStage >= 8 ? perStage / 8 : 1;
      stages.add(new StagePlan(first, first + chunkLayers[k] - 1, nodes, perStage / nodes,
          (k % pp) * perStage, dp, tp, Recompute.FULL, tp > 1, 1, true, 0.1, 0.2, 1e9,
          List.of(), Optional.empty(), ep, 1, cp, false));
      first += chunkLayers[k];
    }
    return new PipelinePlan(new io.meshplan.plan.PlanSource.Preset(m,
        io.meshplan.model.Attention.FLASH), cluster(perStage * pp).toShortString(),
        dp * microbatches, dp, microbatches, chunkLayers.length / pp, stages,
        new PipelinePlan.Prediction(10, 1000, 100, 0.3, 5e10));
  }

  /** H100s: one node of up to 8, else nodes of 8. */
  static ClusterSpec cluster(int gpus) {
    return ClusterSpec.parse(gpus <= 8 ? "1x" + gpus + ":h100-80gb"
        : gpus / 8 + "x8:h100-80gb");
  }

  /** Exports a plan to Megatron-LM, checks its arguments against the parser, and returns it. */
  private ExportResult.Exported exportPlan(PipelinePlan plan, int[] chunkLayers)
      throws Exception {
    ExportResult r = new Exporter().export(ExportTarget.MEGATRON, plan,
        ClusterSpec.parse(plan.cluster()));
    assertThat(r).as(plan.model().name() + " " + java.util.Arrays.toString(chunkLayers)
        + ": " + (r instanceof ExportResult.NotExpressible n ? n.missing() : ""))
        .isInstanceOf(ExportResult.Exported.class);
    ExportResult.Exported e = (ExportResult.Exported) r;
    check(e.input(), chunkLayers);
    return e;
  }

  @Test
  void nemotronHsPlannedStagesAreItsPatternsSegments() throws Exception {
    ModelSpec m = Presets.get("nemotron-h-8b");
    // The stages nemotron-h-8b's plan on 1x8:h100 gives (layers 0-13, 14-27, 28-42, 43-51):
    // 14 + 14 + 15 + 9 = 52, each 2-way data parallel: 4 x 2 = 8 GPUs.
    int[] stages = {14, 14, 15, 9};
    String text = exportPlan(plan(m, stages, 4, 1, 2, 1, 1, 512), stages).text();
    assertThat(text).contains("--hybrid-layer-pattern 'M-M-M-M*-M-M-M|-M-M*-M-M-M-M-"
        + "|M*-M-M-M-M-M*-M|-M-M-M-M-'\n", "--squared-relu\n", "--position-embedding-type none\n",
        "--mamba-num-heads 128\n", "--mamba-num-groups 8\n", "--mamba-head-dim 64\n",
        "--mamba-state-dim 128\n", "pretrain_hybrid.py");
    // Interleaved: 4 stages of 2 chunks, 52 = 8 x 6 + 4, the first four chunks one layer more.
    int[] chunks = {7, 7, 7, 7, 6, 6, 6, 6};
    exportPlan(plan(m, chunks, 4, 1, 2, 1, 1, 512), chunks);
    // TP 8 on one node: 128 heads / 8 = 16, 8 groups / 8 = 1 per rank.
    exportPlan(plan(m, new int[] {52}, 1, 8, 1, 1, 1, 64), new int[] {52});
  }

  @Test
  void nemotron3NanoAndQwen3NextWriteTheirExpertsMixersAndGates() throws Exception {
    ModelSpec nano = Presets.get("nemotron-3-nano-30b-a3b");
    // 52 layers in stages of 12, 14, 14, 12; TP 2 x EP 8 over 2 x 4 = 8 data x tensor GPUs.
    int[] nanoStages = {12, 14, 14, 12};
    exportPlan(plan(nano, nanoStages, 4, 2, 4, 1, 8, 64), nanoStages);
    ModelSpec qwen = Presets.get("qwen3-next-80b-a3b");
    // 96 sublayers (48 layers of two) in 8 chunks of 12 on 4 stages; TP 2 x CP 2 divides the
    // 16 key and 32 value heads of Gated DeltaNet (16 / 4 = 4, 32 / 4 = 8).
    int[] qwenChunks = {12, 12, 12, 12, 12, 12, 12, 12};
    ExportInput in = exportPlan(plan(qwen, qwenChunks, 4, 2, 2, 2, 4, 64), qwenChunks).input();
    Map<String, String> a = MegatronMoeConformanceTest.args(in);
    assertThat(a).containsKey("--attention-output-gate").containsKey("--moe-shared-expert-gate")
        .containsKey("--qk-layernorm").containsEntry("--linear-num-key-heads", "16")
        .containsEntry("--linear-num-value-heads", "32")
        .containsEntry("--linear-key-head-dim", "128")
        .containsEntry("--linear-value-head-dim", "128")
        .containsEntry("--linear-conv-kernel-dim", "4").containsEntry("--rotary-percent", "0.25")
        .containsEntry("--kv-channels", "256").containsEntry("--num-experts", "512")
        .containsEntry("--moe-shared-expert-intermediate-size", "512")
        // GEGEGE*E x 12 cut every 12 symbols: the 24-symbol period spans two chunks.
        .containsEntry("--hybrid-layer-pattern", String.join("|",
            java.util.Collections.nCopies(4, "GEGEGE*EGEGE|GE*EGEGEGE*E")));
  }

  @Test
  void nemotron3SuperWritesItsLatentWidth() throws Exception {
    ModelSpec m = Presets.get("nemotron-3-super-120b-a12b");
    // 88 layers in stages of 22; EP 8 over the 8 data-parallel GPUs of each stage.
    int[] stages = {22, 22, 22, 22};
    ExportInput in = exportPlan(plan(m, stages, 4, 1, 8, 1, 8, 64), stages).input();
    // Its prediction module after the unified pattern's "/" (hybrid_layer_allocation.py:45-71),
    // and --mtp-num-layers the depth parse_hybrid_pattern infers from it (arguments.py:865-879).
    assertThat(MegatronMoeConformanceTest.args(in).get("--hybrid-layer-pattern")).endsWith("|"
        + "MEM*EMEMEMEM*EMEMEMEME/*E").doesNotContain("||");
    assertThat(MegatronMoeConformanceTest.args(in)).containsEntry("--mtp-num-layers", "1");
    assertThat(MegatronMoeConformanceTest.args(in)).containsEntry("--moe-latent-size", "1024")
        .containsEntry("--num-experts", "512").containsEntry("--moe-router-topk", "22")
        .containsEntry("--moe-ffn-hidden-size", "2688")
        .containsEntry("--moe-shared-expert-intermediate-size", "5376");
  }

  @Test
  void seededRandomHybridsThroughPlannedStagesKeepMegatronsRules() throws Exception {
    Random rnd = new Random(20261129);
    int written = 0;
    Set<String> kinds = new java.util.TreeSet<>();
    for (int i = 0; i < 400 && written < 60; i++) {
      ModelSpec m = randomHybrid(rnd, i);
      int tp = 1 << rnd.nextInt(3);
      int cp = 1 << rnd.nextInt(2);
      int dp = 1 << rnd.nextInt(2);
      int pp = 1 + rnd.nextInt(4);
      int vpp = pp > 1 && rnd.nextBoolean() ? 2 : 1;
      // EP x ETP divides TP x DP (ParallelConfig.checkExperts).
      int ep = m.arch().moe().routed() && tp * dp % 2 == 0 ? 1 << rnd.nextInt(2) : 1;
      int gpus = tp * cp * dp * pp;
      if (m.hybridLayoutProblem(tp, cp).isPresent() || pp * vpp > m.layers()
          || gpus > 8 && gpus % 8 != 0 || tp * dp * cp > 8 && tp * dp * cp % 8 != 0) {
        continue;
      }
      int[] chunks = randomChunks(rnd, m.layers(), pp * vpp);
      PipelinePlan plan;
      try {
        plan = plan(m, chunks, pp, tp, dp, cp, ep, pp * (1 + rnd.nextInt(3)));
      } catch (InputException | IllegalArgumentException e) {
        continue;
      }
      exportPlan(plan, chunks);
      written++;
      m.arch().hybrid().symbols().chars().forEach(ch -> kinds.add(String.valueOf((char) ch)));
      kinds.add(vpp > 1 ? "vpp" : "pp" + Math.min(pp, 2));
    }
    // Enough plans that every symbol, interleaving and both pipeline cases were exercised.
    assertThat(written).isEqualTo(60);
    assertThat(kinds).contains("M", "G", "*", "-", "E", "vpp", "pp1", "pp2");
  }

  /** Layers per chunk: {@code n} chunks of at least one layer each, summing to {@code layers}. */
  private static int[] randomChunks(Random rnd, int layers, int n) {
    int[] out = new int[n];
    java.util.Arrays.fill(out, 1);
    for (int left = layers - n; left > 0; left--) {
      out[rnd.nextInt(n)]++;
    }
    return out;
  }

  /**
   * A hybrid Megatron-LM builds: 8 to 40 layers of Mamba-2, Gated DeltaNet, attention, MLP and
   * expert symbols, with mixers of the shapes Megatron-Core's defaults fix (4 taps, chunks of 128
   * and 64) and sizes drawn from powers of two.
   */
  static ModelSpec randomHybrid(Random rnd, int i) {
    int layers = 8 + rnd.nextInt(33);
    boolean gdn = rnd.nextInt(3) == 0;
    boolean mamba = !gdn || rnd.nextBoolean();
    boolean moe = rnd.nextBoolean();
    String pool = (mamba ? "MMM" : "") + (gdn ? "GGG" : "") + "*-" + (moe ? "EE" : "");
    char[] s = new char[layers];
    for (int l = 0; l < layers; l++) {
      s[l] = pool.charAt(rnd.nextInt(pool.length()));
    }
    s[0] = mamba ? 'M' : 'G';
    s[1] = gdn ? 'G' : 'M';
    s[2] = moe ? 'E' : '-';
    String symbols = new String(s);
    int groups = 1 << rnd.nextInt(4);
    MambaShape ms = new MambaShape(groups << (1 + rnd.nextInt(3)), 64, 64 << rnd.nextInt(2),
        groups, 4, 128, groups, true, false);
    int keyHeads = 4 << rnd.nextInt(3);
    GdnShape gs = new GdnShape(keyHeads, keyHeads << rnd.nextInt(2), 128, 128, 4, 64);
    HybridPattern p = HybridPattern.parse(symbols, layers, ms, gs, gdn && rnd.nextBoolean());
    MoeShape experts = MoeShape.DENSE;
    if (moe) {
      experts = new MoeShape(8 << rnd.nextInt(3), 1 + rnd.nextInt(4), 512 << rnd.nextInt(2),
          rnd.nextBoolean() ? 1024 : 0, false);
      experts = experts.sharedFfn() > 0 && rnd.nextBoolean() ? experts.withSharedGate() : experts;
    }
    Architecture.Mlp mlp = gdn || rnd.nextBoolean() ? Architecture.Mlp.SWIGLU
        : Architecture.Mlp.RELU2;
    boolean rope = rnd.nextBoolean();
    Architecture arch = new Architecture(mlp, Architecture.Norm.RMS,
        rope ? Architecture.Positions.ROTARY : Architecture.Positions.NONE, 0, false, false,
        new AttentionShape(128, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0), experts,
        0, Numerics.rotary(10_000, 1e-5), p);
    return new ModelSpec("hybrid-" + i, ModelSpec.Family.GPT, layers, 1024 << rnd.nextInt(2),
        16, 4 << rnd.nextInt(3) >> 1, 2048, 32768, 4096, 8, DType.BF16, arch);
  }

  @Test
  void mambaOneAndMixersMegatronCannotBuildAreRefusedAndOtherTargetsStillRefuseHybrids() {
    ModelSpec jamba = Presets.get("jamba-v0.1");
    ExportInput j = new ExportInput(jamba, cluster(16), new ParallelConfig(2, 1, 8, 1, 1, 64,
        Recompute.FULL, true, 1, 0, 0, 8, 1));
    ExportResult r = new Exporter().export(ExportTarget.MEGATRON, j);
    // Jamba: 32 layers of a mixer, attention on 4 (by attn_layer_period 8), Mamba-1 on 28.
    assertThat(r).isInstanceOfSatisfying(ExportResult.NotExpressible.class, n -> {
      assertThat(n.missing()).isEqualTo("Megatron-LM has no Mamba-1 layer: its hybrid layer"
          + " pattern's symbols are M (Mamba-2), G (Gated DeltaNet), *, D, + (attention), -"
          + " (MLP) and E (experts) (hybrid_layer_allocation.py:17-26); jamba-v0.1 has 28"
          + " Mamba-1 (S) layers");
      assertThat(n.nearest()).isEmpty();
    });
    ModelSpec nemo = Presets.get("nemotron-h-8b");
    MambaShape s = nemo.arch().hybrid().mamba();
    // MambaMixer's defaults: 4 taps, chunks of 128, conv bias, no projection bias, a norm per
    // group (mamba_mixer.py:179, 191-194, 276-277, 427).
    MambaShape[] unbuildable = {
        new MambaShape(128, 64, 128, 8, 3, 128, 8, true, false),
        new MambaShape(128, 64, 128, 8, 4, 256, 8, true, false),
        new MambaShape(128, 64, 128, 8, 4, 128, 8, true, true),
        new MambaShape(128, 64, 128, 8, 4, 128, 8, false, false),
        new MambaShape(128, 64, 128, 8, 4, 128, 1, true, false)};
    for (MambaShape u : unbuildable) {
      ModelSpec m = withHybrid(nemo, new HybridPattern(nemo.arch().hybrid().symbols(), u));
      assertThat(Exporter.missing(ExportTarget.MEGATRON, new ExportInput(m, cluster(8),
          new ParallelConfig(1, 1, 8, 1, 1, 64, Recompute.FULL, false, 1)))).as(u.toString())
          .hasValueSatisfying(w -> assertThat(w).startsWith("Megatron-Core's Mamba-2"));
    }
    assertThat(s).isEqualTo(new MambaShape(128, 64, 128, 8, 4, 128, 8, true, false));
    ExportInput nemoIn = new ExportInput(nemo, cluster(8), new ParallelConfig(2, 1, 4, 1, 1, 64,
        Recompute.FULL, true, 1));
    assertThat(Exporter.missing(ExportTarget.MEGATRON, nemoIn)).isEmpty();
    for (ExportTarget t : ExportTarget.values()) {
      if (t == ExportTarget.MEGATRON || t == ExportTarget.ALPA) {
        continue;
      }
      for (ExportInput in : List.of(nemoIn, j)) {
        assertThat(Exporter.missing(t, in)).as(t + " " + in.model().name())
            .hasValueSatisfying(w -> assertThat(w).contains("a hybrid layer pattern"));
      }
    }
    assertThat(Exporter.missingJob(ExportTarget.ALPA, nemo, io.meshplan.model.Attention.UNFUSED,
        io.meshplan.model.Overlaps.DEFAULTS)).isPresent();
  }

  @Test
  void gatedDeltaNetNeedsSwigluAndTheLayoutsItsHeadsSplit() {
    ModelSpec qwen = Presets.get("qwen3-next-80b-a3b");
    Architecture a = qwen.arch();
    ModelSpec gelu = new ModelSpec("qwen-gelu", ModelSpec.Family.GPT, qwen.layers(), qwen.hidden(),
        qwen.heads(), qwen.kvHeads(), qwen.ffn(), qwen.vocab(), qwen.seq(), qwen.batch(),
        qwen.dtype(), new Architecture(Architecture.Mlp.GELU, a.norm(), a.positions(),
            a.positionRows(), a.biases(), a.tiedEmbeddings(), a.attn(), a.moe(), a.mtpDepth(),
            a.numerics(), a.hybrid()));
    ExportInput in = new ExportInput(gelu, cluster(16), new ParallelConfig(2, 1, 8, 1, 1, 64,
        Recompute.FULL, true, 1, 0, 0, 8, 1));
    assertThat(Exporter.missing(ExportTarget.MEGATRON, in)).hasValueSatisfying(w ->
        assertThat(w).contains("gdn.py:231").endsWith("qwen-gelu has gelu"));
    // A layout written chunk by chunk (--pipeline-model-parallel-layout, 2 stages x 2 chunks):
    // 20 + 28 + 28 + 20 = 96 sublayers, the same four segments.
    ExportInput vpp = new ExportInput(qwen, cluster(16), new ParallelConfig(2, 2, 4, 2, 1, 64,
        Recompute.FULL, true, 1, 0, 0, 8, 1).withSplit(PipelineLayout.parse(
            "Et*20|t*28|t*28|t*20L", 2)));
    assertThat(MegatronMoeConformanceTest.args(vpp)).containsEntry("--hybrid-layer-pattern",
        MegatronHybridArgs.segments(qwen.arch().hybrid().symbols(), new int[] {20, 28, 28, 20}))
        .doesNotContainKey("--pipeline-model-parallel-layout");
    // Nemotron 3 Nano's 64 Mamba heads in 8 groups: TP 16 divides the heads (4 each), not the
    // groups (mamba_mixer.py:270): bad input, refused when the layout is bound (exit 2), as
    // simulate refuses it.
    ModelSpec nano = Presets.get("nemotron-3-nano-30b-a3b");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new ExportInput(nano, cluster(16),
        new ParallelConfig(16, 1, 1, 1, 1, 64, Recompute.FULL, true, 1)))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("64 heads in 8 groups; tensor parallelism of 16 must divide");
  }

  private static ModelSpec withHybrid(ModelSpec m, HybridPattern p) {
    return new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffn(), m.vocab(), m.seq(), m.batch(), m.dtype(), m.arch().withHybrid(p));
  }
}
