package io.meshplan.calibrate;

import io.meshplan.cluster.AxisPlacement;
import io.meshplan.cluster.CatalogCommModel;
import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.Collective;
import io.meshplan.cluster.CollectiveCommModel;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.cluster.SendRecvModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;

/**
 * Prices collectives from a calibration profile, falling back to the catalog model.
 *
 * <p>For a collective on an axis whose groups have n ranks at level L (intra-node if a group stays on
 * one node, else inter-node; see {@link AxisPlacement}):
 *
 * <ol>
 *   <li>if the profile has no entry for (collective, L), the {@link CatalogCommModel} prices it;
 *   <li>otherwise the entry with the nearest group size g is used: nearest in log2 (|log2 g - log2
 *       n| smallest), ties to the larger g, which errs on the slow side;
 *   <li>when g differs from n the bus bandwidth is assumed to carry over (that is what nccl-tests'
 *       bus bandwidth is designed for), so the entry is read at the message size with the same bus
 *       traffic: t_n(B) = t_g(B * f(n) / f(g)), f the bus factor.
 * </ol>
 *
 * <p>An axis of size 1 costs 0. Measurements reflect the concurrency they were taken with: an entry
 * measured with one group per node is used as is for an axis whose groups share the node's NICs.
 * Costs are in seconds.
 */
public final class ProfileCommModel implements CollectiveCommModel, SendRecvModel {
  private final LogicalMesh mesh;
  private final Profile profile;
  private final CatalogCommModel catalog;
  private final SendRecvModel catalogSendRecv;

  /**
   * Creates the model.
   *
   * @param cluster the cluster
   * @param mesh the logical mesh, mapped row-major onto device ids
   * @param profile the calibration profile
   */
  public ProfileCommModel(ClusterSpec cluster, LogicalMesh mesh, Profile profile) {
    this.mesh = Require.nonNull(mesh, "mesh");
    this.profile = Require.nonNull(profile, "profile");
    this.catalog = ClusterCommModels.catalog(Require.nonNull(cluster, "cluster"), mesh);
    this.catalogSendRecv = SendRecvModel.catalog(cluster);
  }

  @Override
  public LogicalMesh mesh() {
    return mesh;
  }

  /**
   * The profile entry an axis would use for a collective.
   *
   * @param collective the collective
   * @param axis the axis
   * @return the entry, or empty when the catalog model prices it
   */
  public Optional<ProfileEntry> entryFor(Collective collective, int axis) {
    AxisPlacement p = catalog.placement(axis);
    List<ProfileEntry> candidates = profile.find(collective, p.level());
    ProfileEntry best = null;
    double bestDist = Double.POSITIVE_INFINITY;
    double logN = Math.log(p.groupSize());
    for (ProfileEntry e : candidates) {
      double d = Math.abs(Math.log(e.gpus()) - logN);
      if (d < bestDist - 1e-12 || (Math.abs(d - bestDist) <= 1e-12 && e.gpus() > best.gpus())) {
        best = e;
        bestDist = d;
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * The cost of a collective on an axis, by the rules in the class comment.
   *
   * @param collective the collective
   * @param bytes the buffer, in bytes
   * @param axis the axis
   * @return seconds
   */
  @Override
  public double cost(Collective collective, double bytes, int axis) {
    int n = mesh.size(axis);
    if (n == 1) {
      return 0.0;
    }
    Optional<ProfileEntry> e = entryFor(collective, axis);
    if (e.isEmpty()) {
      return catalog.cost(collective, bytes, axis);
    }
    ProfileEntry entry = e.get();
    double fg = collective.busFactor(entry.gpus());
    double fn = collective.busFactor(n);
    double scaled = fg > 0 ? bytes * fn / fg : bytes;
    return entry.seconds(scaled);
  }

  /**
   * A stage-to-stage transfer, priced by the profile's send/recv entry at the level when it has one
   * (the measured curve, read at the bytes of one pair), else by the catalog.
   *
   * @param bytes bytes each pair moves
   * @param pairsPerNode pairs leaving one node at once
   * @param level intra-node or inter-node
   * @return seconds
   */
  @Override
  public double sendRecv(double bytes, int pairsPerNode, LinkLevel level) {
    if (bytes <= 0) {
      return 0.0;
    }
    ProfileEntry best = null;
    for (ProfileEntry e : profile.find(Collective.SEND_RECV, level)) {
      if (best == null || e.gpus() < best.gpus()) {
        best = e;
      }
    }
    return best == null ? catalogSendRecv.sendRecv(bytes, pairsPerNode, level)
        : best.seconds(bytes);
  }
}
