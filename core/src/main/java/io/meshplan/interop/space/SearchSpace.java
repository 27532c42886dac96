package io.meshplan.interop.space;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.InputException;
import java.util.List;

/**
 * The stages a request's search considers: Alpa's submesh shapes in multiples of {@code granule}
 * nodes ({@link SubmeshShape#nodeGranule}), whole nodes only where the request's runtime cannot
 * place smaller submeshes ({@link io.meshplan.plan.RuntimeSpace#subNodeSubmeshes}), and layer
 * ranges that start and end on multiples of
 * {@code group} layers ({@link SubmeshShape#layerGroup}).
 *
 * @param granule stages use multiples of this many nodes (1: any Alpa shape)
 * @param shapes the submesh shapes
 * @param group stages start and end on multiples of this many layers
 */
public record SearchSpace(int granule, List<SubmeshShape> shapes, int group) {
  /**
   * The most (first layer, last layer, submesh) cells a stage table may have: the DP keeps arrays
   * of this size, so the bound keeps memory and time polynomial and small (a 126-layer model on
   * 52 submesh shapes needs 825,552 cells).
   */
  public static final long MAX_TABLE_CELLS = 1L << 25;

  /**
   * The space of a request.
   *
   * @param req the request
   * @return the space
   * @throws InputException when the stage table would exceed {@link #MAX_TABLE_CELLS}
   */
  public static SearchSpace of(PlanRequest req) {
    ModelSpec model = req.model();
    ClusterSpec cluster = req.cluster();
    int granule = SubmeshShape.nodeGranule(cluster.nodes(), cluster.gpusPerNode(),
        model.layers());
    List<SubmeshShape> shapes = SubmeshShape.shapes(cluster.nodes(), cluster.gpusPerNode(),
        granule);
    if (!req.runtime().subNodeSubmeshes(cluster.gpusPerNode())) {
      // The runtime cannot place submeshes smaller than a node on nodes of this size.
      shapes = shapes.stream().filter(s -> s.devices() >= cluster.gpusPerNode()).toList();
    }
    // layers^2 x shapes in a double: at layers 2^31-1 and 52 shapes it is 2.4e20, past a long.
    double cells = (double) model.layers() * model.layers() * shapes.size();
    if (cells > MAX_TABLE_CELLS) {
      throw new InputException("the stage table of " + model.layers()
          + " layers on " + shapes.size() + " submesh shapes has " + String.format(
          java.util.Locale.ROOT, "%.0f", cells) + " cells, more than "
          + "the limit of " + MAX_TABLE_CELLS + "; plan at most "
          + (long) Math.sqrt((double) MAX_TABLE_CELLS / shapes.size()) + " layers on this cluster");
    }
    long units = granule == 1 ? (long) cluster.nodes() * cluster.gpusPerNode()
        : cluster.nodes() / granule;
    int group = SubmeshShape.layerGroup(model.layers(), shapes.size(), units);
    return new SearchSpace(granule, shapes, group);
  }
}
