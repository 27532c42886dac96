package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.util.InputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterSpecTest {
  @Test
  void parsesTheShortFormWithDefaultFabric() {
    ClusterSpec c = ClusterSpec.parse("50x4:a100-40gb");
    assertThat(c.nodes()).isEqualTo(50);
    assertThat(c.gpusPerNode()).isEqualTo(4);
    assertThat(c.gpu().name()).isEqualTo("a100-40gb");
    assertThat(c.fabric().name()).isEqualTo("ib-hdr200");
    // 4 GPUs use 4 of the fabric's 8 NICs: 4 * 200 Gb/s / 8 = 100e9 B/s
    assertThat(c.nodeNetworkBandwidth()).isCloseTo(100e9, within(1.0));
    assertThat(c.toShortString()).isEqualTo("50x4:a100-40gb:ib-hdr200");
  }

  @Test
  void defaultFabricFollowsTheGpuGeneration() {
    assertThat(ClusterSpec.parse("2x8:h100-80gb").fabric().name()).isEqualTo("ib-ndr400");
    assertThat(ClusterSpec.parse("2x8:h200").gpu().name()).isEqualTo("h200-141gb");
    assertThat(ClusterSpec.parse("2x8:b200").fabric().name()).isEqualTo("ib-ndr400");
    assertThat(ClusterSpec.parse("2x8:v100-32gb").fabric().name()).isEqualTo("ib-edr100");
    assertThat(ClusterSpec.parse("128x8:h100-80gb:roce-400").fabric().kind())
        .isEqualTo(FabricKind.ROCE);
  }

  @Test
  void catalogNumbersAreTheDatasheets() {
    GpuSpec h100 = GpuCatalog.find("h100-80gb").orElseThrow();
    assertThat(h100.peak(Precision.BF16)).contains(989.5e12);
    assertThat(h100.peak(Precision.FP8)).contains(1979e12);
    // NVLink 4: 900 GB/s bidirectional, 450 GB/s per direction.
    assertThat(h100.nvlinkBandwidth()).isEqualTo(450e9);
    assertThat(GpuCatalog.find("v100-16gb").orElseThrow().peak(Precision.BF16)).isEmpty();
    assertThat(FabricCatalog.find("ib-ndr400").orElseThrow().nicBandwidth()).isEqualTo(50e9);
  }

  @Test
  void unknownNamesAreListed() {
    assertThatThrownBy(() -> ClusterSpec.parse("2x8:a200"))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("unknown gpu 'a200'")
        .hasMessageContaining("a100-40gb, a100-80gb, b200");
    assertThatThrownBy(() -> ClusterSpec.parse("2x8:a100-80gb:ib-zdr1600"))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("unknown fabric 'ib-zdr1600'")
        .hasMessageContaining("ib-ndr400");
    assertThatThrownBy(() -> ClusterSpec.parse("0x8:a100-80gb"))
        .hasMessageContaining("node count '0'");
    assertThatThrownBy(() -> ClusterSpec.parse("eight a100s"))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("NODESxGPUS:gpu[:fabric]");
  }

  @Test
  void readsAYamlFileWithOverrides(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("cluster.yaml");
    Files.writeString(f, "nodes: 4\ngpusPerNode: 8\ngpu: a100-80gb\nfabric: roce-200\n"
        + "nvlinkBandwidth: 240GB/s\nnicBandwidth: 100Gbps\nnicsPerNode: 4\n");
    ClusterSpec c = ClusterSpec.parse(f.toString());
    assertThat(c.nodes()).isEqualTo(4);
    assertThat(c.gpu().nvlinkBandwidth()).isEqualTo(240e9);
    // 4 NICs * 100 Gb/s / 8 = 50e9 B/s
    assertThat(c.nodeNetworkBandwidth()).isCloseTo(50e9, within(1.0));
  }

  @Test
  void yamlErrorsNameTheField(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("bad.yaml");
    Files.writeString(f, "nodes: 4\ngpusPerNode: eight\ngpu: a100-80gb\n");
    assertThatThrownBy(() -> ClusterSpec.parse(f.toString()))
        .isInstanceOf(InputException.class)
        .hasMessageContaining("gpusPerNode");
  }
}
