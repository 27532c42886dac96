package io.meshplan.export;

import io.meshplan.framework.MegatronArg;
import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Numerics;
import io.meshplan.model.RopeScaling;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The model fields of Megatron-LM's arguments, the one place that maps {@link Architecture} and
 * its {@link Numerics} to Megatron-LM's switches, at commit d98e8a6 (NVIDIA/Megatron-LM main,
 * 2026-08-22; Megatron-Core 0.20), restated in {@code ModelFieldsConformanceTest}. Megatron-LM's
 * defaults are GeLU, LayerNorm, learned absolute positions, biases, tied embeddings, a rotary base
 * of 10,000, a norm epsilon of 1e-5, dropout 0.1 and a vocabulary padded to a multiple of 128 x
 * TP; each field is written, so the file trains the model meshplan priced whatever the defaults:
 *
 * <ul>
 *   <li>{@code --norm-epsilon} ({@code TransformerConfig.layernorm_epsilon}, {@code
 *       megatron/core/transformer/transformer_config.py:201-203}), {@code --attention-dropout}
 *       and {@code --hidden-dropout} (lines 188-191), always.
 *   <li>rotary models: {@code --rotary-base} ({@code megatron/training/arguments.py:2418}, an
 *       integer), {@code --rotary-percent} below a whole head (2420); Llama 3.1's scaling is
 *       {@code --use-rope-scaling} (2424): {@code gpt_builders.py:96-101} passes that switch but
 *       not {@code --rope-scaling-factor}, so {@code RotaryEmbedding._apply_scaling} runs its fixed
 *       factor 8, low 1, high 4 and original 8192 ({@code
 *       megatron/core/models/common/embeddings/rotary_pos_embedding.py:92-106}), and another
 *       llama3 scaling is refused. YaRN without latent attention is {@code
 *       --position-embedding-type yarn} with {@code --rotary-scaling-factor}, {@code
 *       --yarn-original-max-position-embeddings}, {@code --yarn-beta-fast}, {@code
 *       --yarn-beta-slow}, {@code --mscale}, {@code --mscale-all-dim} and {@code
 *       --no-yarn-correction-range-round-to-int} ({@code arguments.py:2396-2411, 3558-3563};
 *       {@code megatron/training/argument_utils.py:383-412}); latent attention's is {@link
 *       MegatronDeepseekArgs}'s. Linear interpolation and the other forms have no argument of
 *       {@code pretrain_gpt.py}: refused.
 *   <li>{@code --add-qkv-bias} with {@code --disable-bias-linear} for QKV-only biases ({@code
 *       TransformerConfig.add_qkv_bias}, line 218; {@code validate_args} turns it on with every
 *       bias, {@code arguments.py:1608-1610}).
 *   <li>sliding windows: {@code --window-size "w-1,0"} (keys {@code i-w+1 .. i}, as Megatron-LM's
 *       own gpt-oss example writes 127,0 for a 128-token window, {@code examples/gptoss/
 *       02_train.sh:153}) and {@code --window-attn-skip-freq}: an integer N makes layer {@code
 *       n} (from 1) windowed unless {@code n % N == 0}, a list names each layer ({@code
 *       megatron/core/transformer/utils.py:531-546}).
 *   <li>the vocabulary: {@code --padded-vocab-size} (the tokenizer group's {@code
 *       padded_vocab_size}, {@code megatron/training/config/training_config.py:682}), which {@code
 *       _set_padded_vocab_size} then leaves alone ({@code
 *       megatron/core/tokenizers/utils/build_tokenizer.py:150-153}): the model has exactly the
 *       priced rows, whatever the tokenizer's size, instead of that size padded to a multiple of
 *       {@code --make-vocab-size-divisible-by} x TP. The vocabulary-parallel embedding splits it
 *       over the tensor ranks, so it must divide by TP.
 * </ul>
 *
 * <p>A squared-ReLU MLP is {@code --squared-relu} ({@code arguments.py:2448}), no position
 * encoding {@code --position-embedding-type none} (Nemotron-H); a hybrid's layers are {@link
 * MegatronHybridArgs}'.
 *
 * <p>Megatron-LM has no parallel residual (GPT-NeoX), no multipliers of Granite's kind, and no
 * norms over all query or key heads together (OLMo 2): models with them are refused.
 */
final class MegatronModelArgs {
  private MegatronModelArgs() {}

