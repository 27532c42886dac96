package io.meshplan.cluster;

import io.meshplan.util.Require;

/**
 * The alpha-beta collective cost model of Alpa (OSDI'22, section 4.1) and XLA's auto-sharding.
 *
 * <p>On an axis of n devices with latency {@code alpha} and inverse bandwidth {@code beta}:
 * all-gather and reduce-scatter cost {@code alpha + beta * (n-1)/n * bytes}, all-reduce costs
 * {@code alpha + beta * 2(n-1)/n * bytes}, and all-to-all costs {@code alpha + beta * (n-1)/n *
 * bytes} of one device's buffer, since each device keeps 1/n of it and sends the other n-1 slices
 * once; moving a split this way is n times cheaper than gathering the n-times larger result. An
 * axis of size 1 costs nothing. With Alpa's constants ({@code alpha=(1,1)}, {@code
 * beta=(1,0.01)}) the unit is abstract; with seconds and seconds per byte it is seconds.
 *
 * @param mesh the mesh
 * @param alpha latency per axis (cost units)
 * @param beta inverse bandwidth per axis (cost units per byte)
 */
public record AlphaBetaCommModel(LogicalMesh mesh, double[] alpha, double[] beta)
    implements CommModel {
  /** Validates that there is one alpha and one beta per mesh axis. */
  public AlphaBetaCommModel {
    Require.nonNull(mesh, "mesh");
    Require.nonNull(alpha, "alpha");
    Require.nonNull(beta, "beta");
    Require.that(
        alpha.length == mesh.rank() && beta.length == mesh.rank(),
        "the mesh " + mesh + " has " + mesh.rank() + " axes but alpha has " + alpha.length
            + " and beta has " + beta.length + " values");
    alpha = alpha.clone();
    beta = beta.clone();
    for (int a = 0; a < alpha.length; a++) {
      Require.nonNegative(alpha[a], "alpha[" + a + "]");
      Require.nonNegative(beta[a], "beta[" + a + "]");
    }
  }

  @Override
  public double[] alpha() {
    return alpha.clone();
  }

  @Override
  public double[] beta() {
    return beta.clone();
  }

  private double factorCost(double factor, double bytes, int axis) {
    int n = mesh.size(axis);
    if (n == 1) {
      return 0.0;
    }
    return alpha[axis] + beta[axis] * factor * (n - 1) / n * bytes;
  }

  @Override
  public double allReduce(double bytes, int axis) {
    return factorCost(2.0, bytes, axis);
  }

  @Override
  public double allGather(double bytes, int axis) {
    return factorCost(1.0, bytes, axis);
  }

  @Override
  public double reduceScatter(double bytes, int axis) {
    return factorCost(1.0, bytes, axis);
  }

  @Override
  public double allToAll(double bytes, int axis) {
    return factorCost(1.0, bytes, axis);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AlphaBetaCommModel m
        && mesh.equals(m.mesh)
        && java.util.Arrays.equals(alpha, m.alpha)
        && java.util.Arrays.equals(beta, m.beta);
  }

  @Override
  public int hashCode() {
    return mesh.hashCode() * 31 + java.util.Arrays.hashCode(alpha) * 7 + java.util.Arrays.hashCode(beta);
  }

  @Override
  public String toString() {
    return "AlphaBetaCommModel[mesh=" + mesh + ", alpha=" + java.util.Arrays.toString(alpha)
        + ", beta=" + java.util.Arrays.toString(beta) + "]";
  }
}
