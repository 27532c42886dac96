package io.meshplan.planner;

import io.meshplan.calibrate.Profile;
import io.meshplan.calibrate.ProfileCommModel;
import io.meshplan.cluster.AttentionKernel;
import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.CommPricing;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.cluster.SendRecvModel;
import io.meshplan.util.Require;
import java.util.Optional;

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
   * These prices with the attention core priced as a named fused kernel ({@link
   * io.meshplan.cluster.FusedAttentionKernels#of(io.meshplan.cluster.Architecture,
   * AttentionKernel)}) instead of the architecture's default.
   *
   * @param kernel the kernel
   * @return the pricing
   */
  Pricing withAttentionKernel(AttentionKernel kernel);

  /**
   * The GPU's and fabric's datasheet values ({@link ClusterCommModels#catalog}, {@link
   * SendRecvModel#catalog}).
   *
   * @param kernel the attention kernel runs price, or null for each architecture's default
   */
  record Catalog(AttentionKernel kernel) implements Pricing {
    private static final long serialVersionUID = 1L;

    /** The catalog with each architecture's default attention kernel. */
    public Catalog() {
      this(null);
    }

    @Override
    public Optional<AttentionKernel> attentionKernel() {
      return Optional.ofNullable(kernel);
    }

    @Override
    public Pricing withAttentionKernel(AttentionKernel k) {
      return new Catalog(Require.nonNull(k, "attention kernel"));
    }

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
   * @param kernel the attention kernel runs price, or null for each architecture's default
   */
  record Calibrated(Profile profile, AttentionKernel kernel) implements Pricing {
    private static final long serialVersionUID = 1L;

    /** Validates the profile. */
    public Calibrated {
      Require.nonNull(profile, "profile");
    }

    /**
     * A profile's prices with each architecture's default attention kernel.
     *
     * @param profile the profile
     */
    public Calibrated(Profile profile) {
      this(profile, null);
    }

    @Override
    public Optional<AttentionKernel> attentionKernel() {
      return Optional.ofNullable(kernel);
    }

    @Override
    public Pricing withAttentionKernel(AttentionKernel k) {
      return new Calibrated(profile, Require.nonNull(k, "attention kernel"));
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
