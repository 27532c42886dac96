package io.meshplan.sim;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;

/**
 * Communication volume of one training iteration by mesh axis, in bytes sent: tensor (model)
 * parallel collectives inside the layers, data-parallel gradient reduction and (ZeRO) parameter
 * gathers, pipeline send/recv of activations and their gradients between stages, and the
 * expert- and context-parallel exchanges. Collective
 * bytes follow the nccl-tests bus-bandwidth convention ({@link StageCommBytes}); a pipeline
 * transfer counts its bytes once, at the sender.
 *
 * @param tensorParallelBytes bytes on the tensor-parallel axis
 * @param dataParallelBytes bytes on the data-parallel axis
 * @param pipelineBytes bytes of pipeline send/recv
 * @param expertParallelBytes bytes of the expert-parallel exchange (dispatch and combine)
 * @param contextParallelBytes bytes of the context-parallel exchange
 */
public record CommVolume(double tensorParallelBytes, double dataParallelBytes,
    double pipelineBytes, double expertParallelBytes, double contextParallelBytes) {
  /** No communication. */
  public static final CommVolume NONE = new CommVolume(0, 0, 0);

  /** Checks that every size is finite and not negative. */
  public CommVolume {
    Require.nonNegative(tensorParallelBytes, "tensorParallelBytes");
    Require.nonNegative(dataParallelBytes, "dataParallelBytes");
    Require.nonNegative(pipelineBytes, "pipelineBytes");
    Require.nonNegative(expertParallelBytes, "expertParallelBytes");
    Require.nonNegative(contextParallelBytes, "contextParallelBytes");
  }

  /**
   * A volume without expert or context parallelism.
   *
   * @param tensorParallelBytes bytes on the tensor-parallel axis
   * @param dataParallelBytes bytes on the data-parallel axis
   * @param pipelineBytes bytes of pipeline send/recv
   */
  public CommVolume(double tensorParallelBytes, double dataParallelBytes, double pipelineBytes) {
    this(tensorParallelBytes, dataParallelBytes, pipelineBytes, 0, 0);
  }

  /**
   * All axes together.
   *
   * @return bytes
   */
  public double totalBytes() {
    return tensorParallelBytes + dataParallelBytes + pipelineBytes + expertParallelBytes
        + contextParallelBytes;
  }

  /**
   * This volume plus another.
   *
   * @param o the other volume
   * @return the sum, axis by axis
   */
  public CommVolume plus(CommVolume o) {
    return new CommVolume(tensorParallelBytes + o.tensorParallelBytes,
        dataParallelBytes + o.dataParallelBytes, pipelineBytes + o.pipelineBytes,
        expertParallelBytes + o.expertParallelBytes,
        contextParallelBytes + o.contextParallelBytes);
  }

  /**
   * This volume scaled.
   *
   * @param f a finite factor, at least 0
   * @return each axis times {@code f}
   */
  public CommVolume times(double f) {
    return new CommVolume(tensorParallelBytes * f, dataParallelBytes * f, pipelineBytes * f,
        expertParallelBytes * f, contextParallelBytes * f);
  }

  /**
   * The bytes one GPU of each device group sends in one iteration. With {@code m} microbatches, a
   * group's GPU sends, summed over its chunks {@code k}: {@code m * tensorPerMicrobatch +
   * tensorPerIteration} on the tensor axis; {@code m * dataPerMicrobatch + dataPerIteration} on
   * the data-parallel axis; and {@code m * sendBytes(k)} activations to chunk {@code k+1} plus
   * {@code m * sendBytes(k-1)} gradients back to chunk {@code k-1} on the pipeline, for each
   * neighbour on another group (a transfer inside a group is free and sends nothing).
   *
   * @param input the pipeline
   * @return one volume per group, by group index, bytes per GPU
   */
  public static List<CommVolume> perGpuOfEachGroup(SimulationInput input) {
    List<StageCost> stages = input.stages();
    int groups = input.groups();
    int chunks = input.schedule().chunks();
    double m = input.microbatches();
    List<CommVolume> out = new ArrayList<>(groups);
    for (int g = 0; g < groups; g++) {
      double tp = 0;
      double dp = 0;
      double pp = 0;
      double ep = 0;
      double cp = 0;
      for (int c = 0; c < chunks; c++) {
        int k = c * groups + g;
        StageCost s = stages.get(k);
        StageCommBytes b = s.commBytes();
        tp += m * b.tensorPerMicrobatch() + b.tensorPerIteration();
        dp += m * b.dataPerMicrobatch() + b.dataPerIteration();
        ep += m * b.expertPerMicrobatch();
        cp += m * b.contextPerMicrobatch();
        if (k + 1 < stages.size() && (k + 1) % groups != g) {
          pp += m * s.sendBytes();
        }
        if (k > 0 && (k - 1) % groups != g) {
          pp += m * stages.get(k - 1).sendBytes();
        }
      }
      out.add(new CommVolume(tp, dp, pp, ep, cp));
    }
    return out;
  }
}
