package io.meshplan.cluster;

import io.meshplan.graph.DType;
import java.util.Optional;

/** Numeric formats for which a GPU datasheet states a peak dense math throughput. */
public enum Precision {
  /** IEEE single precision on the CUDA cores (no tensor cores). */
  FP32,
  /** TensorFloat-32 on the tensor cores (Ampere and later). */
  TF32,
  /** bfloat16 on the tensor cores (Ampere and later). */
  BF16,
  /** IEEE half precision on the tensor cores. */
  FP16,
  /** 8-bit floating point (E4M3/E5M2) on the tensor cores (Hopper and later). */
  FP8;

  /**
   * The math a training precision's matrix products run in. {@code f32} is IEEE single
   * precision, not TF32: PyTorch multiplies fp32 matrices in fp32 unless a script sets {@code
   * torch.backends.cuda.matmul.allow_tf32} (off by default since PyTorch 1.12), and neither
   * Megatron-LM, torchtitan nor DeepSpeed turns it on for an fp32 run. meshplan therefore prices
   * f32 at the FP32 peak, the conservative figure; it offers no TF32 training precision.
   *
   * @param trainingType a training precision: bf16, f16, f32, or the fp8 recipe
   * @return its precision, or empty for a type that does not train
   */
  public static Optional<Precision> ofTraining(DType trainingType) {
    return Optional.ofNullable(switch (trainingType) {
      case F32 -> FP32;
      case BF16 -> BF16;
      case F16 -> FP16;
      case F8E4M3FN -> FP8;
      default -> null;
    });
  }

  /**
   * Whether this is a 16-bit floating-point precision (bf16 or fp16), whose GEMMs a GPU's
   * {@code gemm16} fraction and an architecture's 16-bit figure price.
   *
   * @return true for {@link #BF16} and {@link #FP16}
   */
  public boolean sixteenBit() {
    return this == BF16 || this == FP16;
  }

  /**
   * The word meshplan's {@code dtype} uses for this precision ({@code f32}, {@code bf16}, {@code
   * f16}, {@code fp8}); TF32, which no training precision selects, is {@code tf32}.
   *
   * @return the word
   */
  public String word() {
    return switch (this) {
      case FP32 -> "f32";
      case TF32 -> "tf32";
      case BF16 -> "bf16";
      case FP16 -> "f16";
      case FP8 -> "fp8";
    };
  }
}
