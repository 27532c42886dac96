package io.meshplan.export;

import io.meshplan.framework.MegatronArg;
import io.meshplan.model.Architecture;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.GdnShape;
import io.meshplan.model.HybridPattern;
import io.meshplan.model.MambaShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Megatron-LM's arguments for a hybrid model ({@link HybridPattern}: Mamba-2, Gated DeltaNet,
 * attention, MLP and expert layers), as NVIDIA/Megatron-LM d98e8a6 (main, 2026-08-22) builds it;
 * restated in {@code MegatronHybridConformanceTest}:
 *
 * <ul>
 *   <li>The entry point is {@code pretrain_hybrid.py}; {@code pretrain_mamba.py} is a deprecated
 *       wrapper that runs it ({@code pretrain_mamba.py:2-19}). Its builder refuses to run without
 *       {@code --spec} ({@code hybrid_builders.py:17-25}); the spec written is Megatron-LM's own
 *       {@code megatron.core.models.hybrid.hybrid_layer_specs hybrid_stack_spec} ({@code
 *       hybrid_layer_specs.py:107}, as {@code examples/mamba/train.sh:99} passes it).
 *   <li>{@code --hybrid-layer-pattern} ({@code megatron/training/arguments.py:3652}) is meshplan's
 *       pattern: the symbols are the same ({@code
 *       megatron/core/models/hybrid/hybrid_layer_allocation.py:17-26}), one per residual
 *       sublayer, so a Qwen3-Next layer is two. {@code validate_args} derives {@code num_layers}
 *       from its length without the {@code |} separators ({@code arguments.py:787-797}, {@code
 *       hybrid_layer_allocation.py:128-142}), so {@code --num-layers} is not written.
 *   <li>Pipeline stages are {@code |}-separated segments in layer order, segment {@code v x PP +
 *       rank} on pipeline rank {@code rank}'s model chunk {@code v} ({@code
 *       hybrid_layer_allocation.py:459-477}); their number must be a multiple of PP and gives the
 *       virtual stages ({@code arguments.py:840-862}). A segment may be empty ({@code
 *       tests/unit_tests/ssm/test_hybrid_layer_allocation.py:526}). With separators {@code
 *       validate_args} forbids the first- and last-stage layers, the virtual-stage arguments, the
 *       layout and the embedding and loss accounting ({@code arguments.py:803-838}), so each
 *       chunk's layers ({@link ParallelConfig#chunkLayers}) are written as its segment, and
 *       nothing else. PP 1 is one segment without separators; any larger PP has them (a pattern
 *       without them under PP above 1 is the deprecated split, {@code
 *       hybrid_layer_allocation.py:385-400}).
 *   <li>Mamba-2: {@code --mamba-state-dim}, {@code --mamba-head-dim}, {@code --mamba-num-groups},
 *       {@code --mamba-num-heads} ({@code
 *       megatron/core/transformer/transformer_config.py:1259-1268}). {@code MambaLayer} passes
 *       the mixer only the hidden size ({@code megatron/core/ssm/mamba_layer.py:89-97}), so
 *       the convolution's 4 taps, its bias, the projections without bias and the chunks of 128
 *       are {@code MambaMixer}'s defaults ({@code
 *       megatron/core/ssm/mamba_mixer.py:179, 191-194}; bias and conv bias asserted at 276-277),
 *       and its gated norm normalizes each group's channels ({@code group_size = d_inner /
 *       ngroups}, 427): another mixer is refused. TP divides heads and groups (262, 270: checked
 *       when the layout is bound, {@link ModelSpec#checkHybridLayout}); under FP8 the
 *       projection's width is a multiple of 16 (253-257).
 *   <li>Gated DeltaNet: {@code --linear-conv-kernel-dim}, {@code --linear-key-head-dim}, {@code
 *       --linear-value-head-dim}, {@code --linear-num-key-heads}, {@code --linear-num-value-heads}
 *       ({@code transformer_config.py:370-382}); the {@code G} layer is built whatever {@code
 *       --experimental-attention-variant} says ({@code hybrid_block.py:194-209}), without
 *       biases or a convolution bias ({@code ssm/gated_delta_net/common.py:118-119}), in chunks of
 *       64 ({@code gdn.py:73}), its convolution and output gate by the MLP's activation, which
 *       must be SiLU ({@code common.py:174}, {@code gdn.py:231}): the model's MLP is SwiGLU.
 *   <li>Qwen3-Next's gated attention is {@code --attention-output-gate} ({@code
 *       transformer_config.py:278}: a gate of heads x head size beside the queries, {@code
 *       attention.py:1690-1691}, applied as {@code sigmoid}, 1635-1641); its gated shared expert
 *       is {@code --moe-shared-expert-gate} ({@link MegatronExpertArgs}).
 * </ul>
 *
 * <p>Megatron-LM has no Mamba-1 layer (no {@code S} symbol, no selective-scan mixer under {@code
 * megatron/core/ssm/}): Jamba is refused. Sliding windows on a hybrid's attention layers are
 * not written.
 */
