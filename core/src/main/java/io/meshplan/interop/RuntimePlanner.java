package io.meshplan.interop;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.plan.LaunchCheck;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntConsumer;

/**
 * Plans within what one training runtime launches. A runtime whose stages must form one
 * Megatron-style configuration (Megatron-LM, torchtitan, DeepSpeed) is searched by {@link
 * LaunchGrid}, every configuration judged by the runtime's own launch check; one that runs each
 * stage on its own submesh (Alpa) by the whole-cluster search ({@link InterOpPlanner}) over the
 * settings its {@link io.meshplan.plan.RuntimeSpace} holds, and its plan is judged by the launch
 * check once more. Either way the plan returned is one the runtime's export writes.
 */
public final class RuntimePlanner {
  private final LayerCostModel layers;
  private final IntConsumer progress;
  private final TaskExecutor executor;

  /**
   * Creates the planner.
   *
   * @param layers the layer prices, shared with every other search of the job
   * @param progress told the percentage done of a whole-cluster search
   * @param executor runs a whole-cluster search's tasks
   */
  public RuntimePlanner(LayerCostModel layers, IntConsumer progress, TaskExecutor executor) {
    this.layers = Require.nonNull(layers, "layers");
    this.progress = Require.nonNull(progress, "progress");
    this.executor = Require.nonNull(executor, "executor");
  }

  /**
   * The fastest plan a runtime launches.
   *
   * @param req the model, cluster, batch and prices
   * @param runtime the runtime's launch check on this cluster
   * @return the plan, or why the runtime launches none that fits
   */
  public PlanResult plan(PlanRequest req, LaunchCheck runtime) {
    return bests(req, Optional.empty(), List.of(runtime)).get(0)
        .asResult(req.cluster().nodes());
  }

  /**
   * The fastest plan each runtime launches; configurations of the runtimes whose stages are one
   * Megatron-style configuration are simulated once for all of them. A runtime of its own stages
   * that launches {@code best} as it is gets {@code best}: its search could not find a faster plan
   * in a smaller space.
   *
   * @param req the model, cluster, batch and prices
   * @param best the fastest plan of the unrestricted search, if it ran
   * @param runtimes the runtimes' launch checks on this cluster
   * @return one result per runtime, in their order
   */
  public List<RuntimeBest> bests(PlanRequest req, Optional<PlanResult.Planned> best,
      List<LaunchCheck> runtimes) {
    RuntimeBest[] out = new RuntimeBest[runtimes.size()];
    List<LaunchCheck> uniform = new ArrayList<>();
    List<Integer> uniformAt = new ArrayList<>();
    for (int i = 0; i < runtimes.size(); i++) {
      LaunchCheck r = runtimes.get(i);
      Optional<String> job = r.missing(req.model(), req.attention(), req.overlaps());
      if (job.isPresent()) {
        out[i] = new RuntimeBest(r.label(), Optional.empty(), job.get());
      } else if (r.space().uniform()) {
        uniform.add(r);
        uniformAt.add(i);
      } else if (best.isPresent() && r.missing(best.get().plan()).isEmpty()) {
        out[i] = new RuntimeBest(r.label(), best, "");
      } else {
        out[i] = ownStages(req, r);
      }
    }
    if (!uniform.isEmpty()) {
      LaunchGrid grid = new LaunchGrid(layers);
      List<LaunchGrid.Found> found = grid.search(req, uniform);
      for (int k = 0; k < uniform.size(); k++) {
        LaunchGrid.Found f = found.get(k);
        Optional<PlanResult.Planned> p = f.best().map(e -> new PlanResult.Planned(e.plan(),
            e.simulation(), new PlanResult.SearchStats(solves(), 0, grid.simulations(), 1, 1)));
        if (best.isPresent() && (p.isEmpty() || best.get().simulation().iterationSeconds()
            <= p.get().simulation().iterationSeconds() + 1e-12)
            && uniform.get(k).missing(best.get().plan()).isEmpty()) {
          // The plan itself launches, and no configuration of the grid is faster.
          p = best;
        }
        out[uniformAt.get(k)] = new RuntimeBest(uniform.get(k).label(), p,
            p.isPresent() ? "" : f.whyNone());
      }
    }
    return List.of(out);
  }

  /** The whole-cluster search within a runtime's space, its plan checked by the runtime. */
  private RuntimeBest ownStages(PlanRequest req, LaunchCheck r) {
    PlanResult res;
    try {
      res = new InterOpPlanner(layers, progress, executor).plan(req.withRuntime(r.space()));
    } catch (io.meshplan.util.InputException e) {
      // The runtime's smaller space can refuse a request the whole search took (no batch split
      // on the submeshes it allows): that is this runtime's answer, not the command's.
      return new RuntimeBest(r.label(), Optional.empty(), e.getMessage());
    }
    if (res instanceof PlanResult.Infeasible inf) {
      return new RuntimeBest(r.label(), Optional.empty(), inf.message());
    }
    PlanResult.Planned p = (PlanResult.Planned) res;
    Optional<String> why = r.missing(p.plan());
    return why.isEmpty() ? new RuntimeBest(r.label(), Optional.of(p), "")
        : new RuntimeBest(r.label(), Optional.empty(), "the search's plan is one it cannot"
            + " launch: " + why.get());
  }

  private int solves() {
    return layers instanceof IlpLayerCostModel ilp ? ilp.solves() : 0;
  }
}
