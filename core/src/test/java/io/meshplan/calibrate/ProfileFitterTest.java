package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.Collective;
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

  private static MeasuredPoint point(int line, long bytes, double s) {
    double alg = bytes / s;
    return new MeasuredPoint("t.log", line, Collective.ALL_REDUCE, 8, 1, 1, bytes, s, alg,
        alg * 1.75);
  }
}
