package io.meshplan.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.cluster.HardwareCatalog;
import io.meshplan.model.ModelFlops;
import io.meshplan.model.Presets;
import io.meshplan.util.InputException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sweep grid's GPUs and fabrics resolve against the catalog it is read with, the grid carries
 * that hardware to its points' task, and the task keeps it through Java serialization (as on
 * Spark); a grid read without a catalog is on meshplan's own.
 */
class SweepHardwareTest {
  @TempDir Path dir;

  /** A Hopper-class part no catalog ships: 800 TFLOP/s bf16, 64 GiB, on a fabric of its own. */
  private static final String CATALOG = "gpus:\n  - name: x100-64gb\n"
      + "    architecture: hopper\n    peakTflops: {fp32: 50, bf16: 800, fp16: 800, fp8: 1600}\n"
      + "    memoryGiB: 64\n    hbmGBps: 3000\n    nvlinkDomain: 8\n"
      + "    nvlinkGBpsPerDirection: 400\n    defaultFabric: slow-eth\n"
      + "    source: a made-up part for a test\n"
      + "fabrics:\n  - name: slow-eth\n    kind: roce\n    nicGbps: 25\n    nicsPerNode: 1\n"
      + "    latencySeconds: 0.00002\n    source: a made-up fabric for a test\n";

  private static final String GRID = "models: opt-125m\nseq: 512\ngpus: [x100-64gb, h100]\n"
      + "clusters: [2x2]\nglobalBatch: 16\n";

  private HardwareCatalog catalog() throws Exception {
    Path f = dir.resolve("catalog.yaml");
    Files.writeString(f, CATALOG);
    return HardwareCatalog.shipped().with(f);
  }

  @Test
  void theGridResolvesAgainstItsCatalogAndEachGpuGetsItsDefaultFabric() throws Exception {
    SweepGrid g = SweepGridReader.parse(GRID, "grid.yaml", null, catalog());
    assertThat(g.gpus()).containsExactly("x100-64gb", "h100-80gb");
    assertThat(g.points()).extracting(SweepPoint::gpu, SweepPoint::fabric).map(t -> t.toList())
        .containsExactly(List.of("x100-64gb", "slow-eth"), List.of("h100-80gb", "ib-ndr400"));
    assertThat(g.hardware()).isInstanceOf(SweepHardware.Given.class);
    assertThat(g.hardware().gpu("x100-64gb").hbmBytes()).isEqualTo(64L << 30);
    assertThat(g.hardware().fabric("SLOW-ETH").nicsPerNode()).isEqualTo(1);

    assertThatThrownBy(() -> SweepGridReader.parse(GRID, "grid.yaml"))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith("grid.yaml: field 'gpus[0]': unknown gpu 'x100-64gb'; valid: ");
    assertThatThrownBy(() -> SweepGridReader.parse(GRID.replace("x100-64gb, ", "")
        + "fabrics: slow-eth\n", "grid.yaml"))
        .isInstanceOf(InputException.class).hasMessageContaining("unknown fabric 'slow-eth'");
    assertThatThrownBy(() -> g.hardware().gpu("z9")).isInstanceOf(InputException.class)
        .hasMessageStartingWith("unknown gpu 'z9'; valid: ").hasMessageContaining("x100-64gb");
  }

  @Test
  void withoutACatalogTheGridIsOnTheShippedOne() {
    SweepGrid g = SweepGridReader.parse(GRID.replace("x100-64gb, ", ""), "grid.yaml");
    assertThat(g.hardware()).isSameAs(SweepHardware.SHIPPED);
    assertThat(SweepHardware.of(HardwareCatalog.shipped())).isSameAs(SweepHardware.SHIPPED);
  }

  /** The bound of a point divides its model FLOPs by the catalog GPU's own peak. */
  @Test
  void theLowerBoundUsesTheCatalogGpusPeak() throws Exception {
    SweepHardware hw = SweepHardware.of(catalog());
    SweepPoint x = new SweepPoint(0, "opt-125m", 512, 2, 2, "x100-64gb", "slow-eth", 16, 0,
        false);
    // opt-125m trains in bf16 on Hopper: 16 x 512 tokens of model FLOPs over 4 GPUs at the
    // entry's 800 TFLOP/s.
    double flops = ModelFlops.trainingFlopsPerToken(Presets.get("opt-125m"), 512) * 16 * 512;
    assertThat(PointEvaluator.lowerBoundSeconds(x, Presets.get("opt-125m"), hw))
        .isEqualTo(flops / (4 * 800e12));
  }

  /** The task planned after a serialization round trip gives the same result as before it. */
  @Test
  void theTaskCarriesTheCatalogThroughSerialization() throws Exception {
    PointTask task = new PointTask(false, 0, Map.of(), SweepHardware.of(catalog()));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(task);
    }
    PointTask back;
    try (ObjectInputStream in = new ObjectInputStream(
        new ByteArrayInputStream(bytes.toByteArray()))) {
      back = (PointTask) in.readObject();
    }
    assertThat(back).isEqualTo(task);
    SweepPoint p = new SweepPoint(0, "opt-125m", 512, 2, 2, "x100-64gb", "slow-eth", 16, 0,
        false);
    PointResult r = back.apply(p);
    assertThat(r.status()).as(r.message()).isEqualTo(PointStatus.OK);
    assertThat(r).isEqualTo(task.apply(p));
    // The same point on the shipped catalog names a GPU it does not have.
    PointResult shipped = new PointTask(false, 0).apply(p);
    assertThat(shipped.status()).isEqualTo(PointStatus.REJECTED);
    assertThat(shipped.message()).startsWith("unknown gpu 'x100-64gb'");
  }
}
