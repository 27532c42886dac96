package io.meshplan.intraop;

import java.util.List;

/**
 * The strategies of one instruction.
 *
 * @param strategies the choices, in a fixed order
 * @param follows the operand instruction id this one follows, or -1; a follower has exactly one
 *     strategy per strategy of the instruction it follows, index for index, so both share one
 *     decision variable (Alpa's follower merging)
 * @param opaque whether the generator could not see into the op and chose a conservative set
 */
public record StrategySet(List<Strategy> strategies, int follows, boolean opaque) {
  /** Copies the list. */
  public StrategySet {
    strategies = List.copyOf(strategies);
    if (strategies.isEmpty()) {
      throw new IllegalArgumentException("an instruction needs at least one strategy");
    }
  }

  /**
   * The number of strategies.
   *
   * @return the size
   */
  public int size() {
    return strategies.size();
  }

  /**
   * One strategy.
   *
   * @param i its index
   * @return the strategy
   */
  public Strategy get(int i) {
    return strategies.get(i);
  }
}
