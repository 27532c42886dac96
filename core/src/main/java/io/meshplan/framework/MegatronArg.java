package io.meshplan.framework;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * Megatron-LM's training arguments that meshplan writes ({@code export --to megatron}) or reads
 * back from a run's log ({@code calibrate --train}), named once. Each constant is its command-line
 * flag with dashes for underscores ({@code TENSOR_MODEL_PARALLEL_SIZE} is {@code
 * --tensor-model-parallel-size}), and Megatron-LM prints it in the log's arguments block under
 * its {@code argparse} destination ({@link #dest}): the flag's name with underscores, except
 * where the argument says otherwise (NVIDIA/Megatron-LM@d98e8a6 {@code
 * megatron/core/transformer/transformer_config.py}: {@code --norm-epsilon} is {@code
 * layernorm_epsilon}, {@code --fp8-format} is {@code fp8}, {@code --fp4-format} is {@code fp4},
 * {@code --disable-bias-linear} clears
 * {@code add_bias_linear}; {@code megatron/training/arguments.py}: {@code --no-rope-fusion} clears
 * {@code apply_rope_fusion}, {@code --no-yarn-correction-range-round-to-int} clears {@code
 * yarn_correction_range_round_to_int}, {@code --no-gradient-accumulation-fusion} clears {@code
 * gradient_accumulation_fusion}). A few values are printed but not given: Megatron-LM derives
 * them ({@link Kind#COMPUTED}).
 */
public enum MegatronArg {
  ACCOUNT_FOR_EMBEDDING_IN_PIPELINE_SPLIT(Kind.SWITCH),
  ACCOUNT_FOR_LOSS_IN_PIPELINE_SPLIT(Kind.SWITCH),
  ACCUMULATE_ALLREDUCE_GRADS_IN_FP32(Kind.SWITCH),
  ADD_QKV_BIAS(Kind.SWITCH),
  ATTENTION_BACKEND(Kind.VALUE),
  ATTENTION_DROPOUT(Kind.VALUE),
  ATTENTION_OUTPUT_GATE(Kind.SWITCH),
  BF16(Kind.SWITCH),
  CKPT_FORMAT(Kind.VALUE),
  CONTEXT_PARALLEL_SIZE(Kind.VALUE),
  CP_COMM_TYPE(Kind.VALUE),
  DATALOADER_INTER_DOCUMENT_MASKING(Kind.SWITCH),
  DATA_PARALLEL_SHARDING_STRATEGY(Kind.VALUE),
  DATA_PARALLEL_SIZE(Kind.COMPUTED),
  DECODER_FIRST_PIPELINE_NUM_LAYERS(Kind.VALUE),
  DECODER_LAST_PIPELINE_NUM_LAYERS(Kind.VALUE),
  DISABLE_BIAS_LINEAR(Kind.NEGATED, "add_bias_linear"),
  EXPERT_MODEL_PARALLEL_SIZE(Kind.VALUE),
  EXPERT_TENSOR_PARALLEL_SIZE(Kind.VALUE),
  FFN_HIDDEN_SIZE(Kind.VALUE),
  HYBRID_LAYER_PATTERN(Kind.VALUE),
  FP16(Kind.SWITCH),
  FP8_AMAX_COMPUTE_ALGO(Kind.VALUE),
  FP8_AMAX_HISTORY_LEN(Kind.VALUE),
  FP4_FORMAT(Kind.VALUE, "fp4"),
  FP4_RECIPE(Kind.VALUE),
  FP8_FORMAT(Kind.VALUE, "fp8"),
  FP8_PARAM_GATHER(Kind.SWITCH),
  FP8_RECIPE(Kind.VALUE),
  GLOBAL_BATCH_SIZE(Kind.VALUE),
  GRAD_REDUCE_IN_BF16(Kind.SWITCH),
  GROUP_QUERY_ATTENTION(Kind.SWITCH),
  HIDDEN_DROPOUT(Kind.VALUE),
  HIDDEN_SIZE(Kind.VALUE),
  INIT_MODEL_WITH_META_DEVICE(Kind.SWITCH),
  KV_CHANNELS(Kind.VALUE),
  KV_LORA_RANK(Kind.VALUE),
  LINEAR_CONV_KERNEL_DIM(Kind.VALUE),
  LINEAR_KEY_HEAD_DIM(Kind.VALUE),
  LINEAR_NUM_KEY_HEADS(Kind.VALUE),
  LINEAR_NUM_VALUE_HEADS(Kind.VALUE),
  LINEAR_VALUE_HEAD_DIM(Kind.VALUE),
  MAMBA_HEAD_DIM(Kind.VALUE),
  MAMBA_NUM_GROUPS(Kind.VALUE),
  MAMBA_NUM_HEADS(Kind.VALUE),
  MAMBA_STATE_DIM(Kind.VALUE),
  MAX_POSITION_EMBEDDINGS(Kind.VALUE),
  MICRO_BATCH_SIZE(Kind.VALUE),
  MOE_AUX_LOSS_COEFF(Kind.VALUE),
  MOE_EXPERT_CAPACITY_FACTOR(Kind.VALUE),
  MOE_FFN_HIDDEN_SIZE(Kind.VALUE),
  MOE_FLEX_DISPATCHER_BACKEND(Kind.VALUE),
  MOE_GROUPED_GEMM(Kind.SWITCH),
  MOE_LAYER_FREQ(Kind.VALUE),
  MOE_ROUTER_GROUP_TOPK(Kind.VALUE),
  MOE_ROUTER_LOAD_BALANCING_TYPE(Kind.VALUE),
  MOE_ROUTER_NUM_GROUPS(Kind.VALUE),
  MOE_ROUTER_PRE_SOFTMAX(Kind.SWITCH),
  MOE_LATENT_SIZE(Kind.VALUE),
  MOE_ROUTER_TOPK(Kind.VALUE),
  MOE_SHARED_EXPERT_INTERMEDIATE_SIZE(Kind.VALUE),
  MOE_SHARED_EXPERT_GATE(Kind.SWITCH),
  MOE_TOKEN_DISPATCHER_TYPE(Kind.VALUE),
  MSCALE(Kind.VALUE),
  MSCALE_ALL_DIM(Kind.VALUE),
  MTP_LOSS_SCALING_FACTOR(Kind.VALUE),
  MTP_NUM_LAYERS(Kind.VALUE),
  MTP_USE_REPEATED_LAYER(Kind.SWITCH),
  MULTI_LATENT_ATTENTION(Kind.SWITCH),
  NORMALIZATION(Kind.VALUE),
  NORM_EPSILON(Kind.VALUE, "layernorm_epsilon"),
  NO_GRADIENT_ACCUMULATION_FUSION(Kind.NEGATED, "gradient_accumulation_fusion"),
  NO_ROPE_FUSION(Kind.NEGATED, "apply_rope_fusion"),
  NO_YARN_CORRECTION_RANGE_ROUND_TO_INT(Kind.NEGATED, "yarn_correction_range_round_to_int"),
  NUM_ATTENTION_HEADS(Kind.VALUE),
  NUM_DISTRIBUTED_OPTIMIZER_INSTANCES(Kind.VALUE),
  NUM_EXPERTS(Kind.VALUE),
  NUM_LAYERS(Kind.VALUE),
  NUM_LAYERS_PER_VIRTUAL_PIPELINE_STAGE(Kind.VALUE),
  NUM_QUERY_GROUPS(Kind.VALUE),
  NUM_VIRTUAL_STAGES_PER_PIPELINE_RANK(Kind.VALUE),
  OVERLAP_GRAD_REDUCE(Kind.SWITCH),
  OVERLAP_MOE_EXPERT_PARALLEL_COMM(Kind.SWITCH),
  OVERLAP_PARAM_GATHER(Kind.SWITCH),
  PADDED_VOCAB_SIZE(Kind.VALUE),
  PIPELINE_MODEL_PARALLEL_LAYOUT(Kind.VALUE),
  PIPELINE_MODEL_PARALLEL_SIZE(Kind.VALUE),
  POSITION_EMBEDDING_TYPE(Kind.VALUE),
  QK_HEAD_DIM(Kind.VALUE),
  QK_LAYERNORM(Kind.SWITCH),
  QK_POS_EMB_HEAD_DIM(Kind.VALUE),
  Q_LORA_RANK(Kind.VALUE),
  RECOMPUTE_GRANULARITY(Kind.VALUE),
  RECOMPUTE_METHOD(Kind.VALUE),
  RECOMPUTE_MODULES(Kind.VALUE),
  RECOMPUTE_NUM_LAYERS(Kind.VALUE),
  RESET_POSITION_IDS(Kind.SWITCH),
  ROPE_TYPE(Kind.VALUE),
  ROTARY_BASE(Kind.VALUE),
  ROTARY_PERCENT(Kind.VALUE),
  ROTARY_SCALING_FACTOR(Kind.VALUE),
  SEQUENCE_PARALLEL(Kind.SWITCH),
  SEQ_LENGTH(Kind.VALUE),
  SPEC(Kind.VALUE),
  SQUARED_RELU(Kind.SWITCH),
  SWIGLU(Kind.SWITCH),
  TENSOR_MODEL_PARALLEL_SIZE(Kind.VALUE),
  TP_COMM_OVERLAP(Kind.SWITCH),
  TRANSFORMER_IMPL(Kind.VALUE),
  UNTIE_EMBEDDINGS_AND_OUTPUT_WEIGHTS(Kind.SWITCH),
  USE_DISTRIBUTED_OPTIMIZER(Kind.SWITCH),
  USE_FLASH_ATTN(Kind.SWITCH),
  USE_MEGATRON_FSDP(Kind.SWITCH),
  USE_ROPE_SCALING(Kind.SWITCH),
  VIRTUAL_PIPELINE_MODEL_PARALLEL_SIZE(Kind.COMPUTED),
  VOCAB_SIZE(Kind.VALUE),
  V_HEAD_DIM(Kind.VALUE),
  WINDOW_ATTN_SKIP_FREQ(Kind.VALUE),
  WINDOW_SIZE(Kind.VALUE),
  WORLD_SIZE(Kind.COMPUTED),
  YARN_BETA_FAST(Kind.VALUE),
  YARN_BETA_SLOW(Kind.VALUE),
  YARN_ORIGINAL_MAX_POSITION_EMBEDDINGS(Kind.VALUE);

  /** How an argument is given and printed. */
  public enum Kind {
    /** A flag followed by its value, printed as that value. */
    VALUE,
    /** A flag alone ({@code store_true}), printed True when given. */
    SWITCH,
    /** A flag alone ({@code store_false}) that clears its destination, printed False. */
    NEGATED,
    /** No flag: Megatron-LM derives the value and prints it. */
    COMPUTED
  }

  private final Kind kind;
  private final String dest;

  MegatronArg(Kind kind) {
    this.kind = kind;
    this.dest = name().toLowerCase(Locale.ROOT);
  }

  MegatronArg(Kind kind, String dest) {
    this.kind = kind;
    this.dest = dest;
  }

  /**
   * How the argument is given.
   *
   * @return its kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * The command-line flag.
   *
   * @return for example {@code --tensor-model-parallel-size}
   * @throws IllegalStateException for a {@link Kind#COMPUTED} value, which has none
   */
  public String flag() {
    if (kind == Kind.COMPUTED) {
      throw new IllegalStateException(dest + " is derived by Megatron-LM, not given");
    }
    return "--" + name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * The name Megatron-LM prints the argument under in its log's arguments block.
   *
   * @return for example {@code tensor_model_parallel_size}
   */
  public String dest() {
    return dest;
  }

  /**
   * The argument a flag names.
   *
   * @param flag a flag, for example {@code --bf16}
   * @return the argument, empty when meshplan neither writes nor reads it
   */
  public static Optional<MegatronArg> ofFlag(String flag) {
    return Arrays.stream(values()).filter(a -> a.kind != Kind.COMPUTED && a.flag().equals(flag))
        .findFirst();
  }
}
