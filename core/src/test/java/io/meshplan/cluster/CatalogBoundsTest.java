package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every figure of a catalog entry lies in a physical range, checked on reading: a figure "above
 * 0" but tiny (1e-300) once passed and priced an iteration past a double's range, or rounded the
 * memory to no bytes; now it is refused in one line naming the file, the entry, the field and
 * the range, and both ends of each range still read.
 */
class CatalogBoundsTest {
  @TempDir Path dir;

  /** The shipped a100-80gb entry under another name, with a fabric of its own. */
  private static final String ENTRY = "gpus:\n  - name: xg\n    architecture: ampere\n"
      + "    peakTflops: {fp32: 19.5, tf32: 156, bf16: 312, fp16: 312}\n    memoryGiB: 80\n"
      + "    hbmGBps: 2039\n    nvlinkDomain: 8\n    nvlinkGBpsPerDirection: 300\n"
      + "    powerW: 400\n    boostClockMHz: 1410\n    defaultFabric: xf\n    source: test\n"
      + "fabrics:\n  - name: xf\n    kind: infiniband\n    nicGbps: 200\n    nicsPerNode: 8\n"
      + "    latencySeconds: 0.000005\n    source: test\n";

  private HardwareCatalog with(String text) throws Exception {
    Path f = dir.resolve("catalog.yaml");
    Files.writeString(f, text);
    return HardwareCatalog.shipped().with(f);
  }

  @Test
  void aTinyOrHugeFigureIsRefusedNamingTheFieldAndItsRange() {
    // Each was "above 0": memoryGiB 1e-300 rounded to 0 bytes (an IllegalArgumentException
    // later); NVLink at 1e-300 GB/s = 1e-291 B/s priced a 0.19 GiB exchange at 2e8 / 1e-291 =
    // 2e299 s; a peak of 1e-300 TFLOP/s = 1e-288 FLOP/s an iteration of ~1e13 FLOPs at 1e301 s.
    String[][] cases = {
        {"memoryGiB: 80", "memoryGiB: 1e-300", "'memoryGiB' must be a number from 1 to 65,536"
            + " GiB"},
        {"memoryGiB: 80", "memoryGiB: 0.5", "'memoryGiB' must be a number from 1 to 65,536"},
        {"memoryGiB: 80", "memoryGiB: 65537", "'memoryGiB' must be a number from 1 to 65,536"},
        {"hbmGBps: 2039", "hbmGBps: 1e-300", "'hbmGBps' must be a number from 0.1 to 1,000,000"
            + " GB/s"},
        {"hbmGBps: 2039", "hbmGBps: 1e300", "'hbmGBps' must be a number from 0.1 to 1,000,000"},
        {"nvlinkGBpsPerDirection: 300", "nvlinkGBpsPerDirection: 1e-300",
            "'nvlinkGBpsPerDirection' must be a number from 0.1 to 1,000,000 GB/s"},
        {"nvlinkGBpsPerDirection: 300", "nvlinkGBpsPerDirection: 0.09",
            "'nvlinkGBpsPerDirection' must be a number from 0.1 to 1,000,000 GB/s"},
        {"nicGbps: 200", "nicGbps: 1e-300", "'nicGbps' must be a number from 0.8 to 8,000,000"
            + " Gb/s"},
        {"nicGbps: 200", "nicGbps: 0.79", "fabrics[0] 'xf': 'nicGbps' must be a number from 0.8"},
        {"bf16: 312", "bf16: 1e-300",
            "peakTflops: 'bf16' must be a number from 0.1 to 1,000,000 TFLOP/s"},
        {"fp32: 19.5", "fp32: 0.05", "peakTflops: 'fp32' must be a number from 0.1"},
        {"powerW: 400", "powerW: 1e-300", "'powerW' must be a number from 10 to 100,000 W"},
        {"boostClockMHz: 1410", "boostClockMHz: 1e-300",
            "'boostClockMHz' must be a number from 100 to 100,000 MHz"},
        {"source: test\nfabrics", "gemm16: 1e-300\n    source: test\nfabrics",
            "'gemm16' must be a number from 0.01 to 1 of the peak"},
        {"source: test\nfabrics", "attention: {forward: 1e-300, backward: 0.5}\n    source: "
            + "test\nfabrics", "attention: 'forward' must be a number from 0.01 to 1 of the peak"}};
    for (String[] c : cases) {
      String text = ENTRY.replace(c[0], c[1]);
      assertThat(text).as(c[1]).isNotEqualTo(ENTRY);
      assertThatThrownBy(() -> with(text)).as(c[1]).isInstanceOf(InputException.class)
          .hasMessageContaining("catalog.yaml: ").hasMessageContaining(c[2]);
    }
  }

  @Test
  void theEndsOfEachRangeRead() throws Exception {
    String low = ENTRY.replace("memoryGiB: 80", "memoryGiB: 1")
        .replace("hbmGBps: 2039", "hbmGBps: 0.1")
        .replace("nvlinkGBpsPerDirection: 300", "nvlinkGBpsPerDirection: 0.1")
        .replace("{fp32: 19.5, tf32: 156, bf16: 312, fp16: 312}",
            "{fp32: 0.1, tf32: 0.1, bf16: 0.1, fp16: 0.1}")
        .replace("powerW: 400", "powerW: 10").replace("boostClockMHz: 1410",
            "boostClockMHz: 100").replace("nicGbps: 200", "nicGbps: 0.8")
        .replace("source: test\nfabrics", "gemm16: 0.01\n    attention: {forward: 0.01, "
            + "backward: 0.01}\n    source: test\nfabrics");
    GpuSpec g = with(low).gpu("xg").orElseThrow().spec();
    // 1 GiB = 2^30 bytes; 0.1 GB/s = 1e8 B/s; 0.1 TFLOP/s = 1e11 FLOP/s.
    assertThat(g.hbmBytes()).isEqualTo(1L << 30);
    assertThat(g.hbmBandwidth()).isEqualTo(1e8);
    assertThat(g.nvlinkBandwidth()).isEqualTo(1e8);
    assertThat(g.peak(Precision.BF16)).hasValue(1e11);
    String high = ENTRY.replace("memoryGiB: 80", "memoryGiB: 65536")
        .replace("hbmGBps: 2039", "hbmGBps: 1000000")
        .replace("nvlinkGBpsPerDirection: 300", "nvlinkGBpsPerDirection: 1000000")
        .replace("bf16: 312", "bf16: 1000000").replace("nicGbps: 200", "nicGbps: 8000000");
    assertThatCode(() -> with(high)).doesNotThrowAnyException();
  }
}
