package io.meshplan.intraop;

import io.meshplan.util.Require;

/**
 * What one instruction of an intra-operator plan does and costs, free of solver internals. Costs
 * are in the plan's {@link CostUnit} and count every execution of an instruction inlined from a
 * loop body, so that the costs of all instructions add up to the plan's objective (Alpa, OSDI'22,
 * section 4.2: node costs plus edge costs).
 *
 * @param id the instruction id
 * @param name the instruction name
 * @param op the HLO opcode, e.g. {@code dot}
 * @param shape the result shape in HLO text, e.g. {@code f32[1024,1024]}
 * @param strategy the chosen strategy's name, e.g. {@code S0@0 = S0@0 x R}
 * @param sharding the result layout as XLA {@code HloSharding} text
 * @param repeat how many times the instruction runs (its loop trip count when it was inlined
 *     from a loop body, else 1)
 * @param compute the compute cost of one device
 * @param communication the cost of the collectives the strategy performs itself (for example
 *     the all-reduce of a split contraction)
 * @param resharding the cost of bringing the operands into the layouts the strategy requires
 * @param memoryBytes bytes of the result on one device
 * @param commBytesPerAxis bytes one GPU sends per mesh axis in this instruction's collectives and
 *     reshardings, counted as nccl-tests counts bus bytes ({@link PlanCommBytes})
 */
public record InstructionCost(int id, String name, String op, String shape, String strategy,
    String sharding, long repeat, double compute, double communication, double resharding,
    double memoryBytes, double[] commBytesPerAxis) {
  /** Validates the fields and copies the array. */
  public InstructionCost {
    Require.that(id >= 0, "instruction id must be >= 0");
    Require.nonNull(name, "name");
    Require.nonNull(op, "op");
    Require.nonNull(shape, "shape");
    Require.nonNull(strategy, "strategy");
    Require.nonNull(sharding, "sharding");
    Require.that(repeat >= 1, "repeat must be >= 1");
    Require.nonNegative(compute, "compute");
    Require.nonNegative(communication, "communication");
    Require.nonNegative(resharding, "resharding");
    Require.nonNegative(memoryBytes, "memory bytes");
    commBytesPerAxis = commBytesPerAxis.clone();
    for (double b : commBytesPerAxis) {
      Require.nonNegative(b, "communication bytes");
    }
  }

  /**
   * Compute, communication and resharding together.
   *
   * @return the instruction's share of the objective
   */
  public double total() {
    return compute + communication + resharding;
  }

  /**
   * The compute cost of one execution.
   *
   * @return {@code compute / repeat}
   */
  public double computePerExecution() {
    return repeat == 1 ? compute : compute / repeat;
  }

  /**
   * The cost of the strategy's collectives in one execution.
   *
   * @return {@code communication / repeat}
   */
  public double communicationPerExecution() {
    return repeat == 1 ? communication : communication / repeat;
  }

  @Override
  public double[] commBytesPerAxis() {
    return commBytesPerAxis.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InstructionCost c && id == c.id && name.equals(c.name) && op.equals(c.op)
        && shape.equals(c.shape) && strategy.equals(c.strategy) && sharding.equals(c.sharding)
        && repeat == c.repeat && compute == c.compute && communication == c.communication
        && resharding == c.resharding && memoryBytes == c.memoryBytes
        && java.util.Arrays.equals(commBytesPerAxis, c.commBytesPerAxis);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(id, name, strategy, sharding)
        + 31 * java.util.Arrays.hashCode(commBytesPerAxis);
  }

  @Override
  public String toString() {
    return "InstructionCost[" + id + " " + name + " " + strategy + "]";
  }
}
