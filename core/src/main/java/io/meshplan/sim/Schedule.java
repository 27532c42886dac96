package io.meshplan.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A pipeline schedule: the order in which each device group runs the forward and backward passes of
 * its microbatches. Groups are numbered 0 (first stage) to {@code groups - 1} (last stage). The
 * simulator executes these orders event by event; nothing here computes a time.
 *
 * <ul>
 *   <li>{@link GPipe} (Huang et al., NeurIPS'19): on every group, the forwards of microbatches 0,
 *       1, ..., m-1, then the backwards of microbatches 0, 1, ..., m-1. Every group holds all m
 *       microbatches' activations at the end of the forward phase.
 *   <li>{@link OneFOneB} (PipeDream-Flush; Narayanan et al., SC'21, section 2.2.1): group g runs
 *       w = min(groups - g - 1, m) warm-up forwards (microbatches 0..w-1), then m - w steady
 *       steps of one forward (microbatch w+i) followed by one backward (microbatch i), then the
 *       cool-down backwards of microbatches m-w..m-1. Group g holds at most groups - g
 *       microbatches.
 *   <li>{@link Interleaved} (Narayanan et al., SC'21, section 2.2.2, as Megatron-LM's {@code
 *       forward_backward_pipelining_with_interleaving} orders it): each group holds v = {@code
 *       chunks} model chunks; virtual stage c * groups + g is chunk c of group g. The k-th
 *       forward op of a group (k = 0..m*v-1) runs chunk (k mod (groups*v)) / groups on
 *       microbatch (k / (groups*v)) * groups + k mod groups; the k-th backward op runs chunk
 *       v - 1 - (k mod (groups*v)) / groups on the same microbatch formula. Group g first runs
 *       w = min((groups - g - 1) * 2 + (v - 1) * groups, m*v) warm-up forwards (all m*v when
 *       m == groups, as Megatron-LM does), then m*v - w steady steps of forward k+w followed by
 *       backward k, then the remaining backwards. Megatron-LM requires m to be a multiple of
 *       groups; {@link #check} reports it.
 * </ul>
 */
public sealed interface Schedule permits Schedule.GPipe, Schedule.OneFOneB, Schedule.Interleaved {

  /**
   * Model chunks per device group (1 except for the interleaved schedule).
   *
   * @return chunks, at least 1
   */
  int chunks();

  /**
   * A short name: {@code gpipe}, {@code 1f1b} or {@code interleaved-1f1b(v=N)}.
   *
   * @return the name
   */
  String name();

  /**
   * The op order of one group.
   *
   * @param group the group, 0-based
   * @param groups the pipeline depth (number of device groups)
   * @param microbatches microbatches per iteration
   * @return the ops in execution order, {@code 2 * chunks() * microbatches} of them
   * @throws IllegalArgumentException if {@link #check} reports a problem or an index is out of
   *     range
   */
  List<PipelineOp> order(int group, int groups, int microbatches);

  /**
   * Whether the schedule can run with these sizes.
   *
   * @param groups the pipeline depth
   * @param microbatches microbatches per iteration
   * @return the problem, or empty when the schedule can run
   */
  default Optional<ScheduleError> check(int groups, int microbatches) {
    if (groups < 1) {
      return Optional.of(new ScheduleError("the pipeline needs at least one stage, got " + groups));
    }
    if (microbatches < 1) {
      return Optional.of(new ScheduleError("the number of microbatches must be at least 1, got "
          + microbatches));
    }
    return Optional.empty();
  }

  private static void requireRunnable(Schedule s, int group, int groups, int microbatches) {
    Optional<ScheduleError> error = s.check(groups, microbatches);
    if (error.isPresent()) {
      throw new IllegalArgumentException(error.get().message());
    }
    if (group < 0 || group >= groups) {
      throw new IllegalArgumentException("group " + group + " is outside 0.." + (groups - 1));
    }
  }

  /** GPipe: all forwards, then all backwards. */
  record GPipe() implements Schedule {
    @Override
    public int chunks() {
      return 1;
    }

    @Override
    public String name() {
      return "gpipe";
    }

    @Override
    public List<PipelineOp> order(int group, int groups, int microbatches) {
      requireRunnable(this, group, groups, microbatches);
      List<PipelineOp> ops = new ArrayList<>(2 * microbatches);
      for (int i = 0; i < microbatches; i++) {
        ops.add(PipelineOp.forward(0, i));
      }
      for (int i = 0; i < microbatches; i++) {
        ops.add(PipelineOp.backward(0, i));
      }
      return List.copyOf(ops);
    }
  }

  /** 1F1B (PipeDream-Flush): warm-up forwards, one forward one backward, cool-down backwards. */
  record OneFOneB() implements Schedule {
    @Override
    public int chunks() {
      return 1;
    }

    @Override
    public String name() {
      return "1f1b";
    }

    @Override
    public List<PipelineOp> order(int group, int groups, int microbatches) {
      requireRunnable(this, group, groups, microbatches);
      int warmup = Math.min(groups - group - 1, microbatches);
      List<PipelineOp> ops = new ArrayList<>(2 * microbatches);
      for (int i = 0; i < warmup; i++) {
        ops.add(PipelineOp.forward(0, i));
      }
      for (int i = 0; i < microbatches - warmup; i++) {
        ops.add(PipelineOp.forward(0, warmup + i));
        ops.add(PipelineOp.backward(0, i));
      }
      for (int i = microbatches - warmup; i < microbatches; i++) {
        ops.add(PipelineOp.backward(0, i));
      }
      return List.copyOf(ops);
    }
  }

  /**
   * Interleaved 1F1B with {@code chunks} model chunks per group (Megatron-LM's virtual pipeline).
   *
   * @param chunks model chunks per group, at least 2 (one chunk is {@link OneFOneB})
   */
  record Interleaved(int chunks) implements Schedule {
    /** Checks the chunk count. */
    public Interleaved {
      if (chunks < 2) {
        throw new IllegalArgumentException("the interleaved schedule needs at least 2 model chunks"
            + " per stage, got " + chunks + "; use 1F1B for one chunk");
      }
    }

    @Override
    public String name() {
      return "interleaved-1f1b(v=" + chunks + ")";
    }

    @Override
    public Optional<ScheduleError> check(int groups, int microbatches) {
      Optional<ScheduleError> basic = Schedule.super.check(groups, microbatches);
      if (basic.isPresent()) {
        return basic;
      }
      if (microbatches % groups != 0) {
        return Optional.of(new ScheduleError("the interleaved schedule needs the number of"
            + " microbatches (" + microbatches + ") to be a multiple of the pipeline depth ("
            + groups + "), as Megatron-LM requires; use " + nearest(microbatches, groups)
            + " microbatches or the 1F1B schedule"));
      }
      return Optional.empty();
    }

    private static String nearest(int microbatches, int groups) {
      int below = microbatches / groups * groups;
      int above = below + groups;
      return below > 0 ? below + " or " + above : Integer.toString(above);
    }

    @Override
    public List<PipelineOp> order(int group, int groups, int microbatches) {
      requireRunnable(this, group, groups, microbatches);
      int total = microbatches * chunks;
      int warmup = warmupForwards(group, groups, microbatches);
      List<PipelineOp> ops = new ArrayList<>(2 * total);
      for (int k = 0; k < warmup; k++) {
        ops.add(op(k, groups, true));
      }
      for (int k = 0; k < total - warmup; k++) {
        ops.add(op(k + warmup, groups, true));
        ops.add(op(k, groups, false));
      }
      for (int k = total - warmup; k < total; k++) {
        ops.add(op(k, groups, false));
      }
      return List.copyOf(ops);
    }

    /**
     * The forwards a group runs before its first backward.
     *
     * @param group the group, 0-based
     * @param groups the pipeline depth
     * @param microbatches microbatches per iteration
     * @return {@code min((groups - group - 1) * 2 + (chunks - 1) * groups, microbatches *
     *     chunks)}, or all {@code microbatches * chunks} when {@code microbatches == groups}
     */
    public int warmupForwards(int group, int groups, int microbatches) {
      int total = microbatches * chunks;
      return microbatches == groups ? total
          : Math.min((groups - group - 1) * 2 + (chunks - 1) * groups, total);
    }

    /**
     * The group's chunk that its {@code k}-th forward runs.
     *
     * @param k the forward's position among the group's forwards, 0-based
     * @param groups the pipeline depth
     * @return the chunk, 0 to {@code chunks - 1}
     */
    public int forwardChunk(int k, int groups) {
      return k % (groups * chunks) / groups;
    }

    private PipelineOp op(int k, int groups, boolean forward) {
      int chunk = forwardChunk(k, groups);
      int microbatch = k / (groups * chunks) * groups + k % groups;
      return new PipelineOp(forward ? chunk : chunks - 1 - chunk, microbatch, forward);
    }
  }
}
