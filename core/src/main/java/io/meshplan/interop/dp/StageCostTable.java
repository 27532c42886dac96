package io.meshplan.interop.dp;

import java.util.List;

/**
 * The candidate stages of the stage DP: for each layer range {@code [first, last]} (0-based,
 * inclusive) and each submesh shape (by its index in the DP's shape list), the ways to run it. An
 * empty list means the range cannot run on that submesh.
 */
public interface StageCostTable {

  /**
   * Layers L of the model.
   *
   * @return layers, at least 1
   */
  int layers();

  /**
   * Submesh shapes the table covers.
   *
   * @return shapes, at least 1
   */
  int submeshes();

  /**
   * The options of one candidate stage.
   *
   * @param first first layer, 0-based
   * @param last last layer, inclusive, at least {@code first}
   * @param submesh index of the submesh shape
   * @return the options, possibly empty
   */
  List<StageOption> options(int first, int last, int submesh);
}
