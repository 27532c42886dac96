package io.meshplan.planner;

import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.GridPlanner;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.PlanResult;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;

/**
 * meshplan's entry point: plans a training job on its cluster. The command line, the sweep and
 * the Spark executors all plan through here, so the training policy ({@link TrainingJob#of}), the
 * pricing ({@link Pricing}) and the search ({@link PlannerOptions}) are applied in one place.
 *
 * <p>Example: LLaMA2-13B on the Alpa simulation study's 50 x 4 V100-32GB cluster, global batch
 * 1,024, catalog prices:
 *
 * <pre>{@code
 * TrainingJob job = TrainingJob.of(Presets.get("llama2-13b"),
 *     ClusterSpec.parse("50x4:v100-32gb")).withGlobalBatch(1024);
 * PlanResult r = Planner.plan(job, Pricing.catalog(), PlannerOptions.defaults());
 * }</pre>
 */
public final class Planner {
  private Planner() {}

  /**
   * Plans a job.
   *
   * @param job the job
   * @param pricing the collective and send/recv prices
   * @param options the search
   * @return the best plan found with its simulation, or why nothing fits
   * @throws io.meshplan.util.InputException when the job cannot be planned as asked
   */
  public static PlanResult plan(TrainingJob job, Pricing pricing, PlannerOptions options) {
    return plan(price(job, pricing, options), options);
  }

  /**
   * Prices a job: the planner's request (its schedule is chosen by {@link #plan}) and its layer
   * prices, solved on {@code options}' threads (or shared through its cache).
   *
   * @param job the job
   * @param pricing the collective and send/recv prices
   * @param options the solver, threads and shared prices
   * @return the priced job
   */
  public static PricedJob price(TrainingJob job, Pricing pricing, PlannerOptions options) {
    Require.nonNull(job, "job");
    Require.nonNull(pricing, "pricing");
    Require.nonNull(options, "options");
    ModelSpec model = job.trainedModel();
    PlanRequest req = new PlanRequest(model, job.cluster(), job.globalBatch(),
        job.microbatches(), job.memoryPerGpu(), pricing,
        io.meshplan.model.Fp8Training.storage(job.dtype()).bytes(), job.overlaps(), true,
        job.attention());
    IlpLayerCostModel layers = options.sharedLayers()
        .map(cache -> cache.layers(req, options.solver()))
        .orElseGet(() -> new IlpLayerCostModel(model, job.cluster(), req.comm(), job.dtype(),
            job.attention(), job.overlaps().lossFusion(),
            pricing.computeScale(job.cluster().gpu()), options.solver(),
            new LocalExecutor(options.threads())));
    return new PricedJob(job, pricing, req, layers);
  }

  /**
   * Plans a priced job.
   *
   * @param priced the job with its prices
   * @param options the search
   * @return the best plan found with its simulation, or why nothing fits
   */
  public static PlanResult plan(PricedJob priced, PlannerOptions options) {
    Require.nonNull(priced, "priced job");
    Require.nonNull(options, "options");
    PlanRequest req = priced.request().withInterleaving(options.interleave());
    if (options.search() == PlannerOptions.Search.MEGATRON_GRID) {
      return new GridPlanner(priced.layers()).plan(req);
    }
    if (options.executor().isPresent()) {
      return new InterOpPlanner(priced.layers(), options.progress(), options.executor().get())
          .plan(req);
    }
    try (LocalExecutor local = new LocalExecutor(options.threads())) {
      return new InterOpPlanner(priced.layers(), options.progress(), local).plan(req);
    }
  }
}