  /**
   * What Megatron-LM cannot build of a model's numbers, if anything.
   *
   * @param m the model
   * @return one sentence naming the missing feature, empty when every field is written
   */
  static Optional<String> missing(ModelSpec m) {
    Architecture a = m.arch();
    Numerics n = a.numerics();
    String who = m.name() + " has ";
    Optional<String> hybrid = MegatronHybridArgs.missingModel(m);
    if (hybrid.isPresent()) {
      return hybrid;
    }
    if (n.parallelResidual()) {
      return Optional.of("Megatron-LM's GPT blocks add attention and MLP to the residual one after"
          + " the other; " + who + "a parallel residual (use_parallel_residual)");
    }
    if (!n.multipliers().equals(Numerics.Multipliers.NONE)) {
      return Optional.of("Megatron-LM has no fixed embedding, residual, attention and logit"
          + " multipliers; " + who + n.multipliers().words());
    }
    if (a.attn().chunked()) {
      return Optional.of("Megatron-LM's --window-size slides a window; " + who + "chunked "
          + "attention (chunks of " + a.attn().window() + " tokens, Llama 4), which it does not "
          + "write");
    }
    if (a.attn().qkNorm() == AttentionShape.QkNorm.L2) {
      return Optional.of("meshplan's Megatron-LM export writes --qk-layernorm (an RMSNorm with a "
          + "weight per head); " + who + "weightless L2 q/k norms (Llama 4)");
    }
    if (a.attn().qkNorm() == AttentionShape.QkNorm.WHOLE) {
      return Optional.of("Megatron-LM's --qk-layernorm norms each head; " + who
          + "q/k norms over all heads together (OLMo 2)");
    }
    if (a.positions() != Architecture.Positions.ROTARY) {
      return Optional.empty();
    }
    if (n.ropeTheta() != Math.rint(n.ropeTheta())) {
      return Optional.of("Megatron-LM's --rotary-base takes an integer (arguments.py:2418); "
          + who + "rope_theta " + RopeScaling.num(n.ropeTheta()));
    }
    return scalingMissing(m, n.ropeScaling());
  }

  /** The RoPE scalings Megatron-LM's {@code pretrain_gpt.py} cannot build. */
  private static Optional<String> scalingMissing(ModelSpec m, RopeScaling s) {
    boolean mla = m.arch().attn().mla().on();
    String has = m.name() + " scales RoPE as " + s.words();
    if (s instanceof RopeScaling.Llama3 l && !mla && !l.equals(MEGATRON_LLAMA3)) {
      return Optional.of("Megatron-LM builds Llama 3.1's RoPE scaling only with factor 8,"
          + " low_freq_factor 1, high_freq_factor 4 and original_max_position_embeddings 8192"
          + " (gpt_builders.py passes --use-rope-scaling, not --rope-scaling-factor;"
          + " rotary_pos_embedding.py:92-106); " + has);
    }
    if (s instanceof RopeScaling.Yarn y && mla && (y.originalMax() != 4096 || y.betaFast() != 32
        || y.betaSlow() != 1 || !y.truncate())) {
      return Optional.of("Megatron-LM's latent attention takes YaRN's original length, betas and"
          + " rounding from MLATransformerConfig's defaults (4096, 32, 1, rounded;"
          + " transformer_config.py:3318-3325), which no argument sets; " + has);
    }
    if (s instanceof RopeScaling.Linear || s instanceof RopeScaling.Other
        || s instanceof RopeScaling.Llama3 && mla) {
      return Optional.of("Megatron-LM's pretrain_gpt.py builds RoPE plain, with Llama 3.1's"
          + " scaling (--use-rope-scaling) or with YaRN; " + has);
    }
    return Optional.empty();
  }

  /** The llama3 scaling {@code RotaryEmbedding._apply_scaling} runs. */
  private static final RopeScaling.Llama3 MEGATRON_LLAMA3 = new RopeScaling.Llama3(8, 1, 4,
      8192);

  /**
   * Why the vocabulary cannot be split over the tensor ranks, if it cannot.
   *
   * @param input the input
   * @return the reason, or empty
   */
  static Optional<String> vocabMissing(ExportInput input) {
    int tp = input.config().tensorParallel();
    int v = input.model().vocab();
    if (v % tp == 0) {
      return Optional.empty();
    }
    return Optional.of("Megatron-LM splits the vocabulary over the tensor-parallel ranks"
        + " (VocabParallelEmbedding); the model's " + v + " rows do not divide by "
        + "tensor-parallel size " + tp + " (meshplan prices exactly those rows, unpadded)");
  }

