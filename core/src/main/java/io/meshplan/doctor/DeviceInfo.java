package io.meshplan.doctor;

import io.meshplan.util.Require;
import java.util.List;

/**
 * An RDMA device under {@code class/infiniband/}.
 *
 * @param name the device name, for example {@code mlx5_0}
 * @param ports its ports in port-number order
 */
public record DeviceInfo(String name, List<PortInfo> ports) {
  /** Validates and copies. */
  public DeviceInfo {
    Require.nonNull(name, "device name");
    ports = List.copyOf(ports);
  }
}
