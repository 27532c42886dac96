package io.meshplan.planner;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.Graph;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.sharding.ShardingSpec;
import io.meshplan.util.Require;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * One computation to shard on one logical mesh ({@code meshplan shard}), as the command line
 * parsed it; {@link Planner#shard} prices and solves it.
 *
 * @param graph the computation (a preset's forward graph, or an HLO module's entry, inlined)
 * @param mesh the logical mesh
 * @param prices how the mesh's collectives are priced
 * @param memoryPerDevice memory budget of one device, bytes
 * @param solver how to solve the ILP
 * @param residentParameters true when parameters occupy memory for the whole step; false for
 *     Alpa's liveness from their position to their last use
 * @param fixed required result layouts by instruction id (shardings kept from a module)
 */
public record ShardJob(Graph graph, LogicalMesh mesh, Prices prices, double memoryPerDevice,
    SolverOptions solver, boolean residentParameters, Map<Integer, ShardingSpec> fixed) {
  /**
   * The memory budget of one device priced in abstract units, when none is given: 32 GiB, the
   * default {@code meshplan shard --memory} has always documented for a mesh without a cluster
   * (on a cluster the budget is the GPU's memory).
   */
  public static final double UNITS_MEMORY_BYTES = 32.0 * (1L << 30);

  /** Validates the job. */
  public ShardJob {
    Require.nonNull(graph, "graph");
    Require.nonNull(mesh, "mesh");
    Require.nonNull(prices, "prices");
    Require.that(memoryPerDevice > 0 && memoryPerDevice < Double.POSITIVE_INFINITY,
        "the memory of one device must be a positive, finite number of bytes");
    Require.nonNull(solver, "solver");
    fixed = Map.copyOf(fixed);
  }

  /** Where the mesh's prices come from. */
  public sealed interface Prices permits Units, OnCluster {}

  /**
   * Alpa's abstract alpha-beta units, one latency and inverse bandwidth per mesh axis; no
   * kernel times.
   *
   * @param alpha latency per axis
   * @param beta inverse bandwidth per axis
   */
  public record Units(List<Double> alpha, List<Double> beta) implements Prices {
    /** Copies the values. */
    public Units {
      alpha = List.copyOf(alpha);
      beta = List.copyOf(beta);
    }

    /**
     * Units from per-axis arrays.
     *
     * @param alpha latency per axis
     * @param beta inverse bandwidth per axis
     * @return the units
     */
    public static Units of(double[] alpha, double[] beta) {
      return new Units(Arrays.stream(alpha).boxed().toList(),
          Arrays.stream(beta).boxed().toList());
    }

    /**
     * One unit of latency and inverse bandwidth on every axis, Alpa's default.
     *
     * @param axes the mesh's axes
     * @return the units
     */
    public static Units ones(int axes) {
      List<Double> d = java.util.Collections.nCopies(axes, 1.0);
      return new Units(d, d);
    }

    /**
     * The latencies as an array.
     *
     * @return alpha per axis
     */
    public double[] alphas() {
      return alpha.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /**
     * The inverse bandwidths as an array.
     *
     * @return beta per axis
     */
    public double[] betas() {
      return beta.stream().mapToDouble(Double::doubleValue).toArray();
    }
  }

  /**
   * A cluster's GPU and fabric with a {@link Pricing}, the mesh placed on its first devices.
   *
   * @param cluster the cluster
   * @param pricing the catalog's or a profile's prices
   */
  public record OnCluster(ClusterSpec cluster, Pricing pricing) implements Prices {
    /** Validates the fields. */
    public OnCluster {
      Require.nonNull(cluster, "cluster");
      Require.nonNull(pricing, "pricing");
    }
  }
}
