package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.Collective;
import java.util.List;
import org.junit.jupiter.api.Test;

class CatalogBandwidthCheckTest {
  private static final ClusterSpec A100 = ClusterSpec.parse("2x8:a100-80gb:ib-hdr200");

  /** An all-reduce entry on 8 GPUs of one level whose line is t = 10 us + x / bw. */
  private static Profile profile(boolean intra, double busBandwidth) {
    List<MeasuredPoint> pts = List.of(point(1, intra, 1L << 20, busBandwidth),
        point(2, intra, 1L << 30, busBandwidth));
    return new ProfileFitter("2x8:a100-80gb:ib-hdr200").fit(pts).profile();
  }

  private static MeasuredPoint point(int line, boolean intra, long bytes, double bw) {
    double s = 10e-6 + 1.75 * bytes / bw;
    return new MeasuredPoint("t.log", line, Collective.ALL_REDUCE, 8, 1, intra ? 1 : 2, bytes, s,
        bytes / s, 1.75 * bytes / s);
  }

  @Test
  void intraNodeIsHeldToTheGpusNvlink() {
    // A100 NVLink: 300 GB/s per direction; 10% is 30 GB/s. The two points lie on the line, so
    // the fit returns the bandwidth given.
    assertThat(CatalogBandwidthCheck.doubts(profile(true, 31e9), A100)).isEmpty();
    assertThat(CatalogBandwidthCheck.doubts(profile(true, 29e9), A100)).containsExactly(
        "all_reduce intra-node on 8 GPUs: the fitted bus bandwidth 29.0 GB/s is below 10% of"
            + " the catalog's 300.0 GB/s (a100-80gb NVLink); were the messages too small to"
            + " reach the bandwidth, or did NCCL use another network?");
  }

  @Test
  void interNodeIsHeldToOneNic() {
    // ib-hdr200: 200 Gb/s = 25 GB/s per NIC; 10% is 2.5 GB/s. 2.4 GB/s is a TCP fallback's
    // rate, 12 GB/s an ordinary two-node ring.
    assertThat(CatalogBandwidthCheck.doubts(profile(false, 12e9), A100)).isEmpty();
    assertThat(CatalogBandwidthCheck.doubts(profile(false, 2.4e9), A100)).singleElement()
        .asString().contains("2.40 GB/s is below 10% of the catalog's 25.0 GB/s (one ib-hdr200"
            + " NIC)");
  }
}