final class MegatronHybridArgs {
  /** The Python module and object of Megatron-LM's hybrid layer spec ({@code --spec}). */
  static final List<String> SPEC = List.of("megatron.core.models.hybrid.hybrid_layer_specs",
      "hybrid_stack_spec");
  /** Megatron-Core's Mamba-2 convolution taps ({@code mamba_mixer.py:179}). */
  static final int MAMBA_CONV = 4;
  /** Megatron-Core's Mamba-2 chunk length ({@code mamba_mixer.py:194}). */
  static final int MAMBA_CHUNK = 128;
  /** Megatron-Core's Gated DeltaNet chunk length ({@code gdn.py:73}). */
  static final int GDN_CHUNK = 64;
  /** The FP8 alignment of the mixers' input projections ({@code mamba_mixer.py:253-257}). */
  static final int FP8_ALIGN = 16;

  private MegatronHybridArgs() {}

  /**
   * The training script: {@code pretrain_hybrid.py} for a hybrid, else {@code pretrain_gpt.py}.
   *
   * @param m the model
   * @return the file name in a Megatron-LM checkout
   */
  static String script(ModelSpec m) {
    return m.arch().hybrid().on() ? "pretrain_hybrid.py" : "pretrain_gpt.py";
  }

  /**
   * What Megatron-LM cannot build of a hybrid model, if anything.
   *
   * @param m the model
   * @return one sentence, empty for an ordinary decoder or a hybrid Megatron-LM builds
   */
  static Optional<String> missingModel(ModelSpec m) {
    HybridPattern p = m.arch().hybrid();
    if (!p.on()) {
      return Optional.empty();
    }
    String who = m.name() + " has ";
    if (p.mamba1() != null) {
      return Optional.of("Megatron-LM has no Mamba-1 layer: its hybrid layer pattern's symbols are"
          + " M (Mamba-2), G (Gated DeltaNet), *, D, + (attention), - (MLP) and E (experts)"
          + " (hybrid_layer_allocation.py:17-26); " + who
          + p.count(HybridPattern.SELECTIVE, 0, m.layers() - 1) + " Mamba-1 (S) layers");
    }
    if (m.arch().attn().window() > 0) {
      return Optional.of("meshplan's Megatron-LM export writes no sliding window for a hybrid's"
          + " attention layers; " + who + "a window of " + m.arch().attn().window() + " tokens");
    }
    Optional<String> mamba = mambaMissing(m, p.mamba());
    return mamba.isPresent() ? mamba : gdnMissing(m, p.gdn());
  }

  /** The Mamba-2 mixers Megatron-Core's {@code MambaMixer} does not build. */
  private static Optional<String> mambaMissing(ModelSpec m, MambaShape s) {
    if (s == null) {
      return Optional.empty();
    }
    String who = "; " + m.name() + "'s Mamba-2 layers have ";
    if (s.projBias() || !s.convBias()) {
      return Optional.of("Megatron-Core's Mamba-2 mixer has a convolution bias and no projection"
          + " biases (mamba_mixer.py:276-277)" + who + (s.projBias() ? "projection biases"
          : "no convolution bias"));
    }
    if (s.convKernel() != MAMBA_CONV || s.chunk() != MAMBA_CHUNK) {
      return Optional.of("Megatron-Core's Mamba-2 mixer runs a 4-tap convolution in chunks of"
          + " 128, which no argument sets (mamba_mixer.py:179, 194; mamba_layer.py:89-97)" + who
          + "a " + s.convKernel() + "-tap convolution in chunks of " + s.chunk());
    }
    if (s.normGroups() != s.groups()) {
      return Optional.of("Megatron-Core's Mamba-2 gated norm normalizes each of its groups"
          + " (mamba_mixer.py:427)" + who + s.groups() + " groups and " + s.normGroups()
          + " norm groups");
    }
    if (Fp8Training.on(m.dtype()) && s.inProjWidth() % FP8_ALIGN != 0) {
      return Optional.of("Megatron-Core's Mamba-2 mixer under FP8 needs an input projection of a"
          + " multiple of 16 outputs (mamba_mixer.py:253-257)" + who + s.inProjWidth());
    }
    return Optional.empty();
  }

