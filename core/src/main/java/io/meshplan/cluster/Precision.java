package io.meshplan.cluster;

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
  FP8
}
