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
}