  /**
   * The architecture arguments of a model. Megatron-LM's defaults are GeLU, LayerNorm, learned
   * absolute positions, biases and tied embeddings; each difference is a flag, and every number
   * of {@link Numerics} is stated.
   *
   * @param m the model
   * @return the arguments
   */
  static List<List<String>> arguments(ModelSpec m) {
    Architecture arch = m.arch();
    List<List<String>> a = new ArrayList<>();
    if (arch.mlp() == Architecture.Mlp.SWIGLU) {
      a.add(List.of(MegatronArg.SWIGLU.flag()));
    } else if (arch.mlp() == Architecture.Mlp.RELU2) {
      // arguments.py:2448; argument_utils.py:320-322 makes every MLP and expert squared ReLU.
      a.add(List.of(MegatronArg.SQUARED_RELU.flag()));
    }
    if (arch.norm() == Architecture.Norm.RMS) {
      a.add(List.of(MegatronArg.NORMALIZATION.flag(), "RMSNorm"));
    }
    a.add(List.of(MegatronArg.NORM_EPSILON.flag(), RopeScaling.num(arch.numerics().normEps())));
    positions(m, a);
    if (!arch.tiedEmbeddings()) {
      a.add(List.of(MegatronArg.UNTIE_EMBEDDINGS_AND_OUTPUT_WEIGHTS.flag()));
    }
    if (!arch.biases()) {
      a.add(List.of(MegatronArg.DISABLE_BIAS_LINEAR.flag()));
      if (arch.attn().qkvBias()) {
        a.add(List.of(MegatronArg.ADD_QKV_BIAS.flag()));
      }
    }
    if (m.kvHeads() < m.heads()) {
      a.add(List.of(MegatronArg.GROUP_QUERY_ATTENTION.flag()));
      a.add(List.of(MegatronArg.NUM_QUERY_GROUPS.flag(), Integer.toString(m.kvHeads())));
    }
    a.addAll(window(m));
    // TransformerConfig's attention_dropout and hidden_dropout default to 0.1.
    a.add(List.of(MegatronArg.ATTENTION_DROPOUT.flag(), RopeScaling.num(arch.numerics().attentionDropout())));
    a.add(List.of(MegatronArg.HIDDEN_DROPOUT.flag(), RopeScaling.num(arch.numerics().hiddenDropout())));
    a.add(List.of(MegatronArg.PADDED_VOCAB_SIZE.flag(), Integer.toString(m.vocab())));
    return a;
  }

  /** The position embedding, the rotary base and the non-latent RoPE scaling. */
  private static void positions(ModelSpec m, List<List<String>> a) {
    Architecture arch = m.arch();
    if (arch.positions() != Architecture.Positions.ROTARY) {
      // arguments.py:2397-2398: choices learned_absolute, rope, yarn, mrope, relative, none.
      a.add(List.of(MegatronArg.POSITION_EMBEDDING_TYPE.flag(),
          arch.positions() == Architecture.Positions.NONE ? "none" : "learned_absolute"));
      return;
    }
    Numerics n = arch.numerics();
    RopeScaling s = n.ropeScaling();
    boolean yarn = s instanceof RopeScaling.Yarn && !arch.attn().mla().on();
    a.add(List.of(MegatronArg.POSITION_EMBEDDING_TYPE.flag(), yarn ? "yarn" : "rope"));
    a.add(List.of(MegatronArg.ROTARY_BASE.flag(), Long.toString((long) n.ropeTheta())));
    if (n.rotaryFraction() < 1) {
      a.add(List.of(MegatronArg.ROTARY_PERCENT.flag(), RopeScaling.num(n.rotaryFraction())));
    }
    if (s instanceof RopeScaling.Llama3) {
      a.add(List.of(MegatronArg.USE_ROPE_SCALING.flag()));
    }
    if (yarn) {
      RopeScaling.Yarn y = (RopeScaling.Yarn) s;
      a.add(List.of(MegatronArg.ROTARY_SCALING_FACTOR.flag(), RopeScaling.num(y.factor())));
      a.add(List.of(MegatronArg.YARN_ORIGINAL_MAX_POSITION_EMBEDDINGS.flag(),
          Integer.toString(y.originalMax())));
      a.add(List.of(MegatronArg.YARN_BETA_FAST.flag(), RopeScaling.num(y.betaFast())));
      a.add(List.of(MegatronArg.YARN_BETA_SLOW.flag(), RopeScaling.num(y.betaSlow())));
      a.add(List.of(MegatronArg.MSCALE.flag(), RopeScaling.num(y.mscale())));
      a.add(List.of(MegatronArg.MSCALE_ALL_DIM.flag(), RopeScaling.num(y.mscaleAllDim())));
      if (!y.truncate()) {
        a.add(List.of(MegatronArg.NO_YARN_CORRECTION_RANGE_ROUND_TO_INT.flag()));
      }
    }
  }

  /** The sliding window and which layers have it; empty without a window. */
  static List<List<String>> window(ModelSpec m) {
    AttentionShape at = m.arch().attn();
    if (at.window() == 0) {
      return List.of();
    }
    List<List<String>> a = new ArrayList<>();
    a.add(List.of(MegatronArg.WINDOW_SIZE.flag(), (at.window() - 1) + ",0"));
    if (at.windowFrom() > 0) {
      a.add(List.of(MegatronArg.WINDOW_ATTN_SKIP_FREQ.flag(), pattern(at, m.layers())));
    } else if (at.globalEvery() > 0) {
      a.add(List.of(MegatronArg.WINDOW_ATTN_SKIP_FREQ.flag(), Integer.toString(at.globalEvery())));
    }
    return a;
  }

  /** Each layer's kind, 1 windowed and 0 global, as runs of a Python list expression. */
  private static String pattern(AttentionShape at, int layers) {
    StringBuilder sb = new StringBuilder();
    int start = 0;
    for (int i = 1; i <= layers; i++) {
      if (i == layers || at.windowed(i) != at.windowed(start)) {
        if (sb.length() > 0) {
          sb.append('+');
        }
        sb.append(at.windowed(start) ? "[1]*" : "[0]*").append(i - start);
        start = i;
      }
    }
    return sb.toString();
  }
}
