package io.meshplan.interop.dp;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/** A {@link StageCostTable} held in an array, filled with a {@link Builder}. Immutable. */
public final class ArrayStageCostTable implements StageCostTable {
  private final int layers;
  private final int submeshes;
  private final List<List<StageOption>> cells;

  private ArrayStageCostTable(int layers, int submeshes, List<List<StageOption>> cells) {
    this.layers = layers;
    this.submeshes = submeshes;
    this.cells = cells;
  }

  /**
   * Starts an empty table.
   *
   * @param layers layers L
   * @param submeshes submesh shapes
   * @return the builder
   */
  public static Builder builder(int layers, int submeshes) {
    return new Builder(layers, submeshes);
  }

  @Override
  public int layers() {
    return layers;
  }

  @Override
  public int submeshes() {
    return submeshes;
  }

  @Override
  public List<StageOption> options(int first, int last, int submesh) {
    return cells.get(index(layers, submeshes, first, last, submesh));
  }

  private static int index(int layers, int submeshes, int first, int last, int submesh) {
    if (first < 0 || last < first || last >= layers || submesh < 0 || submesh >= submeshes) {
      throw new IllegalArgumentException("no cell [" + first + ", " + last + "] on submesh "
          + submesh + " in a table of " + layers + " layers and " + submeshes + " submeshes");
    }
    return (first * layers + last) * submeshes + submesh;
  }

  /** Collects options cell by cell. */
  public static final class Builder {
    private final int layers;
    private final int submeshes;
    private final List<List<StageOption>> cells;

    private Builder(int layers, int submeshes) {
      if (layers < 1 || submeshes < 1) {
        throw new IllegalArgumentException("a table needs at least one layer and one submesh, got "
            + layers + " and " + submeshes);
      }
      this.layers = layers;
      this.submeshes = submeshes;
      int n = Math.multiplyExact(Math.multiplyExact(layers, layers), submeshes);
      this.cells = new ArrayList<>(Collections.nCopies(n, List.of()));
    }

    /**
     * Adds an option to a cell.
     *
     * @param first first layer
     * @param last last layer, inclusive
     * @param submesh submesh index
     * @param option the option
     * @return this builder
     */
    public Builder add(int first, int last, int submesh, StageOption option) {
      int i = index(layers, submeshes, first, last, submesh);
      Objects.requireNonNull(option, "option");
      if (cells.get(i).isEmpty()) {
        cells.set(i, new ArrayList<>(2));
      }
      cells.get(i).add(option);
      return this;
    }

    /**
     * Freezes the table.
     *
     * @return the table
     */
    public ArrayStageCostTable build() {
      List<List<StageOption>> frozen = new ArrayList<>(cells.size());
      for (List<StageOption> c : cells) {
        frozen.add(List.copyOf(c));
      }
      return new ArrayStageCostTable(layers, submeshes, List.copyOf(frozen));
    }
  }
}
