package io.meshplan.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A standalone master that accepts no connection is refused before a Spark context opens. */
class MasterProbeTest {
  /** A port on the loopback interface that nothing listens on (bound, then released). */
  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void theConnectTimeoutIsFiveSecondsInTheProbeAndInSparksRpcSettings() {
    assertThat(MasterProbe.CONNECT_TIMEOUT).isEqualTo(Duration.ofSeconds(5));
    assertThat(SparkExecutorProvider.conf("spark://127.0.0.1:7077", Map.of())
        .get("spark.rpc.io.connectionTimeout")).isEqualTo("5s");
    // A setting the user gives wins over the default.
    assertThat(SparkExecutorProvider.conf("spark://127.0.0.1:7077",
        Map.of("spark.rpc.io.connectionTimeout", "30s"))
        .get("spark.rpc.io.connectionTimeout")).isEqualTo("30s");
  }

  @Test
  void aMasterWithNothingListeningIsRefusedWithOneLine() throws IOException {
    String master = "spark://127.0.0.1:" + closedPort();
    assertThatThrownBy(() -> new SparkExecutorProvider().open(master, Map.of()))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith("Spark master " + master + " is not reachable within 5 s: ")
        .hasMessageNotContaining("\n");
  }

  @Test
  void oneReachableHostOfSeveralIsEnough() throws IOException {
    int closed = closedPort();
    try (ServerSocket open = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      assertThatCode(() -> MasterProbe.requireReachable("spark://127.0.0.1:" + closed
          + ",127.0.0.1:" + open.getLocalPort(), MasterProbe.CONNECT_TIMEOUT))
          .doesNotThrowAnyException();
    }
    assertThatThrownBy(() -> MasterProbe.requireReachable("spark://127.0.0.1:" + closed
        + ",127.0.0.1:" + closed, MasterProbe.CONNECT_TIMEOUT))
        .isInstanceOf(InputException.class).hasMessageContaining("127.0.0.1:" + closed + " (");
  }

  @Test
  void localAndYarnMastersAreNotProbed() {
    for (String m : new String[] {"local[2]", "yarn"}) {
      assertThatCode(() -> MasterProbe.requireReachable(m, MasterProbe.CONNECT_TIMEOUT))
          .doesNotThrowAnyException();
    }
  }

  @Test
  void aKubernetesMasterIsProbedAtItsApiServer() throws IOException {
    // Spark reads k8s://HOST:PORT as https, and a URL without a port at the scheme's port.
    assertThat(MasterProbe.kubernetesApi("k8s://https://10.0.0.1:6443")).isEqualTo("10.0.0.1:6443");
    assertThat(MasterProbe.kubernetesApi("k8s://10.0.0.1:6443")).isEqualTo("10.0.0.1:6443");
    assertThat(MasterProbe.kubernetesApi("k8s://https://api.example.org"))
        .isEqualTo("api.example.org:443");
    assertThat(MasterProbe.kubernetesApi("k8s://http://api.example.org"))
        .isEqualTo("api.example.org:80");
    for (String bad : new String[] {"k8s://ftp://x", "k8s://https://", "k8s://:::"}) {
      assertThatThrownBy(() -> MasterProbe.kubernetesApi(bad)).as(bad)
          .isInstanceOf(InputException.class).hasMessageContaining("k8s://https://HOST:PORT");
    }
    String master = "k8s://https://127.0.0.1:" + closedPort();
    assertThatThrownBy(() -> MasterProbe.requireReachable(master, MasterProbe.CONNECT_TIMEOUT))
        .isInstanceOf(InputException.class).hasMessageContaining("is not reachable within 5 s");
  }
}
