package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.util.Require;

/**
 * What {@link TrainingGraphBuilder} builds.
 *
 * @param recompute activation recomputation of the transformer blocks
 * @param computeDtype element type of weights and activations in the step: bf16 (default), fp16
 *     or fp32, or {@link Fp8Training#RECIPE} for bf16 with FP8 linear-layer GEMMs; gradients
 *     are accumulated and Adam runs in fp32
 * @param firstBlock index of the first block built
 * @param blockCount number of consecutive blocks built (0 for an embedding or head alone)
 * @param embedding whether the token (and position) embedding is built; without it the first
 *     block's input is an {@link ParamRole#INPUT_ACTIVATION} parameter
 * @param head whether the final norm, LM head and cross-entropy loss are built; without them the
 *     last block's output gradient is an {@link ParamRole#OUTPUT_GRADIENT} parameter
 * @param backward whether the backward pass is built (false: a forward graph)
 * @param optimizer whether the Adam update is built (needs the backward pass); without it the
 *     gradient is only added to its fp32 accumulator
 * @param dropout whether dropout follows the embedding, the softmax, the attention projection and
 *     the MLP (Megatron GPT; LLaMA trains without)
 * @param microbatch sequences per micro-batch, b
 * @param seq tokens per sequence, s
 * @param attention how the attention core runs: unfused (scores in memory) or as one fused
 *     kernel (FlashAttention)
 * @param experts how a mixture-of-experts layer's experts are spread over the GPUs (ignored by
 *     dense models)
 * @param contextParallel CP, the GPUs one sequence is split over (Megatron-Core's context
 *     parallelism): {@code seq} is then one GPU's share, {@code s / CP} tokens, and each
 *     attention core reads the keys and values of the whole sequence, which the CP ring brings
 * @param recomputeModules the submodules selective recomputation recomputes ({@link
 *     RecomputeModule#DEFAULT}: the attention core); ignored by the other modes
 * @param fusedLoss whether the softmax cross-entropy is one fused kernel that reads the logits in
 *     the compute type and keeps its fp32 arithmetic in registers (Transformer Engine's parallel
 *     cross-entropy, Megatron-Core's {@code cross_entropy_fusion_impl='te'}; FlashAttention's
 *     Triton kernel); otherwise the logits are converted to fp32 and the loss runs on fp32
 *     tensors, as Megatron's {@code vocab_parallel_cross_entropy} ({@code .float()}, and its
 *     {@code 'native'} fusion of the same tensors) and PyTorch's {@code cross_entropy} on upcast
 *     logits (torchtitan) run it
 * @param kvReplicas how many tensor-parallel GPUs hold each key/value head: 1, or tensor size /
 *     key/value heads when the tensor size exceeds the groups (Megatron-Core since 0.16, {@link
 *     DecoderForward}); the attention core then sees {@code kvHeads x kvReplicas} key/value heads
 */
