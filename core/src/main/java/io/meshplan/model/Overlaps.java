package io.meshplan.model;

import io.meshplan.util.InputException;
import java.io.Serializable;

/**
 * Which communication a training framework runs under compute, and whether it fuses the
 * gradient accumulation into the weight-gradient matrix multiplications. Each switch mirrors a
 * framework's own flag, with its default:
 * <ul>
 *   <li>{@code gradReduce}: the data-parallel gradient reduction in buckets under the last
 *       microbatch's backward pass; Megatron-LM's {@code --overlap-grad-reduce} (off by default),
 *       PyTorch DDP's buckets;
 *   <li>{@code paramGather}: with the distributed optimizer (ZeRO-1), the all-gather of updated
 *       weights under the next iteration's first forward pass; Megatron-LM's {@code
 *       --overlap-param-gather} (off by default), which it refuses without {@code
 *       --overlap-grad-reduce} and the distributed optimizer ({@code
 *       megatron/training/arguments.py}, {@code validate_args});
 *   <li>{@code tensorComm}: the tensor-parallel all-gathers and reduce-scatters of sequence
 *       parallelism pipelined with the matrix multiplications beside them (Transformer Engine's
 *       userbuffers); Megatron-LM's {@code --tp-comm-overlap} (off by default), which it refuses
 *       without {@code --sequence-parallel};
 *   <li>{@code fsdpPrefetch}: under ZeRO-2 and ZeRO-3, the next layer's weight all-gather issued
 *       while the current layer computes, and each layer's gradient reduce-scatter under the
 *       backward of the layers before it; on by default in PyTorch FSDP (forward and {@code
 *       BACKWARD_PRE} prefetch) and DeepSpeed ({@code overlap_comm});
 *   <li>{@code gradAccumFusion}: the weight-gradient GEMM adds into the fp32 gradient
 *       accumulator in its epilogue instead of a separate cast-and-add pass per microbatch;
 *       Megatron-LM's default ({@code --no-gradient-accumulation-fusion} turns it off). FSDP and
 *       DeepSpeed do not fuse it (Megatron refuses the fusion with {@code --use-torch-fsdp2}), so
 *       it applies to ZeRO stages 0 and 1 only;
 *   <li>{@code moeComm}: the expert-parallel all-to-alls of a mixture-of-experts block run under
 *       the compute of another microbatch's pass (Megatron-Core's {@code
 *       --overlap-moe-expert-parallel-comm}, the "1F1B A2A overlap" that interleaves one
 *       microbatch's forward with another's backward; off by default), which Megatron-Core
 *       refuses with full recomputation, without expert parallelism, and with pipeline
 *       parallelism but no virtual stages ({@code transformer_config.py}, {@code __post_init__});
 *   <li>{@code lossFusion}: the softmax cross-entropy as one fused kernel that reads the logits
 *       in the compute type (Transformer Engine's parallel cross-entropy, which Megatron-Bridge's
 *       recipes select with {@code cross_entropy_fusion_impl='te'}; llm-foundry's default {@code
 *       fused_crossentropy}, FlashAttention's Triton kernel; torchtitan's loss compiled alone,
 *       {@code compile.components = ["loss"]}); off, the logits are converted to fp32 and the
 *       loss runs on fp32 tensors, as Megatron-LM (whose {@code validate_args} refuses the TE
 *       kernel), torchtitan in eager mode ({@code pred.float()}) and Megatron-DeepSpeed run it
 *       ({@link TrainingOptions#fusedLoss});
 *   <li>{@code bf16GradReduce}: under bf16 training, the gradients are reduced over the
 *       data-parallel group in bf16 instead of fp32, which halves the bytes of every gradient
 *       reduction; Megatron-LM's {@code --grad-reduce-in-bf16} (off by default: its {@code
 *       validate_args} sets {@code accumulate_allreduce_grads_in_fp32} for bf16), which
 *       Megatron-Bridge's performance recipes turn on ({@code perf_recipes/_common.py}: {@code
 *       ddp.grad_reduce_in_fp32 = False}). Under ZeRO stages 0 and 1 the gradient buffer it
 *       reduces from is bf16 too, 2 bytes per parameter instead of 4; under ZeRO-2 and 3 the
 *       kept gradient shard stays fp32 (FSDP casts the reduced shard back to the fp32
 *       parameter's type) and only the reduction shrinks. torchtitan reduces in float32 only
 *       ({@code training.mixed_precision_reduce} takes {@code "float32"}).
 * </ul>
 *
 * @param gradReduce the gradient reduction under the backward pass
 * @param paramGather the distributed optimizer's weight gather under the next forward pass
 * @param tensorComm tensor-parallel communication under the GEMMs (needs sequence parallelism)
 * @param fsdpPrefetch ZeRO-2/3 gathers and reduce-scatters under compute
 * @param gradAccumFusion gradient accumulation fused into the weight-gradient GEMMs
 * @param moeComm the expert-parallel all-to-alls under another microbatch's compute
 * @param lossFusion the cross-entropy loss as one fused kernel
 * @param bf16GradReduce the gradient reduction (and Megatron-LM's gradient buffer) in bf16
 * @param dispatcher the kernels that exchange a mixture-of-experts block's tokens ({@link
 *     ExpertDispatcher}; Megatron-Core's {@code --moe-token-dispatcher-type} and {@code
 *     --moe-flex-dispatcher-backend})
 * @param hsdpStepReduce under hybrid sharding, the shard groups' gradients all-reduced across
 *     the replicas once per step, on the last microbatch (Megatron-FSDP: {@code
 *     megatron_fsdp.py}, {@code outer_fsdp_group_grad_reduce} only when {@code
 *     is_last_microbatch}), rather than on every microbatch (FSDP2, as torchtitan runs it)
 */
