package io.meshplan.intraop;

import io.meshplan.sharding.ShardingSpec;
import java.util.Arrays;

/**
 * One way to run an instruction on the mesh.
 *
 * @param name a readable name, e.g. {@code S0@0,S1@1 = S0@0 x S1@1}
 * @param output the layout of the result; null for values whose layout is not modelled (tuples)
 * @param operandSpecs the layout required of each operand; a null entry accepts any layout
 * @param computeCost compute cost of one device, in the cost model's unit
 * @param commCost communication this strategy performs itself (e.g. the all-reduce or
 *     reduce-scatter of a split contraction), in the cost model's unit
 * @param memoryBytes bytes of the result on one device
 */
public record Strategy(
    String name,
    ShardingSpec output,
    ShardingSpec[] operandSpecs,
    double computeCost,
    double commCost,
    double memoryBytes) {
  /** Copies the operand specs. */
  public Strategy {
    operandSpecs = operandSpecs.clone();
  }

  /**
   * The required layout of one operand.
   *
   * @param k the operand position
   * @return the layout, or null for any
   */
  public ShardingSpec operandSpec(int k) {
    return operandSpecs[k];
  }

  @Override
  public ShardingSpec[] operandSpecs() {
    return operandSpecs.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Strategy s && name.equals(s.name)
        && java.util.Objects.equals(output, s.output)
        && Arrays.equals(operandSpecs, s.operandSpecs) && computeCost == s.computeCost
        && commCost == s.commCost && memoryBytes == s.memoryBytes;
  }

  @Override
  public int hashCode() {
    return name.hashCode() * 31 + Arrays.hashCode(operandSpecs);
  }

  @Override
  public String toString() {
    return name;
  }
}
