package io.meshplan.cli;

import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.calibrate.Profile;
import io.meshplan.model.Overlaps;
import io.meshplan.planner.Pricing;
import io.meshplan.util.InputException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The cluster and its prices, shared by {@code plan}, {@code simulate} and {@code export}. */
final class ClusterOptions {
  @Option(names = "--cluster", description = "NODESxGPUS:gpu[:fabric] (e.g. 50x4:v100-32gb, "
      + "128x8:h100-80gb:ib-ndr400), RACKSxnvlGPUS:gpu[:fabric] for NVLink domains across hosts "
      + "(e.g. 8xnvl72:gb200), or a YAML cluster file.")
  String cluster;

  @picocli.CommandLine.Mixin CatalogOption catalog = new CatalogOption();

  @Option(names = "--profile", description = "A calibration profile from 'meshplan calibrate';"
      + " its measured collectives and send/recv replace catalog prices, and its compute scales "
      + "(calibrate --train) replace the shipped ones.")
  Path profile;

  @Option(names = "--prices", paramLabel = "public|kernel", description = "Compute prices "
      + "without --profile: public (default) multiplies each GPU architecture's kernel throughput"
      + " by the factor meshplan ships, fitted on published runs by 'meshplan calibrate --train "
      + "--folds public' (Hopper; other architectures keep kernel-level prices); kernel uses the "
      + "kernel-level prices alone (published kernel benchmarks and datasheets).")
  String prices;

  @Option(names = "--memory", description = "Memory capacity per GPU, e.g. 70GiB: what a "
      + "configuration may use (plan searches within it; simulate and export judge whether a "
      + "configuration fits by it); at most the GPU's physical "
      + "memory (default: 95%% of it; the rest is left to the CUDA context, NCCL buffers and "
      + "allocator fragmentation).")
  String memory;

  @Option(names = "--overlap-grad-reduce", description = "The framework overlaps the "
      + "data-parallel gradient reduction with the backward pass (PyTorch DDP, Megatron-LM's "
      + "--overlap-grad-reduce); off by default, as in Megatron-LM.")
  boolean overlapGradReduce;

  @Option(names = "--overlap-param-gather", description = "With the distributed optimizer, "
      + "the all-gather of updated weights runs under the next iteration's first forward pass "
      + "(Megatron-LM's --overlap-param-gather; needs --overlap-grad-reduce); off by default.")
  boolean overlapParamGather;

  @Option(names = "--tp-comm-overlap", description = "Tensor-parallel all-gathers and "
      + "reduce-scatters run under the GEMMs beside them (Megatron-LM's --tp-comm-overlap with "
      + "Transformer Engine; applies to stages with sequence parallelism); off by default.")
  boolean tpCommOverlap;

  @Option(names = "--overlap-moe-expert-parallel-comm", description = "Mixture-of-experts "
      + "models: the expert-parallel all-to-alls run under another microbatch's compute "
      + "(Megatron-LM's --overlap-moe-expert-parallel-comm); off by default.")
  boolean overlapMoeComm;

  @Option(names = "--moe-dispatcher", paramLabel = "NAME", description = "Mixture-of-experts "
      + "models: the token dispatcher, priced by its published bandwidths: alltoall (NCCL "
      + "all-to-alls of every routed copy, Megatron-LM's --moe-token-dispatcher-type alltoall; "
      + "the default), deepep or hybridep (a token sent once per destination node and forwarded "
      + "over NVLink; Megatron-LM's --moe-token-dispatcher-type flex with "
      + "--moe-flex-dispatcher-backend deepep or hybridep; Hopper and Blackwell only).")
  String moeDispatcher;

  @Option(names = "--fused-cross-entropy", description = "The cross-entropy loss as one fused "
      + "kernel over the logits in the compute type (Transformer Engine's parallel cross-entropy,"
      + " Megatron-Bridge's default; llm-foundry's fused_crossentropy; torchtitan with its loss "
      + "compiled, which its export writes); off by default: the logits are converted to fp32 "
      + "and the loss runs on fp32 tensors, as Megatron-LM, eager torchtitan and "
      + "Megatron-DeepSpeed run it.")
  boolean lossFusion;

