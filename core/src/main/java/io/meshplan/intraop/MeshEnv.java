package io.meshplan.intraop;

import io.meshplan.cluster.CommModel;
import io.meshplan.cluster.ComputeModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * What the intra-operator planner knows about the devices (Alpa's {@code ClusterEnvironment}).
 *
 * @param comm prices collectives on each mesh axis
 * @param memoryPerDevice the memory budget of one device, bytes
 * @param compute prices per-device computation; empty in Alpa's abstract-unit mode, where compute
 *     costs are zero and a dot must be split (as in Alpa's prototype)
 */
public record MeshEnv(CommModel comm, double memoryPerDevice, Optional<ComputeModel> compute) {
  /** Validates the fields. */
  public MeshEnv {
    Require.nonNull(comm, "comm");
    Require.that(memoryPerDevice > 0, () -> "memory per device must be positive, got "
        + memoryPerDevice);
    Require.nonNull(compute, "compute");
  }

  /**
   * The mesh.
   *
   * @return the logical mesh of the communication model
   */
  public LogicalMesh mesh() {
    return comm.mesh();
  }

  /**
   * Alpa's abstract-unit environment: collectives priced by hand-given alpha and beta per axis,
   * compute free (as in Alpa's prototype and its solver tests).
   *
   * @param mesh the logical mesh
   * @param alpha latency per axis
   * @param beta inverse bandwidth per axis
   * @param memoryPerDevice memory budget of one device, bytes
   * @return the environment
   */
  public static MeshEnv abstractUnits(LogicalMesh mesh, double[] alpha, double[] beta,
      double memoryPerDevice) {
    return new MeshEnv(new io.meshplan.cluster.AlphaBetaCommModel(mesh, alpha, beta),
        memoryPerDevice, Optional.empty());
  }

  /**
   * A real cluster's environment: collectives priced in seconds by the given model (the catalog
   * or a calibration profile, placed on the cluster's devices), kernels by {@link
   * io.meshplan.cluster.KernelTimeModel} at the compute precision.
   *
   * @param gpu the GPU model
   * @param comm the collective prices on the logical mesh, seconds
   * @param memoryPerDevice memory budget of one device, bytes
   * @param elementBytes element size of the compute dtype (4 for fp32, 2 for bf16/fp16)
   * @return the environment
   */
  public static MeshEnv onCluster(io.meshplan.cluster.GpuSpec gpu, CommModel comm,
      double memoryPerDevice, int elementBytes) {
    return onCluster(gpu, comm, memoryPerDevice, elementBytes, 1);
  }

  /**
   * A real cluster's environment whose kernels run {@code computeScale} times faster than the
   * kernel model's defaults ({@link io.meshplan.cluster.KernelTimeModel#scaled}).
   *
   * @param gpu the GPU model
   * @param comm the collective prices on the logical mesh, seconds
   * @param memoryPerDevice memory budget of one device, bytes
   * @param elementBytes element size of the compute dtype (4 for fp32, 2 for bf16/fp16)
   * @param computeScale the measured speed-up of the GPU's kernels, > 0 (1 for none)
   * @return the environment
   */
  public static MeshEnv onCluster(io.meshplan.cluster.GpuSpec gpu, CommModel comm,
      double memoryPerDevice, int elementBytes, double computeScale) {
    return onCluster(gpu, comm, memoryPerDevice,
        io.meshplan.cluster.KernelTimeModel.trainingPrecision(gpu, elementBytes), computeScale);
  }

  /**
   * A real cluster's environment whose matrix products run in a given precision (an HLO
   * module's, {@link io.meshplan.cluster.KernelTimeModel#xlaPrecision}).
   *
   * @param gpu the GPU model
   * @param comm the collective prices on the logical mesh, seconds
   * @param memoryPerDevice memory budget of one device, bytes
   * @param dots the precision of the matrix products
   * @param computeScale the measured speed-up of the GPU's kernels, > 0 (1 for none)
   * @return the environment
   */
  public static MeshEnv onCluster(io.meshplan.cluster.GpuSpec gpu, CommModel comm,
      double memoryPerDevice, io.meshplan.cluster.Precision dots, double computeScale) {
    return onCluster(gpu, comm, memoryPerDevice, dots, computeScale, Optional.empty());
  }

  /**
   * A real cluster's environment whose attention runs a named fused kernel.
   *
   * @param gpu the GPU model
   * @param comm the collective prices on the logical mesh, seconds
   * @param memoryPerDevice memory budget of one device, bytes
   * @param dots the precision of the matrix products
   * @param computeScale the measured speed-up of the GPU's kernels, > 0 (1 for none)
   * @param kernel the attention kernel, or empty for the architecture's default
   * @return the environment
   */
  public static MeshEnv onCluster(io.meshplan.cluster.GpuSpec gpu, CommModel comm,
      double memoryPerDevice, io.meshplan.cluster.Precision dots, double computeScale,
      Optional<io.meshplan.cluster.AttentionKernel> kernel) {
    return onCluster(gpu, comm, memoryPerDevice, dots, computeScale, kernel,
        io.meshplan.cluster.Fp8Quantization.DELAYED);
  }

  /**
   * A real cluster's environment whose attention runs a named fused kernel and whose FP8 GEMMs
   * cast their operands as a training recipe does.
   *
   * @param gpu the GPU model
   * @param comm the collective prices on the logical mesh, seconds
   * @param memoryPerDevice memory budget of one device, bytes
   * @param dots the precision of the matrix products
   * @param computeScale the measured speed-up of the GPU's kernels, > 0 (1 for none)
   * @param kernel the attention kernel, or empty for the architecture's default
   * @param fp8 how FP8 GEMMs scale and cast their operands
   * @return the environment
   */
  public static MeshEnv onCluster(io.meshplan.cluster.GpuSpec gpu, CommModel comm,
      double memoryPerDevice, io.meshplan.cluster.Precision dots, double computeScale,
      Optional<io.meshplan.cluster.AttentionKernel> kernel,
      io.meshplan.cluster.Fp8Quantization fp8) {
    return new MeshEnv(comm, memoryPerDevice, Optional.of(
        io.meshplan.cluster.KernelTimeModel.of(gpu, dots, kernel, fp8).scaled(computeScale)));
  }

  /**
   * The compute element size of a graph: that of its first dot (matrix multiplications set the
   * precision the tensor cores run at), 4 bytes when it has none.
   *
   * @param graph the computation
   * @return bytes per element
   */
  public static int computeElementBytes(io.meshplan.graph.Graph graph) {
    for (io.meshplan.graph.Instruction ins : graph.instructions()) {
      if (ins.opcode() == io.meshplan.graph.Opcode.DOT
          && ins.shape() instanceof io.meshplan.graph.TensorShape t) {
        return t.dtype().bytes();
      }
    }
    return 4;
  }
}
