package io.meshplan.doctor;

import java.util.List;

/**
 * Everything the doctor read from a sysfs tree: plain data, so the advice can be computed and
 * tested without files.
 *
 * @param devices the RDMA devices, sorted by name (numbers in names compare numerically)
 * @param interfaces the network interfaces, sorted the same way
 * @param problems the entries that could not be read, in reading order
 * @param gpus the makers of the node's GPUs on the PCI bus, one entry per GPU, in address order
 */
public record SysfsSnapshot(List<DeviceInfo> devices, List<NetInterface> interfaces,
    List<ReadProblem> problems, List<GpuVendor> gpus) {
  /** Copies the lists. */
  public SysfsSnapshot {
    devices = List.copyOf(devices);
    interfaces = List.copyOf(interfaces);
    problems = List.copyOf(problems);
    gpus = List.copyOf(gpus);
  }

  /**
   * A snapshot without GPUs read (a tree without {@code bus/pci}).
   *
   * @param devices the RDMA devices
   * @param interfaces the network interfaces
   * @param problems the entries that could not be read
   */
  public SysfsSnapshot(List<DeviceInfo> devices, List<NetInterface> interfaces,
      List<ReadProblem> problems) {
    this(devices, interfaces, problems, List.of());
  }
}
