package io.meshplan.sweep;

import io.meshplan.exec.TaskFunction;
import io.meshplan.interop.cost.LayerCostCache;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Require;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The work of one sweep point as an executor task: plans the point with this process's {@link
 * LayerCostCache}, within a time limit. A point past its limit is {@link PointStatus#TIMED_OUT}
 * with {@link PointEvaluator#lowerBoundSeconds its iteration-time bound}; its search stops at the
 * next stage DP it finishes.
 *
 * @param manual whether to search Megatron-LM configurations instead of planning
 * @param timeoutSeconds the time limit per point, seconds, or 0 for none
 * @param configModels the grid's config.json models by the name the points carry ({@link
 *     SweepGrid#configModels}); a point whose model is not here names a preset
 * @param hardware the GPUs and fabrics the points name ({@link SweepGrid#hardware}), resolved, so
 *     that a user's catalog travels with the task to the process that plans the point
 * @param kernelPrices whether points are priced at kernel-level prices ({@code --prices kernel})
 *     instead of with the shipped fitted factors
 */
public record PointTask(boolean manual, double timeoutSeconds,
    java.util.Map<String, ModelSpec> configModels, SweepHardware hardware, boolean kernelPrices)
    implements TaskFunction<SweepPoint, PointResult> {
  private static final long serialVersionUID = 4L;

  /** Validates the limit and copies the models. */
  public PointTask {
    Require.that(timeoutSeconds >= 0 && Double.isFinite(timeoutSeconds),
        "the point time limit must be >= 0 seconds, got " + timeoutSeconds);
    configModels = java.util.Map.copyOf(configModels);
    Require.nonNull(hardware, "hardware");
  }

  /**
   * The task of points on meshplan's own catalog.
   *
   * @param manual whether to search Megatron-LM configurations instead of planning
   * @param timeoutSeconds the time limit per point, seconds, or 0 for none
   * @param configModels the grid's config.json models by the name the points carry
   */
  public PointTask(boolean manual, double timeoutSeconds,
      java.util.Map<String, ModelSpec> configModels) {
    this(manual, timeoutSeconds, configModels, SweepHardware.SHIPPED, false);
  }

  /**
   * The task of points on a grid's hardware, with the shipped fitted factors.
   *
   * @param manual whether to search Megatron-LM configurations instead of planning
   * @param timeoutSeconds the time limit per point, seconds, or 0 for none
   * @param configModels the grid's config.json models by the name the points carry
   * @param hardware the GPUs and fabrics the points name
   */
  public PointTask(boolean manual, double timeoutSeconds,
      java.util.Map<String, ModelSpec> configModels, SweepHardware hardware) {
    this(manual, timeoutSeconds, configModels, hardware, false);
  }

  /**
   * The task of a grid of presets only.
   *
   * @param manual whether to search Megatron-LM configurations instead of planning
   * @param timeoutSeconds the time limit per point, seconds, or 0 for none
   */
  public PointTask(boolean manual, double timeoutSeconds) {
    this(manual, timeoutSeconds, java.util.Map.of());
  }

  /** Thrown from the planner's progress callback to stop a point past its limit. */
  private static final class Expired extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Expired() {
      super("point time limit reached", null, false, false);
    }
  }

  @Override
  public PointResult apply(SweepPoint p) {
    PointEvaluator ev = new PointEvaluator(LayerCostCache.processWide(),
        SolverOptions.defaults(), configModels, hardware, kernelPrices
            ? io.meshplan.planner.Pricing.catalog() : io.meshplan.planner.Pricing.shipped());
    if (timeoutSeconds == 0) {
      return ev.evaluate(p, manual, pct -> { });
    }
    long deadline = System.nanoTime() + (long) (timeoutSeconds * 1e9);
    FutureTask<PointResult> run = new FutureTask<>(() -> ev.evaluate(p, manual, pct -> {
      if (System.nanoTime() > deadline) {
        throw new Expired();
      }
    }));
    Thread t = new Thread(run, "meshplan-point-" + p.index());
    t.setDaemon(true);
    t.start();
    try {
      return run.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return timedOut(p);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while planning point " + p.index(), e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Expired) {
        return timedOut(p);
      }
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  private PointResult timedOut(SweepPoint p) {
    double bound = PointEvaluator.lowerBoundSeconds(p, PointEvaluator.model(p, configModels),
        hardware);
    return PointResult.failed(p, PointStatus.TIMED_OUT, Double.NaN, bound, String.format(
        java.util.Locale.ROOT, "no result within %s s; no plan can beat %.4f s per iteration "
            + "(the model FLOPs at the GPUs' dense peak)", trim(timeoutSeconds), bound));
  }

  private static String trim(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }
}
