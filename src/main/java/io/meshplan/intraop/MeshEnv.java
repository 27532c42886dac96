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
    Require.that(memoryPerDevice > 0, "memory per device must be positive, got "
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
}
