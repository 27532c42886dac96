package io.meshplan.plan;

import io.meshplan.model.Attention;
import io.meshplan.model.Recompute;
import io.meshplan.util.Require;
import java.io.Serializable;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * What one training runtime can run, as data the planner's search takes: the settings a stage may
 * have, whether the stages must form one Megatron-style configuration, and the schedules and
 * attention kernels it has. A runtime's export writer states it ({@code export}'s launch checks)
 * and checks its plans against it, so the planner searches exactly what the writer accepts per
 * setting; what depends on combinations of settings the writer checks on each candidate.
 *
 * @param uniform whether every stage must take one tensor, data and context-parallel size, one
 *     setting and the layer counts Megatron-Core states ({@link ParallelConfig}); false for a
 *     runtime that runs each stage on its own submesh with its own setting (Alpa)
 * @param recompute the recomputation modes a stage may use
 * @param sequenceParallel whether a stage may use sequence parallelism
 * @param ilpLayouts whether a stage's weight layouts may be the ILP's own choice
 * @param megatronLayouts whether a stage's weight layouts may be fixed to Megatron-LM's
 * @param zeroStages the ZeRO stages a stage may use
 * @param contextParallel whether a stage may split sequences over GPUs
 * @param expertParallel whether a stage may spread experts over GPUs
 * @param interleaved whether the pipeline may run the interleaved schedule
 * @param attention the attention kernels the runtime runs
 * @param powerOfTwoSlices whether submeshes smaller than a node need a node of a power-of-two
 *     GPU count (a runtime that packs them largest first into each node, as Alpa does, cannot
 *     place them otherwise)
 */
