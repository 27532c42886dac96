package io.meshplan.spark;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks that a standalone master accepts connections before a Spark context is opened. Spark's
 * standalone client tries to register 3 times, 20 seconds apart, and neither figure is a setting
 * (StandaloneAppClient in Spark 4.0), so a master that is down took about a minute to be
 * reported; a TCP connect with a timeout answers in at most {@link #CONNECT_TIMEOUT} per master.
 */
final class MasterProbe {
  /** How long one connection attempt to a master may take. */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private MasterProbe() {}

  /**
   * Refuses a {@code spark://} master none of whose hosts accepts a connection, and a {@code
   * k8s://} master whose API server accepts none; other masters (local, yarn) pass unchecked.
   *
   * @param master the master URL, e.g. {@code spark://h1:7077,h2:7077}
   * @param timeout the connect timeout per host
   * @throws InputException when no host of a standalone master is reachable
   */
  static void requireReachable(String master, Duration timeout) {
    List<String> hosts;
    if (master.startsWith("spark://")) {
      hosts = List.of(master.substring("spark://".length()).split(","));
    } else if (master.startsWith("k8s://")) {
      hosts = List.of(kubernetesApi(master));
    } else {
      return;
    }
    List<String> failures = new ArrayList<>();
    for (String hostPort : hosts) {
      int colon = hostPort.lastIndexOf(':');
      String host = hostPort.substring(0, colon);
      int port = Integer.parseInt(hostPort.substring(colon + 1));
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
        return;
      } catch (IOException | IllegalArgumentException e) {
        failures.add(hostPort + " (" + e.getMessage() + ")");
      }
    }
    throw new InputException("Spark master " + master + " is not reachable within "
        + timeout.toSeconds() + " s: " + String.join(", ", failures) + "; is it running and "
        + "reachable from this machine?");
  }

  /**
   * The API server of a Kubernetes master as HOST:PORT: {@code k8s://https://HOST:PORT}, or
   * {@code k8s://HOST:PORT}, which Spark reads as https; without a port, 443 for https and 80
   * for http (Spark 4.0, {@code Utils.checkAndGetK8sMasterUrl}).
   *
   * @param master the master
   * @return e.g. {@code 10.0.0.1:6443}
   * @throws InputException when the rest is not a URL with a host
   */
  static String kubernetesApi(String master) {
    String rest = master.substring("k8s://".length());
    String url = rest.contains("://") ? rest : "https://" + rest;
    java.net.URI uri;
    try {
      uri = new java.net.URI(url);
    } catch (java.net.URISyntaxException e) {
      uri = null;
    }
    if (uri == null || uri.getHost() == null
        || !List.of("https", "http").contains(String.valueOf(uri.getScheme()))) {
      throw new InputException("Spark master " + master + ": expected k8s://https://HOST:PORT,"
          + " the Kubernetes API server");
    }
    int port = uri.getPort() >= 0 ? uri.getPort() : uri.getScheme().equals("https") ? 443 : 80;
    return uri.getHost() + ":" + port;
  }
}