public record TrainingOptions(
    Recompute recompute, DType computeDtype, int firstBlock, int blockCount, boolean embedding,
    boolean head, boolean backward, boolean optimizer, boolean dropout, int microbatch, int seq,
    Attention attention, ExpertLayout experts, int contextParallel,
    java.util.Set<RecomputeModule> recomputeModules, boolean fusedLoss, int kvReplicas) {

  /**
   * The part name of the repeated keys and values {@code [b, s, g r, d]} of {@link #kvReplicas},
   * which Megatron-LM's layouts split by heads over the tensor ranks: each rank holds its group's
   * one head.
   */
  public static final String KV_REPLICAS = "kv_replicas";

  /** Validates the fields. */
  public TrainingOptions {
    Require.nonNull(recompute, "recompute");
    Require.that(Fp8Training.trains(computeDtype),
        () -> "compute type must be bf16, f16, f32 or the fp8 recipe, got " + computeDtype);
    Require.that(firstBlock >= 0, () -> "first block must be >= 0, got " + firstBlock);
    Require.that(blockCount >= 0, () -> "block count must be >= 0, got " + blockCount);
    Require.that(blockCount > 0 || embedding || head,
        "nothing to build: no block, embedding or head");
    Require.that(!optimizer || backward, "the optimizer update needs the backward pass");
    Require.positive(microbatch, "micro-batch");
    Require.positive(seq, "sequence length");
    Require.nonNull(attention, "attention");
    Require.nonNull(experts, "experts");
    Require.positive(contextParallel, "context-parallel size");
    Require.that(contextParallel == 1 || attention == Attention.FLASH, () -> "context parallelism "
        + "runs fused attention");
    recomputeModules = java.util.Set.copyOf(recomputeModules);
    Require.that(!recomputeModules.isEmpty(), "recompute modules must not be empty");
    Require.positive(kvReplicas, "key/value replicas");
  }

  /**
   * Options with the default recomputed modules (the attention core).
   *
   * @param recompute activation recomputation
   * @param computeDtype element type of weights and activations
   * @param firstBlock index of the first block built
   * @param blockCount number of consecutive blocks built
   * @param embedding whether the embedding is built
   * @param head whether the head is built
   * @param backward whether the backward pass is built
   * @param optimizer whether the Adam update is built
   * @param dropout whether dropout is built
   * @param microbatch sequences per micro-batch
   * @param seq tokens per sequence
   * @param attention how the attention core runs
   * @param experts how the experts are spread
   * @param contextParallel CP
   */
  public TrainingOptions(Recompute recompute, DType computeDtype, int firstBlock, int blockCount,
      boolean embedding, boolean head, boolean backward, boolean optimizer, boolean dropout,
      int microbatch, int seq, Attention attention, ExpertLayout experts, int contextParallel) {
    this(recompute, computeDtype, firstBlock, blockCount, embedding, head, backward, optimizer,
        dropout, microbatch, seq, attention, experts, contextParallel, RecomputeModule.DEFAULT,
        false, 1);
  }

  /**
   * Whether selective recomputation recomputes a module.
   *
   * @param m the module
   * @return true under {@link Recompute#SELECTIVE} with {@code m} among the modules
   */
  public boolean recomputes(RecomputeModule m) {
    return RecomputeModule.recomputes(recompute, recomputeModules, m);
  }

  /**
   * These options with other recomputed modules.
   *
   * @param modules the modules
   * @return the options
   */
  public TrainingOptions withRecomputeModules(java.util.Set<RecomputeModule> modules) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, microbatch, seq, attention, experts, contextParallel,
        modules, fusedLoss, kvReplicas);
  }

  /**
   * With the softmax cross-entropy run as one fused kernel or as the framework's unfused fp32
   * kernels.
   *
   * @param on whether the loss is fused
   * @return the options
   */
  public TrainingOptions withFusedLoss(boolean on) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, on, kvReplicas);
  }

  /**
   * The whole model's step: every block, embedding, head, backward and Adam, no recomputation,
   * bf16, dropout where the model trains with it ({@link Numerics#dropout}), the spec's batch and
   * sequence.
   *
   * @param spec the model
   * @return the options
   */
  public static TrainingOptions of(ModelSpec spec) {
    return new TrainingOptions(Recompute.NONE, DType.BF16, 0, spec.layers(), true, true, true,
        true, spec.arch().numerics().dropout(), spec.batch(), spec.seq(),
        Attention.UNFUSED, ExpertLayout.NONE, 1);
  }

  /**
   * One block alone (block 0): input activation and output gradient are parameters; backward
   * and Adam included.
   *
   * @param spec the model
   * @param microbatch sequences per micro-batch
   * @param seq tokens per sequence
   * @return the options
   */
  public static TrainingOptions oneBlock(ModelSpec spec, int microbatch, int seq) {
    return of(spec).withBlocks(0, 1).withEmbedding(false).withHead(false)
        .withWorkload(microbatch, seq);
  }

  /**
   * The type weights and activations are stored in: bf16 under the FP8 recipe.
   *
   * @return the storage type
   */
  public DType storageDtype() {
    return Fp8Training.storage(computeDtype);
  }

  /**
   * Whether the linear layers' GEMMs run in FP8 ({@link Fp8Training}).
   *
   * @return true under the FP8 recipe
   */
  public boolean fp8() {
    return Fp8Training.on(computeDtype);
  }

  /**
   * With another recomputation mode.
   *
   * @param r the mode
   * @return the options
   */
  public TrainingOptions withRecompute(Recompute r) {
    return new TrainingOptions(r, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With another compute type.
   *
   * @param t bf16, f16, f32 or the fp8 recipe
   * @return the options
   */
  public TrainingOptions withComputeDtype(DType t) {
    return new TrainingOptions(recompute, t, firstBlock, blockCount, embedding, head, backward,
        optimizer, dropout, microbatch, seq, attention, experts, contextParallel, recomputeModules,
        fusedLoss, kvReplicas);
  }

  /**
   * With another block range.
   *
   * @param first the first block
   * @param count how many
   * @return the options
   */
  public TrainingOptions withBlocks(int first, int count) {
    return new TrainingOptions(recompute, computeDtype, first, count, embedding, head, backward,
        optimizer, dropout, microbatch, seq, attention, experts, contextParallel, recomputeModules,
        fusedLoss, kvReplicas);
  }

  /**
   * With or without the embedding.
   *
   * @param on whether to build it
   * @return the options
   */
  public TrainingOptions withEmbedding(boolean on) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, on, head,
        backward, optimizer, dropout, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With or without head and loss.
   *
   * @param on whether to build them
   * @return the options
   */
  public TrainingOptions withHead(boolean on) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, on,
        backward, optimizer, dropout, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With or without the backward pass (without it, also without the optimizer).
   *
   * @param on whether to build it
   * @return the options
   */
  public TrainingOptions withBackward(boolean on) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        on, optimizer && on, dropout, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With or without the Adam update.
   *
   * @param on whether to build it
   * @return the options
   */
  public TrainingOptions withOptimizer(boolean on) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, on, dropout, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With or without dropout.
   *
   * @param on whether to build it
   * @return the options
   */
  public TrainingOptions withDropout(boolean on) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, on, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With another micro-batch and sequence length.
   *
   * @param b sequences per micro-batch
   * @param s tokens per sequence
   * @return the options
   */
  public TrainingOptions withWorkload(int b, int s) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, b, s, attention, experts, contextParallel, recomputeModules,
        fusedLoss, kvReplicas);
  }

  /**
   * These options with the sequence split over {@code cp} GPUs ({@code seq} is one GPU's share).
   *
   * @param cp the context-parallel size
   * @return the options
   */
  public TrainingOptions withContextParallel(int cp) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, microbatch, seq, attention, experts, cp, recomputeModules,
        fusedLoss, kvReplicas);
  }

  /**
   * These options with the experts of a mixture-of-experts layer spread another way.
   *
   * @param e the layout
   * @return the options
   */
  public TrainingOptions withExperts(ExpertLayout e) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, microbatch, seq, attention, e, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With the attention core run another way.
   *
   * @param a unfused or fused
   * @return the options
   */
  public TrainingOptions withAttention(Attention a) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, microbatch, seq, a, experts, contextParallel,
        recomputeModules, fusedLoss, kvReplicas);
  }

  /**
   * With the key/value heads replicated over more tensor-parallel GPUs than there are groups, as
   * Megatron-Core runs them ({@link DecoderForward}): each group's keys and values are repeated
   * {@code r} times before the attention core, so that the core splits by query heads over the
   * tensor ranks.
   *
   * @param r the replicas of each key/value head, tensor-parallel size / key/value heads; 1 for
   *     none
   * @return the options
   */
  public TrainingOptions withKvReplicas(int r) {
    return new TrainingOptions(recompute, computeDtype, firstBlock, blockCount, embedding, head,
        backward, optimizer, dropout, microbatch, seq, attention, experts, contextParallel,
        recomputeModules, fusedLoss, r);
  }
}
