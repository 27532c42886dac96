package io.meshplan.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import java.io.IOException;
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
 * that fits in the nodes left (a plan for fewer nodes leaves the rest idle).
 */
@Command(
    name = "replan",
    mixinStandardHelpOptions = true,
    description = {
      "Picks the plan to run on after losing --lost-nodes nodes from the fallbacks of a plan "
          + "file written by 'meshplan plan --fallbacks K --out FILE', without planning again: "
          + "the fastest fallback that fits in the nodes left. --out writes it as a plan file "
          + "that simulate --plan and export --plan take."
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
    new OutputPaths().force(force.force).output("--out", out).input("--plan", plan).check();
    String text = InputFiles.readString(plan, InputFiles.PLAN_MAX_BYTES, "plan file");
    JsonNode root;
    try {
      root = TreeReaders.json().readTree(text);
    } catch (IOException e) {
      throw new InputException(plan + ": not a plan file (" + JsonErrors.describe(e) + ")", e);
    }
    PipelinePlan main = PlanJson.read(plan.toString(), text);
    ClusterSpec cs = ClusterSpec.parse(main.cluster());
    if (lostNodes < 1 || lostNodes >= cs.nodes()) {
      throw new InputException("--lost-nodes " + lostNodes + ": the plan's cluster "
          + cs.toShortString() + " has " + cs.nodes() + " nodes; lose 1 to "
          + (cs.nodes() - 1));
    }
    JsonNode fallbacks = root.path("fallbacks");
    if (!fallbacks.isArray() || fallbacks.isEmpty()) {
      throw new InputException(plan + " has no fallbacks; plan it with 'meshplan plan "
          + "--fallbacks K --out FILE'");
    }
    JsonNode best = null;
    PipelinePlan bestPlan = null;
    int most = 0;
    for (JsonNode f : fallbacks) {
      int lost = f.path("lostNodes").asInt(0);
      most = Math.max(most, lost);
      if (lost < lostNodes || !f.path("plan").isObject()) {
        continue;
      }
      PipelinePlan p = PlanJson.read(plan + ": fallbacks[lostNodes=" + lost + "].plan",
          f.get("plan").toString());
      if (bestPlan == null || p.prediction().iterationSeconds()
          < bestPlan.prediction().iterationSeconds()) {
        best = f;
        bestPlan = p;
      }
    }
    if (bestPlan == null) {
      throw new InputException(plan + " has no fallback that runs on " + (cs.nodes() - lostNodes)
          + " nodes or fewer (its fallbacks cover 1 to " + most + " lost nodes, and none of those"
          + " that fit planned); plan the smaller cluster with 'meshplan plan'");
    }
    String chosen;
    try {
      chosen = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
          .writeValueAsString(best.get("plan")) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write the fallback", e);
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
    ClusterSpec used = ClusterSpec.parse(bestPlan.cluster());
    double t = main.prediction().iterationSeconds();
    double f = bestPlan.prediction().iterationSeconds();
    w.printf(Locale.ROOT, "%d node%s lost of %s: run the fallback planned for %s%s%n", lostNodes,
        lostNodes == 1 ? "" : "s", cs.toShortString(), used.toShortString(),
        used.nodes() < left ? " (" + (left - used.nodes()) + " of the " + left + " nodes left "
            + "idle: faster than the plan for all of them)" : "");
    w.printf(Locale.ROOT, "iteration %.4f s (%+.1f%% against %.4f s on %d nodes), %d stage%s, "
        + "%.0f tokens/s%n", f, 100 * (f / t - 1), t, cs.nodes(), bestPlan.stages().size(),
        bestPlan.stages().size() == 1 ? "" : "s", bestPlan.prediction().tokensPerSecond());
    if (out != null) {
      w.println("wrote " + out);
    }
    return ExitCodes.OK;
  }
}
