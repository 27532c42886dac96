package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.function.DoubleUnaryOperator;

/**
 * The price of a pipeline point-to-point transfer: seconds for every GPU of one device group to
 * send {@code bytes} to its peer in another group. The caller builds it from the cluster's
 * communication model (NVLink inside a node, the inter-node fabric otherwise). The simulator never
 * asks for a transfer from a group to itself: that costs nothing.
 */
@FunctionalInterface
public interface P2pCost {

  /**
   * Seconds for the transfer.
   *
   * @param fromGroup the sending group
   * @param toGroup the receiving group (differs from {@code fromGroup})
   * @param bytes bytes each GPU sends
   * @return seconds, finite and not negative
   */
  double seconds(int fromGroup, int toGroup, double bytes);

  /**
   * The same price between every pair of groups.
   *
   * @param secondsForBytes seconds as a function of bytes
   * @return the price
   */
  static P2pCost uniform(DoubleUnaryOperator secondsForBytes) {
    Require.nonNull(secondsForBytes, "secondsForBytes");
    return (from, to, bytes) -> secondsForBytes.applyAsDouble(bytes);
  }

  /**
   * The alpha-beta price {@code latencySeconds + bytes / bytesPerSecond} between every pair.
   *
   * @param latencySeconds fixed cost per transfer, seconds
   * @param bytesPerSecond bandwidth, bytes per second
   * @return the price
   */
  static P2pCost alphaBeta(double latencySeconds, double bytesPerSecond) {
    Require.nonNegative(latencySeconds, "latencySeconds");
    Require.that(bytesPerSecond > 0 && Double.isFinite(bytesPerSecond),
        () -> "bytesPerSecond must be finite and positive, got " + bytesPerSecond);
    return (from, to, bytes) -> latencySeconds + bytes / bytesPerSecond;
  }

  /**
   * Free transfers.
   *
   * @return a price of 0 seconds
   */
  static P2pCost free() {
    return (from, to, bytes) -> 0.0;
  }
}
