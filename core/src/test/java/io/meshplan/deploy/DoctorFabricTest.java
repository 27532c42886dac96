package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading {@code meshplan doctor --json} output as the launch's fabric. */
class DoctorFabricTest {
  @Test
  void infinibandGoldenGivesItsEnvironmentAndBothPorts() {
    FabricEnv f = Llama70b.ib();
    assertThat(f.ports()).containsExactly("mlx5_0:1", "mlx5_1:1");
    assertThat(f.roce()).isFalse();
    assertThat(f.env()).containsExactlyEntriesOf(new java.util.TreeMap<>(Map.of(
        "NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1", "NCCL_SOCKET_IFNAME", "ib0",
        "UCX_NET_DEVICES", "mlx5_0:1,mlx5_1:1", "UCX_TLS", "rc,cuda_copy,cuda_ipc")));
    assertThat(f.socketInterface()).contains("ib0");
  }

  @Test
  void roceGoldenIsRoceWithItsGidIndex() {
    FabricEnv f = Llama70b.roce();
    assertThat(f.ports()).containsExactly("mlx5_bond_0:1");
    assertThat(f.roce()).isTrue();
    assertThat(f.env()).containsEntry("NCCL_IB_GID_INDEX", "9");
  }

  @Test
  void portsThatWereNotSelectedAreLeftOut() {
    FabricEnv f = DoctorFabric.read("mixed.json", Llama70b.resource("/doctor-golden/mixed.json"));
    assertThat(f.ports()).isNotEmpty().allSatisfy(p -> assertThat(
        f.env().get("NCCL_IB_HCA")).contains(p));
  }

  @Test
  void flagsReplaceTheDoctorsValues() {
    FabricEnv f = Llama70b.ib().with(new java.util.TreeMap<>(Map.of("NCCL_SOCKET_IFNAME", "eth0",
        "NCCL_DEBUG", "INFO")));
    assertThat(f.env()).containsEntry("NCCL_SOCKET_IFNAME", "eth0").containsEntry("NCCL_DEBUG",
        "INFO").containsEntry("UCX_TLS", "rc,cuda_copy,cuda_ipc");
    assertThat(f.ports()).containsExactly("mlx5_0:1", "mlx5_1:1");
  }

  @Test
  void malformedDoctorJsonNamesTheFile() {
    for (String bad : List.of("", "[]", "{\"devices\": {}, \"env\": {}}",
        "{\"devices\": [], \"env\": {\"X\": 1}}", "{\"devices\": [], \"env\": {\"1X\": \"a\"}}",
        "{\"devices\": [{\"name\": \"m\", \"ports\": [{\"selected\": true}]}], \"env\": {}}",
        "{\"devices\": [{\"name\": \"m x\", \"ports\": [{\"port\": 1, \"selected\": true}]}],"
            + " \"env\": {}}")) {
      assertThatThrownBy(() -> DoctorFabric.read("d.json", bad))
          .as(bad).isInstanceOf(InputException.class).hasMessageStartingWith("d.json: ");
    }
  }
}
