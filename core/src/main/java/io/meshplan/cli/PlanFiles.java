package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.hlo.HloLayering;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanFileCheck;
import io.meshplan.plan.PlanSource;
import io.meshplan.planner.ModuleJob;
import io.meshplan.planner.ModulePlanner;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.sim.SimulationResult;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.io.PrintWriter;
import java.nio.file.Path;

/**
 * A saved plan priced again, for {@code simulate --plan} and {@code --compare}: the plan of a
 * model from the model's layers, the plan of an HLO module from the module, which must be the
 * one the plan was made from (same SHA-256). Stored stage times are not replayed.
 *
 * @param plan the plan as read
 * @param simulation its simulation under this pricing
 * @param cluster the cluster it was simulated on
 * @param memoryPerGpu the usable memory of one GPU, bytes
 */
record PlanFiles(PipelinePlan plan, SimulationResult simulation, ClusterSpec cluster,
    double memoryPerGpu) {

  /**
   * A plan file's JSON with the calibration profile it was priced with ({@code --profile})
   * embedded as {@code profile}: its file name and text, which {@link PlanFile#profile} reads back, so
   * that the plan is priced again at its own prices without the file.
   *
   * <p>A profile too large to carry within a plan file's limit ({@link InputFiles#PLAN_MAX_BYTES})
   * is left out, with a warning: the plan file would not be read back.
   *
   * @param json the plan file's JSON
   * @param profile {@code --profile}, or null: the JSON unchanged
   * @param err standard error, for the warning
   * @return the JSON
   */
  static String withProfile(String json, Path profile, PrintWriter err) {
    if (profile == null) {
      return json;
    }
    String text = InputFiles.readString(profile, InputFiles.PROFILE_MAX_BYTES,
        "calibration profile");
    Path name = profile.getFileName();
    String with = JsonEdit.edit(json, root -> {
      com.fasterxml.jackson.databind.node.ObjectNode o = root.putObject("profile");
      o.put("file", name == null ? "profile.yaml" : name.toString());
      o.put("text", text);
    });
    if (with.getBytes(java.nio.charset.StandardCharsets.UTF_8).length
        > InputFiles.PLAN_MAX_BYTES) {
      err.println(ExceptionMapper.warning("the profile " + profile + " is too large to carry in "
          + "the plan file (" + InputFiles.PLAN_MAX_BYTES + " bytes at most); give --profile "
          + "again when the plan is read"));
      return json;
    }
    return with;
  }

  /**
   * A plan file's JSON tree for a look at one field before it is read, or a missing node when it
   * cannot be read as JSON: {@link PlanFile#plan} reports the file's faults in its own words.
   */
  private static com.fasterxml.jackson.databind.JsonNode lenientTree(Path file) {
    try {
      return io.meshplan.util.TreeReaders.json().readTree(InputFiles.readString(file,
          InputFiles.PLAN_MAX_BYTES, "plan file"));
    } catch (java.io.IOException | InputException e) {
      return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }
  }

  /**
   * The files a plan file names and a command reads through it: its cluster, when the {@code
   * cluster} field is the path of a cluster file, and an HLO module plan's module ({@code
   * source.path}). They are inputs as much as the plan file, so no output may name them. A file
   * that cannot be read as a plan names none here; {@link PlanFile#plan} reports its faults.
   *
   * @param file the plan file, or null
   * @return label to path, in the plan's order; empty for none
   */
  static java.util.Map<String, Path> namedFiles(Path file) {
    java.util.Map<String, Path> named = new java.util.LinkedHashMap<>();
    if (file == null) {
      return named;
    }
    com.fasterxml.jackson.databind.JsonNode root = lenientTree(file);
    com.fasterxml.jackson.databind.JsonNode cluster = root.path("cluster");
    Path c = cluster.isTextual() ? CliValues.existingFile(cluster.asText()) : null;
    if (c != null) {
      named.put("the cluster of plan " + file, c);
    }
    com.fasterxml.jackson.databind.JsonNode module = root.path("source").path("path");
    Path m = module.isTextual() ? CliValues.existingFile(module.asText()) : null;
    if (m != null) {
      named.put("the module of plan " + file, m);
    }
    return named;
  }

  /**
   * A plan file's JSON with the hardware catalog it was planned with ({@code --catalog})
   * embedded as {@code catalog}, its text: the plan's cluster names its GPUs and fabrics, and
   * an entry that replaces a shipped one by name would otherwise price the plan again on the
   * shipped figures.
   *
   * @param json the plan file's JSON
   * @param catalog {@code --catalog}, or null: the JSON unchanged
   * @return the JSON
   */
  static String withCatalog(String json, Path catalog) {
    if (catalog == null) {
      return json;
    }
    String text = InputFiles.readString(catalog, InputFiles.CLUSTER_MAX_BYTES, "YAML catalog");
    return JsonEdit.edit(json, root -> root.put("catalog", text));
  }

  /**
   * A plan file's JSON with the memory per GPU it was planned within ({@code --memory}) as
   * {@code memoryPerGpu}, in bytes, which {@link PlanFile#memoryPerGpu} reads back: without it a plan
   * searched within less than the GPU's default capacity would be judged again against the
   * default. Absent {@code --memory}, the JSON is unchanged and the default of the GPU it is
   * read on applies.
   *
   * @param json the plan file's JSON
   * @param options the cluster flags
   * @param planned the cluster the plan was made on
   * @return the JSON
   */
  static String withMemory(String json, ClusterOptions options, ClusterSpec planned) {
    if (options.memory == null) {
      return json;
    }
    long bytes = (long) options.memoryPerGpu(planned);
    return JsonEdit.edit(json, root -> root.put("memoryPerGpu", bytes));
  }

  /**
   * A plan file's JSON with the cluster file's content embedded ({@code clusterDescription}),
   * its node count that of the cluster the plan runs on (fewer than the file's under {@code
   * --spare-nodes} or after lost nodes), so that {@link PlanFile#cluster} reads the plan's own cluster
   * back.
   *
   * @param json the plan file's JSON
   * @param description the cluster file's top-level mapping, or empty: the JSON unchanged
   * @param planned the cluster the plan runs on
   * @return the JSON
   */
  static String withClusterDescription(String json,
      java.util.Optional<com.fasterxml.jackson.databind.JsonNode> description,
      ClusterSpec planned) {
    if (description.isEmpty()) {
      return json;
    }
    com.fasterxml.jackson.databind.node.ObjectNode d =
        (com.fasterxml.jackson.databind.node.ObjectNode) description.get().deepCopy();
    // The file's nodes are hosts of gpusPerNode (grouped into NVLink domains on GB200/GB300) or
    // whole nodes: the planned cluster's GPUs over the same gpusPerNode.
    d.put("nodes", planned.gpuCount() / d.path("gpusPerNode").asInt(planned.gpusPerNode()));
    return JsonEdit.edit(json, root -> root.set("clusterDescription", d));
  }

  /**
   * Refuses a plan whose stages do not tile the cluster it is used on.
   *
   * @param file the plan file
   * @param p the plan
   * @param cs the cluster: the plan's own, or the one {@code --cluster} names
   * @throws InputException naming the first stage off the cluster, overlapping another, or
   *     leaving GPUs unused
   */
  static void checkDevices(Path file, PipelinePlan p, ClusterSpec cs) {
    PlanFileCheck.devices(file.toString(), p, cs.nodes(), cs.gpusPerNode(), cs.toShortString());
  }

  /**
   * Prices a plan file again.
   *
   * @param file the plan file
   * @param options the cluster flags (the plan's cluster when {@code --cluster} is absent)
   * @param attention the attention to price a model's plan with, or empty for the plan's own
   * @param err standard error, for the HLO parser's warnings
   * @return the plan and its simulation
   * @throws InputException when the file is not a plan, or its module is missing or changed
   */
  static PlanFiles simulate(PlanFile file, ClusterOptions options,
      java.util.Optional<io.meshplan.model.Attention> attention, PrintWriter err) {
    return simulate(file, options, attention, java.util.Optional.empty(), err);
  }

  /**
   * Prices a plan file again, with the attention kernel given beside the attention
   * (a given attention replaces the plan's kernel too; else the plan's own kernel prices it).
   *
   * @param file the plan file
   * @param options the cluster flags (the plan's cluster when {@code --cluster} is absent)
   * @param attention the attention to price a model's plan with, or empty for the plan's own
   * @param kernel the kernel named with that attention, or empty for the default
   * @param err standard error, for the HLO parser's warnings
   * @return the plan and its simulation
   * @throws InputException when the file is not a plan, or its module is missing or changed
   */
  static PlanFiles simulate(PlanFile file, ClusterOptions options,
      java.util.Optional<io.meshplan.model.Attention> attention,
      java.util.Optional<io.meshplan.cluster.AttentionKernel> kernel, PrintWriter err) {
    PipelinePlan p = file.plan();
    if (p.source() instanceof PlanSource.HloModule h) {
      if (attention.isPresent()) {
        throw new InputException("--attention does not apply to the plan of an HLO module: the "
            + "module's own operations say how its attention runs");
      }
      return simulateModule(file, p, h, options, err);
    }
    ClusterSpec cs = file.cluster(options);
    checkDevices(file.path(), p, cs);
    io.meshplan.model.Overlaps overlaps = options.overlaps(p.overlaps());
    io.meshplan.planner.Pricing pricing = JobFlags.pricing(options,
        attention.isPresent() ? kernel : p.attentionKernel(), cs);
    PricedJob setup = io.meshplan.planner.Planner.price(JobFlags.job(p.model(), true, options,
        java.util.Optional.of(attention.orElse(p.attention())), cs, p.globalBatchSize(),
        0, overlaps).withMemoryPerGpu(file.memoryPerGpu(options, cs)), pricing,
        PlannerOptions.defaults());
    SimulationResult sim = Planner.simulate(setup, p);
    return new PlanFiles(p, sim, setup.cluster(), setup.request().memoryPerGpu());
  }

  private static PlanFiles simulateModule(PlanFile plan, PipelinePlan p,
      PlanSource.HloModule h, ClusterOptions options, PrintWriter err) {
    Path file = plan.path();
    Path path;
    try {
      path = Path.of(h.path());
    } catch (java.nio.file.InvalidPathException e) {
      throw new InputException(file + ": field 'source.path' is not a path: " + e.getReason());
    }
    HloInput in = HloInput.read(path, "the module of plan " + file + ",", err);
    if (!in.sha256().equals(h.sha256())) {
      throw new InputException("the module " + path + " has changed since plan " + file
          + " was made (SHA-256 " + in.sha256().substring(0, 12) + "..., the plan's "
          + h.sha256().substring(0, 12) + "...); plan it again with 'meshplan plan --hlo'");
    }
    HloLayering lay = HloLayering.of(in.graph(), "the module " + path);
    ClusterSpec cs = plan.cluster(options);
    checkDevices(file, p, cs);
    double memory = plan.memoryPerGpu(options, cs);
    SimulationResult sim = ModulePlanner.simulate(new ModuleJob(in.graph(), cs,
        options.pricing(), memory, options.overlapGradReduce), lay, p);
    return new PlanFiles(p, sim, cs, memory);
  }

  /**
   * A title for reports: the plan's model or module and its cluster.
   *
   * @return e.g. {@code llama2-7b on 4x8:h100-80gb:ib-ndr400}
   */
  String title() {
    return plan.source().title() + " on " + cluster.toShortString();
  }
}
