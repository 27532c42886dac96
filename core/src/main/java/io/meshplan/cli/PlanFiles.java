package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.hlo.HloLayering;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanFileCheck;
import io.meshplan.plan.PlanJson;
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
   * Reads a plan file.
   *
   * @param file the plan file
   * @return the plan
   */
  static PipelinePlan read(Path file) {
    return PlanJson.read(file.toString(), InputFiles.readString(file, InputFiles.PLAN_MAX_BYTES,
        "plan file"));
  }

  /**
   * The prices a plan file says it was planned at: its {@code prices.source} ({@code public},
   * {@code kernel} or {@code profile}; plan files written before prices were recorded have none).
   *
   * @param file the plan file
   * @return the word, or empty
   */
  static java.util.Optional<String> pricesSource(Path file) {
    com.fasterxml.jackson.databind.JsonNode n = lenientTree(file).path("prices").path("source");
    return n.isTextual() ? java.util.Optional.of(n.asText()) : java.util.Optional.empty();
  }

  /**
   * A plan file's JSON tree for a look at one field before it is read, or a missing node when it
   * cannot be read as JSON: {@link #read} reports the file's faults in its own words.
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
   * that cannot be read as a plan names none here; {@link #read} reports its faults.
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
   * Reads a plan file and prices it again.
   *
   * @param file the plan file
   * @param options the cluster flags (the plan's cluster when {@code --cluster} is absent)
   * @param attention the attention to price a model's plan with, or empty for the plan's own
   * @param err standard error, for the HLO parser's warnings
   * @return the plan and its simulation
   * @throws InputException when the file is not a plan, or its module is missing or changed
   */
  static PlanFiles simulate(Path file, ClusterOptions options,
      java.util.Optional<io.meshplan.model.Attention> attention, PrintWriter err) {
    return simulate(file, options, attention, java.util.Optional.empty(), err);
  }

  /**
   * Reads a plan file and prices it again, with the attention kernel given beside the attention
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
  static PlanFiles simulate(Path file, ClusterOptions options,
      java.util.Optional<io.meshplan.model.Attention> attention,
      java.util.Optional<io.meshplan.cluster.AttentionKernel> kernel, PrintWriter err) {
    PipelinePlan p = read(file);
    if (p.source() instanceof PlanSource.HloModule h) {
      if (attention.isPresent()) {
        throw new InputException("--attention does not apply to the plan of an HLO module: the "
            + "module's own operations say how its attention runs");
      }
      return simulateModule(file, p, h, options, err);
    }
    checkDevices(file, p, options.spec(p.cluster()));
    io.meshplan.model.Overlaps overlaps = options.overlaps(p.overlaps());
    ClusterSpec cs = options.spec(p.cluster());
    io.meshplan.planner.Pricing pricing = JobFlags.pricing(options,
        attention.isPresent() ? kernel : p.attentionKernel(), cs);
    PricedJob setup = io.meshplan.planner.Planner.price(JobFlags.job(p.model(), true, options,
        java.util.Optional.of(attention.orElse(p.attention())), p.cluster(), p.globalBatchSize(),
        0, overlaps), pricing, PlannerOptions.defaults());
    SimulationResult sim = Planner.simulate(setup, p);
    return new PlanFiles(p, sim, setup.cluster(), setup.request().memoryPerGpu());
  }

  private static PlanFiles simulateModule(Path file, PipelinePlan p, PlanSource.HloModule h,
      ClusterOptions options, PrintWriter err) {
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
    ClusterSpec cs = options.spec(p.cluster());
    checkDevices(file, p, cs);
    double memory = options.memoryPerGpu(cs);
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
