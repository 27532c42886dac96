package io.meshplan.export;

import io.meshplan.plan.ParallelConfig;

/**
 * What Megatron-LM's {@code validate_args} asks of the environment variable {@code
 * CUDA_DEVICE_MAX_CONNECTIONS} for a configuration (NVIDIA/Megatron-LM {@code
 * megatron/training/arguments.py}, main at d98e8a6, lines 1453-1479 and 1166-1167):
 *
 * <ul>
 *   <li>with tensor (or context) parallelism above 1, on a GPU before Blackwell ({@code
 *       get_device_arch_version() < 10}, the CUDA major version, {@code
 *       megatron/training/utils/common_utils.py} line 527), and neither Megatron-FSDP nor Torch
 *       FSDP2, it asserts the variable is {@code "1"}: the tensor-parallel collectives must queue
 *       behind the GEMMs they overlap with on one hardware queue;
 *   <li>with Megatron-FSDP ({@code --use-megatron-fsdp}, meshplan's ZeRO-2 and ZeRO-3) it asserts
 *       the variable is not {@code "1"} (unset or above 1), whatever the tensor size: there it only
 *       warns about tensor parallelism;
 *   <li>otherwise (no tensor parallelism, or Blackwell and later) it asks nothing.
 * </ul>
 *
 * <p>The compute capability is the one of the GPU's catalog architecture ({@code
 * cluster.Architecture#computeCapabilityMajor}).
 */
public enum MegatronConnections {
  /** {@code validate_args} asserts {@code CUDA_DEVICE_MAX_CONNECTIONS=1}. */
  ONE,
  /** {@code validate_args} asserts the variable is unset or above 1. */
  NOT_ONE,
  /** {@code validate_args} does not look at the variable. */
  ANY;

  /** The compute capability of Blackwell GPUs, from which Megatron-LM asks nothing. */
  private static final int BLACKWELL_CAPABILITY = 10;

  /**
   * What Megatron-LM requires of {@code CUDA_DEVICE_MAX_CONNECTIONS} for an input.
   *
   * @param input the model, cluster and configuration
   * @return the requirement
   */
  public static MegatronConnections of(ExportInput input) {
    ParallelConfig c = input.config();
    if (c.zeroStage() >= 2) {
      return NOT_ONE;
    }
    boolean beforeBlackwell = input.cluster().gpu().architecture().computeCapabilityMajor()
        < BLACKWELL_CAPABILITY;
    return (c.tensorParallel() > 1 || c.contextParallel() > 1) && beforeBlackwell ? ONE : ANY;
  }

  /**
   * The bash lines that give the environment this requirement, each ending in a newline: an
   * export, an unset, or nothing.
   *
   * @return the lines
   */
  public String bashLines() {
    return switch (this) {
      case ONE -> "# Megatron-LM asserts CUDA_DEVICE_MAX_CONNECTIONS=1 with tensor (or context)"
          + " parallelism\n# on GPUs before Blackwell.\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n";
      case NOT_ONE -> "# Megatron-FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is unset or above 1.\n"
          + "unset CUDA_DEVICE_MAX_CONNECTIONS\n";
      case ANY -> "";
    };
  }
}
