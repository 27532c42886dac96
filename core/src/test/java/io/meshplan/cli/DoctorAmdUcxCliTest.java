package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.doctor.EnvAdvisor;
import io.meshplan.doctor.FabricVariable;
import io.meshplan.doctor.GpuVendor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * UCX's GPU transports follow the node's GPUs. UCX moves NVIDIA memory with {@code cuda_copy} and
 * {@code cuda_ipc} and AMD memory with {@code rocm_copy} and {@code rocm_ipc} (openucx/ucx {@code
 * src/ucp/core/ucp_context.c} at 002e7f80ad3238251473f7073262e05e270d1a2f, {@code
 * ucp_tl_aliases}: "cuda" and "rocm"), so a {@code UCX_TLS} of CUDA's transports on an MI300X
 * node leaves UCX without a transport for GPU memory. The doctor reads the GPUs' makers from
 * {@code /sys/bus/pci/devices/<address>/{class,vendor}} (NVIDIA 0x10de, AMD 0x1002; a GPU is a
 * display controller, class 0x03xx, or a processing accelerator, 0x1200, as MI300X is), and
 * deploy refuses a report written on one maker's node for the other's cluster.
 */
class DoctorAmdUcxCliTest {
  @TempDir Path dir;

  private void write(String file, String text) throws IOException {
    SysfsFiles.write(dir.resolve("sys"), file, text);
  }

  /** A RoCE node: one ACTIVE port with a RoCE v2 IPv4 GID, eth0 behind it. */
  private void roceNode() throws IOException {
    String port = "class/infiniband/mlx5_0/ports/1/";
    write(port + "state", "4: ACTIVE");
    write(port + "phys_state", "5: LinkUp");
    write(port + "rate", "400 Gb/sec (4X NDR)");
    write(port + "link_layer", "Ethernet");
    write(port + "gids/3", "0000:0000:0000:0000:0000:ffff:0a00:0032");
    write(port + "gid_attrs/types/3", "RoCE v2");
    write(port + "gid_attrs/ndevs/3", "eth0");
    write("class/net/eth0/type", "1");
    write("class/net/eth0/operstate", "up");
    write("class/net/eth0/address", "52:54:00:12:34:56");
  }

  private void pci(String address, String vendor, String cls) throws IOException {
    write("bus/pci/devices/" + address + "/vendor", vendor);
    write("bus/pci/devices/" + address + "/class", cls);
  }

  /** Eight MI300X (processing accelerators of AMD's 0x1002), an AMD CPU bridge and a BMC VGA. */
  private void amdNode() throws IOException {
    for (int i = 0; i < 8; i++) {
      pci(String.format("0000:%02x:00.0", 0x0c + 0x10 * i), "0x1002", "0x120000");
    }
    pci("0000:00:00.0", "0x1022", "0x060000");
    pci("0000:02:00.0", "0x1a03", "0x030000");
  }

  private CliRun doctor() {
    return CliRun.of("doctor", "--sysfs-root", dir.resolve("sys").toString(), "--json");
  }

  @Test
  void anAmdNodeGetsRocmTransportsAndAnNvidiaNodeCudaOnes() throws IOException {
    roceNode();
    amdNode();
    CliRun amd = doctor();
    assertThat(amd.code()).as(amd.err()).isZero();
    assertThat(amd.out()).contains("\"UCX_TLS\" : \"rc,rocm_copy,rocm_ipc\"",
        "\"NCCL_IB_GID_INDEX\" : \"3\"");
    // An NVIDIA node (H100s are 3D controllers, 0x0302) keeps today's transports.
    for (int i = 0; i < 8; i++) {
      pci(String.format("0000:%02x:00.0", 0x0c + 0x10 * i), "0x10de", "0x030200");
    }
    CliRun nvidia = doctor();
    assertThat(nvidia.out()).contains("\"UCX_TLS\" : \"rc,cuda_copy,cuda_ipc\"");
    assertThat(nvidia.err()).isEmpty();
  }

