package io.meshplan.interop.dp;

import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.util.Require;

/**
 * One stage of a pipeline plan: a layer range on a submesh, run with one option.
 *
 * @param firstLayer first layer, 0-based
 * @param lastLayer last layer, inclusive
 * @param submeshIndex index of the submesh shape in the DP's shape list
 * @param submesh the submesh shape
 * @param option the chosen option; {@code option.tag()} is the caller's candidate
 */
public record Stage(int firstLayer, int lastLayer, int submeshIndex, SubmeshShape submesh,
    StageOption option) {

  /** Checks the range. */
  public Stage {
    Require.that(firstLayer >= 0 && lastLayer >= firstLayer, () -> "bad layer range [" + firstLayer
        + ", " + lastLayer + "]");
    Require.that(submeshIndex >= 0, "submeshIndex must be >= 0");
    Require.nonNull(submesh, "submesh");
    Require.nonNull(option, "option");
  }

  /**
   * The caller's tag of the chosen option.
   *
   * @return the tag
   */
  public int tag() {
    return option.tag();
  }
}
