package io.meshplan.intraop;

import io.meshplan.graph.CallInliner;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.intraop.solve.SolveStatus;
import io.meshplan.sharding.HloShardingText;
import io.meshplan.sharding.ReshardingCost;
import io.meshplan.sharding.ShardingSpec;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;

/**
 * An intra-operator plan as users and renderers see it, free of solver internals (decision
 * variables, edge matrices): per instruction its strategy, layout, costs and bytes sent, and the
 * plan's totals. Built from a solved {@link ShardingPlan} by {@link #of}.
 *
 * @param mesh the logical mesh shape, e.g. {@code [50, 4]}
 * @param unit the unit of every cost
 * @param status the solver's outcome
 * @param objective the objective of the chosen strategies (Alpa, OSDI'22, section 4.2)
 * @param bound the solver's proven lower bound on the objective
 * @param nodeCost the node part of the objective as the independent evaluator splits it: compute,
 *     the strategies' collectives and resharding between instructions that share a decision node
 * @param edgeCost the edge part: resharding between decision nodes
 * @param peakMemoryBytes the largest memory per device over the program, bytes
 * @param memoryPerDeviceBytes the memory budget of one device, bytes
 * @param strategySeconds wall time to enumerate strategies and build the cost graph, seconds
 * @param solveSeconds wall time of the solve, seconds
 * @param decisionNodes decision nodes of the ILP after follower merging
 * @param coreNodes nodes left for the general solver after exact reductions
 * @param instructions one entry per instruction, in id order
 */
public record IntraOpPlan(int[] mesh, CostUnit unit, SolveStatus status, double objective,
    double bound, double nodeCost, double edgeCost, double peakMemoryBytes,
    double memoryPerDeviceBytes, double strategySeconds, double solveSeconds, int decisionNodes,
    int coreNodes, List<InstructionCost> instructions) {
  /** Validates the fields and copies the mesh and the list. */
  public IntraOpPlan {
    mesh = mesh.clone();
    Require.nonNull(unit, "unit");
    Require.nonNull(status, "status");
    instructions = List.copyOf(instructions);
    int axes = mesh.length;
    for (InstructionCost c : instructions) {
      Require.that(c.commBytesPerAxis().length == axes, () -> "instruction " + c.name()
          + " has bytes for " + c.commBytesPerAxis().length + " axes, the mesh has " + axes);
    }
  }

  /**
   * Describes a solved plan. Each instruction's costs are priced as {@link CostGraph} prices
   * them: its strategy's compute and collectives, plus the resharding of each tensor operand
   * from that operand's chosen layout to the layout the strategy requires, times the
   * instruction's loop repeat count.
   *
   * @param plan the solved plan
   * @return the description
   */
  public static IntraOpPlan of(ShardingPlan plan) {
    Graph g = plan.graph();
    MeshEnv env = plan.env();
    int[] choice = plan.costGraph().instructionChoice(plan.solution().choice());
    List<StrategySet> sets = plan.costGraph().strategies();
    Strategy[] chosen = new Strategy[g.size()];
    for (int i = 0; i < chosen.length; i++) {
      chosen[i] = sets.get(i).get(choice[i]);
    }
    PlanCommBytes volume = PlanCommBytes.of(plan);
    List<InstructionCost> list = new ArrayList<>(g.size());
    for (Instruction ins : g.instructions()) {
      Strategy st = chosen[ins.id()];
      long rep = CallInliner.repeat(ins);
      double reshard = 0;
      for (int k = 0; k < ins.operands().size(); k++) {
        int op = ins.operand(k);
        if (g.get(op).shape() instanceof TensorShape shape) {
          reshard += ReshardingCost.of(shape, chosen[op].output(), st.operandSpec(k), env.comm());
        }
      }
      list.add(new InstructionCost(ins.id(), ins.name(), ins.opcode().hloName(),
          ins.shape().toHlo(), st.name(), sharding(g, ins, chosen, env), rep,
          rep * st.computeCost(), rep * st.commCost(), rep * reshard, st.memoryBytes(),
          volume.bytes(ins.id())));
    }
    return new IntraOpPlan(env.mesh().shape(), CostUnit.of(env), plan.solution().status(),
        plan.objective(), plan.solution().bound(), plan.evaluation().nodeCost(),
        plan.evaluation().edgeCost(), plan.evaluation().peakMemoryBytes(), env.memoryPerDevice(),
        plan.strategySeconds(), plan.solution().seconds(),
        plan.costGraph().problem().nodeCount(), plan.solution().coreNodes(), list);
  }

  /** As {@link ShardingPlan#hloSharding}, from the chosen strategies. */
  private static String sharding(Graph g, Instruction ins, Strategy[] chosen, MeshEnv env) {
    ShardingSpec s = chosen[ins.id()].output();
    if (s != null) {
      return HloShardingText.format(s, env.mesh());
    }
    if (ins.opcode() != Opcode.TUPLE) {
      return "{replicated}";
    }
    StringBuilder sb = new StringBuilder("{");
    for (int k = 0; k < ins.operands().size(); k++) {
      ShardingSpec os = chosen[ins.operand(k)].output();
      sb.append(k > 0 ? ", " : "")
          .append(os == null ? "{replicated}" : HloShardingText.format(os, env.mesh()));
    }
    return sb.append('}').toString();
  }

  /**
   * The compute costs of all instructions.
   *
   * @return the sum, in {@link #unit()}
   */
  public double computeCost() {
    return instructions.stream().mapToDouble(InstructionCost::compute).sum();
  }

  /**
   * The costs of the strategies' own collectives.
   *
   * @return the sum, in {@link #unit()}
   */
  public double communicationCost() {
    return instructions.stream().mapToDouble(InstructionCost::communication).sum();
  }

  /**
   * The resharding costs.
   *
   * @return the sum, in {@link #unit()}
   */
  public double reshardingCost() {
    return instructions.stream().mapToDouble(InstructionCost::resharding).sum();
  }

  /**
   * The bytes one GPU sends per mesh axis over the whole program.
   *
   * @return bytes per axis
   */
  public double[] commBytesPerAxis() {
    double[] out = new double[mesh.length];
    for (InstructionCost c : instructions) {
      double[] b = c.commBytesPerAxis();
      for (int a = 0; a < out.length; a++) {
        out[a] += b[a];
      }
    }
    return out;
  }

  @Override
  public int[] mesh() {
    return mesh.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IntraOpPlan p && java.util.Arrays.equals(mesh, p.mesh) && unit == p.unit
        && status == p.status && objective == p.objective && bound == p.bound
        && nodeCost == p.nodeCost && edgeCost == p.edgeCost
        && peakMemoryBytes == p.peakMemoryBytes && memoryPerDeviceBytes == p.memoryPerDeviceBytes
        && strategySeconds == p.strategySeconds && solveSeconds == p.solveSeconds
        && decisionNodes == p.decisionNodes && coreNodes == p.coreNodes
        && instructions.equals(p.instructions);
  }

  @Override
  public int hashCode() {
    return java.util.Arrays.hashCode(mesh) * 31 + instructions.hashCode();
  }

  @Override
  public String toString() {
    return "IntraOpPlan[mesh=" + java.util.Arrays.toString(mesh) + ", " + status + ", objective "
        + objective + " " + unit.label() + ", " + instructions.size() + " instructions]";
  }
}
