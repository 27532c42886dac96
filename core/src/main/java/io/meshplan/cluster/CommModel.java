package io.meshplan.cluster;

/**
 * Prices collectives on the axes of a logical device mesh. A collective on axis {@code a} runs in
 * every group of devices that differ only in their coordinate on {@code a}; all groups run at once.
 *
 * <p>Every method returns a cost in the model's unit: seconds for a real cluster, or the abstract
 * units of Alpa's prototype when alpha and beta are given by hand. {@code bytes} is always the size
 * of one device's buffer as stated per method.
 */
public interface CommModel {
  /**
   * The mesh this model prices.
   *
   * @return the logical mesh
   */
  LogicalMesh mesh();

  /**
   * The cost of an all-reduce.
   *
   * @param bytes one device's buffer, in bytes
   * @param axis the mesh axis
   * @return the cost
   */
  double allReduce(double bytes, int axis);

  /**
   * The cost of an all-gather.
   *
   * @param bytes one device's buffer after the gather, in bytes
   * @param axis the mesh axis
   * @return the cost
   */
  double allGather(double bytes, int axis);

  /**
   * The cost of a reduce-scatter.
   *
   * @param bytes one device's buffer before the scatter, in bytes
   * @param axis the mesh axis
   * @return the cost
   */
  double reduceScatter(double bytes, int axis);

  /**
   * The cost of an all-to-all.
   *
   * @param bytes one device's buffer, in bytes
   * @param axis the mesh axis
   * @return the cost
   */
  double allToAll(double bytes, int axis);
}
