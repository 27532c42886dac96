package io.meshplan.intraop;

import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Opcode;
import io.meshplan.intraop.ilp.Evaluation;
import io.meshplan.intraop.solve.IlpSolution;
import io.meshplan.sharding.HloShardingText;
import io.meshplan.sharding.ShardingSpec;
import java.util.List;

/**
 * The result of intra-operator planning: a strategy for every instruction.
 *
 * @param costGraph the cost graph that was solved
 * @param env the mesh environment
 * @param solution the solver's answer over the cost graph's nodes
 * @param evaluation the independent evaluation of that answer
 * @param strategySeconds time to enumerate strategies and build the cost graph, seconds
 * @param opaqueOps names of instructions planned conservatively because the generator cannot see
 *     into them
 * @param notKept one line per requested fixed sharding that could not be honoured
 * @param local the ids of the device-local instructions the strategies were generated with
 */
public record ShardingPlan(
    CostGraph costGraph, MeshEnv env, IlpSolution solution, Evaluation evaluation,
    double strategySeconds, List<String> opaqueOps, List<String> notKept,
    java.util.BitSet local) {
  /** Copies the lists. */
  public ShardingPlan {
    opaqueOps = List.copyOf(opaqueOps);
    notKept = List.copyOf(notKept);
    local = (java.util.BitSet) local.clone();
  }

  /**
   * The device-local instructions (a copy).
   *
   * @return their ids
   */
  @Override
  public java.util.BitSet local() {
    return (java.util.BitSet) local.clone();
  }

  /**
   * The graph.
   *
   * @return the planned computation
   */
  public Graph graph() {
    return costGraph.graph();
  }

  /**
   * The strategy an instruction takes.
   *
   * @param id the instruction id
   * @return its strategy
   */
  public Strategy strategy(int id) {
    int node = costGraph.nodeOf()[id];
    return costGraph.strategies().get(id).get(solution.choice()[node]);
  }

  /**
   * The layout of an instruction's result.
   *
   * @param id the instruction id
   * @return the spec, or null for tuples
   */
  public ShardingSpec spec(int id) {
    return strategy(id).output();
  }

  /**
   * The XLA {@code HloSharding} text of an instruction's result.
   *
   * @param id the instruction id
   * @return e.g. {@code {devices=[2,2]0,2,1,3}}; tuples give their elements' texts
   */
  public String hloSharding(int id) {
    ShardingSpec s = spec(id);
    if (s != null) {
      return HloShardingText.format(s, env.mesh());
    }
    Instruction ins = graph().get(id);
    if (ins.opcode() != Opcode.TUPLE) {
      return "{replicated}";
    }
    StringBuilder sb = new StringBuilder("{");
    for (int k = 0; k < ins.operands().size(); k++) {
      ShardingSpec os = spec(ins.operand(k));
      sb.append(k > 0 ? ", " : "")
          .append(os == null ? "{replicated}" : HloShardingText.format(os, env.mesh()));
    }
    return sb.append('}').toString();
  }

  /**
   * The objective.
   *
   * @return the total cost in the cost model's unit
   */
  public double objective() {
    return solution.objective();
  }
}
