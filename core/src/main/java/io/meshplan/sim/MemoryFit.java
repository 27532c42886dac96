package io.meshplan.sim;

import io.meshplan.util.Require;
import io.meshplan.util.Units;

/**
 * Whether a simulated iteration fits in device memory: the peak of its worst stage against the
 * memory one GPU may use. This is the rule the planners apply to every candidate (a plan is kept
 * only when its peak is at most the memory per GPU, which by default is {@link
 * io.meshplan.cluster.GpuSpec#USABLE_MEMORY_FRACTION} of the HBM, the rest left to the CUDA
 * context, NCCL buffers and allocator fragmentation), stated once so that {@code simulate} and
 * {@code export} judge a configuration as {@code plan} would.
 *
 * @param needBytes the peak memory of the worst stage's GPU, bytes
 * @param capacityBytes the memory one GPU may use, bytes
 * @param stage the stage (device group) with that peak, 0-based
 */
public record MemoryFit(double needBytes, double capacityBytes, int stage) {

  /** Checks the sizes. */
  public MemoryFit {
    Require.nonNegative(needBytes, "needBytes");
    Require.that(capacityBytes > 0 && Double.isFinite(capacityBytes),
        "capacityBytes must be positive and finite");
    Require.that(stage >= 0, "stage must be >= 0");
  }

  /**
   * The verdict of a simulation against a capacity.
   *
   * @param result the simulated iteration
   * @param capacityBytes the memory one GPU may use, bytes
   * @return its need, the capacity and the worst stage
   */
  public static MemoryFit of(SimulationResult result, double capacityBytes) {
    return new MemoryFit(result.peakMemoryBytesPerGpu(), capacityBytes, result.memoryGroup());
  }

  /**
   * The planners' rule: a peak fits when it is at most the capacity.
   *
   * @param needBytes a peak memory per GPU, bytes
   * @param capacityBytes the memory one GPU may use, bytes
   * @return whether it fits
   */
  public static boolean fits(double needBytes, double capacityBytes) {
    return needBytes <= capacityBytes;
  }

  /**
   * Whether this need fits.
   *
   * @return {@link #fits(double, double)} of the need and the capacity
   */
  public boolean fits() {
    return fits(needBytes, capacityBytes);
  }

  /**
   * The need against the capacity in the words {@code plan} uses for an infeasible plan.
   *
   * @return e.g. {@code stage 0 needs 153GiB per GPU, and 76GiB is available}
   */
  public String words() {
    return "stage " + stage + " needs " + Units.formatBytes(needBytes) + " per GPU, and "
        + Units.formatBytes(capacityBytes) + " is available";
  }
}