  @Test
  void withoutRdmaTheTcpTransportsTooAndMixedMakersWarn() throws IOException {
    write("class/net/eth0/type", "1");
    write("class/net/eth0/operstate", "up");
    write("class/net/eth0/address", "52:54:00:12:34:56");
    amdNode();
    CliRun amd = doctor();
    assertThat(amd.out()).contains("\"UCX_TLS\" : \"tcp,rocm_copy,rocm_ipc\"");
    pci("0000:f0:00.0", "0x10de", "0x030200");
    CliRun mixed = doctor();
    assertThat(mixed.out()).contains("\"UCX_TLS\" : \"tcp,cuda_copy,cuda_ipc\"")
        .contains("GPUs of both NVIDIA and AMD on the PCI bus");
  }

  @Test
  void aPciEntryThatIsNotAnAddressOrNotHexIsAProblemNotAGpu() throws IOException {
    roceNode();
    amdNode();
    write("bus/pci/devices/x\u001b[2J/vendor", "0x10de");
    pci("0000:e0:00.0", "0x10de", "garbage");
    CliRun r = doctor();
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("\"UCX_TLS\" : \"rc,rocm_copy,rocm_ipc\"")
        .contains("not a PCI address such as 0000:0c:00.0; skipped")
        .contains("not a hexadecimal number: 'garbage'; device skipped")
        .doesNotContain("\u001b");
  }

  @Test
  void deployRefusesAReportOfTheOtherMakersNode() throws IOException {
    roceNode();
    amdNode();
    Path amdJson = dir.resolve("amd.json");
    Files.writeString(amdJson, doctor().out());
    CliRun onAmd = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:mi300x",
        "--fabric", amdJson.toString(), "--", "python", "train.py");
    assertThat(onAmd.code()).as(onAmd.err()).isZero();
    assertThat(onAmd.out()).contains("UCX_TLS=rc,rocm_copy,rocm_ipc");
    CliRun onNvidia = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb",
        "--fabric", amdJson.toString(), "--", "python", "train.py");
    assertThat(onNvidia.code()).isEqualTo(2);
    assertThat(onNvidia.out()).isEmpty();
    assertThat(onNvidia.err()).isEqualTo("meshplan: error: --fabric: UCX_TLS is"
        + " rc,rocm_copy,rocm_ipc, the transports of AMD GPUs, but the cluster's GPUs are"
        + " NVIDIA's (UCX needs cuda_copy,cuda_ipc); run meshplan doctor on a node of this"
        + " cluster\n");
    CliRun cudaOnAmd = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:mi300x",
        "--fabric", "core/src/test/resources/doctor-golden/roce-bond-gid9.json", "--", "python",
        "train.py");
    assertThat(cudaOnAmd.code()).isEqualTo(2);
    assertThat(cudaOnAmd.err()).startsWith("meshplan: error: --fabric: UCX_TLS is"
        + " rc,cuda_copy,cuda_ipc, the transports of NVIDIA GPUs, but the cluster's GPUs are"
        + " AMD's").doesNotContain("\n\t");
  }

  @Test
  void theReportsFormsAreExactlyFour() {
    for (GpuVendor g : GpuVendor.values()) {
      for (boolean rdma : new boolean[] {true, false}) {
        String tls = EnvAdvisor.ucxTls(rdma, g);
        assertThat(FabricVariable.UCX_TLS.accepts(tls)).isTrue();
        assertThat(FabricVariable.ucxGpus(tls)).contains(g);
        // rc goes with selected ports, tcp with none, whatever the GPUs.
        assertThat(FabricVariable.inconsistency(Map.of("UCX_TLS", tls),
            rdma ? List.of("mlx5_0:1") : List.of(), false)).isEmpty();
        assertThat(FabricVariable.inconsistency(Map.of("UCX_TLS", tls),
            rdma ? List.of() : List.of("mlx5_0:1"), false)).isPresent();
      }
    }
    for (String bad : new String[] {"rc,rocm_copy", "rc,cuda_copy,rocm_ipc", "all",
        "rc,rocm_copy,rocm_ipc,gdr_copy", "tcp,cuda_copy,cuda_ipc "}) {
      assertThat(FabricVariable.UCX_TLS.accepts(bad)).as(bad).isFalse();
      assertThat(FabricVariable.ucxGpus(bad)).isEqualTo(Optional.empty());
    }
  }
}
