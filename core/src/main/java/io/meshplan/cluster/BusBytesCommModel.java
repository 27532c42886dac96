package io.meshplan.cluster;

import io.meshplan.util.Require;

/**
 * A {@link CommModel} whose "cost" is the communication volume of a collective on one mesh axis:
 * the bytes one GPU sends, and 0 on every other axis. Running a cost computation (a strategy's own
 * collectives, a resharding) once with this model per axis splits its traffic by axis.
 *
 * <p>Convention (nccl-tests {@code doc/PERFORMANCE.md}): for a collective of size {@code S} (the
 * nccl-tests "size": the buffer given to each {@link CommModel} method) in a group of {@code n}
 * GPUs, one GPU sends {@code busFactor(n) * S} bytes, the amount that moves at bus bandwidth
 * ({@code busbw = algbw * busFactor(n)}, so {@code busFactor(n) * S / busbw} is the time): ring
 * all-reduce {@code 2(n-1)/n * S}, all-gather (S the gathered buffer) and reduce-scatter (S the
 * buffer before the scatter) {@code (n-1)/n * S}, all-to-all {@code (n-1)/n * S}. A group of one
 * sends nothing.
 *
 * @param mesh the logical mesh
 * @param axis the axis whose bytes are counted
 */
public record BusBytesCommModel(LogicalMesh mesh, int axis) implements CollectiveCommModel {
  /** Validates the axis. */
  public BusBytesCommModel {
    Require.nonNull(mesh, "mesh");
    Require.that(axis >= 0 && axis < mesh.rank(), () -> "axis " + axis + " is not an axis of the "
        + "mesh " + mesh);
  }

  /**
   * The bytes one GPU sends in a collective, by the nccl-tests bus-bandwidth convention.
   *
   * @param collective the collective
   * @param bytes the nccl-tests size {@code S}, bytes
   * @param groupSize GPUs in the group, at least 1
   * @return {@code busFactor(groupSize) * bytes}, bytes
   */
  public static double bytesSent(Collective collective, double bytes, int groupSize) {
    return groupSize <= 1 ? 0.0 : collective.busFactor(groupSize) * bytes;
  }

  @Override
  public double cost(Collective collective, double bytes, int onAxis) {
    return onAxis == axis ? bytesSent(collective, bytes, mesh.size(onAxis)) : 0.0;
  }
}
