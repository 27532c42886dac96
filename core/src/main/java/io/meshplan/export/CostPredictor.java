package io.meshplan.export;

import io.meshplan.plan.PipelinePlan;
import java.util.Optional;

/**
 * Predicts the cost of a configuration, so that a plan a framework cannot express can be shown
 * next to the nearest configuration it can, with that configuration's predicted figures. The
 * schedule simulator implements it; {@link #NONE} stands in where no simulator is wired.
 */
@FunctionalInterface
public interface CostPredictor {
  /** A predictor that knows nothing: every prediction is empty. */
  CostPredictor NONE = input -> Optional.empty();

  /**
   * Predicts one iteration of a configuration.
   *
   * @param input the model, the cluster and the configuration
   * @return iteration seconds, throughput, TFLOP/s per GPU, MFU and peak memory, or empty when
   *     this predictor cannot say
   */
  Optional<PipelinePlan.Prediction> predict(ExportInput input);
}
