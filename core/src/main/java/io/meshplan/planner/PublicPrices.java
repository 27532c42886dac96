package io.meshplan.planner;

import io.meshplan.calibrate.ComputeScale;
import io.meshplan.calibrate.Profile;
import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.cluster.GpuSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The calibration meshplan ships: one compute factor per GPU architecture, fitted by {@code
 * meshplan calibrate --train --folds public} on the public folds ({@link PublicFolds}), each with
 * the folds it came from and the 90% band of its leave-one-stack-out residuals. The file is a
 * resource beside this class, {@value #RESOURCE}, written by that command and checked against it
 * by a test; an architecture with no public run keeps kernel-level prices.
 */
public final class PublicPrices {
  /** The resource, a profile file. */
  public static final String RESOURCE = "public-prices.yaml";

  private static final Profile SHIPPED = load();

  private PublicPrices() {}

  /**
   * The shipped profile.
   *
   * @return the profile (compute scales only)
   */
  public static Profile shipped() {
    return SHIPPED;
  }

  private static Profile load() {
    try (InputStream in = PublicPrices.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + RESOURCE);
      }
      return ProfileFiles.parse(Path.of(RESOURCE), new String(in.readNBytes(1 << 20),
          StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The shipped factors in one line, for commands that price several GPUs (sweep): for example
   * {@code prices: hopper compute x0.817 (fitted on public runs); others at kernel-level
   * prices}.
   *
   * @return the line, without a newline
   */
  public static String summary() {
    List<String> fitted = new java.util.ArrayList<>();
    SHIPPED.compute().forEach((arch, c) -> {
      if (!c.kernelLevel()) {
        fitted.add(String.format(Locale.ROOT, "%s compute x%.3f", arch, c.scale()));
      }
    });
    return "prices: " + (fitted.isEmpty() ? "kernel-level everywhere"
        : String.join(", ", fitted) + " (fitted on public runs); others at kernel-level prices");
  }

  /**
   * A fitted scale in words: {@code hopper compute x0.817 (fitted on 43 public runs, 7 stacks)},
   * or a fit to a user's logs, or kernel-level prices checked on public runs; with its 90% band
   * where it has one.
   *
   * @param gpu the GPU priced
   * @param c the scale of its architecture
   * @return the words
   */
  public static String words(GpuSpec gpu, ComputeScale c) {
    String a = gpu.architecture().word();
    String band = c.errorBand().map(b -> String.format(Locale.ROOT, "; 90%% band %.0f%%/+%.0f%%",
        100 * (b.low() - 1), 100 * (b.high() - 1))).orElse("");
    if (c.folds().isEmpty()) {
      return String.format(Locale.ROOT, "%s compute x%.3f (fitted to %d logged runs)%s", a,
          c.scale(), c.runs(), band);
    }
    if (c.kernelLevel()) {
      return String.format(Locale.ROOT, "%s compute at kernel-level prices (checked on %s, %s)%s",
          a, io.meshplan.util.Words.count(c.runs(), "public run"), stacks(c.folds().size()), band);
    }
    return String.format(Locale.ROOT, "%s compute x%.3f (fitted on %d public runs, %s)%s",
        a, c.scale(), c.runs(), stacks(c.folds().size()), band);
  }

  private static String stacks(int n) {
    return io.meshplan.util.Words.count(n, "stack");
  }

}
