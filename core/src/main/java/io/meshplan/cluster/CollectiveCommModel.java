package io.meshplan.cluster;

/**
 * A {@link CommModel} that prices every collective through one method; the four named collectives
 * delegate to it.
 */
public interface CollectiveCommModel extends CommModel {
  /**
   * The cost of a collective on an axis.
   *
   * @param collective the collective
   * @param bytes one device's buffer, in bytes, as defined per method of {@link CommModel}
   * @param axis the mesh axis
   * @return the cost, in seconds for a real cluster
   */
  double cost(Collective collective, double bytes, int axis);

  @Override
  default double allReduce(double bytes, int axis) {
    return cost(Collective.ALL_REDUCE, bytes, axis);
  }

  @Override
  default double allGather(double bytes, int axis) {
    return cost(Collective.ALL_GATHER, bytes, axis);
  }

  @Override
  default double reduceScatter(double bytes, int axis) {
    return cost(Collective.REDUCE_SCATTER, bytes, axis);
  }

  @Override
  default double allToAll(double bytes, int axis) {
    return cost(Collective.ALL_TO_ALL, bytes, axis);
  }
}
