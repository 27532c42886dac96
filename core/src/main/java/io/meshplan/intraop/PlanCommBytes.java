package io.meshplan.intraop;

import io.meshplan.cluster.BusBytesCommModel;
import io.meshplan.graph.CallInliner;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ReshardingCost;
import io.meshplan.util.Require;
import java.util.List;

/**
 * The communication volume of a solved intra-operator plan, per instruction and mesh axis: the
 * bytes one GPU sends in the collectives the plan prices (Alpa, OSDI'22, section 4.1), counted with
 * the same rules as its cost. Each instruction's strategy is priced again with a {@link
 * BusBytesCommModel} per axis (strategy generation does not depend on the prices, so the lists
 * match index for index), and each operand's resharding is priced from the operand's chosen
 * layout to the layout the strategy requires, exactly as {@link CostGraph} does. An instruction
 * inlined from a loop body counts every iteration ({@link CallInliner#repeat}).
 *
 * <p>Bytes follow the nccl-tests bus-bandwidth convention (see {@link BusBytesCommModel}): a ring
 * all-reduce of an {@code S}-byte buffer over {@code n} GPUs sends {@code 2(n-1)/n * S} bytes per
 * GPU, an all-gather or reduce-scatter {@code (n-1)/n * S}.
 *
 * @param strategyBytes per instruction id and axis, bytes one GPU sends in the collectives the
 *     chosen strategy performs itself (for example the all-reduce or reduce-scatter of a split
 *     contraction)
 * @param reshardingBytes per instruction id and axis, bytes one GPU sends to bring the operands
 *     into the layouts the chosen strategy requires
 */
public record PlanCommBytes(double[][] strategyBytes, double[][] reshardingBytes) {
  /** Copies the arrays and checks that they agree in shape. */
  public PlanCommBytes {
    Require.that(strategyBytes.length == reshardingBytes.length,
        "one row per instruction in both arrays");
    strategyBytes = deepCopy(strategyBytes);
    reshardingBytes = deepCopy(reshardingBytes);
  }

  /**
   * Counts the bytes of a plan.
   *
   * @param plan the solved plan
   * @return its communication volume
   * @throws IllegalStateException when the strategies generated again differ from the plan's (a
   *     bug: generation must not depend on the prices)
   */
  public static PlanCommBytes of(ShardingPlan plan) {
    Graph g = plan.graph();
    MeshEnv env = plan.env();
    int axes = env.mesh().rank();
    int n = g.size();
    double[][] strategy = new double[n][axes];
    double[][] reshard = new double[n][axes];
    int[] choice = plan.costGraph().instructionChoice(plan.solution().choice());
    for (int a = 0; a < axes; a++) {
      if (env.mesh().size(a) == 1) {
        continue;
      }
      BusBytesCommModel bytes = new BusBytesCommModel(env.mesh(), a);
      List<StrategySet> sets = new StrategyGenerator(g,
          new MeshEnv(bytes, env.memoryPerDevice(), env.compute()), plan.local()).generate();
      for (Instruction ins : g.instructions()) {
        Strategy chosen = plan.strategy(ins.id());
        Strategy again = sets.get(ins.id()).get(choice[ins.id()]);
        if (!again.name().equals(chosen.name())) {
          throw new IllegalStateException("strategies of " + ins.name() + " differ when priced "
              + "in bytes: " + again.name() + " vs " + chosen.name());
        }
        double rep = CallInliner.repeat(ins);
        strategy[ins.id()][a] = rep * again.commCost();
        for (int k = 0; k < ins.operands().size(); k++) {
          int op = ins.operand(k);
          if (g.get(op).shape() instanceof TensorShape shape) {
            reshard[ins.id()][a] += rep * ReshardingCost.of(shape, plan.spec(op),
                chosen.operandSpec(k), bytes);
          }
        }
      }
    }
    return new PlanCommBytes(strategy, reshard);
  }

  /**
   * The number of instructions.
   *
   * @return rows
   */
  public int instructions() {
    return strategyBytes.length;
  }

  /**
   * All bytes one instruction sends per GPU on each axis: its strategy's collectives plus the
   * resharding of its operands.
   *
   * @param id the instruction id
   * @return bytes per axis
   */
  public double[] bytes(int id) {
    double[] out = strategyBytes[id].clone();
    for (int a = 0; a < out.length; a++) {
      out[a] += reshardingBytes[id][a];
    }
    return out;
  }

  /**
   * All bytes of one instruction on one axis.
   *
   * @param id the instruction id
   * @param axis the mesh axis
   * @return bytes one GPU sends
   */
  public double bytes(int id, int axis) {
    return strategyBytes[id][axis] + reshardingBytes[id][axis];
  }

  /**
   * The plan's bytes on one axis.
   *
   * @param axis the mesh axis
   * @return bytes one GPU sends over the whole computation
   */
  public double totalBytes(int axis) {
    double t = 0;
    for (int i = 0; i < strategyBytes.length; i++) {
      t += bytes(i, axis);
    }
    return t;
  }

  @Override
  public double[][] strategyBytes() {
    return deepCopy(strategyBytes);
  }

  @Override
  public double[][] reshardingBytes() {
    return deepCopy(reshardingBytes);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PlanCommBytes v
        && java.util.Arrays.deepEquals(strategyBytes, v.strategyBytes)
        && java.util.Arrays.deepEquals(reshardingBytes, v.reshardingBytes);
  }

  @Override
  public int hashCode() {
    return java.util.Arrays.deepHashCode(strategyBytes) * 31
        + java.util.Arrays.deepHashCode(reshardingBytes);
  }

  @Override
  public String toString() {
    return "PlanCommBytes[" + strategyBytes.length + " instructions]";
  }

  private static double[][] deepCopy(double[][] m) {
    double[][] c = new double[m.length][];
    for (int i = 0; i < m.length; i++) {
      c[i] = m[i].clone();
    }
    return c;
  }
}
