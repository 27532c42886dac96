package io.meshplan.cluster;

/** Factories for the {@link CommModel}s of a real cluster. */
public final class ClusterCommModels {
  private ClusterCommModels() {}

  /**
   * The catalog model: datasheet NVLink and NIC bandwidths, priced hierarchically (see {@link
   * CatalogCommModel}).
   *
   * @param cluster the cluster
   * @param mesh the logical mesh, mapped row-major onto device ids (GPUs of one node consecutive)
   * @return the model; costs in seconds
   */
  public static CatalogCommModel catalog(ClusterSpec cluster, LogicalMesh mesh) {
    return new CatalogCommModel(cluster, mesh);
  }
}
