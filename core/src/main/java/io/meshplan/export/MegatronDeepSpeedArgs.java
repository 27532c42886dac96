package io.meshplan.export;

import io.meshplan.framework.MegatronArg;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Numerics;
import io.meshplan.model.Recompute;
import io.meshplan.model.RopeScaling;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.plan.ParallelConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The Megatron-DeepSpeed arguments (deepspeedai/Megatron-DeepSpeed, {@code megatron/arguments.py}
 * at commit 4efb479) that hand DeepSpeed its model-parallel unit, written beside the DeepSpeed JSON
 * by {@link DeepSpeedConfig}.
 *
 * <p>Why they are needed: DeepSpeed's {@code DeepSpeedConfig} takes its data-parallel size from
 * the {@code mpu} it is given ({@code deepspeed/runtime/config.py}:711-716, DeepSpeed commit
 * edaa722), else from the whole world ({@code config.py}:724), and then asserts {@code
 * train_batch_size == micro * gradient_accumulation_steps * data-parallel size} ({@code
 * config.py}:937). Megatron-DeepSpeed builds that unit from {@code --tensor-model-parallel-size}
 * and {@code --pipeline-model-parallel-size} ({@code arguments.py}:101-108: data-parallel size =
 * world / (pipeline * tensor * DeepSpeed sequence size)). With a pipeline the model is a {@code
 * PipelineModule} whose topology is the unit ({@code deepspeed/__init__.py}:242-244); without
 * one, {@code --no-pipeline-parallel} builds a plain model and Megatron-DeepSpeed passes its own
 * {@code mpu} ({@code megatron/training.py}:606-613), which DeepSpeed's ZeRO-2 and ZeRO-3 need,
 * since the pipeline engine refuses them.
 *
 * <p>The learning-rate arguments name shell variables ({@code LR}, {@code WARMUP_ITERS}, {@code
 * TRAIN_ITERS}) that the launch file sets; Megatron-DeepSpeed hands its own
 * optimizer and scheduler to {@code deepspeed.initialize} ({@code training.py}:606-610), so these
 * arguments, not the JSON's {@code optimizer} and {@code scheduler}, drive its training, and both
 * carry the same values.
 */
final class MegatronDeepSpeedArgs {
  private MegatronDeepSpeedArgs() {}

  /**
   * The arguments, each option with its values: parallelism, batch, model dimensions, precision,
   * ZeRO, optimizer and schedule. Words starting with {@code "$} are shell expansions, written
   * unquoted by the caller.
   *
   * @param input an input {@link DeepSpeedConfig} expresses
   * @param configFile the shell word naming the JSON file
   * @return the arguments
   */
  static List<List<String>> of(ExportInput input, String configFile) {
    ParallelConfig c = input.config();
    ModelSpec m = input.model();
    List<List<String>> a = new ArrayList<>();
    a.add(List.of(MegatronArg.TENSOR_MODEL_PARALLEL_SIZE.flag(), Integer.toString(c.tensorParallel())));
    a.add(List.of(MegatronArg.PIPELINE_MODEL_PARALLEL_SIZE.flag(), Integer.toString(c.pipelineParallel())));
    if (c.pipelineParallel() == 1) {
      a.add(List.of("--no-pipeline-parallel"));
    }
    if (c.contextParallel() > 1) {
      // DeepSpeed-Ulysses: the sequence split over this many GPUs, traded for heads by
      // all-to-alls around the attention (megatron/arguments.py:974 at 4efb479); the world is
      // tensor x pipeline x sequence x data (arguments.py:101-108).
      a.add(List.of("--ds-sequence-parallel-size", Integer.toString(c.contextParallel())));
    }
    a.add(List.of(MegatronArg.MICRO_BATCH_SIZE.flag(), Integer.toString(c.microBatchSize())));
    a.add(List.of(MegatronArg.GLOBAL_BATCH_SIZE.flag(), Integer.toString(c.globalBatchSize())));
    if (c.sequenceParallel()) {
      a.add(List.of(MegatronArg.SEQUENCE_PARALLEL.flag()));
    }
    if (c.recompute() != Recompute.NONE) {
      a.add(List.of(MegatronArg.RECOMPUTE_GRANULARITY.flag(), c.recompute().label()));
    }
    a.add(List.of(MegatronArg.NUM_LAYERS.flag(), Integer.toString(m.layers())));
    a.add(List.of(MegatronArg.HIDDEN_SIZE.flag(), Integer.toString(m.hidden())));
    a.add(List.of(MegatronArg.FFN_HIDDEN_SIZE.flag(), Integer.toString(m.ffn())));
    a.add(List.of(MegatronArg.NUM_ATTENTION_HEADS.flag(), Integer.toString(m.heads())));
    a.add(List.of("--num-key-value-heads", Integer.toString(m.kvHeads())));
    a.add(List.of(MegatronArg.SEQ_LENGTH.flag(), Integer.toString(m.seq())));
    a.addAll(architecture(m, c.tensorParallel()));
    if (input.attention() == Attention.FLASH) {
      a.add(List.of("--use-flash-attn-v2"));
    }
    if (!input.overlaps().gradAccumFusion()) {
      a.add(List.of(MegatronArg.NO_GRADIENT_ACCUMULATION_FUSION.flag()));
    }
    if (m.dtype() == DType.F16 || m.dtype() == DType.BF16) {
      a.add(List.of(m.dtype() == DType.F16 ? MegatronArg.FP16.flag() : MegatronArg.BF16.flag()));
    }
    a.add(List.of("--zero-stage", Integer.toString(c.zeroStage())));
    a.add(List.of("--optimizer", "adam", "--adam-beta1", number(TrainingGraphBuilder.BETA1),
        "--adam-beta2", number(TrainingGraphBuilder.BETA2), "--adam-eps",
        number(TrainingGraphBuilder.ADAM_EPS), "--weight-decay",
        number(TrainingGraphBuilder.WEIGHT_DECAY), "--clip-grad",
        number(DeepSpeedConfig.GRADIENT_CLIPPING)));
    a.add(List.of("--lr", "\"$LR\"", "--min-lr", "0.0", "--lr-decay-style", "linear",
        "--lr-warmup-iters", "\"$WARMUP_ITERS\"", "--train-iters", "\"$TRAIN_ITERS\""));
    a.add(List.of("--deepspeed", "--deepspeed_config", configFile));
    return a;
  }

