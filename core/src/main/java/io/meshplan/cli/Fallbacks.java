package io.meshplan.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.plan.LaunchCheck;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.interop.PlanResult;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.PricedJob;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The plans of a job on its cluster minus 1 to K nodes ({@code plan --fallbacks K}), planned in
 * the same process right after the main plan so that the layer prices it solved are shared
 * ({@link io.meshplan.interop.cost.LayerCostCache}), and saved in the plan file under {@code
 * fallbacks}, each planned for the same framework as the main plan ({@code --for}) and a whole
 * plan that {@code simulate --plan} and {@code export --plan} take once
 * {@code replan} writes it out.
 *
 * @param entries one per lost-node count, in order
 */
record Fallbacks(List<Entry> entries) {
  /** The most fallbacks one plan file carries. */
  static final int MAX = 16;

  /**
   * One fallback.
   *
   * @param lostNodes nodes lost, >= 1
   * @param cluster the cluster left
   * @param plan the plan there, or empty when nothing fits
   * @param why why nothing fits, or empty
   */
  record Entry(int lostNodes, ClusterSpec cluster, Optional<PipelinePlan> plan, String why) {}

  static Fallbacks plan(PricedJob setup, PlannerOptions options, int k,
      java.util.function.Function<ClusterSpec, Optional<LaunchCheck>> runtimeOn) {
    ClusterSpec cs = setup.cluster();
    if (k < 1 || k > MAX) {
      throw new InputException("--fallbacks must be from 1 to " + MAX + ", got " + k);
    }
    if (k >= cs.nodes()) {
      throw new InputException("--fallbacks " + k + " would leave no node of the "
          + cs.nodes() + " of " + cs.toShortString());
    }
    List<Entry> out = new ArrayList<>();
    for (int lost = 1; lost <= k; lost++) {
      ClusterSpec left = cs.withNodes(cs.nodes() - lost);
      try {
        PricedJob job = Planner.price(setup.job().withCluster(left), setup.pricing(), options);
        // The framework's launch rules of the smaller cluster (its GPU count).
        Optional<LaunchCheck> runtime = runtimeOn.apply(left);
        PlanResult r = runtime.isPresent() ? Planner.planFor(job, options, runtime.get())
            : Planner.plan(job, options);
        if (r instanceof PlanResult.Planned p) {
          out.add(new Entry(lost, left, Optional.of(p.plan()), ""));
        } else {
          out.add(new Entry(lost, left, Optional.empty(),
              ((PlanResult.Infeasible) r).message()));
        }
      } catch (InputException e) {
        out.add(new Entry(lost, left, Optional.empty(), e.getMessage()));
      }
    }
    return new Fallbacks(List.copyOf(out));
  }

  /** The plan JSON with a {@code fallbacks} array. */
  String addTo(String planJson) {
    return JsonEdit.edit(planJson, root -> {
      ArrayNode a = root.putArray("fallbacks");
      for (Entry e : entries) {
        ObjectNode o = a.addObject();
        o.put("lostNodes", e.lostNodes());
        o.put("cluster", e.cluster().toShortString());
        if (e.plan().isPresent()) {
          o.set("plan", JsonEdit.tree(PlanJson.write(e.plan().get())));
        } else {
          o.put("infeasible", e.why());
        }
      }
    });
  }

  /** One line per fallback, against the main plan's iteration time. */
  String text(PipelinePlan main) {
    StringBuilder b = new StringBuilder();
    double t = main.prediction().iterationSeconds();
    for (Entry e : entries) {
      if (e.plan().isPresent()) {
        double f = e.plan().get().prediction().iterationSeconds();
        b.append(String.format(Locale.ROOT, "fallback, %d node%s lost: %s, %.4f s per iteration "
            + "(%+.1f%%), %d stage%s%n", e.lostNodes(), e.lostNodes() == 1 ? "" : "s",
            e.cluster().toShortString(), f, 100 * (f / t - 1), e.plan().get().stages().size(),
            e.plan().get().stages().size() == 1 ? "" : "s"));
      } else {
        b.append(String.format(Locale.ROOT, "fallback, %d node%s lost: %s, nothing fits: %s%n",
            e.lostNodes(), e.lostNodes() == 1 ? "" : "s", e.cluster().toShortString(), e.why()));
      }
    }
    return b.toString();
  }
}
