package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Runs {@code meshplan doctor --json} on each fixture under {@code src/test/resources/sysfs/} and
 * compares the output with the hand-written golden file under {@code doctor-golden/}. The comparison
 * is on the parsed JSON tree, so every field, value and number type (200 vs 200.0) must match, and
 * array order matters; only whitespace is free.
 *
 * <p>Why each GID index is what it is:
 *
 * <ul>
 *   <li>{@code ib-hdr}: InfiniBand link layer, so no GID index (null); NCCL keeps its default 0.
 *   <li>{@code roce-bond}: gids 0 and 1 are link-local (RoCE v1, v2), 2 and 3 are the IPv4-mapped
 *       {@code ::ffff:10.0.0.50} (v1, v2); the one IPv4-mapped RoCE v2 entry is 3.
 *   <li>{@code roce-bond-gid9}: the seed's pods: 0/1 link-local, 2/3 unique-local IPv6 {@code
 *       fd00::}, 4-7 zero, 8/9 IPv4-mapped {@code ::ffff:172.16.42.23} (v1, v2); the answer is 9.
 *   <li>{@code port-down}: InfiniBand, no index; only the ACTIVE port mlx5_0:1 is used.
 *   <li>{@code sparse-gids}: IPv4-mapped GIDs at 4 (types file missing, skipped with a warning), 5
 *       (RoCE v1), 10 and 11 (RoCE v2); 6 is a global IPv6 RoCE v2 GID, which only a fallback would
 *       take; 7 and 9 are gaps, 2, 3, 8, 12 are zero. The seed's grep prints both 10 and 11; the
 *       lowest index, 10, wins.
 *   <li>{@code no-rdma}: no RDMA devices at all: no index, NCCL_IB_DISABLE=1 over eth0 (docker0 sorts
 *       first but is excluded).
 *   <li>{@code mixed}: mlx5_3 is RoCE without an IPv4-mapped RoCE v2 GID: candidates 1 (v2 fe80), 2
 *       (v1 IPv4) and 3 (v2 global 2001:db8::3); the first fallback, RoCE v2 non-link-local IPv6,
 *       gives 3. The used ports are the 200 Gb/s InfiniBand ones (mlx5_10 sorts after mlx5_3), so
 *       NCCL_IB_GID_INDEX is not set.
 * </ul>
 */
class DoctorGoldenTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @ParameterizedTest
  @ValueSource(
      strings = {
        "ib-hdr", "roce-bond", "roce-bond-gid9", "port-down", "sparse-gids", "no-rdma", "mixed"
      })
  void jsonMatchesGolden(String fixture) throws Exception {
    String first = runJson(fixture);
    JsonNode actual = JSON.readTree(first);
    JsonNode expected = golden(fixture);

    assertThat(actual).as("doctor --json on %s\n%s", fixture, first).isEqualTo(expected);
    // Same input, same bytes.
    assertThat(runJson(fixture)).isEqualTo(first);
  }

  static String runJson(String fixture) throws URISyntaxException {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(new PrintWriter(out), new PrintWriter(err),
        "doctor", "--sysfs-root", fixturePath(fixture).toString(), "--json");
    assertThat(err.toString()).isEmpty();
    assertThat(code).isEqualTo(ExitCodes.OK);
    return out.toString();
  }

  static Path fixturePath(String fixture) throws URISyntaxException {
    URL url = DoctorGoldenTest.class.getResource("/sysfs/" + fixture);
    assertThat(url).as("fixture %s on the test classpath", fixture).isNotNull();
    return Path.of(url.toURI());
  }

  private static JsonNode golden(String fixture) throws IOException {
    try (InputStream in =
        DoctorGoldenTest.class.getResourceAsStream("/doctor-golden/" + fixture + ".json")) {
      assertThat(in).as("golden for %s", fixture).isNotNull();
      return JSON.readTree(in);
    }
  }
}
