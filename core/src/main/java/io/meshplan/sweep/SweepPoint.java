package io.meshplan.sweep;

import io.meshplan.model.Overlaps;
import io.meshplan.util.Require;
import java.io.Serializable;

/**
 * One point of a capacity sweep: a model at a sequence length, trained with a global batch on a
 * cluster of identical nodes. A plain serializable value, so an executor can ship it to another
 * process.
 *
 * @param index the point's position in the grid, from 0
 * @param model a model preset name (e.g. {@code llama2-7b})
 * @param seq tokens per sequence
 * @param nodes nodes in the cluster
 * @param gpusPerNode GPUs per node
 * @param gpu a GPU catalog name (e.g. {@code h100-80gb})
 * @param fabric a fabric catalog name (e.g. {@code ib-ndr400})
 * @param globalBatch sequences per iteration
 * @param microbatches microbatches per iteration, or 0 for the planner's choice
 * @param overlaps what the framework overlaps and fuses
 * @param attention {@code auto} (the GPU's default), {@code flash} or {@code unfused}
 * @param dtype {@code auto} (the preset's) or a training precision word: {@code bf16}, {@code
 *     f16}, {@code f32}, {@code fp8}
 */
public record SweepPoint(int index, String model, int seq, int nodes, int gpusPerNode, String gpu,
    String fabric, int globalBatch, int microbatches, Overlaps overlaps, String attention,
    String dtype) implements Serializable {
  private static final long serialVersionUID = 4L;

  /**
   * A point in the preset's precision.
   *
   * @param index the point's position in grid order
   * @param model a preset name
   * @param seq tokens per sequence
   * @param nodes nodes
   * @param gpusPerNode GPUs per node
   * @param gpu a GPU catalog name
   * @param fabric a fabric catalog name
   * @param globalBatch sequences per iteration
   * @param microbatches microbatches per iteration, or 0 for the planner's choice
   * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
   * @param attention {@code auto}, {@code flash} or {@code unfused}
   */
  public SweepPoint(int index, String model, int seq, int nodes, int gpusPerNode, String gpu,
      String fabric, int globalBatch, int microbatches, boolean overlapGradReduce,
      String attention) {
    this(index, model, seq, nodes, gpusPerNode, gpu, fabric, globalBatch, microbatches,
        Overlaps.DEFAULTS.withGradReduce(overlapGradReduce), attention, "auto");
  }

  /**
   * A point with the GPU's default attention and the frameworks' default overlaps.
   *
   * @param index the point's position in grid order
   * @param model a preset name
   * @param seq tokens per sequence
   * @param nodes nodes
   * @param gpusPerNode GPUs per node
   * @param gpu a GPU catalog name
   * @param fabric a fabric catalog name
   * @param globalBatch sequences per iteration
   * @param microbatches microbatches per iteration, or 0 for the planner's choice
   * @param overlapGradReduce whether the gradient reduction overlaps the backward pass
   */
  public SweepPoint(int index, String model, int seq, int nodes, int gpusPerNode, String gpu,
      String fabric, int globalBatch, int microbatches, boolean overlapGradReduce) {
    this(index, model, seq, nodes, gpusPerNode, gpu, fabric, globalBatch, microbatches,
        Overlaps.DEFAULTS.withGradReduce(overlapGradReduce), "auto", "auto");
  }

  /**
   * Whether the data-parallel gradient reduction overlaps the backward pass.
   *
   * @return {@code overlaps().gradReduce()}
   */
  public boolean overlapGradReduce() {
    return overlaps.gradReduce();
  }

  /** Validates the fields. */
  public SweepPoint {
    Require.that(index >= 0, "point index must be >= 0");
    Require.nonNull(model, "model");
    Require.positive(seq, "seq");
    Require.positive(nodes, "nodes");
    Require.positive(gpusPerNode, "GPUs per node");
    Require.nonNull(gpu, "gpu");
    Require.nonNull(fabric, "fabric");
    Require.positive(globalBatch, "global batch");
    Require.that(microbatches >= 0, "microbatches must be >= 0");
    Require.nonNull(attention, "attention");
    Require.nonNull(overlaps, "overlaps");
    Require.nonNull(dtype, "dtype");
  }

  /**
   * The cluster in the command line's form.
   *
   * @return e.g. {@code 128x8:h100-80gb:ib-ndr400}
   */
  public String cluster() {
    return nodes + "x" + gpusPerNode + ":" + gpu + ":" + fabric;
  }

  /**
   * GPUs in the cluster.
   *
   * @return nodes times GPUs per node
   */
  public int gpus() {
    return Math.multiplyExact(nodes, gpusPerNode);
  }

  /**
   * Tokens trained per iteration.
   *
   * @return global batch times sequence length
   */
  public long tokensPerIteration() {
    return (long) globalBatch * seq;
  }
}
