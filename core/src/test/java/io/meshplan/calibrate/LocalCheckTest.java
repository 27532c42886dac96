package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local sanity check, with a stand-in {@code all_reduce_perf} that prints a recorded 8-GPU A100
 * log (there is no GPU here).
 */
class LocalCheckTest {
  @TempDir Path dir;

  private Path fakeBinary(String body) throws Exception {
    Path bin = dir.resolve("build").resolve("all_reduce_perf");
    Files.createDirectories(bin.getParent());
    Files.writeString(bin, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
    return bin;
  }

  @Test
  void comparesTheBestBusBandwidthWithNvlink() throws Exception {
    Path log = Path.of("core/src/test/resources/calibrate/all_reduce_perf_8gpu_a100.log")
        .toAbsolutePath();
    Path bin = fakeBinary("cat '" + log + "'");
    assertThat(LocalCheck.find(dir.toString(), null)).isEqualTo(bin);
    List<String> lines = new LocalCheck(ClusterSpec.parse("1x8:a100-80gb"), bin, 30).run();
    // The log's best busbw is about 230 GB/s against A100 NVLink 300 GB/s per direction: ok.
    assertThat(lines.get(0)).startsWith("local check ok: ").contains("A100".toLowerCase());
  }

  @Test
  void slowLinksWarn() throws Exception {
    Path bin = fakeBinary("""
        echo '# nThread 1 nGpus 8 minBytes 8388608 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0'
        echo '#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong'
        echo '#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)'
        echo '     8388608       2097152     float     sum      -1   1198.4    7.00   12.25      0   1197.9    7.00   12.25      0'""");
    List<String> lines = new LocalCheck(ClusterSpec.parse("1x8:a100-80gb"), bin, 30).run();
    assertThat(lines.get(0)).startsWith("local check WARNING: ");
  }

  @Test
  void aFailingBinaryIsReported() throws Exception {
    Path bin = fakeBinary("exit 3");
    List<String> lines = new LocalCheck(ClusterSpec.parse("1x8:a100-80gb"), bin, 30).run();
    assertThat(lines.get(0)).contains("exited with 3");
  }
}