  @Option(names = "--grad-reduce-in-bf16", description = "bf16 training: reduce the gradients "
      + "over the data-parallel group in bf16 instead of fp32 (Megatron-LM's "
      + "--grad-reduce-in-bf16, which Megatron-Bridge's performance recipes set, its gradient "
      + "buffer bf16 too under ZeRO-0/1); off by default.")
  boolean bf16GradReduce;

  @Option(names = "--hsdp-step-reduce", description = "With --shard-group: all-reduce the "
      + "shard groups' gradients across the replicas once per step, on the last microbatch, as "
      + "Megatron-FSDP does (--num-distributed-optimizer-instances), instead of every microbatch,"
      + " as torchtitan's FSDP2 does.")
  boolean hsdpStepReduce;

  @Option(names = "--no-fsdp-prefetch", description = "Under ZeRO-2 and ZeRO-3, gather each "
      + "layer's weights and reduce-scatter its gradients after the compute that needs them "
      + "instead of under the neighbouring layers' compute (FSDP and DeepSpeed prefetch by "
      + "default).")
  boolean noFsdpPrefetch;

  @Option(names = "--no-gradient-accumulation-fusion", description = "Accumulate each "
      + "microbatch's weight gradients into the fp32 accumulator in a pass of their own instead of"
      + " in the weight-gradient GEMMs (Megatron-LM fuses them by default; ZeRO-0/1 stages).")
  boolean noGradAccumFusion;

  /**
   * Whether any overlap flag was given.
   *
   * @return true when one of them was
   */
  boolean anyOverlapFlag() {
    return overlapGradReduce || overlapParamGather || tpCommOverlap || noFsdpPrefetch
        || noGradAccumFusion || overlapMoeComm || lossFusion || bf16GradReduce
        || moeDispatcher != null || hsdpStepReduce;
  }

  /**
   * The overlaps: the frameworks' defaults ({@link Overlaps#DEFAULTS}) changed by the flags.
   *
   * @return the overlaps
   */
  Overlaps overlaps() {
    return overlaps(Overlaps.DEFAULTS);
  }

  /**
   * The overlaps: a plan's own changed by the flags given.
   *
   * @param base the overlaps without flags
   * @return the overlaps
   */
  Overlaps overlaps(Overlaps base) {
    return new Overlaps(base.gradReduce() || overlapGradReduce,
        base.paramGather() || overlapParamGather, base.tensorComm() || tpCommOverlap,
        base.fsdpPrefetch() && !noFsdpPrefetch, base.gradAccumFusion() && !noGradAccumFusion,
        base.moeComm() || overlapMoeComm, base.lossFusion() || lossFusion,
        base.bf16GradReduce() || bf16GradReduce, dispatcher().orElse(base.dispatcher()),
        base.hsdpStepReduce() || hsdpStepReduce);
  }

  /**
   * The dispatcher {@code --moe-dispatcher} names.
   *
   * @return it, or empty without the flag
   */
  java.util.Optional<io.meshplan.model.ExpertDispatcher> dispatcher() {
    if (moeDispatcher == null) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(io.meshplan.model.ExpertDispatcher.of(moeDispatcher)
        .orElseThrow(() -> new InputException("--moe-dispatcher must be one of "
            + io.meshplan.model.ExpertDispatcher.words() + ", got '"
            + moeDispatcher + "'")));
  }

  /**
   * The files these flags read, so that no output replaces one: the profile and a cluster file.
   *
   * @return flag to file, in flag order
   */
  java.util.Map<String, Path> inputFiles() {
    java.util.Map<String, Path> files = new java.util.LinkedHashMap<>();
    if (profile != null) {
      files.put("--profile", profile);
    }
    Path file = cluster == null ? null : CliValues.existingFile(cluster);
    if (file != null) {
      files.put("--cluster", file);
    }
    if (catalog.file != null) {
      files.put("--catalog", catalog.file);
    }
    return files;
  }

  /**
   * Whether {@code --cluster} was given.
   *
   * @return true when it was
   */
  boolean clusterGiven() {
    return cluster != null;
  }

  /**
   * {@code --cluster} as given.
   *
   * @return the text, or null without {@code --cluster}
   */
  String clusterText() {
    return cluster;
  }