  /**
   * The block's shape in Megatron-DeepSpeed's words ({@code megatron/arguments.py}): {@code
   * --swiglu} (670), {@code --normalization rmsnorm} (647, choices layernorm and rmsnorm) and its
   * {@code --layernorm-epsilon} (652, default 1e-5), rotary positions as {@code
   * --use-rotary-position-embeddings} with the learned table off ({@code --no-position-embedding},
   * 633 and 640), their base {@code --rotary-position-embeddings-theta} (635, an integer,
   * default 10,000) and {@code --rotary-percent} (638), else the learned table's rows as {@code
   * --max-position-embeddings} (630), {@code --untie-embeddings-and-output-weights} (680), {@code
   * --disable-bias-linear} (937), the dropout probabilities {@code --attention-dropout} and
   * {@code --hidden-dropout} (768 and 770, default 0.1), always stated, and the vocabulary: {@code
   * _vocab_size_with_padding} ({@code megatron/tokenizer/tokenizer.py:58-71}) pads the
   * tokenizer's size up to a multiple of {@code --make-vocab-size-divisible-by} x TP, so that
   * multiple is written as the priced vocabulary itself ({@code V / TP} x TP): any tokenizer of at
   * most V tokens pads to exactly V rows.
   */
  private static List<List<String>> architecture(ModelSpec m, int tp) {
    Architecture arch = m.arch();
    Numerics n = arch.numerics();
    List<List<String>> a = new ArrayList<>();
    boolean rotary = arch.positions() == Architecture.Positions.ROTARY;
    a.add(List.of(MegatronArg.MAX_POSITION_EMBEDDINGS.flag(),
        Integer.toString(rotary ? m.seq() : arch.positionRows())));
    if (rotary) {
      a.add(List.of("--use-rotary-position-embeddings", "--no-position-embedding"));
      a.add(List.of("--rotary-position-embeddings-theta", Long.toString((long) n.ropeTheta())));
      if (n.rotaryFraction() < 1) {
        a.add(List.of(MegatronArg.ROTARY_PERCENT.flag(), number(n.rotaryFraction())));
      }
    }
    if (arch.mlp() == Architecture.Mlp.SWIGLU) {
      a.add(List.of(MegatronArg.SWIGLU.flag()));
    }
    if (arch.norm() == Architecture.Norm.RMS) {
      a.add(List.of(MegatronArg.NORMALIZATION.flag(), "rmsnorm"));
    }
    a.add(List.of("--layernorm-epsilon", number(n.normEps())));
    if (!arch.tiedEmbeddings()) {
      a.add(List.of(MegatronArg.UNTIE_EMBEDDINGS_AND_OUTPUT_WEIGHTS.flag()));
    }
    if (!arch.biases()) {
      a.add(List.of(MegatronArg.DISABLE_BIAS_LINEAR.flag()));
    }
    a.add(List.of(MegatronArg.ATTENTION_DROPOUT.flag(), number(n.attentionDropout()),
        MegatronArg.HIDDEN_DROPOUT.flag(), number(n.hiddenDropout())));
    a.add(List.of("--make-vocab-size-divisible-by", Integer.toString(m.vocab() / tp)));
    return a;
  }

