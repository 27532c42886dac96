package io.meshplan.plan;

import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import java.util.Optional;

/**
 * One training runtime's verdict on what it can launch on one cluster: the data its search space
 * takes ({@link #space}) and, for each candidate the planner finds, whether the runtime's launch
 * file can state it exactly. {@code export} implements it with its writers' own checks, so a plan
 * for a runtime is one its export writes.
 */
public interface LaunchCheck {
  /**
   * The runtime's name on the command line.
   *
   * @return for example {@code megatron}
   */
  String label();

  /**
   * What the runtime's stages, schedules and kernels may be.
   *
   * @return the space
   */
  RuntimeSpace space();

  /**
   * Why the runtime cannot train a model with this attention and these overlaps in any layout:
   * what no search of layouts can change.
   *
   * @param model the model in its training precision, with its sequence length
   * @param attention how the attention core runs
   * @param overlaps what the plan overlaps and fuses
   * @return one sentence, or empty when some layout may do
   */
  Optional<String> missing(ModelSpec model, Attention attention, Overlaps overlaps);

  /**
   * Why the runtime cannot launch a Megatron-style configuration of a model on the cluster.
   *
   * @param model the model in its training precision, with its sequence length
   * @param config the configuration, checked against the model and cluster
   * @param attention how the attention core runs
   * @param overlaps what the configuration overlaps and fuses
   * @return one sentence, or empty when it can
   */
  Optional<String> missing(ModelSpec model, ParallelConfig config, Attention attention,
      Overlaps overlaps);

  /**
   * Why the runtime cannot launch a plan on the cluster.
   *
   * @param plan the plan
   * @return one sentence, or empty when it can
   */
  Optional<String> missing(PipelinePlan plan);

  /**
   * This runtime with one recomputation mode for every stage, the one the user fixed.
   *
   * @param mode the mode
   * @return the check
   * @throws io.meshplan.util.InputException when the runtime does not run the mode
   */
  default LaunchCheck withRecompute(io.meshplan.model.Recompute mode) {
    if (!space().recompute().contains(mode)) {
      throw new io.meshplan.util.InputException(label() + " does not run recompute "
          + mode.label() + "; plan for another framework, or without one");
    }
    return new FixedRecomputeCheck(this, mode);
  }
}
