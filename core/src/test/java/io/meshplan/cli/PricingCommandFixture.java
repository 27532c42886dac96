package io.meshplan.cli;

import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.KernelTimeModel;
import io.meshplan.cluster.LogicalMesh;

/**
 * A command-line class that prices a mesh itself, as {@code shard} did before its pricing moved
 * into the planner: {@code LayeringTest#thePricingRuleCatchesACommandThatPrices} checks that
 * the layering rule refuses it. Never called.
 */
public final class PricingCommandFixture {
  private PricingCommandFixture() {}

  public static double price(ClusterSpec cs, LogicalMesh mesh) {
    return ClusterCommModels.catalog(cs, mesh).allReduce(1, 0)
        + KernelTimeModel.densePeak(cs.gpu(), 2);
  }
}
