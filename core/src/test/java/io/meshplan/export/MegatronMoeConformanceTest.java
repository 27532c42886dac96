package io.meshplan.export;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.util.InputException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-LM export of mixture-of-experts models, expert parallelism and context parallelism
 * against Megatron-LM's own rules, restated here (NVIDIA/Megatron-LM main at d98e8a6, 2026-08-22;
 * the sources are not read at test time). Seeded random configurations of the MoE presets and of
 * LLaMA 3 8B that {@link ExportInput} accepts are written, and every file must satisfy:
 *
 * <ul>
 *   <li>every option is one Megatron-LM defines ({@link MegatronConformanceTest#DEFINED} and
 *       {@link #DEFINED}, with where);
 *   <li>{@code world % (TP x PP x CP) == 0} and the data-parallel size is {@code world / (TP x PP
 *       x CP)} ({@code megatron/training/arguments.py:424-448});
 *   <li>{@code num_experts % EP == 0} ({@code arguments.py:1655-1658}); the expert grid {@code ETP x
 *       EP x PP} divides the world ({@code megatron/core/parallel_state.py:874-884}); the expert
 *       tensor size is written, as it defaults to the tensor size ({@code arguments.py:587-588});
 *       expert and tensor parallelism together come with sequence parallelism ({@code
 *       megatron/core/model_parallel_config.py:560-564});
 *   <li>{@code seq % (2 x CP) == 0} ({@code arguments.py:1335-1338}); the CP communication is one
 *       of {@code p2p} and {@code all_gather} ({@code
 *       megatron/core/transformer/transformer_config.py:1030-1040}); {@code
 *       CUDA_DEVICE_MAX_CONNECTIONS=1} with CP on a GPU before Blackwell outside Megatron-FSDP
 *       ({@code arguments.py:1453-1479});
 *   <li>a capacity factor comes with an {@code aux_loss}-family balancing ({@code
 *       transformer_config.py:1836-1860}) and without input padding, which meshplan does not price
 *       ({@code transformer_config.py:921-924});
 *   <li>grouped GEMM only on compute capability 8 and later ({@code arguments.py:1378-1380}).
 * </ul>
 */
class MegatronMoeConformanceTest {
  /** The options of experts, context parallelism and head sizes, and where Megatron-LM defines them. */
  static final Map<String, String> DEFINED = Map.ofEntries(
      entry("--num-experts", "megatron/training/arguments.py:3518"),
      entry("--moe-router-load-balancing-type", "megatron/training/arguments.py:3532"),
      entry("--moe-aux-loss-coeff", "megatron/training/arguments.py:3536"),
      entry("--cp-comm-type", "megatron/training/arguments.py:3221"),
      entry("--context-parallel-size", "megatron/core/model_parallel_config.py:100"),
      entry("--expert-model-parallel-size", "megatron/core/model_parallel_config.py:127"),
      entry("--expert-tensor-parallel-size", "megatron/core/model_parallel_config.py:130"),
      entry("--kv-channels", "megatron/core/transformer/transformer_config.py:184"),
      entry("--qk-layernorm", "megatron/core/transformer/transformer_config.py:259"),
      entry("--moe-shared-expert-intermediate-size",
          "megatron/core/transformer/transformer_config.py:701"),
      entry("--moe-ffn-hidden-size", "megatron/core/transformer/transformer_config.py:740"),
      entry("--moe-router-topk", "megatron/core/transformer/transformer_config.py:760"),
      entry("--moe-router-pre-softmax", "megatron/core/transformer/transformer_config.py:799"),
      entry("--moe-grouped-gemm", "megatron/core/transformer/transformer_config.py:850"),
      entry("--moe-token-dispatcher-type", "megatron/core/transformer/transformer_config.py:891"),
      entry("--moe-flex-dispatcher-backend",
          "megatron/core/transformer/transformer_config.py:898"),
      entry("--moe-router-num-groups", "megatron/core/transformer/transformer_config.py:780"),
      entry("--moe-router-group-topk", "megatron/core/transformer/transformer_config.py:796"),
      entry("--moe-expert-capacity-factor",
          "megatron/core/transformer/transformer_config.py:917"),
      entry("--moe-layer-freq", "megatron/training/arguments.py:3520"),
      entry("--multi-latent-attention", "megatron/core/transformer/transformer_config.py:288"),
      entry("--q-lora-rank", "megatron/training/arguments.py:3548"),
      entry("--kv-lora-rank", "megatron/training/arguments.py:3550"),
      entry("--qk-head-dim", "megatron/training/arguments.py:3552"),
      entry("--qk-pos-emb-head-dim", "megatron/training/arguments.py:3554"),
      entry("--v-head-dim", "megatron/training/arguments.py:3556"),
      entry("--rope-type", "megatron/training/arguments.py:2906"),
      entry("--no-rope-fusion", "megatron/training/arguments.py:2902"),
      entry("--mtp-num-layers", "megatron/core/transformer/transformer_config.py:68"),
      entry("--mtp-loss-scaling-factor", "megatron/core/transformer/transformer_config.py:75"));

  private static final List<String> MODELS = List.of("mixtral-8x7b", "mixtral-8x22b",
      "qwen3-30b-a3b", "qwen3-235b-a22b", "llama3-8b", "deepseek-v3");

  @Test
  void seededRandomExportsKeepMegatronsRules() {
    Random rnd = new Random(20261127);
    int written = 0;
    int[] seen = new int[3];
    for (int i = 0; i < 3000; i++) {
      ExportInput in = randomInput(rnd);
      if (in == null) {
        continue;
      }
      written++;
      ParallelConfig c = in.config();
      seen[0] += c.expertParallel() > 1 ? 1 : 0;
      seen[1] += c.contextParallel() > 1 ? 1 : 0;
      seen[2] += in.model().arch().moe().capacityFactor() > 0 ? 1 : 0;
      check(in, args(in), new MegatronArgs().write(in));
    }
    // Enough accepted configurations of each kind that every rule above was exercised.
    assertThat(written).isGreaterThan(200);
    assertThat(java.util.Arrays.stream(seen).min().orElseThrow()).as("EP, CP, capacity")
        .isGreaterThan(30);
  }

  /** One random configuration, or null when ExportInput refuses it (as export would, exit 2). */
  private static ExportInput randomInput(Random rnd) {
    ModelSpec p = Presets.get(MODELS.get(rnd.nextInt(MODELS.size())));
    boolean v100 = rnd.nextInt(5) == 0;
    ClusterSpec cluster = ClusterSpec.parse((1 << rnd.nextInt(6)) + "x8:"
        + (v100 ? "v100-32gb" : rnd.nextBoolean() ? "a100-80gb" : "h100-80gb"));
    int seq = 1024 << rnd.nextInt(6);
    ModelSpec m = p.withSequence(seq);
    if (v100) {
      m = m.withTraining(m.batch(), DType.F16);
    }
    MoeShape moe = m.arch().moe();
    if (moe.routed() && rnd.nextBoolean()) {
      double[] factors = {1.0, 1.25, 2.0};
      m = new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
          m.ffn(), m.vocab(), m.seq(), m.batch(), m.dtype(), m.arch().withMoe(moe.withRouting(
              factors[rnd.nextInt(3)], 1 + rnd.nextInt(3) / 2.0)));
    }
    int tp = 1 << rnd.nextInt(4);
    int pp = 1 << rnd.nextInt(3);
    int cp = 1 << rnd.nextInt(3);
    long perReplica = (long) tp * pp * cp;
    if (cluster.gpuCount() % perReplica != 0) {
      return null;
    }
    int dp = (int) (cluster.gpuCount() / perReplica);
    int ep = moe.routed() ? 1 << rnd.nextInt(5) : 1;
    int etp = moe.routed() ? 1 << rnd.nextInt(2) : 1;
    // Ring, all-gather or Ulysses' all-to-alls; one whose heads do not split is refused below.
    ParallelConfig c = new ParallelConfig(tp, pp, dp, 1, 1, dp * (1 + rnd.nextInt(4)),
        Recompute.FULL, tp > 1, rnd.nextInt(4), 0, 0, ep, etp, cp, false)
        .withContext(cp, io.meshplan.plan.ContextExchange.values()[rnd.nextInt(3)]);
    // DeepEP and Hybrid-EP only where meshplan has their published bandwidths (Hopper).
    io.meshplan.model.ExpertDispatcher d = ep > 1 && cluster.gpu().name().startsWith("h100")
        ? io.meshplan.model.ExpertDispatcher.values()[rnd.nextInt(3)]
        : io.meshplan.model.ExpertDispatcher.ALLTOALL;
    try {
      return new ExportInput(m, cluster, c, v100 ? Attention.UNFUSED : Attention.FLASH,
          Overlaps.DEFAULTS.withDispatcher(d));
    } catch (InputException e) {
      return null;
    }
  }

  /** The arguments as a map from option to value ("" for a switch). */
  static Map<String, String> args(ExportInput in) {
    Map<String, String> a = new HashMap<>();
    for (List<String> opt : MegatronArgs.arguments(in)) {
      assertThat(a).as("written once").doesNotContainKey(opt.get(0));
      a.put(opt.get(0), opt.size() > 1 ? opt.get(1) : "");
    }
    return a;
  }

  static void check(ExportInput in, Map<String, String> a, String text) {
    ParallelConfig c = in.config();
    ModelSpec m = in.model();
    MoeShape moe = m.arch().moe();
    String at = m.name() + " " + in.cluster().toShortString() + " " + c;
    a.keySet().forEach(k -> assertThat(MegatronConformanceTest.DEFINED.containsKey(k)
        || DEFINED.containsKey(k)).as(at + ": " + k).isTrue());
    int world = in.cluster().gpuCount();
    int tp = Integer.parseInt(a.get("--tensor-model-parallel-size"));
    int pp = Integer.parseInt(a.get("--pipeline-model-parallel-size"));
    int cp = Integer.parseInt(a.getOrDefault("--context-parallel-size", "1"));
    assertThat(world % (tp * pp * cp)).as(at).isZero();
    assertThat(world / (tp * pp * cp)).as(at).isEqualTo(c.dataParallel());
    if (moe.routed()) {
      int ep = Integer.parseInt(a.get("--expert-model-parallel-size"));
      int etp = Integer.parseInt(a.get("--expert-tensor-parallel-size"));
      assertThat(Integer.parseInt(a.get("--num-experts")) % ep).as(at).isZero();
      assertThat(world % (etp * ep * pp)).as(at).isZero();
      assertThat(ep > 1 && tp > 1 && !a.containsKey("--sequence-parallel")).as(at).isFalse();
      assertThat(a).containsEntry("--moe-ffn-hidden-size", Integer.toString(moe.expertFfn()))
          .containsEntry("--moe-router-topk", Integer.toString(moe.topK()));
      if (moe.capacityFactor() > 0) {
        assertThat(Double.parseDouble(a.get("--moe-expert-capacity-factor")))
            .isEqualTo(moe.capacityFactor());
        assertThat(a.get("--moe-router-load-balancing-type")).isIn("aux_loss", "seq_aux_loss",
            "global_aux_loss", "none");
      }
      assertThat(a.containsKey("--moe-grouped-gemm"))
          .isEqualTo(!in.cluster().gpu().name().startsWith("v100"));
      // transformer_config.py:891 and 898: the dispatcher is allgather, alltoall or flex, and
      // flex's backend deepep, hybridep or ncclep (meshplan writes the first two).
      String type = a.get("--moe-token-dispatcher-type");
      assertThat(type).as(at).isIn("alltoall", "flex");
      assertThat(type).isEqualTo(in.overlaps().dispatcher().deduplicates() && ep > 1 ? "flex"
          : "alltoall");
      // token_dispatcher.py:1836: DeepEP needs TP x EP above 1.
      assertThat(type.equals("flex") && tp * ep < 2).as(at).isFalse();
      if (type.equals("flex")) {
        assertThat(a.get("--moe-flex-dispatcher-backend")).as(at).isIn("deepep", "hybridep");
      } else {
        assertThat(a).doesNotContainKey("--moe-flex-dispatcher-backend");
      }
      // transformer_config.py:2671-2690: a group top-k needs the number of groups, which
      // divides the experts, and is at most that number.
      if (a.containsKey("--moe-router-group-topk")) {
        int groups = Integer.parseInt(a.get("--moe-router-num-groups"));
        assertThat(moe.experts() % groups).as(at).isZero();
        assertThat(Integer.parseInt(a.get("--moe-router-group-topk"))).isLessThanOrEqualTo(groups);
      }
      assertThat(a.containsKey("--moe-router-num-groups")).isEqualTo(moe.groups() > 1);
    } else {
      assertThat(a.keySet()).noneMatch(k -> k.startsWith("--moe-") || k.contains("expert"));
    }
    assertThat(a).doesNotContainKey("--moe-pad-expert-input-to-capacity");
    if (cp > 1) {
      assertThat(m.seq() % (2 * cp)).as(at).isZero();
      // arguments.py:3221 takes p2p, a2a, allgather (Transformer Engine's all_gather) or
      // a2a+p2p; a2a splits each tensor rank's heads over the context group.
      assertThat(a.get("--cp-comm-type")).isEqualTo(c.cpExchange().word()).isIn("p2p",
          "all_gather", "a2a");
      if (c.cpExchange() == io.meshplan.plan.ContextExchange.ALL_TO_ALL) {
        assertThat(m.heads() / c.tensorParallel() % cp).as(at).isZero();
      }
      assertThat(text.contains("\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n"))
          .isEqualTo(c.zeroStage() < 2 && in.cluster().gpu().architecture().computeCapabilityMajor() < 10);
    } else {
      assertThat(a).doesNotContainKey("--cp-comm-type");
    }
  }

  @Test
  void qwen3WritesItsHeadSizeAndPerHeadNorms() {
    // Qwen3-30B-A3B: hidden 2048 over 32 heads would be 64 per head; its heads are 128 wide.
    ExportInput in = new ExportInput(Presets.get("qwen3-30b-a3b").withSequence(4096),
        ClusterSpec.parse("2x8:h100-80gb"), new ParallelConfig(1, 1, 16, 1, 1, 64, Recompute.FULL,
            false, 1, 0, 0, 8, 1));
    Map<String, String> a = args(in);
    assertThat(a).containsEntry("--kv-channels", "128").containsKey("--qk-layernorm")
        .containsEntry("--num-experts", "128").containsEntry("--moe-router-topk", "8")
        .containsEntry("--moe-ffn-hidden-size", "768")
        .doesNotContainKey("--moe-shared-expert-intermediate-size");
  }

  @Test
  void oneExpertPerTokenWritesThePreSoftmaxRouterAndSharedExpertsTheirSize() {
    // transformer_config.py:2662-2670: top-1 under the softmax router needs the pre-softmax.
    ModelSpec mixtral = Presets.get("mixtral-8x7b").withSequence(4096);
    ModelSpec switchLike = new ModelSpec("switch", mixtral.family(), mixtral.layers(),
        mixtral.hidden(), mixtral.heads(), mixtral.kvHeads(), mixtral.ffn(), mixtral.vocab(),
        mixtral.seq(), mixtral.batch(), mixtral.dtype(), mixtral.arch().withMoe(
            new MoeShape(8, 1, 14336, 2048, false)));
    ExportInput in = new ExportInput(switchLike, ClusterSpec.parse("8x8:h100-80gb"),
        new ParallelConfig(1, 4, 16, 1, 1, 256, Recompute.FULL, false, 1, 0, 0, 8, 1));
    assertThat(args(in)).containsKey("--moe-router-pre-softmax")
        .containsEntry("--moe-shared-expert-intermediate-size", "2048");
    ExportInput top2 = new ExportInput(mixtral, in.cluster(), in.config());
    assertThat(args(top2)).doesNotContainKey("--moe-router-pre-softmax");
  }

  @Test
  void expertsWithBiasesNeedExpertTensorSizeOne() {
    // transformer_config.py:2612-2615: "Bias in Moe is only supported when ETP==1".
    ModelSpec mixtral = Presets.get("mixtral-8x7b").withSequence(4096);
    Architecture a = mixtral.arch();
    Architecture biased = new Architecture(a.mlp(), a.norm(), a.positions(), a.positionRows(),
        true, a.tiedEmbeddings(), a.attn(), a.moe());
    ModelSpec m = new ModelSpec("biased", mixtral.family(), mixtral.layers(), mixtral.hidden(),
        mixtral.heads(), mixtral.kvHeads(), mixtral.ffn(), mixtral.vocab(), mixtral.seq(),
        mixtral.batch(), mixtral.dtype(), biased);
    ClusterSpec cluster = ClusterSpec.parse("8x8:h100-80gb");
    ParallelConfig etp2 = new ParallelConfig(2, 4, 8, 1, 1, 256, Recompute.FULL, true, 1, 0, 0,
        4, 2);
    ExportResult r = new Exporter().export(ExportTarget.MEGATRON,
        new ExportInput(m, cluster, etp2));
    assertThat(r).isInstanceOfSatisfying(ExportResult.NotExpressible.class, n ->
        assertThat(n.missing()).isEqualTo("Megatron-LM supports biases in the experts only with"
            + " expert tensor-parallel size 1 (transformer_config.py:2612-2615); got 2"));
    // The nearest keeps EP 4 and runs each expert whole on its GPU.
    assertThat(((ExportResult.NotExpressible) r).nearest().orElseThrow().config())
        .isEqualTo(etp2.withExperts(4, 1));
    assertThat(new Exporter().export(ExportTarget.MEGATRON,
        new ExportInput(m, cluster, etp2.withExperts(4, 1))))
        .isInstanceOf(ExportResult.Exported.class);
  }
}
