package io.meshplan.calibrate;

import io.meshplan.util.Require;

/**
 * How a Megatron-LM run split its layers over pipeline stages beyond the even split, as its
 * arguments block states it.
 *
 * @param firstStageLayers {@code decoder_first_pipeline_num_layers}, 0 when unset
 * @param lastStageLayers {@code decoder_last_pipeline_num_layers}, 0 when unset
 * @param embeddingInSplit {@code account_for_embedding_in_pipeline_split}
 * @param lossInSplit {@code account_for_loss_in_pipeline_split}
 * @param layout {@code pipeline_model_parallel_layout} as printed, empty when unset
 */
public record RunSplit(int firstStageLayers, int lastStageLayers, boolean embeddingInSplit,
    boolean lossInSplit, String layout) {
  /** The even split. */
  public static final RunSplit NONE = new RunSplit(0, 0, false, false, "");

  /** Validates the counts. */
  public RunSplit {
    Require.that(firstStageLayers >= 0 && lastStageLayers >= 0,
        "stage layer counts must not be negative");
    Require.nonNull(layout, "layout");
  }
}
