package io.meshplan.cluster;

import io.meshplan.util.Require;

/**
 * One fabric of a hardware catalog ({@link HardwareCatalog}).
 *
 * @param fabric the fabric as meshplan prices it
 * @param source where its numbers come from, in words
 */
public record FabricEntry(Fabric fabric, String source) {
  /** Checks the fields. */
  public FabricEntry {
    Require.nonNull(fabric, "fabric");
    Require.nonNull(source, "source");
  }
}
