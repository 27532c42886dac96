package io.meshplan.cli;

import io.meshplan.doctor.DoctorJson;
import io.meshplan.doctor.DoctorReport;
import io.meshplan.doctor.DoctorText;
import io.meshplan.doctor.EnvAdvisor;
import io.meshplan.doctor.SysfsReader;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code meshplan doctor}: inspects InfiniBand/RoCE ports in sysfs and recommends NCCL/UCX env. */
@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    description = {
      "Reads RDMA ports (InfiniBand or RoCE) and network interfaces from sysfs, picks the RoCE v2"
          + " IPv4 GID index, and prints the NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME,"
          + " UCX_NET_DEVICES and UCX_TLS to export, with warnings. On InfiniBand the socket"
          + " interface is the port's IPoIB interface.",
      "Exit codes: 0 report produced (even with warnings), 2 bad --sysfs-root."
    })
final class DoctorCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--sysfs-root",
      paramLabel = "DIR",
      defaultValue = "/sys",
      description = "Directory standing in for /sys (holds class/infiniband and class/net)."
          + " Default: ${DEFAULT-VALUE}.")
  Path sysfsRoot;

  @Option(names = "--json", description = "Print the report as JSON (a stable contract).")
  boolean json;

  @Override
  public Integer call() {
    DoctorReport report = new EnvAdvisor().advise(
        FlagWords.call(FlagWords.SYSFS, () -> new SysfsReader(sysfsRoot).read()));
    var out = spec.commandLine().getOut();
    if (json) {
      out.println(DoctorJson.write(report));
    } else {
      out.print(DoctorText.format(report, sysfsRoot.toString()));
    }
    out.flush();
    return ExitCodes.OK;
  }
}
