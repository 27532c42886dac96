package io.meshplan.cluster;

import io.meshplan.util.Require;
import java.util.List;
import java.util.OptionalDouble;

/**
 * One GPU of a hardware catalog ({@link HardwareCatalog}): what meshplan prices with, the names it
 * answers to and what the catalog says about it besides.
 *
 * @param spec the priced GPU (name, architecture, peaks, memory, NVLink)
 * @param aliases short names that also mean it, lower case; one that two entries give is
 *     ambiguous
 * @param defaultFabric the catalog fabric of a cluster string that names none
 * @param powerWatts the board power limit, W, when the datasheet gives it
 * @param boostClockMhz the boost clock, MHz, when NVIDIA publishes it
 * @param source where the numbers come from, in words
 */
public record GpuEntry(GpuSpec spec, List<String> aliases, String defaultFabric,
    OptionalDouble powerWatts, OptionalDouble boostClockMhz, String source) {
  /** Checks the fields and freezes the aliases. */
  public GpuEntry {
    Require.nonNull(spec, "gpu spec");
    aliases = List.copyOf(aliases);
    Require.nonNull(defaultFabric, "default fabric");
    Require.nonNull(powerWatts, "power");
    Require.nonNull(boostClockMhz, "boost clock");
    Require.nonNull(source, "source");
  }

  /**
   * The catalog name.
   *
   * @return the spec's name
   */
  public String name() {
    return spec.name();
  }
}
