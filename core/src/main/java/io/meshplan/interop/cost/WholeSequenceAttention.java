package io.meshplan.interop.cost;

import io.meshplan.cluster.ComputeModel;
import io.meshplan.cluster.Precision;
import io.meshplan.util.Require;

/**
 * A GPU's kernel prices under head-parallel (Ulysses) context parallelism ({@link
 * io.meshplan.plan.ContextExchange#ALL_TO_ALL}): the layer's graph splits each sequence over the
 * {@code CP} GPUs of a context group, but after its all-to-alls each GPU's fused attention runs
 * over the whole sequence for {@code 1/CP} of the heads, the same work at the kernel's speed for
 * {@code CP} times the length its share of the queries spans ({@link
 * io.meshplan.cluster.SequenceScaling}). Every other kernel is priced as the wrapped model prices
 * it.
 *
 * @param inner the GPU's prices
 * @param contextParallel CP, the factor between a share's span and the whole sequence's
 */
record WholeSequenceAttention(ComputeModel inner, int contextParallel) implements ComputeModel {
  /** Validates the fields. */
  WholeSequenceAttention {
    Require.nonNull(inner, "compute model");
    Require.positive(contextParallel, "context-parallel size");
  }

  @Override
  public double cost(double flops, double bytes) {
    return inner.cost(flops, bytes);
  }

  @Override
  public double dotCost(double flops, double bytes) {
    return inner.dotCost(flops, bytes);
  }

  @Override
  public double dotCost(double flops, double bytes, Precision operands) {
    return inner.dotCost(flops, bytes, operands);
  }

  @Override
  public double attentionCost(double flops, double bytes, boolean backward) {
    return inner.attentionCost(flops, bytes, backward);
  }

  @Override
  public double attentionCost(double flops, double bytes, boolean backward, int headDim) {
    return inner.attentionCost(flops, bytes, backward, headDim);
  }

  @Override
  public double attentionCost(double flops, double bytes, boolean backward, int headDim,
      int sequence) {
    long whole = Math.min((long) sequence * contextParallel, Integer.MAX_VALUE);
    return inner.attentionCost(flops, bytes, backward, headDim, (int) whole);
  }

  @Override
  public boolean fp8GemmsHoldTheirCasts() {
    return inner.fp8GemmsHoldTheirCasts();
  }
}
