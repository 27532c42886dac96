package io.meshplan.model;

/** What a parameter of a training graph holds. */
public enum ParamRole {
  /** Token ids, integers {@code [batch, seq]}. */
  TOKENS,
  /** Target token ids for the loss, integers {@code [batch, seq]}. */
  LABELS,
  /** The activation entering the first built block (when the embedding is not built). */
  INPUT_ACTIVATION,
  /** The gradient arriving at the last built block's output (when the head is not built). */
  OUTPUT_GRADIENT,
  /** A weight in the compute type (bf16 or fp16; fp32 when computing in fp32). */
  WEIGHT,
  /** The fp32 master copy of a weight that Adam updates (absent when computing in fp32). */
  MASTER_WEIGHT,
  /** Adam's first moment, fp32. */
  ADAM_M,
  /** Adam's second moment, fp32. */
  ADAM_V,
  /** The fp32 gradient accumulated over micro-batches. */
  GRADIENT_ACCUMULATOR,
  /** An input that is neither trained nor an activation: the causal mask, rotary tables. */
  CONSTANT
}
