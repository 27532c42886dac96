package io.meshplan.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code meshplan replan}: the plan to run on after losing nodes, taken from the fallbacks a
 * plan file carries ({@code plan --fallbacks K}) without planning again: the fastest fallback
 * that fits in the nodes left (a plan for fewer nodes leaves the rest idle). When none fits, the
 * main plan's job is planned on the nodes left (this solves its layers again).
 */
@Command(
    name = "replan",
    mixinStandardHelpOptions = true,
    description = {
      "Picks the plan to run on after losing --lost-nodes nodes from the fallbacks of a plan "
          + "file written by 'meshplan plan --fallbacks K --out FILE', without planning again: "
          + "the fastest fallback that fits in the nodes left; when none fits, it plans the "
          + "main plan's job on the nodes left. --out writes it as a plan file that simulate "
          + "--plan and export --plan take."
    })
final class ReplanCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--plan", required = true, paramLabel = "FILE",
      description = "A plan file with fallbacks (plan --fallbacks K --out FILE).")
  Path plan;

  @Option(names = "--lost-nodes", required = true, paramLabel = "M",
      description = "Nodes lost, at least 1 and fewer than the plan's cluster has.")
  Integer lostNodes;

  @Option(names = "--out", paramLabel = "FILE", description = "Write the chosen plan as a plan "
      + "file." + OutputPaths.FILE_ONLY)
  Path out;

  @Option(names = "--json", description = "Print the chosen plan as JSON.")
  boolean json;

  @Mixin ForceOption force = new ForceOption();

  @Override
  public Integer call() {
    new OutputPaths().force(force.force).output("--out", out).input("--plan", plan)
        .inputs(PlanFiles.namedFiles(plan)).check();
    PlanFile file = PlanFile.read(plan);
    JsonNode root = file.tree();
    PipelinePlan main = file.plan();
    // The plan's own cluster: the cluster file it embeds, or its name.
    ClusterSpec cs = file.own(new CatalogOption());
    // The memory per GPU it was searched within travels to the plan written: refused here when
    // it is not one, as simulate would refuse the plan written.
    file.memoryPerGpu(new ClusterOptions(), cs);
    // So does the calibration profile it carries.
    file.profile();
    if (cs.nodes() == 1) {
      throw new InputException("--lost-nodes " + lostNodes + ": the plan's cluster "
          + cs.toShortString() + " has 1 node, so no node can be lost and a job left to run;"
          + " replan needs a plan of 2 nodes or more");
    }
    if (lostNodes < 1 || lostNodes >= cs.nodes()) {
      throw new InputException("--lost-nodes " + lostNodes + ": the plan's cluster "
          + cs.toShortString() + " has " + cs.nodes() + " nodes; lose 1 to "
          + (cs.nodes() - 1));
    }
    // The figures printed below are the plan's own: its stages must tile its cluster, as
    // simulate --plan and deploy --plan require.
    io.meshplan.plan.PlanFileCheck.devices(plan.toString(), main, cs.nodes(), cs.gpusPerNode(),
        cs.toShortString());
    JsonNode fallbacks = root.path("fallbacks");
    if (!fallbacks.isMissingNode() && !fallbacks.isNull() && !fallbacks.isArray()) {
      throw new InputException(plan + ": field 'fallbacks' must be a list of fallbacks, one per "
          + "number of nodes lost");
    }
    JsonNode best = null;
    PipelinePlan bestPlan = null;
    int most = 0;
    java.util.Set<Integer> seen = new java.util.HashSet<>();
    for (JsonNode f : fallbacks) {
      JsonNode lostNode = f.path("lostNodes");
      int lost = lostNode.isIntegralNumber() && lostNode.canConvertToInt() ? lostNode.intValue()
          : -1;
      if (lost < 1 || lost >= cs.nodes()) {
        throw new InputException(plan + ": a fallback's lostNodes "
            + io.meshplan.util.Words.clipped(lostNode.toString()) + " is not 1 to "
            + (cs.nodes() - 1) + ", the nodes " + cs.toShortString() + " can lose");
      }
      if (!seen.add(lost)) {
        throw new InputException(plan + ": two fallbacks for lostNodes " + lost + "; a plan "
            + "stores one for each number of nodes lost");
      }
      // The entry names the cluster left, which plan wrote as the main cluster less the nodes.
      String left = cs.withNodes(cs.nodes() - lost).toShortString();
      JsonNode named = f.path("cluster");
      if (!named.isMissingNode() && !(named.isTextual() && named.asText().equals(left))) {
        throw new InputException(plan + ": the fallback for lostNodes " + lost + " names the "
            + "cluster " + io.meshplan.util.Words.clipped(named.toString()) + ", but the main "
            + "plan's cluster less " + lost + " node" + (lost == 1 ? "" : "s") + " is " + left);
      }
      most = Math.max(most, lost);
      if (lost < lostNodes || !f.path("plan").isObject()) {
        continue;
      }
      String at = plan + ": fallbacks[lostNodes=" + lost + "].plan";
      PipelinePlan p = PlanJson.read(at, f.get("plan").toString());
      // A fallback is the main plan's job on the nodes left: the same global batch, on no more
      // GPUs than those nodes hold.
      if (p.globalBatchSize() != main.globalBatchSize()) {
        throw new InputException(at + ": a global batch of " + p.globalBatchSize() + ", where "
            + "the main plan's is " + main.globalBatchSize() + "; a fallback trains the same job");
      }
      if (p.source() instanceof io.meshplan.plan.PlanSource.Preset fp
          && main.source() instanceof io.meshplan.plan.PlanSource.Preset mp
          && (!fp.model().equals(mp.model()) || fp.attention() != mp.attention())) {
        throw new InputException(at + ": trains " + fp.model().name() + " at sequence "
            + fp.model().seq() + " in " + fp.model().dtype().name().toLowerCase(Locale.ROOT)
            + " with " + fp.attention().name().toLowerCase(Locale.ROOT) + " attention, not the "
            + "main plan's model, sequence, precision and attention; a fallback trains the "
            + "same job");
      }
      if ((long) p.gpus() > (long) (cs.nodes() - lost) * cs.gpusPerNode()) {
        throw new InputException(at + ": uses " + p.gpus() + " GPUs, more than the "
            + (cs.nodes() - lost) + " nodes left hold");
      }
      if (bestPlan == null || p.prediction().iterationSeconds()
          < bestPlan.prediction().iterationSeconds()) {
        best = f;
        bestPlan = p;
      }
    }
    boolean plannedNow = bestPlan == null;
    String chosen;
    if (plannedNow) {
      // No stored fallback fits: plan the cluster left, as plan would, with the main plan's
      // job (model, batch, precision, attention, overlaps, prices and framework).
      bestPlan = planLeft(file, cs.withNodes(cs.nodes() - lostNodes));
      JsonNode prices = root.path("prices");
      chosen = prices.isObject() ? JsonEdit.edit(PlanJson.write(bestPlan),
          o -> o.set("prices", prices.deepCopy())) : PlanJson.write(bestPlan);
    } else {
      chosen = JsonEdit.write(best.get("plan"));
    }
    ClusterSpec used = cs.withNodes(bestPlan.gpus() / cs.gpusPerNode());
    // The main plan's cluster file travels with the plan chosen, resized to the nodes it uses.
    JsonNode described = root.path("clusterDescription");
    chosen = PlanFiles.withClusterDescription(chosen, described.isObject()
        ? java.util.Optional.of(described) : java.util.Optional.empty(), used);
    // So do the catalog and the calibration profile it was priced with, and the memory per GPU
    // it was searched within.
    for (String carried : new String[] {"catalog", "profile", "memoryPerGpu"}) {
      JsonNode c = root.path(carried);
      if (!c.isMissingNode() && !c.isNull()) {
        chosen = JsonEdit.edit(chosen, o -> o.set(carried, c.deepCopy()));
      }
    }
    PrintWriter w = spec.commandLine().getOut();
    if (out != null) {
      OutputPaths.write("--out", out, chosen);
    }
    if (json) {
      w.print(chosen);
      return ExitCodes.OK;
    }
    int left = cs.nodes() - lostNodes;
    double t = main.prediction().iterationSeconds();
    double f = bestPlan.prediction().iterationSeconds();
    w.printf(Locale.ROOT, "%d node%s lost of %s: run the %s for %s%s%n", lostNodes,
        lostNodes == 1 ? "" : "s", cs.toShortString(), plannedNow
            ? "plan made now (no stored fallback fits: " + most + " stored)" : "fallback planned",
        used.toShortString(),
        used.nodes() < left ? " (" + (left - used.nodes()) + " of the " + left + " nodes left "
            + "idle: faster than the plan for all of them)" : "");
    w.printf(Locale.ROOT, "iteration %.4f s (%+.1f%% against %.4f s on %d nodes), %d stage%s, "
        + "%.0f tokens/s%n", f, 100 * (f / t - 1), t, cs.nodes(), bestPlan.stages().size(),
        bestPlan.stages().size() == 1 ? "" : "s", tokensPerSecond(bestPlan));
    if (out != null) {
      w.println("wrote " + out);
    }
    return ExitCodes.OK;
  }

  /**
   * A plan's throughput from its own job and iteration, tokens per second: its global batch of
   * sequences over the iteration, as the simulator states it, never a stored figure that may
   * disagree with them.
   */
  private static double tokensPerSecond(PipelinePlan p) {
    return p.source() instanceof io.meshplan.plan.PlanSource.Preset pre
        ? (double) p.globalBatchSize() * pre.model().seq() / p.prediction().iterationSeconds()
        : p.prediction().tokensPerSecond();
  }

  /** The main plan's job planned on the cluster left; refused in one line when nothing fits. */
  private PipelinePlan planLeft(PlanFile file, ClusterSpec left) {
    PipelinePlan main = file.plan();
    if (main.hloModule().isPresent()) {
      throw new InputException(plan + " is the plan of an HLO module, which has no fallbacks; "
          + "plan the module on the smaller cluster with 'meshplan plan --hlo'");
    }
    ClusterOptions options = new ClusterOptions();
    file.defaultPrices(options, spec.commandLine().getErr());
    io.meshplan.model.Overlaps overlaps = options.overlaps(main.overlaps());
    io.meshplan.planner.Pricing pricing = JobFlags.pricing(options, main.attentionKernel(), left);
    io.meshplan.planner.PlannerOptions opts = io.meshplan.planner.PlannerOptions.defaults();
    io.meshplan.planner.PricedJob setup = io.meshplan.planner.Planner.price(JobFlags.job(
        main.model(), true, options, java.util.Optional.of(main.attention()),
        left, main.globalBatchSize(), 0, overlaps)
        .withMemoryPerGpu(file.memoryPerGpu(options, left)), pricing, opts);
    String forLabel = file.tree().path("for").asText("");
    io.meshplan.interop.PlanResult r = forLabel.isEmpty()
        ? io.meshplan.planner.Planner.plan(setup, opts)
        : io.meshplan.planner.Planner.planFor(setup, opts, io.meshplan.export.LaunchChecks.of(
            io.meshplan.export.ExportTarget.parse(forLabel), left));
    if (r instanceof io.meshplan.interop.PlanResult.Infeasible inf) {
      throw new io.meshplan.util.InfeasibleException("nothing fits on the " + left.nodes()
          + " nodes left: " + inf.message());
    }
    return ((io.meshplan.interop.PlanResult.Planned) r).plan();
  }
}
