package io.meshplan.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.calibrate.Profile;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.HardwareCatalog;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.JsonErrors;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A plan file as one command reads it: read once, its text parsed as the plan ({@link #plan})
 * and as a JSON tree for what the plan record does not hold (the prices it was planned at, and
 * the calibration profile, hardware catalog, cluster file and memory per GPU it carries). Every
 * field a command consults comes from that one read, and each embedded document is parsed once;
 * the writers of those fields are {@link PlanFiles}'.
 */
final class PlanFile {
  private final Path path;
  private final String text;
  /** The text's JSON tree, or a missing node when it is not JSON ({@link #fault} says why). */
  private final JsonNode tree;
  private final IOException fault;
  private PipelinePlan plan;
  private Optional<Profile> profile;
  private Optional<HardwareCatalog> catalog;

  private PlanFile(Path path, String text, JsonNode tree, IOException fault) {
    this.path = path;
    this.text = text;
    this.tree = tree;
    this.fault = fault;
  }

  /**
   * Reads a plan file: its text within the plan-file limit; a text that is not JSON is kept, and
   * refused in the plan reader's words when the plan is asked for.
   *
   * @param path the plan file
   * @return the file
   * @throws InputException when the file cannot be read
   */
  static PlanFile read(Path path) {
    String text = InputFiles.readString(path, InputFiles.PLAN_MAX_BYTES, "plan file");
    try {
      return new PlanFile(path, text, io.meshplan.util.TreeReaders.json().readTree(text), null);
    } catch (IOException e) {
      return new PlanFile(path, text,
          com.fasterxml.jackson.databind.node.MissingNode.getInstance(), e);
    }
  }

  /**
   * The file's path.
   *
   * @return the path
   */
  Path path() {
    return path;
  }

  /**
   * The plan.
   *
   * @return the plan
   * @throws InputException when the file is not a plan
   */
  PipelinePlan plan() {
    if (plan == null) {
      plan = PlanJson.read(path.toString(), text);
    }
    return plan;
  }

  /**
   * The file's JSON tree, for a command that edits the plan's fields.
   *
   * @return the tree
   * @throws InputException naming the JSON fault when the file is not JSON
   */
  JsonNode tree() {
    if (fault != null) {
      throw new InputException(path + ": not a plan file (" + JsonErrors.describe(fault) + ")",
          fault);
    }
    return tree;
  }

  /**
   * The prices the plan says it was planned at: its {@code prices.source} ({@code public},
   * {@code kernel} or {@code profile}; plan files written before prices were recorded have none).
   *
   * @return the word, or empty
   */
  Optional<String> pricesSource() {
    JsonNode n = tree.path("prices").path("source");
    return n.isTextual() ? Optional.of(n.asText()) : Optional.empty();
  }

  /**
   * The calibration profile the plan carries ({@link PlanFiles#withProfile}), read as {@code
   * --profile} reads its file.
   *
   * @return the profile, or empty when the plan carries none
   * @throws InputException naming the plan file when its {@code profile} is not a profile
   */
  Optional<Profile> profile() {
    if (profile == null) {
      profile = readProfile();
    }
    return profile;
  }

  private Optional<Profile> readProfile() {
    JsonNode n = tree.path("profile");
    if (n.isMissingNode() || n.isNull()) {
      return Optional.empty();
    }
    JsonNode body = n.path("text");
    JsonNode name = n.path("file");
    if (!n.isObject() || !body.isTextual() || !name.isTextual()) {
      throw new InputException(path + ": field 'profile' must hold the calibration profile's "
          + "file name and text ({\"file\": ..., \"text\": ...})");
    }
    Path where;
    try {
      // The profile's own name keeps its format (a .json name is JSON, else YAML).
      where = Path.of(path + ": profile " + name.asText());
    } catch (java.nio.file.InvalidPathException e) {
      where = Path.of(path + ": profile");
    }
    return Optional.of(io.meshplan.calibrate.ProfileFiles.parse(where, body.asText()));
  }

  /**
   * The prices the plan was planned at, taken by the flags where they name none ({@link
   * ClusterOptions#defaultPrices}).
   *
   * @param options the cluster flags
   * @param warn standard error, for the warning of a profile the plan does not carry
   */
  void defaultPrices(ClusterOptions options, java.io.PrintWriter warn) {
    options.defaultPrices(pricesSource(), profile(), path, warn);
  }

  /**
   * Takes the catalog the plan carries ({@link PlanFiles#withCatalog}) when {@code --catalog} is
   * absent.
   *
   * @param option {@code --catalog}
   * @throws InputException when the plan's {@code catalog} is not a catalog's text
   */
  void adoptCatalog(CatalogOption option) {
    if (catalog == null) {
      JsonNode n = tree.path("catalog");
      if (n.isMissingNode() || n.isNull()) {
        catalog = Optional.empty();
      } else if (!n.isTextual()) {
        throw new InputException(path + ": field 'catalog' must be the text of the YAML catalog "
            + "the plan was made with");
      } else {
        catalog = Optional.of(HardwareCatalog.shipped().with(n.asText(), path + ": catalog"));
      }
    }
    catalog.ifPresent(option::adopt);
  }

  /**
   * The cluster the plan is priced on: {@code --cluster} when given; else the plan's own
   * ({@link #own}).
   *
   * @param options the cluster flags
   * @return the cluster
   * @throws InputException as {@link #own} says
   */
  ClusterSpec cluster(ClusterOptions options) {
    if (!options.clusterGiven()) {
      return own(options.catalog);
    }
    adoptCatalog(options.catalog);
    return options.spec(plan().cluster());
  }

  /**
   * The cluster the plan names, on its own: the cluster file its {@code cluster} field names by
   * path, else the cluster file's content it embeds ({@code clusterDescription}, written when it
   * was planned on a cluster file, whose bandwidth overrides and inline GPU its cluster name
   * cannot carry), which must describe the cluster the plan names, else its cluster name, each
   * read against the plan's catalog.
   *
   * @param option {@code --catalog}
   * @return the cluster
   * @throws InputException when the embedded description is not a cluster file's, or describes
   *     another cluster than the plan names
   */
  ClusterSpec own(CatalogOption option) {
    adoptCatalog(option);
    String name = plan().cluster();
    JsonNode d = tree.path("clusterDescription");
    // A plan whose cluster names a cluster file reads that file.
    if (d.isMissingNode() || d.isNull() || !ClusterSpec.isShortForm(name)) {
      // The plan's field, named as the plan's: the user gave no --cluster.
      try {
        return option.cluster(name);
      } catch (InputException e) {
        String m = e.getMessage();
        throw new InputException(path + ": cluster " + (m.startsWith("--cluster ")
            ? m.substring("--cluster ".length()) : m), e);
      }
    }
    ClusterSpec c = ClusterSpec.ofDescription(path + ": clusterDescription", d,
        option.catalog());
    if (!c.toShortString().equals(name)) {
      throw new InputException(path + ": clusterDescription describes " + c.toShortString()
          + ", but the plan's cluster is " + name + "; give --cluster");
    }
    return c;
  }

  /**
   * The memory per GPU the plan is judged by on a cluster: {@code --memory} when given; else the
   * capacity it was searched within ({@link PlanFiles#withMemory}); else the GPU's default.
   *
   * @param options the cluster flags
   * @param cs the cluster it is read on
   * @return bytes
   * @throws InputException when the plan's {@code memoryPerGpu} is not a positive whole number
   *     of bytes, or is more than the GPU's physical memory
   */
  double memoryPerGpu(ClusterOptions options, ClusterSpec cs) {
    if (options.memory != null) {
      return options.memoryPerGpu(cs);
    }
    return carriedMemory(cs, "; give --memory").map(Long::doubleValue)
        .orElseGet(() -> options.memoryPerGpu(cs));
  }

  /**
   * Checks what the plan carries beside its stages (the calibration profile and the memory per
   * GPU it was searched within) for a command that prices nothing with them, as {@code deploy}:
   * a plan whose fields are broken is refused by every command that reads it, not only by those
   * that use them.
   *
   * @param cs the cluster the plan is read on
   * @throws InputException naming the plan file when a field is not what it must be
   */
  void checkCarried(ClusterSpec cs) {
    profile();
    carriedMemory(cs, "");
  }

  /**
   * The memory per GPU the plan carries, checked against the cluster's GPU.
   *
   * @param cs the cluster
   * @param remedy what the refusal of a figure past the GPU's memory ends with
   * @return bytes, or empty when the plan carries none
   */
  private Optional<Long> carriedMemory(ClusterSpec cs, String remedy) {
    JsonNode n = tree.path("memoryPerGpu");
    if (n.isMissingNode() || n.isNull()) {
      return Optional.empty();
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() <= 0) {
      throw new InputException(path + ": field 'memoryPerGpu' must be the memory per GPU the "
          + "plan was searched within, a positive whole number of bytes");
    }
    long bytes = n.asLong();
    if (bytes > cs.gpu().hbmBytes()) {
      throw new InputException(path + ": the plan was searched within "
          + io.meshplan.util.Units.formatBytes(bytes) + " per GPU (--memory), more than the "
          + io.meshplan.util.Units.formatBytes(cs.gpu().hbmBytes()) + " of physical memory of one "
          + cs.gpu().name() + remedy);
    }
    return Optional.of(bytes);
  }
}
