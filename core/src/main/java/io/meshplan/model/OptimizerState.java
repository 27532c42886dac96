package io.meshplan.model;

import io.meshplan.graph.DType;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * The precision of what Adam keeps between steps: its weights, its two moments and the gradients
 * it reads.
 *
 * <ul>
 *   <li>{@link #FP32}: mixed-precision training (Micikevicius et al., ICLR 2018): an fp32 master
 *       copy of every trained weight beside the compute copy, fp32 moments and an fp32 gradient
 *       accumulator (Megatron-LM's default, torchtitan's FSDP2 over fp32 parameters, DeepSpeed's
 *       bf16 optimizer). Per trained parameter: 4 bytes of master, 8 of moments (the master is
 *       the weight itself in fp32 training), 4 of gradient.
 *   <li>{@link #BF16}: the model built in bf16 and handed to {@code torch.optim.Adam} as it is,
 *       which creates its moments with {@code torch.zeros_like(p)}, in the weight's dtype
 *       ({@code torch/optim/adam.py}, {@code _init_group}); NeMo AutoModel's mixture-of-experts
 *       recipes train so (the model built in its config's {@code torch_dtype}, {@code
 *       models/qwen3_moe/model.py} at 8d9bfb90e). The bf16 weights are the optimizer's own (no
 *       master copy), the moments bf16 (2 + 2 bytes), the gradients bf16 (2 bytes).
 * </ul>
 *
 * <p>The optimizer step is one memory-bound pass over each updated parameter ({@link
 * #stepBytes}): fp32 reads the gradient, the master and both moments (4 x 4 = 16 bytes) and
 * writes master, moments and the 16-bit copy (3 x 4 + 2 = 14 bytes), 30 bytes; bf16 reads
 * gradient, weight and moments (4 x 2 = 8 bytes) and writes weight and moments (3 x 2 = 6 bytes),
 * 14 bytes.
 */
public enum OptimizerState {
  /** fp32 master weights, moments and gradient accumulator. */
  FP32("fp32"),
  /** The bf16 weights as Adam's own, bf16 moments and bf16 gradients. */
  BF16("bf16");

  private final String word;

  OptimizerState(String word) {
    this.word = word;
  }

  /**
   * The word meshplan's option and plan files use.
   *
   * @return {@code fp32} or {@code bf16}
   */
  public String word() {
    return word;
  }

  /**
   * Reads a word.
   *
   * @param w the word, any case
   * @return the precision, or empty when the word names none
   */
  public static Optional<OptimizerState> parse(String w) {
    String l = w.toLowerCase(Locale.ROOT);
    return Arrays.stream(values()).filter(s -> s.word.equals(l)).findFirst();
  }

  /**
   * Whether a training precision can hold this optimizer state: bf16 state needs bf16 weights
   * (bf16 training, or FP8 training, whose weights are bf16).
   *
   * @param training the training precision ({@link Fp8Training#RECIPE} for FP8)
   * @return true when the state can be held
   */
  public boolean heldBy(DType training) {
    return this == FP32 || Fp8Training.storage(training) == DType.BF16;
  }

  /**
   * Bytes of optimizer state per trained parameter, besides the weight and its gradient.
   *
   * @param weightBytes bytes of a weight in the compute precision (2, or 4 in fp32 training)
   * @return 12 (master and moments), 8 (fp32 training: moments) or 4 (bf16 moments)
   */
  public double stateBytes(int weightBytes) {
    return this == BF16 ? 4.0 : weightBytes == 4 ? 8.0 : 12.0;
  }

  /**
   * Bytes of a trained parameter's gradient as the optimizer keeps it.
   *
   * @param fp32Bytes the bytes the fp32 accumulator would keep (4, or 2 in Megatron-LM's bf16
   *     buffer when it reduces in bf16)
   * @return {@code fp32Bytes}, or 2 under bf16 state
   */
  public double gradientBytes(double fp32Bytes) {
    return this == BF16 ? 2.0 : fp32Bytes;
  }

  /**
   * Bytes the optimizer step reads and writes per updated parameter (class comment).
   *
   * @return 30 or 14
   */
  public double stepBytes() {
    return this == BF16 ? 14.0 : 30.0;
  }

  /**
   * Bytes of model state per parameter the whole model holds, weights included, before any
   * sharding: 2 + 4 + 12 = 18 for 16-bit training with fp32 state, 2 + 2 + 4 = 8 with bf16.
   *
   * @return bytes per parameter
   */
  public double modelStateBytes() {
    return 2 + gradientBytes(4) + stateBytes(2);
  }

  /**
   * The least bytes of model state per parameter some GPU holds, whatever the layout: 16 with
   * fp32 state (a 16-bit weight, a gradient of at least 2 bytes, 12 of master and moments; in
   * fp32 training 4 + 4 + 8), 8 with bf16 state (2 + 2 + 4).
   *
   * @return bytes per parameter
   */
  public double leastStateBytes() {
    return 2 + gradientBytes(2) + stateBytes(2);
  }
}
