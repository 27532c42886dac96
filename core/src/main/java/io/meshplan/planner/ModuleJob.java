package io.meshplan.planner;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.Graph;
import io.meshplan.util.Require;

/**
 * One XLA training step to plan or simulate on a cluster ({@code plan --hlo}, and {@code
 * simulate --plan} of a module's plan), as the command line parsed it: the module's entry
 * computation with its calls inlined, the cluster, where prices come from, the memory a plan may
 * use on one GPU and whether the framework overlaps the gradient reduction with the backward
 * pass. {@link ModulePlanner} prices it.
 *
 * @param graph the module's entry computation, calls inlined
 * @param cluster the cluster
 * @param pricing the collective, send/recv and compute prices
 * @param memoryPerGpu memory a plan may use on one GPU, bytes
 * @param overlapGradReduce whether the gradient reduction overlaps with the backward pass
 */
public record ModuleJob(Graph graph, ClusterSpec cluster, Pricing pricing, double memoryPerGpu,
    boolean overlapGradReduce) {
  /** Validates the job. */
  public ModuleJob {
    Require.nonNull(graph, "graph");
    Require.nonNull(cluster, "cluster");
    Require.nonNull(pricing, "pricing");
    Require.that(memoryPerGpu > 0 && memoryPerGpu < Double.POSITIVE_INFINITY,
        "memory per GPU must be a positive number of bytes");
  }
}
