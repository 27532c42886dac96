package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A command reads its cluster file once: the cluster it prices and the description a plan
 * embeds come from the same read. Before, {@code plan} parsed the file for the cluster and read
 * it again for the plan's {@code clusterDescription}, so a file changed in between was priced on
 * one content and carried with another, which {@code simulate --plan} then priced differently.
 */
class ClusterFileReadOnceTest {
  @TempDir Path dir;

  @Test
  void theClusterAndItsDescriptionComeFromOneRead() throws Exception {
    Path file = Files.writeString(dir.resolve("c.yaml"), """
        nodes: 2
        gpusPerNode: 8
        gpu: h100-80gb
        nicBandwidth: 10Gbps
        """);
    ClusterOptions options = new ClusterOptions();
    options.cluster = file.toString();
    var described = options.clusterDescription().orElseThrow();
    // The file changes after the first read: 400 Gb/s NICs.
    Files.writeString(file, """
        nodes: 2
        gpusPerNode: 8
        gpu: h100-80gb
        nicBandwidth: 400Gbps
        """);
    // 10 Gb/s = 1.25e9 bytes/s, as first read, for the cluster and for its description.
    assertThat(options.spec(null).fabric().nicBandwidth()).isEqualTo(1.25e9);
    assertThat(options.clusterDescription().orElseThrow()).isEqualTo(described);
    assertThat(described.get("nicBandwidth").asText()).isEqualTo("10Gbps");
    // Another command reads the file as it now is: 400 Gb/s = 5e10 bytes/s.
    ClusterOptions next = new ClusterOptions();
    next.cluster = file.toString();
    assertThat(next.spec(null).fabric().nicBandwidth()).isEqualTo(5e10);
  }
}
