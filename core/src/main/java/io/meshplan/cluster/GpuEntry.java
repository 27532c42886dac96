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
 * @param hostGpus the GPUs one host (one operating system, one launcher) holds: the NVLink
 *     domain where NVLink stops at the host, 4 per compute tray on GB200 and GB300 NVL72
 */
public record GpuEntry(GpuSpec spec, List<String> aliases, String defaultFabric,
    OptionalDouble powerWatts, OptionalDouble boostClockMhz, String source, int hostGpus) {
  /**
   * An entry whose host holds its whole NVLink domain.
   *
   * @param spec the GPU
   * @param aliases short names
   * @param defaultFabric the fabric a cluster string naming none gets
   * @param powerWatts the board power, if given
   * @param boostClockMhz the boost clock, if given
   * @param source where the figures come from
   */
  public GpuEntry(GpuSpec spec, List<String> aliases, String defaultFabric,
      OptionalDouble powerWatts, OptionalDouble boostClockMhz, String source) {
    this(spec, aliases, defaultFabric, powerWatts, boostClockMhz, source, spec.nvlinkDomain());
  }

  /** Checks the fields and freezes the aliases. */
  public GpuEntry {
    Require.nonNull(spec, "gpu spec");
    Require.that(hostGpus > 0 && spec.nvlinkDomain() % hostGpus == 0, "gpu " + spec.name()
        + ": GPUs per host must divide the NVLink domain of " + spec.nvlinkDomain() + ", got "
        + hostGpus);
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
