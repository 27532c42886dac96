package io.meshplan.sweep;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.util.Require;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * A capacity sweep: every point of a {@link SweepGrid} planned on a {@link TaskExecutor}, one task
 * per point, results in grid order. Every point gets a result (planned, infeasible, timed out or
 * rejected); none is dropped.
 */
public final class Sweep {
  private final TaskExecutor executor;
  private final PointTask task;

  /**
   * Creates the sweep.
   *
   * @param executor runs the points
   * @param task what each point runs (mode and time limit)
   */
  public Sweep(TaskExecutor executor, PointTask task) {
    this.executor = Require.nonNull(executor, "executor");
    this.task = Require.nonNull(task, "task");
  }

  /**
   * Runs the grid.
   *
   * @param grid the points
   * @param done told how many points have finished
   * @return one result per point, in grid order
   */
  public List<PointResult> run(SweepGrid grid, IntConsumer done) {
    List<SweepPoint> points = grid.points();
    List<PointResult> out = executor.map("sweep", points, task, done);
    Require.that(out.size() == points.size(), "the executor returned " + out.size()
        + " results for " + points.size() + " points");
    for (int i = 0; i < out.size(); i++) {
      Require.that(out.get(i).point().equals(points.get(i)), "result " + i
          + " belongs to another point");
    }
    return out;
  }
}
