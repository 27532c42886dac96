package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.HardwareCatalog;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --catalog FILE}, shared by every command that takes {@code --cluster}. */
final class CatalogOption {
  @Option(names = "--catalog", paramLabel = "FILE", description = "A YAML hardware catalog "
      + "whose GPUs and fabrics add to meshplan's own, or replace an entry of the same name "
      + "(the form of the shipped catalog.yaml: gpus: and fabrics: lists, each GPU with name, "
      + "architecture, peakTflops, memoryGiB, hbmGBps, nvlinkDomain, nvlinkGBpsPerDirection, "
      + "defaultFabric and source); --cluster, or a sweep grid's gpus and fabrics, may then "
      + "name them.")
  Path file;

  private HardwareCatalog loaded;

  /**
   * The hardware {@code --cluster} may name: the shipped catalog with {@code --catalog}'s entries.
   *
   * @return the catalog
   */
  HardwareCatalog catalog() {
    if (loaded == null) {
      loaded = file == null ? HardwareCatalog.shipped()
          : HardwareCatalog.shipped().with(file);
    }
    return loaded;
  }

  /**
   * Takes the catalog a plan file carries ({@link PlanFile#adoptCatalog}) when {@code --catalog}
   * is absent: the plan names GPUs and fabrics of the catalog it was planned with.
   *
   * @param carried the shipped catalog with the entries the plan carries
   */
  void adopt(HardwareCatalog carried) {
    if (file == null) {
      loaded = carried;
    }
  }

  /**
   * Parses a cluster string or file against {@link #catalog}, with {@code --cluster}'s name at
   * the head of its refusals.
   *
   * @param text the cluster
   * @return the cluster
   */
  ClusterSpec cluster(String text) {
    HardwareCatalog c = catalog();
    return FlagWords.call(FlagWords.CLUSTER, () -> ClusterSpec.parse(text, c));
  }

  /**
   * The cluster a cluster file's mapping, already read, describes against {@link #catalog},
   * with {@code --cluster}'s name at the head of its refusals.
   *
   * @param where the file, for messages
   * @param description the file's top-level mapping
   * @return the cluster
   */
  ClusterSpec ofDescription(String where, com.fasterxml.jackson.databind.JsonNode description) {
    HardwareCatalog c = catalog();
    return FlagWords.call(FlagWords.CLUSTER, () -> ClusterSpec.ofDescription(where, description,
        c));
  }
}
