package io.meshplan.doctor;

import java.util.List;

/**
 * Everything the doctor read from a sysfs tree: plain data, so the advice can be computed and
 * tested without files.
 *
 * @param devices the RDMA devices, sorted by name (numbers in names compare numerically)
 * @param interfaces the network interfaces, sorted the same way
 * @param problems the entries that could not be read, in reading order
 */
public record SysfsSnapshot(
    List<DeviceInfo> devices, List<NetInterface> interfaces, List<ReadProblem> problems) {
  /** Copies the lists. */
  public SysfsSnapshot {
    devices = List.copyOf(devices);
    interfaces = List.copyOf(interfaces);
    problems = List.copyOf(problems);
  }
}
