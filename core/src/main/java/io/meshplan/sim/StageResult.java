package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.List;

/**
 * The simulated result of one pipeline stage (device group) with all its model chunks.
 *
 * @param group the group, 0-based
 * @param virtualStages the virtual stages (model chunks) the group runs, ascending
 * @param devices GPUs of the group
 * @param dataParallel data-parallel replicas
 * @param tensorParallel tensor-parallel GPUs per replica
 * @param timing its timing
 * @param memory its peak memory per GPU by category
 * @param commBytesPerGpu bytes one GPU of the group sends per iteration, by axis
 */
public record StageResult(int group, List<Integer> virtualStages, int devices, int dataParallel,
    int tensorParallel, GroupTiming timing, MemoryUse memory, CommVolume commBytesPerGpu) {

  /** Copies the list and checks the values. */
  public StageResult {
    virtualStages = List.copyOf(virtualStages);
    Require.that(group >= 0, "group must be >= 0");
    Require.positive(devices, "devices");
    Require.nonNull(timing, "timing");
    Require.nonNull(memory, "memory");
    Require.nonNull(commBytesPerGpu, "commBytesPerGpu");
  }
}
