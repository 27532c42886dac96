package io.meshplan.report;

import io.meshplan.sim.EventKind;

/** The report's colours: one per pipeline stage (cycling), one per event kind and memory part. */
final class Palette {
  /** Stage colours, cycled for stage index modulo the length. */
  static final String[] STAGES = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf", "#8cd17d", "#d37295", "#a0cbe8",
      "#ffbe7d", "#499894", "#86bcb6", "#f1ce63", "#d4a6c8", "#bcbd22", "#7f7f7f"};
  /** Memory parts: weights, gradients, optimizer state, activations, temporaries. */
  static final String[] MEMORY = {"#4e79a7", "#76b7b2", "#edc948", "#e15759", "#bab0ac"};
  /** Time parts: compute, recompute, exposed communication, bubble, optimizer. */
  static final String[] TIME = {"#59a14f", "#a0cbe8", "#f28e2b", "#d7d7d7", "#b07aa1"};
  /** Colour of a GPU no stage uses. */
  static final String UNUSED = "#ffffff";

  private Palette() {}

  static String stage(int index) {
    return STAGES[index % STAGES.length];
  }

  static String event(EventKind kind) {
    return switch (kind) {
      case FORWARD -> "#4e79a7";
      case BACKWARD -> "#59a14f";
      case SEND -> "#f28e2b";
      case GRAD_SYNC -> "#e15759";
      case OPTIMIZER -> "#b07aa1";
      case PARAM_GATHER -> "#ff9da7";
    };
  }
}