public record Overlaps(boolean gradReduce, boolean paramGather, boolean tensorComm,
    boolean fsdpPrefetch, boolean gradAccumFusion, boolean moeComm, boolean lossFusion,
    boolean bf16GradReduce, ExpertDispatcher dispatcher, boolean hsdpStepReduce)
    implements Serializable {
  private static final long serialVersionUID = 6L;

  /**
   * The switches with the replicas of hybrid sharding reduced every microbatch.
   *
   * @param gradReduce the gradient reduction under the backward pass
   * @param paramGather the distributed optimizer's weight gather under the next forward pass
   * @param tensorComm tensor-parallel communication under the GEMMs
   * @param fsdpPrefetch ZeRO-2/3 gathers and reduce-scatters under compute
   * @param gradAccumFusion gradient accumulation fused into the weight-gradient GEMMs
   * @param moeComm the expert-parallel all-to-alls under another microbatch's compute
   * @param lossFusion the cross-entropy loss as one fused kernel
   * @param bf16GradReduce the gradient reduction in bf16
   * @param dispatcher the token dispatcher
   */
  public Overlaps(boolean gradReduce, boolean paramGather, boolean tensorComm,
      boolean fsdpPrefetch, boolean gradAccumFusion, boolean moeComm, boolean lossFusion,
      boolean bf16GradReduce, ExpertDispatcher dispatcher) {
    this(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion, moeComm, lossFusion,
        bf16GradReduce, dispatcher, false);
  }

  /**
   * The same switches with hybrid sharding's replicas reduced once per step or every
   * microbatch.
   *
   * @param on whether once per step
   * @return the switches
   */
  public Overlaps withHsdpStepReduce(boolean on) {
    return new Overlaps(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion,
        moeComm, lossFusion, bf16GradReduce, dispatcher, on);
  }

  /**
   * The switches with Megatron-Core's all-to-all token dispatcher.
   *
   * @param gradReduce the gradient reduction under the backward pass
   * @param paramGather the distributed optimizer's weight gather under the next forward pass
   * @param tensorComm tensor-parallel communication under the GEMMs
   * @param fsdpPrefetch ZeRO-2/3 gathers and reduce-scatters under compute
   * @param gradAccumFusion gradient accumulation fused into the weight-gradient GEMMs
   * @param moeComm the expert-parallel all-to-alls under another microbatch's compute
   * @param lossFusion the cross-entropy loss as one fused kernel
   * @param bf16GradReduce the gradient reduction in bf16
   */
  public Overlaps(boolean gradReduce, boolean paramGather, boolean tensorComm,
      boolean fsdpPrefetch, boolean gradAccumFusion, boolean moeComm, boolean lossFusion,
      boolean bf16GradReduce) {
    this(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion, moeComm, lossFusion,
        bf16GradReduce, ExpertDispatcher.ALLTOALL);
  }

  /** The frameworks' defaults: FSDP prefetch and gradient-accumulation fusion on, the rest off. */
  public static final Overlaps DEFAULTS = new Overlaps(false, false, false, true, true);

  /** Nothing overlapped and nothing fused: every collective after the compute it follows. */
  public static final Overlaps NONE = new Overlaps(false, false, false, false, false);

  /**
   * The switches without the expert-parallel overlap.
   *
   * @param gradReduce the gradient reduction under the backward pass
   * @param paramGather the distributed optimizer's weight gather under the next forward pass
   * @param tensorComm tensor-parallel communication under the GEMMs
   * @param fsdpPrefetch ZeRO-2/3 gathers and reduce-scatters under compute
   * @param gradAccumFusion gradient accumulation fused into the weight-gradient GEMMs
   */
  public Overlaps(boolean gradReduce, boolean paramGather, boolean tensorComm,
      boolean fsdpPrefetch, boolean gradAccumFusion) {
    this(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion, false);
  }

  /**
   * The switches with the loss unfused and the gradients reduced in fp32.
   *
   * @param gradReduce the gradient reduction under the backward pass
   * @param paramGather the distributed optimizer's weight gather under the next forward pass
   * @param tensorComm tensor-parallel communication under the GEMMs
   * @param fsdpPrefetch ZeRO-2/3 gathers and reduce-scatters under compute
   * @param gradAccumFusion gradient accumulation fused into the weight-gradient GEMMs
   * @param moeComm the expert-parallel all-to-alls under another microbatch's compute
   */
  public Overlaps(boolean gradReduce, boolean paramGather, boolean tensorComm,
      boolean fsdpPrefetch, boolean gradAccumFusion, boolean moeComm) {
    this(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion, moeComm, false,
        false);
  }

  /**
   * Whether a training precision can reduce its gradients in bf16 ({@code bf16GradReduce}): bf16,
   * or the FP8 recipe, whose weights and gradients are bf16.
   *
   * @param dtype the training precision
   * @return true if it can
   */
  public static boolean bf16GradReduceRuns(io.meshplan.graph.DType dtype) {
    return Fp8Training.storage(dtype) == io.meshplan.graph.DType.BF16;
  }

  /**
   * Checks Megatron-LM's rule that the parameter gather overlaps only with the gradient reduction
   * overlapped too.
   */
  public Overlaps {
    java.util.Objects.requireNonNull(dispatcher, "dispatcher");
    if (paramGather && !gradReduce) {
      throw new InputException("--overlap-param-gather needs --overlap-grad-reduce, as in "
          + "Megatron-LM");
    }
  }

  /**
   * The same switches with the gradient reduction overlapped or not.
   *
   * @param on whether it overlaps
   * @return the switches
   */
  public Overlaps withGradReduce(boolean on) {
    return new Overlaps(on, paramGather && on, tensorComm, fsdpPrefetch, gradAccumFusion,
        moeComm, lossFusion, bf16GradReduce, dispatcher, hsdpStepReduce);
  }

  /**
   * The same switches with the cross-entropy loss fused or not.
   *
   * @param on whether the loss is one fused kernel
   * @return the switches
   */
  public Overlaps withLossFusion(boolean on) {
    return new Overlaps(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion,
        moeComm, on, bf16GradReduce, dispatcher, hsdpStepReduce);
  }

  /**
   * The same switches with the expert-parallel all-to-alls under other compute or not.
   *
   * @param on whether they overlap
   * @return the switches
   */
  public Overlaps withMoeComm(boolean on) {
    return new Overlaps(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion, on,
        lossFusion, bf16GradReduce, dispatcher, hsdpStepReduce);
  }

  /**
   * The same switches with the ZeRO-2/3 gathers and reduce-scatters under compute or not.
   *
   * @param on whether they overlap
   * @return the switches
   */
  public Overlaps withFsdpPrefetch(boolean on) {
    return new Overlaps(gradReduce, paramGather, tensorComm, on, gradAccumFusion, moeComm,
        lossFusion, bf16GradReduce, dispatcher, hsdpStepReduce);
  }

  /**
   * The same switches with the gradients reduced in bf16 or in fp32.
   *
   * @param on whether the reduction is in bf16
   * @return the switches
   */
  public Overlaps withBf16GradReduce(boolean on) {
    return new Overlaps(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion,
        moeComm, lossFusion, on, dispatcher, hsdpStepReduce);
  }

  /**
   * The switches with another token dispatcher.
   *
   * @param d the dispatcher
   * @return the switches
   */
  public Overlaps withDispatcher(ExpertDispatcher d) {
    return new Overlaps(gradReduce, paramGather, tensorComm, fsdpPrefetch, gradAccumFusion,
        moeComm, lossFusion, bf16GradReduce, d, hsdpStepReduce);
  }
}
