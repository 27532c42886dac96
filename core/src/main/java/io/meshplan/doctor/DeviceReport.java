package io.meshplan.doctor;

import io.meshplan.util.Require;
import java.util.List;

/**
 * The doctor's view of one RDMA device.
 *
 * @param name the device name
 * @param ports its ports in port-number order
 */
public record DeviceReport(String name, List<PortReport> ports) {
  /** Validates and copies. */
  public DeviceReport {
    Require.nonNull(name, "device name");
    ports = List.copyOf(ports);
  }
}
