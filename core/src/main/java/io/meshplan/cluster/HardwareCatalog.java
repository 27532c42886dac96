package io.meshplan.cluster;

import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.Require;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The GPUs and fabrics a cluster may name, as data: meshplan's own, read from the {@code
 * catalog.yaml} resource beside this class (each entry with its datasheet citation), and what a
 * user's catalog file adds or replaces by name ({@link #with}). Nothing here knows a GPU by its
 * name: the architecture an entry states chooses its kernel tables ({@link Architecture}).
 *
 * <p>A catalog is immutable; {@link #shipped} is read once per process.
 */
public final class HardwareCatalog {
  private static final String RESOURCE = "catalog.yaml";
  private static final HardwareCatalog SHIPPED = readShipped();

  private final Map<String, GpuEntry> gpus;
  private final Map<String, FabricEntry> fabrics;
  private final Map<String, List<String>> aliases;

  private HardwareCatalog(Map<String, GpuEntry> gpus, Map<String, FabricEntry> fabrics,
      String where) {
    this.gpus = Map.copyOf(gpus);
    this.fabrics = Map.copyOf(fabrics);
    Map<String, List<String>> a = new TreeMap<>();
    for (GpuEntry g : new TreeMap<>(gpus).values()) {
      if (!fabrics.containsKey(g.defaultFabric())) {
        throw new InputException(where + ": gpu '" + g.name() + "' has defaultFabric '"
            + g.defaultFabric() + "', which is not a catalog fabric; valid: "
            + String.join(", ", new TreeMap<>(fabrics).keySet()));
      }
      for (String alias : g.aliases()) {
        if (gpus.containsKey(alias)) {
          throw new InputException(where + ": gpu '" + g.name() + "' gives the alias '" + alias
              + "', which is the name of another catalog gpu");
        }
        a.computeIfAbsent(alias, k -> new ArrayList<>()).add(g.name());
      }
    }
    this.aliases = Map.copyOf(a);
  }

  /**
   * meshplan's own catalog.
   *
   * @return the catalog read from the {@code catalog.yaml} resource
   */
  public static HardwareCatalog shipped() {
    return SHIPPED;
  }

  private static HardwareCatalog readShipped() {
    try (InputStream in = HardwareCatalog.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("the resource " + RESOURCE + " is missing");
      }
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return new HardwareCatalog(Map.of(), Map.of(), RESOURCE).with(
          CatalogReader.read(text, RESOURCE), RESOURCE);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * This catalog with a user's catalog file's entries, each added or replacing the entry of its
   * name (aliases come with their entry).
   *
   * @param file a YAML catalog in the form of the shipped one
   * @return the new catalog
   * @throws InputException naming the file and what is wrong with it
   */
  public HardwareCatalog with(Path file) {
    InputFiles.checkRegular(file, "YAML catalog");
    return with(InputFiles.readString(file, InputFiles.CLUSTER_MAX_BYTES, "YAML catalog"),
        file.toString());
  }

  /**
   * This catalog with the entries of a catalog file's text, as {@link #with(Path)} reads the file
   * (a plan file carries its {@code --catalog} so).
   *
   * @param text the catalog's YAML, at most {@link InputFiles#CLUSTER_MAX_BYTES} bytes
   * @param where where the text was found, for messages
   * @return the new catalog
   * @throws InputException naming {@code where} and what is wrong with it
   */
  public HardwareCatalog with(String text, String where) {
    Require.nonNull(text, "catalog text");
    if (text.length() > InputFiles.CLUSTER_MAX_BYTES) {
      throw new InputException(where + ": a catalog of more than " + InputFiles.CLUSTER_MAX_BYTES
          + " characters");
    }
    return with(CatalogReader.read(text, where), where);
  }

  /**
   * This catalog with one more GPU (or one replacing the GPU of its name).
   *
   * @param entry the GPU
   * @param where where it was read, for messages
   * @return the new catalog
   */
  public HardwareCatalog with(GpuEntry entry, String where) {
    return with(new CatalogReader.Entries(List.of(entry), List.of()), where);
  }

  private HardwareCatalog with(CatalogReader.Entries e, String where) {
    Map<String, GpuEntry> g = new LinkedHashMap<>(gpus);
    Map<String, FabricEntry> f = new LinkedHashMap<>(fabrics);
    List<String> seen = new ArrayList<>();
    for (GpuEntry x : e.gpus()) {
      once(seen, "gpu " + x.name(), where);
      g.put(x.name(), x);
    }
    for (FabricEntry x : e.fabrics()) {
      once(seen, "fabric " + x.fabric().name(), where);
      f.put(x.fabric().name(), x);
    }
    return new HardwareCatalog(g, f, where);
  }

  private static void once(List<String> seen, String what, String where) {
    if (seen.contains(what)) {
      throw new InputException(where + ": " + what + " is given twice");
    }
    seen.add(what);
  }

  /**
   * Looks a GPU up by its catalog name or a short name only it gives (case-insensitive).
   *
   * @param name the name
   * @return the entry, or empty
   */
  public Optional<GpuEntry> gpu(String name) {
    String key = name.toLowerCase(Locale.ROOT);
    List<String> a = aliases.get(key);
    return Optional.ofNullable(gpus.get(a != null && a.size() == 1 ? a.get(0) : key));
  }

  /**
   * Looks a fabric up by name (case-insensitive).
   *
   * @param name the name
   * @return the fabric, or empty
   */
  public Optional<Fabric> fabric(String name) {
    return Optional.ofNullable(fabrics.get(name.toLowerCase(Locale.ROOT)))
        .map(FabricEntry::fabric);
  }

  /**
   * The GPU names, sorted.
   *
   * @return the names
   */
  public List<String> gpuNames() {
    return gpus.keySet().stream().sorted().toList();
  }

  /**
   * Every name {@link #gpu} accepts, sorted: the catalog names and the unambiguous short names.
   *
   * @return the names
   */
  public List<String> acceptedGpuNames() {
    return java.util.stream.Stream.concat(gpus.keySet().stream(), aliases.entrySet().stream()
        .filter(e -> e.getValue().size() == 1).map(Map.Entry::getKey)).sorted().toList();
  }

  /**
   * The fabric names, sorted.
   *
   * @return the names
   */
  public List<String> fabricNames() {
    return fabrics.keySet().stream().sorted().toList();
  }

  /**
   * Why a name is not a GPU, in words, listing the accepted names.
   *
   * @param name the name {@link #gpu} did not know
   * @return e.g. {@code unknown gpu 'a100': it is a100-40gb or a100-80gb; valid: ...}
   */
  public String unknownGpu(String name) {
    List<String> could = aliases.get(name.toLowerCase(Locale.ROOT));
    StringBuilder b = new StringBuilder("unknown gpu '").append(name).append("'");
    if (could != null && could.size() > 1) {
      b.append(": it is ").append(String.join(" or ", could));
    }
    b.append("; valid: ");
    List<String> words = new ArrayList<>();
    for (String n : gpuNames()) {
      String alias = aliases.entrySet().stream()
          .filter(e -> e.getValue().equals(List.of(n))).map(Map.Entry::getKey)
          .findFirst().orElse(null);
      words.add(alias == null ? n : n + " (or " + alias + ")");
    }
    return b.append(String.join(", ", words)).toString();
  }

  /**
   * The message for a fabric name this catalog does not have.
   *
   * @param name the name
   * @return {@code unknown fabric 'x'; valid: ...}
   */
  public String unknownFabric(String name) {
    return "unknown fabric '" + name + "'; valid: " + String.join(", ", fabricNames());
  }
}
