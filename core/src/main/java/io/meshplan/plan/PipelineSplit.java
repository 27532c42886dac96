package io.meshplan.plan;

import java.util.List;

/**
 * How a configuration's transformer layers are split over its pipeline stages and model chunks
 * when the split is not Megatron-LM's even one or its stated first and last stages: the embedding
 * and the loss counted as layers ({@link SplitAccounting}), or a layout written out chunk by chunk
 * ({@link PipelineLayout}).
 */
public sealed interface PipelineSplit permits SplitAccounting, PipelineLayout {
  /**
   * Whether the split differs from the plain one.
   *
   * @return true when it does
   */
  boolean any();

  /**
   * Transformer layers per model chunk, in layer order (chunk {@code k} on stage {@code k mod
   * pipelineParallel}); the first chunk holds the embedding and the last the LM head, the loss and
   * any multi-token prediction modules.
   *
   * @param layers the model's transformer layers, already accepted by {@link #check}
   * @param pipelineParallel pipeline stages
   * @param virtualStages model chunks per stage
   * @return layers per chunk
   */
  int[] chunkLayers(int layers, int pipelineParallel, int virtualStages);

  /**
   * Megatron-Core's rules for the split, and meshplan's where it prices less than Megatron-Core
   * runs.
   *
   * @param layers the model's transformer layers
   * @param pipelineParallel pipeline stages
   * @param virtualStages model chunks per stage
   * @param statedStages whether first- or last-stage layers are also given
   * @throws io.meshplan.util.InputException naming the rule broken
   */
  void check(int layers, int pipelineParallel, int virtualStages, boolean statedStages);

  /**
   * Megatron-LM's arguments for the split, each a flag and its value if it has one.
   *
   * @return the arguments, in order
   */
  List<List<String>> megatronArgs();
}
