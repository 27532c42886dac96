package io.meshplan.doctor;

import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The result of {@code meshplan doctor}: ports, the recommended environment and warnings.
 *
 * @param devices the RDMA devices, sorted by name
 * @param interfaces the network interfaces, sorted by name
 * @param env the environment variables to export, sorted by name
 * @param warnings one-line warnings, each naming the {@code device:port} or interface it concerns
 */
public record DoctorReport(
    List<DeviceReport> devices,
    List<NetInterface> interfaces,
    SortedMap<String, String> env,
    List<String> warnings) {
  /** Copies; the map stays sorted and unmodifiable. */
  public DoctorReport {
    devices = List.copyOf(devices);
    interfaces = List.copyOf(interfaces);
    env = Collections.unmodifiableSortedMap(new TreeMap<>(env));
    warnings = List.copyOf(warnings);
  }
}