  /**
   * The content of the cluster file {@code --cluster} names, which a plan file embeds
   * ({@code clusterDescription}); empty for a cluster string or without {@code --cluster}.
   *
   * @return the file's top-level mapping, or empty
   */
  java.util.Optional<com.fasterxml.jackson.databind.JsonNode> clusterDescription() {
    if (cluster == null) {
      return java.util.Optional.empty();
    }
    if (described == null) {
      described = FlagWords.call(FlagWords.CLUSTER, () -> ClusterSpec.fileDescription(cluster));
    }
    return described;
  }

  /**
   * The cluster file's mapping, read once: the cluster priced and the description a plan embeds
   * come from one read, so a file changed while a command runs cannot be priced on one content
   * and carried with another.
   */
  private java.util.Optional<com.fasterxml.jackson.databind.JsonNode> described;

  /** The cluster, read from {@code --cluster} or, when absent, from the fallback text. */
  ClusterSpec spec(String fallback) {
    String text = cluster != null ? cluster : fallback;
    if (text == null) {
      throw new io.meshplan.util.InputException("--cluster is required, e.g. --cluster "
          + "128x8:h100-80gb:ib-ndr400");
    }
    if (cluster != null) {
      java.util.Optional<com.fasterxml.jackson.databind.JsonNode> d = clusterDescription();
      if (d.isPresent()) {
        return catalog.ofDescription(java.nio.file.Path.of(cluster).toString(), d.get());
      }
    }
    return catalog.cluster(text);
  }

  double memoryPerGpu(ClusterSpec cs) {
    return memory != null ? CliValues.memoryOf(memory, cs.gpu())
        : cs.gpu().usableMemoryBytes();
  }

  private Profile loaded;

  private Profile profile() {
    if (profile != null && loaded == null) {
      loaded = ProfileFiles.read(profile);
    }
    return loaded;
  }

  /**
   * Warns, in one line, when {@code --profile} was measured on another cluster than the one it
   * prices, as {@code shard} does.
   *
   * @param cs the cluster the command prices
   * @param err standard error
   */
  void warnIfProfileForeign(ClusterSpec cs, java.io.PrintWriter err) {
    Profile p = profile();
    if (p != null) {
      p.measuredElsewhere(profile != null ? profile.toString() : "the plan's profile",
          cs.toShortString())
          .ifPresent(w -> err.println(ExceptionMapper.warning(w)));
    }
  }

  /**
   * Takes the prices a plan file was planned at when the flags name none ({@link
   * PlanFile#defaultPrices}): {@code kernel} for a plan planned with {@code --prices kernel}, the
   * calibration profile a plan planned with {@code --profile} carries ({@link PlanFile#profile});
   * a plan that says it was priced with a profile but carries none (written before plans carried
   * it) is priced at the defaults, with a warning; any other plan at the defaults.
   *
   * @param planSource the plan's {@code prices.source}, if it has one
   * @param planProfile the profile the plan carries, if any
   * @param planFile the plan file, for the warning
   * @param warn where the warning goes
   */
  void defaultPrices(java.util.Optional<String> planSource,
      java.util.Optional<Profile> planProfile, Path planFile, java.io.PrintWriter warn) {
    if (prices != null || profile != null) {
      return;
    }
    if (planSource.filter("kernel"::equals).isPresent()) {
      prices = "kernel";
    } else if (planProfile.isPresent()) {
      loaded = planProfile.get();
    } else if (planSource.filter("profile"::equals).isPresent()) {
      warn.println(ExceptionMapper.warning(planFile + " was priced with a calibration profile it"
          + " does not carry; priced now at the shipped prices (give --profile FILE for its own)"));
    }
  }

  /**
   * The prices the flags ask for ({@link Pricing#of}): the profile's, else the shipped fitted
   * factors, or kernel-level prices with {@code --prices kernel}.
   *
   * @return the pricing
   */
  Pricing pricing() {
    boolean kernel = CliValues.kernelPrices(prices);
    if (prices != null && profile != null) {
      throw new io.meshplan.util.InputException("--prices and --profile both choose the "
          + "compute prices; give one (a profile's compute scales replace the shipped ones)");
    }
    return Pricing.of(java.util.Optional.ofNullable(profile()), kernel);
  }
}
