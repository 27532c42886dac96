package io.meshplan.interop.dp;

import io.meshplan.interop.space.SubmeshPlacement;
import io.meshplan.interop.space.SubmeshShape;
import java.util.ArrayList;
import java.util.List;

/**
 * The stage DP whose partition can also be placed on the cluster's nodes ({@link
 * SubmeshPlacement}). Alpa's DP asks only that the submeshes' GPUs sum to the cluster's ({@code
 * training_dp_impl} in {@code alpa/pipeline_parallel/stage_construction.py}, alpa-projects/alpa at
 * b8078a9), which suffices on its power-of-two nodes (its {@code get_submesh_choices} asserts
 * them). With {@code M} GPUs per node not a power of two, a set of submeshes that sums to the
 * cluster may not fit its nodes (three of 4 GPUs on two nodes of 6). Then this DP plans again over
 * the shapes that tile a node ({@link SubmeshPlacement#tilesNode}: whole nodes and the powers of
 * two that divide {@code M}), every set of which can be placed, and returns that plan: so the plan
 * returned is always one the runtime can place as it was priced. It is the best plan of the
 * tiling shapes, not necessarily the best placeable plan of all shapes (a 4-GPU stage beside two
 * 1-GPU stages in a 6-GPU node is then not considered).
 */
public final class PackedStageDp {
  private PackedStageDp() {}

  /**
   * Solves the problem with placeable partitions only.
   *
   * @param problem the problem
   * @return a partition whose submeshes can be placed, or why none fits
   */
  public static StageDpResult solve(StageDpProblem problem) {
    StageDpResult r = new StageDp(problem).solve();
    if (!(r instanceof StageDpResult.Feasible f) || placeable(problem, f.plan())) {
      return r;
    }
    List<Integer> keep = SubmeshPlacement.tilingIndices(problem.shapes(),
        problem.gpusPerNode());
    List<SubmeshShape> shapes = new ArrayList<>();
    for (int j : keep) {
      shapes.add(problem.shapes().get(j));
    }
    if (shapes.isEmpty()) {
      return new StageDpResult.Infeasible(java.util.OptionalDouble.empty(), "no partition of the "
          + problem.layers() + " layers into stages has submeshes that fit the nodes of "
          + problem.nodes() + " x " + problem.gpusPerNode() + " GPUs");
    }
    StageDpResult again = new StageDp(new StageDpProblem(shapes, problem.nodes(),
        problem.gpusPerNode(), new Subset(problem.table(), keep), problem.memoryCapacityBytes(),
        problem.microbatches())).solve();
    if (!(again instanceof StageDpResult.Feasible g)) {
      return again;
    }
    List<Stage> stages = new ArrayList<>();
    for (Stage s : g.plan().stages()) {
      stages.add(new Stage(s.firstLayer(), s.lastLayer(), keep.get(s.submeshIndex()),
          s.submesh(), s.option()));
    }
    return new StageDpResult.Feasible(new StagePartition(stages, g.plan().microbatches(),
        g.plan().objectiveSeconds()), f.latenciesTried() + g.latenciesTried());
  }

  /**
   * Whether a partition's submeshes can be placed on the problem's cluster.
   *
   * @param problem the problem
   * @param plan a partition of it
   * @return whether {@link SubmeshPlacement#place} finds a placement
   */
  public static boolean placeable(StageDpProblem problem, StagePartition plan) {
    return SubmeshPlacement.place(submeshes(plan), problem.nodes(), problem.gpusPerNode())
        .isPresent();
  }

  /**
   * The submeshes of a partition, in stage order.
   *
   * @param plan the partition
   * @return one shape per stage
   */
  public static List<SubmeshShape> submeshes(StagePartition plan) {
    List<SubmeshShape> out = new ArrayList<>();
    for (Stage s : plan.stages()) {
      out.add(s.submesh());
    }
    return out;
  }

  /** The columns of a table for some of its submeshes, renumbered from 0. */
  private record Subset(StageCostTable inner, List<Integer> keep) implements StageCostTable {
    @Override
    public int layers() {
      return inner.layers();
    }

    @Override
    public int submeshes() {
      return keep.size();
    }

    @Override
    public List<StageOption> options(int first, int last, int submesh) {
      return inner.options(first, last, keep.get(submesh));
    }
  }
}
