package io.meshplan.cluster;

/**
 * Prices the computation one device performs. With hand-given alpha and beta (Alpa's abstract
 * units) there is none, and compute costs are zero as in Alpa's prototype.
 */
public interface ComputeModel {
  /**
   * The time to run an op on one device.
   *
   * @param flops floating-point operations on this device
   * @param bytes bytes read and written in device memory
   * @return the cost in the same unit as the communication model (seconds for a real cluster)
   */
  double cost(double flops, double bytes);

  /**
   * The time to run a matrix multiplication on one device. Models that know that small GEMMs run
   * below peak override this; the default prices it like any other op.
   *
   * @param flops floating-point operations on this device
   * @param bytes bytes read and written in device memory
   * @return the cost in the same unit as the communication model
   */
  default double dotCost(double flops, double bytes) {
    return cost(flops, bytes);
  }
}