  /** The Gated DeltaNet mixers Megatron-Core's {@code GatedDeltaNet} does not build. */
  private static Optional<String> gdnMissing(ModelSpec m, GdnShape g) {
    if (g == null) {
      return Optional.empty();
    }
    String who = "; " + m.name();
    if (g.chunk() != GDN_CHUNK) {
      return Optional.of("Megatron-Core's Gated DeltaNet runs chunks of 64 (gdn.py:73)" + who
          + "'s run chunks of " + g.chunk());
    }
    if (m.arch().mlp() != Architecture.Mlp.SWIGLU) {
      return Optional.of("Megatron-Core's Gated DeltaNet takes its SiLU from the MLP's activation"
          + " and asserts it (gated_delta_net/common.py:174, gdn.py:231), so it needs a SwiGLU"
          + " MLP" + who + " has " + m.arch().mlp().name().toLowerCase(java.util.Locale.ROOT));
    }
    long in = 2 * g.keyWidth() + 2 * g.valueWidth() + 2L * g.valueHeads();
    if (Fp8Training.on(m.dtype()) && in % FP8_ALIGN != 0) {
      return Optional.of("Megatron-Core's Gated DeltaNet under FP8 needs an input projection of"
          + " a multiple of 16 outputs (gated_delta_net/common.py:205-210)" + who + "'s has "
          + in);
    }
    return Optional.empty();
  }

  /**
   * The pattern with each model chunk's layers as one {@code |}-separated segment, in layer
   * order; without separators when there is one chunk.
   *
   * @param symbols the model's pattern, one symbol per layer
   * @param chunkLayers layers per chunk in layer order, summing to the pattern's length
   * @return the pattern Megatron-LM reads
   */
  static String segments(String symbols, int[] chunkLayers) {
    StringBuilder sb = new StringBuilder();
    int at = 0;
    for (int k = 0; k < chunkLayers.length; k++) {
      sb.append(k > 0 ? "|" : "").append(symbols, at, at + chunkLayers[k]);
      at += chunkLayers[k];
    }
    io.meshplan.util.Require.that(at == symbols.length(), "the chunks hold " + at
        + " layers, the pattern " + symbols.length());
    return sb.toString();
  }

  /**
   * The spec and the layer pattern, which state the layers and the pipeline stages.
   *
   * @param input a hybrid input
   * @return the arguments
   */
  static List<List<String>> layers(ExportInput input) {
    ModelSpec m = input.model();
    ParallelConfig c = input.config();
    List<String> spec = new ArrayList<>(List.of(MegatronArg.SPEC.flag()));
    spec.addAll(SPEC);
    return List.of(spec, List.of(MegatronArg.HYBRID_LAYER_PATTERN.flag(),
        segments(m.arch().hybrid().symbols(), c.chunkLayers(m.layers()))
            + predictionModules(m)));
  }

  /**
   * The multi-token prediction modules in the unified pattern: {@code /} and the module's layers
   * once per depth ({@code hybrid_layer_allocation.py:45-71, 236-268}: every part after the main
   * pattern is one depth, all identical, without {@code |}); the modules run on the last
   * pipeline stage.
   *
   * @param m a hybrid model
   * @return the suffix, empty without prediction modules
   */
  static String predictionModules(ModelSpec m) {
    String layers = m.arch().hybrid().mtp();
    return layers.isEmpty() ? "" : ("/" + layers).repeat(m.arch().mtpDepth());
  }

  /**
   * The mixers' arguments and the attention's output gate.
   *
   * @param m a hybrid model
   * @return the arguments
   */
  static List<List<String>> mixers(ModelSpec m) {
    HybridPattern p = m.arch().hybrid();
    List<List<String>> a = new ArrayList<>();
    MambaShape s = p.mamba();
    if (s != null) {
      a.add(List.of(MegatronArg.MAMBA_STATE_DIM.flag(), Integer.toString(s.state())));
      a.add(List.of(MegatronArg.MAMBA_HEAD_DIM.flag(), Integer.toString(s.headDim())));
      a.add(List.of(MegatronArg.MAMBA_NUM_GROUPS.flag(), Integer.toString(s.groups())));
      a.add(List.of(MegatronArg.MAMBA_NUM_HEADS.flag(), Integer.toString(s.heads())));
    }
    GdnShape g = p.gdn();
    if (g != null) {
      a.add(List.of(MegatronArg.LINEAR_CONV_KERNEL_DIM.flag(), Integer.toString(g.convKernel())));
      a.add(List.of(MegatronArg.LINEAR_KEY_HEAD_DIM.flag(), Integer.toString(g.keyHeadDim())));
      a.add(List.of(MegatronArg.LINEAR_VALUE_HEAD_DIM.flag(),
          Integer.toString(g.valueHeadDim())));
      a.add(List.of(MegatronArg.LINEAR_NUM_KEY_HEADS.flag(), Integer.toString(g.keyHeads())));
      a.add(List.of(MegatronArg.LINEAR_NUM_VALUE_HEADS.flag(),
          Integer.toString(g.valueHeads())));
    }
    if (p.attentionGate()) {
      a.add(List.of(MegatronArg.ATTENTION_OUTPUT_GATE.flag()));
    }
    return a;
  }
}