public record RuntimeSpace(boolean uniform, Set<Recompute> recompute, boolean sequenceParallel,
    boolean ilpLayouts, boolean megatronLayouts, Set<Integer> zeroStages, boolean contextParallel,
    boolean expertParallel, boolean interleaved, Set<Attention> attention,
    boolean powerOfTwoSlices) implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Everything the planner searches: no runtime's limits. */
  public static final RuntimeSpace ANY = new RuntimeSpace(false, EnumSet.allOf(Recompute.class),
      true, true, true, Set.of(0, 1, 2, 3), true, true, true, EnumSet.allOf(Attention.class),
      false);

  /** A setting of a stage that a runtime's space leaves out. */
  public enum Feature {
    /** the stage's recomputation mode */
    RECOMPUTE,
    /** sequence parallelism */
    SEQUENCE_PARALLEL,
    /** weight layouts chosen by the ILP */
    ILP_LAYOUTS,
    /** Megatron-LM's fixed weight layouts */
    MEGATRON_LAYOUTS,
    /** context parallelism */
    CONTEXT_PARALLEL,
    /** expert parallelism */
    EXPERT_PARALLEL,
    /** the stage's ZeRO stage */
    ZERO_STAGE
  }

  /** Validates the fields and keeps immutable copies of the sets. */
  public RuntimeSpace {
    Require.that(!recompute.isEmpty(), "a runtime recomputes in at least one way");
    Require.that(ilpLayouts || megatronLayouts, "a runtime lays weights out in at least one way");
    Require.that(!zeroStages.isEmpty() && zeroStages.stream().allMatch(z -> z >= 0 && z <= 3),
        "ZeRO stages are 0 to 3, got " + zeroStages);
    Require.that(!attention.isEmpty(), "a runtime runs at least one attention kernel");
    recompute = Set.copyOf(recompute);
    zeroStages = Set.copyOf(zeroStages);
    attention = Set.copyOf(attention);
  }

  /**
   * The first layer setting of a stage this space leaves out, in the order of {@link Feature}
   * (the ZeRO stage is {@link #allowsZero}'s).
   *
   * @param tensorParallel the stage's tensor-parallel size (layouts are a choice only above 1)
   * @param recomputeMode its recomputation
   * @param sp its sequence parallelism
   * @param megatron whether its layouts are Megatron-LM's
   * @param cp its context-parallel size
   * @param ep its expert-parallel size
   * @return the feature, or empty when the space holds the setting
   */
  public Optional<Feature> refused(int tensorParallel, Recompute recomputeMode, boolean sp,
      boolean megatron, int cp, int ep) {
    if (!recompute.contains(recomputeMode)) {
      return Optional.of(Feature.RECOMPUTE);
    }
    if (sp && !sequenceParallel) {
      return Optional.of(Feature.SEQUENCE_PARALLEL);
    }
    if (tensorParallel > 1 && !megatron && !ilpLayouts) {
      return Optional.of(Feature.ILP_LAYOUTS);
    }
    if (tensorParallel > 1 && megatron && !megatronLayouts) {
      return Optional.of(Feature.MEGATRON_LAYOUTS);
    }
    if (cp > 1 && !contextParallel) {
      return Optional.of(Feature.CONTEXT_PARALLEL);
    }
    if (ep > 1 && !expertParallel) {
      return Optional.of(Feature.EXPERT_PARALLEL);
    }
    return Optional.empty();
  }

  /**
   * The recomputation modes the planner searches in this space, in their order: one mode when
   * the space holds one (a mode the user fixed, which may be one {@link Recompute#SEARCHED} lacks,
   * as torchtitan's per-op mode or a MaxText policy), else those of {@link Recompute#SEARCHED}
   * the space holds.
   *
   * @return the modes
   */
  public java.util.List<Recompute> searchedRecompute() {
    if (recompute.size() == 1) {
      return java.util.List.copyOf(recompute);
    }
    return Recompute.SEARCHED.stream().filter(recompute::contains).toList();
  }

  /**
   * Whether the search may also recompute only the first blocks of a stage or chunk
   * (Megatron-Core's block method): where it chooses between keeping and recomputing every
   * block, both {@link Recompute#NONE} and {@link Recompute#FULL} searched.
   *
   * @return whether partial full recomputation is searched
   */
  public boolean searchesPartialRecompute() {
    java.util.List<Recompute> modes = searchedRecompute();
    return modes.contains(Recompute.NONE) && modes.contains(Recompute.FULL);
  }

  /**
   * This space with one recomputation mode, which the planner then uses for every stage.
   *
   * @param mode the mode
   * @return the space
   */
  public RuntimeSpace withRecompute(Recompute mode) {
    return new RuntimeSpace(uniform, Set.of(mode), sequenceParallel, ilpLayouts, megatronLayouts,
        zeroStages, contextParallel, expertParallel, interleaved, attention, powerOfTwoSlices);
  }

  /**
   * The first setting of a plan's stage this space leaves out: its layer setting, then its ZeRO
   * stage.
   *
   * @param s the stage
   * @return the feature, or empty when the space holds the stage
   */
  public Optional<Feature> refused(StagePlan s) {
    Optional<Feature> f = refused(s.tensorParallel(), s.recompute(), s.sequenceParallel(),
        s.megatronLayouts(), s.contextParallel(), s.expertParallel());
    return f.isPresent() || allowsZero(s.zeroStage()) ? f : Optional.of(Feature.ZERO_STAGE);
  }

  /**
   * Whether a ZeRO stage is in the space.
   *
   * @param zeroStage 0 to 3
   * @return true when a stage may use it
   */
  public boolean allowsZero(int zeroStage) {
    return zeroStages.contains(zeroStage);
  }

  /**
   * Whether sub-node submeshes fit a node of {@code gpusPerNode} GPUs for this runtime.
   *
   * @param gpusPerNode GPUs per node
   * @return false when the runtime packs them into power-of-two nodes only and this is none
   */
  public boolean subNodeSubmeshes(int gpusPerNode) {
    return !powerOfTwoSlices || Integer.bitCount(gpusPerNode) == 1;
  }
}
