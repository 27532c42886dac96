package io.meshplan.intraop;

import io.meshplan.graph.Graph;
import io.meshplan.sharding.ShardingSpec;
import io.meshplan.util.Require;
import java.util.Map;

/**
 * One intra-operator planning job as plain data: what {@code meshplan shard} asks of {@link
 * AutoSharding#shard}.
 *
 * @param graph the computation (a preset's graph, or an HLO module's entry with its calls inlined)
 * @param env the mesh, its prices and the memory budget of one device
 * @param solver how to solve the ILP
 * @param residentParameters true when parameters occupy memory for the whole step; false for
 *     Alpa's prototype, where a parameter is live from its position in the graph to its last use
 * @param fixed required result layouts by instruction id (for example shardings already in an
 *     HLO module); layouts no strategy has are reported and not kept
 */
public record ShardRequest(Graph graph, MeshEnv env, SolverOptions solver,
    boolean residentParameters, Map<Integer, ShardingSpec> fixed) {
  /** Validates the fields and copies the map. */
  public ShardRequest {
    Require.nonNull(graph, "graph");
    Require.nonNull(env, "env");
    Require.nonNull(solver, "solver");
    fixed = Map.copyOf(fixed);
  }
}
