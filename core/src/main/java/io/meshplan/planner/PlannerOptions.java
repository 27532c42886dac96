package io.meshplan.planner;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.interop.cost.LayerCostCache;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.util.Require;
import java.util.Optional;
import java.util.function.IntConsumer;

/**
 * How {@link Planner} searches: the layer solver, the threads of this process it may use, where
 * its tasks run, the schedules and search it considers, and whom it tells of its progress.
 *
 * @param solver the intra-operator ILP settings of layer solves
 * @param threads threads of this process for layer solves and local tasks, at least 1
 * @param executor where the search's tasks run; empty for this process's {@code threads}
 * @param search Alpa's search or the grid of Megatron-LM configurations
 * @param interleave whether a plan may use the interleaved 1F1B schedule
 * @param sharedLayers layer prices shared with other plans of this process (a sweep's points);
 *     empty for prices of this plan alone
 * @param progress told the percentage done, 0 to 100
 */
public record PlannerOptions(SolverOptions solver, int threads, Optional<TaskExecutor> executor,
    Search search, boolean interleave, Optional<LayerCostCache> sharedLayers,
    IntConsumer progress) {

  /** The search a plan runs. */
  public enum Search {
    /** Alpa's inter-operator DP over intra-operator ILP solves (the default). */
    ALPA,
    /** Every Megatron-LM configuration of the cluster, in the same simulator. */
    MEGATRON_GRID
  }

  /** Validates the options. */
  public PlannerOptions {
    Require.nonNull(solver, "solver");
    Require.positive(threads, "threads");
    Require.nonNull(executor, "executor");
    Require.nonNull(search, "search");
    Require.nonNull(sharedLayers, "shared layers");
    Require.nonNull(progress, "progress");
  }

  /**
   * The defaults: the default solver, one thread per processor, tasks on those threads, Alpa's
   * search with both schedules, no shared prices, progress told to no one.
   *
   * @return the options
   */
  public static PlannerOptions defaults() {
    return new PlannerOptions(SolverOptions.defaults(),
        Runtime.getRuntime().availableProcessors(), Optional.empty(), Search.ALPA, true,
        Optional.empty(), pct -> { });
  }

  /**
   * The same options with another thread count.
   *
   * @param count threads of this process, at least 1
   * @return the options
   */
  public PlannerOptions withThreads(int count) {
    return new PlannerOptions(solver, count, executor, search, interleave, sharedLayers,
        progress);
  }

  /**
   * The same options with the tasks on another executor (the caller keeps and closes it).
   *
   * @param where the executor
   * @return the options
   */
  public PlannerOptions withExecutor(TaskExecutor where) {
    return new PlannerOptions(solver, threads, Optional.of(where), search, interleave,
        sharedLayers, progress);
  }

  /**
   * The same options with another search.
   *
   * @param kind the search
   * @return the options
   */
  public PlannerOptions withSearch(Search kind) {
    return new PlannerOptions(solver, threads, executor, kind, interleave, sharedLayers,
        progress);
  }

  /**
   * The same options with the interleaved schedule allowed or not.
   *
   * @param allowed whether a plan may interleave
   * @return the options
   */
  public PlannerOptions withInterleaving(boolean allowed) {
    return new PlannerOptions(solver, threads, executor, search, allowed, sharedLayers,
        progress);
  }

  /**
   * The same options with layer prices shared through a cache.
   *
   * @param cache the cache
   * @return the options
   */
  public PlannerOptions withSharedLayers(LayerCostCache cache) {
    return new PlannerOptions(solver, threads, executor, search, interleave,
        Optional.of(cache), progress);
  }

  /**
   * The same options with another solver.
   *
   * @param options the solver settings
   * @return the options
   */
  public PlannerOptions withSolver(SolverOptions options) {
    return new PlannerOptions(options, threads, executor, search, interleave, sharedLayers,
        progress);
  }

  /**
   * The same options with progress told to another listener.
   *
   * @param listener told the percentage done
   * @return the options
   */
  public PlannerOptions withProgress(IntConsumer listener) {
    return new PlannerOptions(solver, threads, executor, search, interleave, sharedLayers,
        listener);
  }
}