  /**
   * What Megatron-DeepSpeed's GPT model cannot build of a model's numbers and attention: a
   * sliding window (its {@code ParallelAttention} has none), a RoPE scaling (its {@code
   * RotaryEmbedding} takes only a base, {@code megatron/model/language_model.py:430-437}), a base
   * that is not an integer, a parallel residual, and multipliers.
   *
   * @param m the model
   * @return one sentence naming the missing feature, empty when every field is written
   */
  static Optional<String> missingModel(ModelSpec m) {
    Numerics n = m.arch().numerics();
    String who = m.name() + " has ";
    if (m.arch().attn().window() > 0) {
      return Optional.of("Megatron-DeepSpeed has no sliding-window attention; " + who + "a "
          + m.arch().attn().window() + "-token window");
    }
    if (n.parallelResidual()) {
      return Optional.of("Megatron-DeepSpeed's GPT blocks add attention and MLP to the residual"
          + " one after the other; " + who + "a parallel residual (use_parallel_residual)");
    }
    if (!n.multipliers().equals(Numerics.Multipliers.NONE)) {
      return Optional.of("Megatron-DeepSpeed has no fixed embedding, residual, attention and"
          + " logit multipliers; " + who + n.multipliers().words());
    }
    if (m.arch().positions() != Architecture.Positions.ROTARY) {
      return Optional.empty();
    }
    if (!(n.ropeScaling() instanceof RopeScaling.None)) {
      return Optional.of("Megatron-DeepSpeed's rotary embedding takes only a base"
          + " (megatron/model/language_model.py:430-437), no RoPE scaling; " + m.name()
          + " scales RoPE as " + n.ropeScaling().words());
    }
    if (n.ropeTheta() != Math.rint(n.ropeTheta())) {
      return Optional.of("Megatron-DeepSpeed's --rotary-position-embeddings-theta takes an"
          + " integer (megatron/arguments.py:635); " + who + "rope_theta "
          + RopeScaling.num(n.ropeTheta()));
    }
    return Optional.empty();
  }

  /**
   * What Megatron-DeepSpeed's tensor parallelism cannot split of a model: its {@code
   * ParallelAttention} divides the key/value heads by the tensor size ({@code
   * megatron/model/transformer.py:566-567}, {@code core.utils.divide} asserts), and its
   * vocabulary-parallel embedding the vocabulary.
   *
   * @param input the input
   * @return the reason, or empty
   */
  static Optional<String> missingSplit(ExportInput input) {
    int tp = input.config().tensorParallel();
    ModelSpec m = input.model();
    if (m.kvHeads() % tp != 0) {
      return Optional.of("Megatron-DeepSpeed divides the " + m.kvHeads() + " key/value heads by"
          + " tensor-parallel size " + tp + " (megatron/model/transformer.py:566-567); it does"
          + " not replicate them over more ranks than groups as Megatron-Core does");
    }
    if (m.vocab() % tp != 0) {
      return Optional.of("Megatron-DeepSpeed splits the vocabulary over the tensor-parallel"
          + " ranks; the model's " + m.vocab() + " rows do not divide by tensor-parallel size "
          + tp + " (meshplan prices exactly those rows, unpadded)");
    }
    return Optional.empty();
  }

  /** A number as Python's float() reads it: whole values as {@code 1.0}, others as {@code 1.0e-8}. */
  static String number(double x) {
    return x == Math.rint(x) && Math.abs(x) < 1e15
        ? String.format(Locale.ROOT, "%.1f", x) : Double.toString(x).replace("E", "e");
  }
}
