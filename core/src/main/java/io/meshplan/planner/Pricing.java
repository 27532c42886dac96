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
public sealed interface Pricing extends CommPricing permits Pricing.Catalog, Pricing.Calibrated,
    Pricing.Fitted {
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
   * The prices a job asks for: a calibration profile's when it gives one; else the compute
   * factors meshplan ships, fitted on the public folds ({@link #shipped}), unless {@code kernel}
   * asks for kernel-level prices.
   *
   * @param profile the user's profile, if any
   * @param kernel whether {@code --prices kernel} was given
   * @return the pricing
   */
  static Pricing of(java.util.Optional<Profile> profile, boolean kernel) {
    if (profile.isPresent()) {
      return calibrated(profile.get());
    }
    return kernel ? catalog() : fitted(PublicPrices.shipped());
  }

  /**
   * The shipped calibration: the catalog's collectives with the compute factors that {@code
   * meshplan calibrate --train --folds public} fitted ({@link PublicPrices}).
   *
   * @return the pricing
   */
  static Pricing shipped() {
    return fitted(PublicPrices.shipped());
  }

  /**
   * The catalog's collectives with a profile's compute scales.
   *
   * @param compute the profile whose compute scales price kernels (its collective entries are
   *     not read)
   * @return the pricing
   */
  static Pricing fitted(Profile compute) {
    return new Fitted(compute, null);
  }

  /**
   * Where this pricing's numbers come from, in one line for a GPU: for example {@code prices:
   * hopper compute x0.817, fitted on 43 public runs of 7 stacks}.
   *
   * @param gpu the GPU priced
   * @return the line, without a newline
   */
  String describe(io.meshplan.cluster.GpuSpec gpu);

  /**
   * The word JSON output names these prices by: {@code public}, {@code kernel} or {@code
   * profile}.
   *
   * @return the word
   */
  String source();

  /**
   * The fitted compute scale that prices a GPU's kernels.
   *
   * @param gpu the GPU
   * @return the scale, or empty at kernel-level prices
   */
  default java.util.Optional<io.meshplan.calibrate.ComputeScale> fittedCompute(
      io.meshplan.cluster.GpuSpec gpu) {
    return java.util.Optional.empty();
  }

  /**
   * The fitted compute scale's factor ({@link #fittedCompute}), 1 at kernel-level prices.
   *
   * @param gpu the GPU
   * @return the scale, > 0
   */
  @Override
  default double computeScale(io.meshplan.cluster.GpuSpec gpu) {
    return fittedCompute(gpu).map(io.meshplan.calibrate.ComputeScale::scale).orElse(1.0);
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
    public String describe(io.meshplan.cluster.GpuSpec gpu) {
      return "prices: kernel-level (--prices kernel): kernel benchmarks and datasheets, no band";
    }

    @Override
    public String source() {
      return "kernel";
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
    public String describe(io.meshplan.cluster.GpuSpec gpu) {
      String collectives = profile.entries().isEmpty() ? "catalog collectives"
          : profile.entries().size() + " measured collective entries";
      return "prices: --profile: " + profile.compute(gpu).map(c -> PublicPrices.words(gpu, c))
          .orElse(gpu.architecture().word() + " compute at kernel-level prices") + "; "
          + collectives;
    }

    @Override
    public String source() {
      return "profile";
    }

    @Override
    public java.util.Optional<io.meshplan.calibrate.ComputeScale> fittedCompute(
        io.meshplan.cluster.GpuSpec gpu) {
      return profile.compute(gpu);
    }

    @Override
    public CommModel collectives(ClusterSpec cluster, LogicalMesh mesh) {
      return new ProfileCommModel(cluster, mesh, profile);
    }

    @Override
    public SendRecvModel sendRecv(ClusterSpec cluster) {
      return new ProfileCommModel(cluster, LogicalMesh.of(cluster.gpuCount()), profile);
    }
  }

  /**
   * The catalog's collectives and send/recv, with compute scales fitted to end-to-end runs: the
   * shipped calibration ({@link PublicPrices}), or a fold's fit while it is scored.
   *
   * @param compute the profile whose compute scales price kernels
   * @param kernel the attention kernel runs price, or null for each architecture's default
   */
  record Fitted(Profile compute, AttentionKernel kernel) implements Pricing {
    private static final long serialVersionUID = 1L;

    /** Validates the profile. */
    public Fitted {
      Require.nonNull(compute, "compute");
    }

    @Override
    public Optional<AttentionKernel> attentionKernel() {
      return Optional.ofNullable(kernel);
    }

    @Override
    public Pricing withAttentionKernel(AttentionKernel k) {
      return new Fitted(compute, Require.nonNull(k, "attention kernel"));
    }

    @Override
    public CommModel collectives(ClusterSpec cluster, LogicalMesh mesh) {
      return ClusterCommModels.catalog(cluster, mesh);
    }

    @Override
    public SendRecvModel sendRecv(ClusterSpec cluster) {
      return SendRecvModel.catalog(cluster);
    }

    @Override
    public java.util.Optional<io.meshplan.calibrate.ComputeScale> fittedCompute(
        io.meshplan.cluster.GpuSpec gpu) {
      return compute.compute(gpu);
    }

    @Override
    public String describe(io.meshplan.cluster.GpuSpec gpu) {
      return compute.compute(gpu).map(c -> "prices: " + PublicPrices.words(gpu, c))
          .orElse("prices: " + gpu.architecture().word() + " compute at kernel-level prices (no "
              + "public run on this architecture; no band)");
    }

    @Override
    public String source() {
      return "public";
    }
  }
}
