package io.meshplan.interop.dp;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;

/**
 * A table whose DP layers are groups of {@code group} consecutive layers of another table (the
 * last group may be shorter), so that a stage starts and ends on a group boundary.
 */
public final class GroupedStageCostTable implements StageCostTable {
  private final StageCostTable inner;
  private final int group;

  /**
   * Groups a table's layers.
   *
   * @param inner the table of single layers
   * @param group layers per group, at least 1
   */
  public GroupedStageCostTable(StageCostTable inner, int group) {
    Require.that(group >= 1, "layer group must be >= 1");
    this.inner = inner;
    this.group = group;
  }

  @Override
  public int layers() {
    return (inner.layers() + group - 1) / group;
  }

  @Override
  public int submeshes() {
    return inner.submeshes();
  }

  private int lastOf(int g) {
    return Math.min((g + 1) * group, inner.layers()) - 1;
  }

  @Override
  public List<StageOption> options(int first, int last, int submesh) {
    return inner.options(first * group, lastOf(last), submesh);
  }

  /**
   * A partition of this table's groups in layers of the inner table.
   *
   * @param p a partition of the groups
   * @return the same stages over the inner table's layers
   */
  public StagePartition ungroup(StagePartition p) {
    if (group == 1) {
      return p;
    }
    List<Stage> out = new ArrayList<>();
    for (Stage s : p.stages()) {
      out.add(new Stage(s.firstLayer() * group, lastOf(s.lastLayer()), s.submeshIndex(),
          s.submesh(), s.option()));
    }
    return new StagePartition(out, p.microbatches(), p.objectiveSeconds());
  }
}
