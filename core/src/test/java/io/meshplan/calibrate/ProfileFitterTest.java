package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.Collective;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProfileFitterTest {
  @Test
  void fixtureFitIsAccurate() {
    ParseResult r = Fixtures.read("all_reduce_perf_8gpu_a100.log", 8);
    Calibration c = new ProfileFitter("1x8:a100-80gb:ib-hdr200").fit(r.points());
    assertThat(c.profile().entries()).hasSize(1);
    // The curve is the isotonic fit of the data: within the jitter of repeated small sizes.
    for (FittedPoint f : c.points()) {
      assertThat(Math.abs(f.curveError())).as(f.point().where()).isLessThan(0.03);
    }
    // The fixture's own busbw plateau is ~236 GB/s; the relative-error fit lands near it.
    assertThat(c.profile().entries().get(0).busBandwidth()).isBetween(200e9, 250e9);
  }

  @Test
  void equalSizesArePooledAndTheCurveIsMonotone() {
    List<MeasuredPoint> pts = new ArrayList<>();
    // Two files measured 1 KiB at 10 and 12 us (mean 11), 2 KiB at 10.5 us: PAV pools
    // (11 weight 2, 10.5 weight 1) into (22 + 10.5) / 3 = 10.8333 us.
    pts.add(point(1, 1024, 10e-6));
    pts.add(point(2, 1024, 12e-6));
    pts.add(point(3, 2048, 10.5e-6));
    pts.add(point(4, 1 << 20, 20e-6));
    Calibration c = new ProfileFitter("x").fit(pts);
    MonotoneCurve curve = c.profile().entries().get(0).curve().orElseThrow();
    assertThat(curve.bytes()).containsExactly(1024, 2048, 1 << 20);
    assertThat(curve.seconds()[0]).isCloseTo(10.8333e-6, within(1e-10));
    assertThat(curve.seconds()[1]).isCloseTo(10.8333e-6, within(1e-10));
    assertThat(curve.seconds()[2]).isEqualTo(20e-6);
  }

  @Test
  void bandwidthOnlyEntriesUseTheMeanBusBandwidth() {
    ParseResult r = Fixtures.read("runai_rdma_allreduce_table.md", 8);
    Calibration c = new ProfileFitter("4x8:a100-80gb").fit(r.points());
    ProfileEntry e16 = c.profile().entries().stream().filter(e -> e.gpus() == 16).findFirst()
        .orElseThrow();
    assertThat(e16.curve()).isEmpty();
    // busbw 122.3 Gbps = 15.2875 GB/s; 1 GiB all-reduce on 16: 1.875 * 2^30 / 15.2875e9 = 0.13170 s
    assertThat(e16.seconds(1L << 30)).isCloseTo(1.875 * (1L << 30) / 15.2875e9, within(1e-9));
  }

  @Test
  void oneSizeSeparatesNothingUnlessBandwidthSetsItsTime() {
    // 8 bytes in 10 us: a line through the origin would claim 8 x 1.75 / 10e-6 = 1.4 MB/s.
    assertThatThrownBy(() -> new ProfileFitter("x").fit(List.of(point(3, 8, 10e-6),
        point(4, 8, 11e-6)))).isInstanceOf(InputException.class).hasMessage("t.log:3:"
        + " all_reduce intra-node on 8 GPUs was measured at 1 message size (8 bytes); a fit"
        + " needs at least 2 sizes to separate latency from bandwidth (run nccl-tests over a"
        + " range, e.g. -b 8 -e 8G -f 2), or one of at least 64 MiB, where the bandwidth alone"
        + " sets the time");
    // One byte short of 64 MiB is refused; 64 MiB alone is bandwidth-bound (Alpa's profiles
    // measure 2 GB): 2^26 x 1.75 bytes in 500 us is 234.9 GB/s, through the origin.
    long mib64 = ProfileFitter.BANDWIDTH_BOUND_BYTES;
    assertThat(mib64).isEqualTo(64L * 1024 * 1024);
    assertThatThrownBy(() -> new ProfileFitter("x").fit(List.of(point(1, mib64 - 1, 500e-6))))
        .isInstanceOf(InputException.class);
    ProfileEntry big = new ProfileFitter("x").fit(List.of(point(1, mib64, 500e-6))).profile()
        .entries().get(0);
    assertThat(big.busBandwidth()).isCloseTo(mib64 * 1.75 / 500e-6, within(1.0));
    // Two sizes of 8 and 16 bytes separate them, however poorly: accepted here, and
    // CatalogBandwidthCheck doubts the bandwidth.
    assertThat(new ProfileFitter("x").fit(List.of(point(1, 8, 10e-6), point(2, 16, 10.1e-6)))
        .profile().entries()).hasSize(1);
  }

  private static MeasuredPoint point(int line, long bytes, double s) {
    double alg = bytes / s;
    return new MeasuredPoint("t.log", line, Collective.ALL_REDUCE, 8, 1, 1, bytes, s, alg,
        alg * 1.75);
  }
}
