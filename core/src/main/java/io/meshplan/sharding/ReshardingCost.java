package io.meshplan.sharding;

import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.TensorShape;

/**
 * The communication cost of turning one layout of a tensor into another (Alpa, OSDI'22, section
 * 4.2). Per mesh axis: an axis that the target splits and the source does not is a local slice and
 * free; an axis that moves from one dimension to another is an all-to-all; an axis that the source
 * splits and the target does not is an all-gather. Slices run first, then all-to-alls, then
 * all-gathers in ascending axis order, each priced on the (padded) buffer one device holds.
 *
 * <p>An axis that stays on the same dimension but changes its position among that dimension's axes
 * (for example {@code S0@1} to {@code S0@01}) no longer holds a contiguous slice, so it is priced as
 * an all-gather followed by a free slice.
 */
public final class ReshardingCost {
  private ReshardingCost() {}

  /**
   * Prices a resharding.
   *
   * @param shape the tensor shape
   * @param from the source layout, or null for a value whose layout is not modelled (free)
   * @param to the target layout, or null when any layout will do (free)
   * @param comm the collective cost model
   * @return the cost in the model's unit; 0 when the layouts are equal
   */
  public static double of(TensorShape shape, ShardingSpec from, ShardingSpec to, CommModel comm) {
    if (from == null || to == null || from.equals(to)) {
      return 0.0;
    }
    LogicalMesh mesh = comm.mesh();
    int axes = mesh.rank();
    int[] cur = from.masks();
    double cost = 0.0;
    // 1. Slices: axes the target uses and the source does not.
    for (int a = 0; a < axes; a++) {
      int fd = from.dimOf(a);
      int td = to.dimOf(a);
      if (fd < 0 && td >= 0) {
        cur[td] |= 1 << a;
      }
    }
    // 2. All-to-alls: axes moving between dimensions.
    for (int a = 0; a < axes; a++) {
      int fd = from.dimOf(a);
      int td = to.dimOf(a);
      if (fd >= 0 && td >= 0 && fd != td) {
        cost += comm.allToAll(bytes(shape, cur, mesh), a);
        cur[fd] &= ~(1 << a);
        cur[td] |= 1 << a;
      }
    }
    // 3. All-gathers: axes the target does not keep in place.
    for (int a = 0; a < axes; a++) {
      int fd = from.dimOf(a);
      int td = to.dimOf(a);
      if (fd < 0) {
        continue;
      }
      boolean moved = fd != td;
      boolean reordered = false;
      if (fd == td) {
        int major = (1 << a) - 1;
        reordered = (from.axes(fd) & major) != (to.axes(td) & major);
      }
      if ((!moved && reordered) || td < 0) {
        cur[fd] &= ~(1 << a);
        cost += comm.allGather(bytes(shape, cur, mesh), a);
      }
    }
    return cost;
  }

  private static double bytes(TensorShape shape, int[] masks, LogicalMesh mesh) {
    return ShardingSpec.localBytes(shape, masks, mesh);
  }
}
