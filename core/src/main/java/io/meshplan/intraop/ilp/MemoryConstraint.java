package io.meshplan.intraop.ilp;

import io.meshplan.util.Require;

/**
 * The per-step memory bound of the ILP (Alpa, OSDI'22, section 4.2): at each checked step, the
 * bytes of all live values under their chosen layouts must fit in one device. Each item is one value
 * with its live range and its bytes under each strategy of the node that decides it.
 *
 * @param budget the bytes of one device
 * @param steps the steps to check, ascending (steps whose live set is contained in another's are
 *     left out)
 * @param itemNode the node deciding each item's layout
 * @param itemStart the first live step of each item
 * @param itemEnd the last live step of each item
 * @param itemBytes each item's bytes per strategy of its node
 */
public record MemoryConstraint(
    double budget, int[] steps, int[] itemNode, int[] itemStart, int[] itemEnd,
    double[][] itemBytes) {
  /** Validates lengths. */
  public MemoryConstraint {
    Require.that(budget > 0, "memory budget must be positive");
    int n = itemNode.length;
    Require.that(itemStart.length == n && itemEnd.length == n && itemBytes.length == n,
        "memory items must have one node, start, end and bytes vector each");
  }

  /**
   * The number of items.
   *
   * @return the count
   */
  public int itemCount() {
    return itemNode.length;
  }

  /**
   * The index in {@link #steps()} of the first checked step where an item is live.
   *
   * @param item the item
   * @return the index; equal to {@link #stepsEnd} when no checked step sees the item
   */
  public int stepsFrom(int item) {
    return lowerBound(steps, itemStart[item]);
  }

  /**
   * One past the index in {@link #steps()} of the last checked step where an item is live.
   *
   * @param item the item
   * @return the exclusive end index
   */
  public int stepsEnd(int item) {
    return lowerBound(steps, itemEnd[item] + 1);
  }

  private static int lowerBound(int[] a, int key) {
    int lo = 0;
    int hi = a.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (a[mid] < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
