package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster file's bandwidths lie from 0.1 GB/s to 1 PB/s: "above 0" let 1e-300 bytes/s through,
 * which priced an iteration at Infinity (an internal error) and 1e-10 at 3.7e18 s.
 */
class ClusterFileBoundsTest {
  @TempDir Path dir;

  private Path file(String nodes, String line) throws Exception {
    Path f = dir.resolve("v.yaml");
    Files.writeString(f, "nodes: " + nodes + "\ngpusPerNode: 8\ngpu: a100-80gb\n" + line + "\n");
    return f;
  }

  @Test
  void aBandwidthOutsideItsRangeIsRefusedNamingTheFileAndField() throws Exception {
    for (String key : new String[] {"nvlinkBandwidth", "hbmBandwidth", "nicBandwidth"}) {
      // 1e-300 B/s: 2e8 bytes / 1e-300 = 2e308, past Double.MAX_VALUE (1.8e308): Infinity.
      // 1e-10 B/s: finite but 3.7e18 s an iteration. 99,999,999 B/s: just under 1e8.
      for (String v : new String[] {"1e-300", "1e-10", "99999999", "0.79Gbps", "1.1e15",
          "2PB/s"}) {
        Path f = file("2", key + ": " + v);
        assertThatThrownBy(() -> ClusterSpec.parse(f.toString())).as(key + " " + v)
            .isInstanceOf(InputException.class)
            .hasMessageContaining(f + ": field '" + key + "' must be a bandwidth from 0.1 GB/s "
                + "to 1 PB/s (1e8 to 1e15 bytes/s)");
      }
    }
  }

  @Test
  void aGpuCountPastTheLimitIsRefusedNamingTheFile() throws Exception {
    // 2,147,483,647 x 8 = 17,179,869,176 GPUs and 131,073 x 8 = 1,048,584, each past the limit
    // of 2^20 = 1,048,576; 131,072 x 8 is the limit itself and reads.
    for (String nodes : new String[] {"2147483647", "131073"}) {
      Path f = file(nodes, "");
      assertThatThrownBy(() -> ClusterSpec.parse(f.toString())).as(nodes)
          .isInstanceOf(InputException.class)
          .hasMessageStartingWith(f + ": the GPU count of cluster " + nodes + "x8 is ")
          .hasMessageEndingWith("more than the limit of 1048576");
    }
    assertThat(ClusterSpec.parse(file("131072", "").toString()).gpuCount()).isEqualTo(1 << 20);
  }

  @Test
  void theEndsOfTheRangeRead() throws Exception {
    // 0.8 Gb/s = 0.1 GB/s = 1e8 B/s, the least; 1e15 B/s = 1 PB/s, the most.
    assertThat(ClusterSpec.parse(file("1", "nvlinkBandwidth: 1e8").toString()).gpu()
        .nvlinkBandwidth()).isEqualTo(1e8);
    assertThat(ClusterSpec.parse(file("1", "hbmBandwidth: 0.1GB/s").toString()).gpu()
        .hbmBandwidth()).isEqualTo(1e8);
    assertThat(ClusterSpec.parse(file("2", "nicBandwidth: 0.8Gbps").toString()).fabric()
        .nicBandwidth()).isEqualTo(1e8);
    assertThat(ClusterSpec.parse(file("1", "hbmBandwidth: 1e15").toString()).gpu()
        .hbmBandwidth()).isEqualTo(1e15);
  }
}
