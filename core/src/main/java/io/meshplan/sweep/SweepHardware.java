package io.meshplan.sweep;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.Fabric;
import io.meshplan.cluster.GpuSpec;
import io.meshplan.cluster.HardwareCatalog;
import io.meshplan.util.InputException;
import java.io.Serializable;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The GPUs and fabrics a sweep's points may name, in a form that travels with the points' task to
 * another process ({@link io.meshplan.exec.TaskExecutor} may run them on Spark): meshplan's own
 * catalog ({@link Shipped}, looked up in the executor's process), or a catalog a user's file
 * extended, resolved to its priced GPUs and fabrics ({@link Given}; a {@link HardwareCatalog} is
 * not serializable, its resolved {@link GpuSpec} and {@link Fabric} records are).
 */
public sealed interface SweepHardware extends Serializable {
  /** meshplan's own catalog. */
  SweepHardware SHIPPED = new Shipped();

  /**
   * The hardware of a catalog: {@link #SHIPPED} for the shipped one, else its entries resolved.
   *
   * @param catalog the catalog the command was given
   * @return the hardware
   */
  static SweepHardware of(HardwareCatalog catalog) {
    if (catalog == HardwareCatalog.shipped()) {
      return SHIPPED;
    }
    Map<String, GpuSpec> gpus = new TreeMap<>();
    Map<String, String> defaults = new TreeMap<>();
    Map<String, Integer> hosts = new TreeMap<>();
    for (String n : catalog.acceptedGpuNames()) {
      io.meshplan.cluster.GpuEntry e = catalog.gpu(n).orElseThrow();
      gpus.put(n, e.spec());
      defaults.put(n, e.defaultFabric());
      hosts.put(n, e.hostGpus());
    }
    Map<String, Fabric> fabrics = new TreeMap<>();
    for (String n : catalog.fabricNames()) {
      fabrics.put(n, catalog.fabric(n).orElseThrow());
    }
    return new Given(gpus, defaults, fabrics, hosts);
  }

  /**
   * A GPU by its catalog name or unambiguous short name (case-insensitive).
   *
   * @param name the name
   * @return the GPU
   * @throws InputException naming the valid names when there is none of the name
   */
  GpuSpec gpu(String name);

  /**
   * A fabric by name (case-insensitive).
   *
   * @param name the name
   * @return the fabric
   * @throws InputException naming the valid names when there is none of the name
   */
  Fabric fabric(String name);

  /**
   * The fabric of a cluster of this GPU when the grid names none: its catalog entry's.
   *
   * @param gpu the GPU's name
   * @return the fabric's name
   * @throws InputException when there is no GPU of the name
   */
  String defaultFabric(String gpu);

  /**
   * The GPUs one host of a GPU holds: its NVLink domain where NVLink stops at the host, fewer on
   * rack-scale systems (GB200 and GB300 NVL72: 4 per compute tray), whose hosts a grid's nodes
   * name and whose NVLink domains {@link ClusterSpec#ofHosts} groups them into.
   *
   * @param gpu the GPU's name
   * @return GPUs per host
   */
  int hostGpus(String gpu);

  /** meshplan's own catalog, looked up in the process that plans the point. */
  record Shipped() implements SweepHardware {
    private static final long serialVersionUID = 1L;

    @Override
    public GpuSpec gpu(String name) {
      HardwareCatalog c = HardwareCatalog.shipped();
      return c.gpu(name).orElseThrow(() -> new InputException(c.unknownGpu(name))).spec();
    }

    @Override
    public Fabric fabric(String name) {
      HardwareCatalog c = HardwareCatalog.shipped();
      return c.fabric(name).orElseThrow(() -> new InputException(c.unknownFabric(name)));
    }

    @Override
    public String defaultFabric(String gpu) {
      return entry(gpu).defaultFabric();
    }

    @Override
    public int hostGpus(String gpu) {
      return entry(gpu).hostGpus();
    }

    private static io.meshplan.cluster.GpuEntry entry(String gpu) {
      return HardwareCatalog.shipped().gpu(gpu).orElseThrow(
          () -> new InputException("unknown gpu '" + gpu + "'"));
    }
  }

  /**
   * A catalog's GPUs and fabrics, resolved.
   *
   * @param gpus every name the catalog accepts for a GPU (lower case), to its GPU
   * @param defaultFabrics the same names, to the GPU's default fabric
   * @param fabrics fabric names (lower case), to the fabric
   * @param hostGpus the same names, to the GPUs one host holds ({@link #hostGpus})
   */
  record Given(Map<String, GpuSpec> gpus, Map<String, String> defaultFabrics,
      Map<String, Fabric> fabrics, Map<String, Integer> hostGpus) implements SweepHardware {
    private static final long serialVersionUID = 3L;

    /** Freezes the maps; every GPU has a default fabric of the catalog. */
    public Given {
      gpus = Map.copyOf(gpus);
      defaultFabrics = Map.copyOf(defaultFabrics);
      fabrics = Map.copyOf(fabrics);
      hostGpus = Map.copyOf(hostGpus);
      io.meshplan.util.Require.that(defaultFabrics.keySet().equals(gpus.keySet())
          && fabrics.keySet().containsAll(defaultFabrics.values()),
          "every GPU of a sweep's hardware has a default fabric of it");
    }

    @Override
    public GpuSpec gpu(String name) {
      GpuSpec g = gpus.get(name.toLowerCase(Locale.ROOT));
      if (g == null) {
        throw new InputException("unknown gpu '" + name + "'; valid: "
            + String.join(", ", new TreeMap<>(gpus).keySet()));
      }
      return g;
    }

    @Override
    public Fabric fabric(String name) {
      Fabric f = fabrics.get(name.toLowerCase(Locale.ROOT));
      if (f == null) {
        throw new InputException("unknown fabric '" + name + "'; valid: "
            + String.join(", ", new TreeMap<>(fabrics).keySet()));
      }
      return f;
    }

    @Override
    public String defaultFabric(String gpu) {
      return ofGpu(defaultFabrics, gpu);
    }

    @Override
    public int hostGpus(String gpu) {
      return ofGpu(hostGpus, gpu);
    }

    private static <T> T ofGpu(Map<String, T> byGpu, String gpu) {
      T v = byGpu.get(gpu.toLowerCase(Locale.ROOT));
      if (v == null) {
        throw new InputException("unknown gpu '" + gpu + "'");
      }
      return v;
    }
  }
}
