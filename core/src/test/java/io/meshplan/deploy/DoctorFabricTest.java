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

  /**
   * An interface type is compared whole: 2^32 + 32 is not IPoIB's 32. In the mixed golden, ib2
   * (mlx5_2, a port not selected) is an rdma_cm interface only as an up IPoIB interface.
   */
  @Test
  void anInterfaceTypePastAnIntIsNotIpoib() {
    String json = Llama70b.resource("/doctor-golden/mixed.json");
    assertThat(DoctorFabric.read("mixed.json", json).rdmacmInterfaces()).contains("ib2");
    String wrapped = json.replace("\"name\": \"ib2\", \"operstate\": \"up\", \"type\": 32",
        "\"name\": \"ib2\", \"operstate\": \"up\", \"type\": 4294967328");
    assertThat(wrapped).isNotEqualTo(json);
    assertThat(DoctorFabric.read("mixed.json", wrapped).rdmacmInterfaces())
        .doesNotContain("ib2");
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

  /** The env of the InfiniBand golden with one variable replaced (null: removed). */
  private static String ibWith(String name, String jsonValue) {
    String json = Llama70b.resource("/doctor-golden/ib-hdr.json");
    String env = "\"env\": {\n    \"NCCL_IB_HCA\": \"=mlx5_0:1,mlx5_1:1\",";
    assertThat(json).contains(env);
    return json.replace(env, "\"env\": {\n    \"" + name + "\": " + jsonValue + ","
        + "\n    \"NCCL_IB_HCA\": \"=mlx5_0:1,mlx5_1:1\",");
  }

  @Test
  void aVariableTheDoctorNeverWritesIsRefusedByName() {
    for (String name : List.of("LD_PRELOAD", "NCCL_DEBUG", "NCCL_NET_PLUGIN", "UCX_TLS_EXTRA",
        "RCCL_MSCCL_ENABLE", "PATH", "BASH_ENV", "PYTHONPATH")) {
      assertThatThrownBy(() -> DoctorFabric.read("d.json", ibWith(name, "\"/tmp/x.so\"")))
          .as(name).isInstanceOf(InputException.class)
          .hasMessage("d.json: env." + name + " is not a variable meshplan doctor writes (it"
              + " writes NCCL_IB_DISABLE, NCCL_IB_GID_INDEX, NCCL_IB_HCA, NCCL_SOCKET_IFNAME,"
              + " UCX_NET_DEVICES, UCX_TLS); set a variable of your own for the launch instead");
    }
  }

  @Test
  void aValueTheDoctorCouldNotWriteIsRefused() {
    String ib = Llama70b.resource("/doctor-golden/ib-hdr.json");
    for (String[] bad : new String[][] {
        {"\"NCCL_SOCKET_IFNAME\": \"ib0\"", "\"NCCL_SOCKET_IFNAME\": \"ib0\\nrm -rf /\""},
        {"\"NCCL_SOCKET_IFNAME\": \"ib0\"", "\"NCCL_SOCKET_IFNAME\": \"$(reboot)\""},
        {"\"NCCL_SOCKET_IFNAME\": \"ib0\"", "\"NCCL_SOCKET_IFNAME\": \"ib0 eth0\""},
        {"\"NCCL_SOCKET_IFNAME\": \"ib0\"", "\"NCCL_SOCKET_IFNAME\": \"a-name-of-16-chars\""},
        {"\"UCX_TLS\": \"rc,cuda_copy,cuda_ipc\"", "\"UCX_TLS\": \"rc;id\""},
        {"\"UCX_TLS\": \"rc,cuda_copy,cuda_ipc\"", "\"UCX_TLS\": \"all\""},
        {"\"UCX_NET_DEVICES\": \"mlx5_0:1,mlx5_1:1\"",
            "\"UCX_NET_DEVICES\": \"mlx5_0:1,`id`:1\""}}) {
      assertThat(ib).contains(bad[0]);
      assertThatThrownBy(() -> DoctorFabric.read("d.json", ib.replace(bad[0], bad[1])))
          .as(bad[1]).isInstanceOf(InputException.class).hasMessageStartingWith("d.json: env.")
          .hasMessageContaining("not a value meshplan doctor writes")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }
  }

  @Test
  void aReportInconsistentWithItsSelectedPortsIsRefused() {
    // A GID index on InfiniBand ports, and an HCA list other than the selected ports.
    assertThatThrownBy(() -> DoctorFabric.read("d.json", ibWith("NCCL_IB_GID_INDEX", "\"3\"")))
        .hasMessage("d.json: NCCL_IB_GID_INDEX is set but no selected port is RoCE; meshplan"
            + " doctor writes no such report (write it again with 'meshplan doctor --json')");
    String ib = Llama70b.resource("/doctor-golden/ib-hdr.json");
    assertThatThrownBy(() -> DoctorFabric.read("d.json", ib.replace(
        "\"NCCL_IB_HCA\": \"=mlx5_0:1,mlx5_1:1\"", "\"NCCL_IB_HCA\": \"=mlx5_9:1\"")))
        .hasMessageContaining("NCCL_IB_HCA is =mlx5_9:1 but the selected ports are"
            + " mlx5_0:1,mlx5_1:1");
  }

  /**
   * Seeded: each golden variable's value with one character put in at a random place, from
   * letters, digits and the characters a shell, YAML or a terminal reads specially. Either the
   * doctor could have written the new value, and it comes through unchanged and plain, or the
   * report is refused naming the variable.
   */
  @Test
  void seededValuesEitherPassPlainOrAreRefusedNamingTheVariable() {
    java.util.Random rnd = new java.util.Random(36);
    String chars = "aZ09_.-,:=$`'\\\"; &|<>(){}*?!#~\n\t\u001b\u009b\u202e/ ";
    int accepted = 0;
    int refused = 0;
    for (String golden : List.of("ib-hdr", "roce-bond-gid9", "no-rdma")) {
      String json = Llama70b.resource("/doctor-golden/" + golden + ".json");
      FabricEnv base = DoctorFabric.read(golden, json);
      for (int i = 0; i < 150; i++) {
        List<String> names = List.copyOf(base.env().keySet());
        String name = names.get(rnd.nextInt(names.size()));
        String value = base.env().get(name);
        int at = rnd.nextInt(value.length() + 1);
        String changed = value.substring(0, at) + chars.charAt(rnd.nextInt(chars.length()))
            + value.substring(at);
        String quoted = com.fasterxml.jackson.databind.node.TextNode.valueOf(changed).toString();
        String text = json.replace("\"" + name + "\": \"" + value + "\"",
            "\"" + name + "\": " + quoted);
        try {
          FabricEnv f = DoctorFabric.read(golden, text);
          assertThat(f.env().get(name)).isEqualTo(changed).matches("[A-Za-z0-9_.,:=-]+");
          accepted++;
        } catch (InputException e) {
          assertThat(e.getMessage()).startsWith(golden + ": ").contains(name)
              .doesNotContain("\n", "\u001b", "\u009b");
          refused++;
        }
      }
    }
    // Both sides are reached: a letter or digit often keeps a form ("ib0" -> "ib0a"), a
    // metacharacter never does.
    assertThat(accepted).isPositive();
    assertThat(refused).isGreaterThan(accepted);
  }
}
