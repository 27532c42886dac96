package io.meshplan.sim;

/** What a timeline event is. The order of the constants is the tie-break of the event sort. */
public enum EventKind {
  /** Forward pass of one microbatch through one virtual stage. */
  FORWARD,
  /** Backward pass (with recomputation) of one microbatch through one virtual stage. */
  BACKWARD,
  /** Point-to-point transfer of activations (after a forward) or gradients (after a backward). */
  SEND,
  /** Data-parallel gradient reduction of one virtual stage. */
  GRAD_SYNC,
  /** Optimizer step of one virtual stage. */
  OPTIMIZER,
  /** All-gather of the updated parameters of one virtual stage (distributed optimizer). */
  PARAM_GATHER
}
