package io.meshplan.planner;

import io.meshplan.calibrate.Profile;
import io.meshplan.calibrate.ProfileCommModel;
import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.CommPricing;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.cluster.SendRecvModel;
import io.meshplan.util.Require;

/**
 * How a plan prices collectives and stage-to-stage transfers: the catalog values of the GPU and
 * fabric, or a calibration profile measured on the cluster ({@code meshplan calibrate}). Plain
 * serializable data, so a planning task that carries it prices alike in any process.
 */
public sealed interface Pricing extends CommPricing permits Pricing.Catalog, Pricing.Calibrated {
  /**
   * The prices a job asks for: a calibration profile's when it gives one, else the catalog's.
   * This is the one place the choice is made ({@code --profile} on every command).
   *
   * @param profile the profile, if any
   * @return the pricing
   */
  static Pricing of(java.util.Optional<Profile> profile) {
    return profile.<Pricing>map(Pricing::calibrated).orElseGet(Pricing::catalog);
  }

  /**
   * The catalog's prices.
   *
   * @return the pricing
   */
  static Pricing catalog() {
    return new Catalog();
  }

  /**
   * A calibration profile's prices.
   *
   * @param profile the profile
   * @return the pricing
   */
  static Pricing calibrated(Profile profile) {
    return new Calibrated(profile);
  }

  /**
   * The GPU's and fabric's datasheet values ({@link ClusterCommModels#catalog}, {@link
   * SendRecvModel#catalog}).
   */
  record Catalog() implements Pricing {
    private static final long serialVersionUID = 1L;

    @Override
    public CommModel collectives(ClusterSpec cluster, LogicalMesh mesh) {
      return ClusterCommModels.catalog(cluster, mesh);
    }

    @Override
    public SendRecvModel sendRecv(ClusterSpec cluster) {
      return SendRecvModel.catalog(cluster);
    }
  }

  /**
   * A profile's measured collectives and send/recv ({@link ProfileCommModel}), and its measured
   * compute scales.
   *
   * @param profile the profile
   */
  record Calibrated(Profile profile) implements Pricing {
    private static final long serialVersionUID = 1L;

    /** Validates the profile. */
    public Calibrated {
      Require.nonNull(profile, "profile");
    }

    @Override
    public CommModel collectives(ClusterSpec cluster, LogicalMesh mesh) {
      return new ProfileCommModel(cluster, mesh, profile);
    }

    @Override
    public SendRecvModel sendRecv(ClusterSpec cluster) {
      return new ProfileCommModel(cluster, LogicalMesh.of(cluster.gpuCount()), profile);
    }

    /** The profile's measured scale for the GPU's architecture ({@link Profile#computeScale}). */
    @Override
    public double computeScale(io.meshplan.cluster.GpuSpec gpu) {
      return profile.computeScale(gpu);
    }
  }
}
