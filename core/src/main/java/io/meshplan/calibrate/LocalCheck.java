package io.meshplan.calibrate;

import io.meshplan.cluster.ClusterSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A quick single-node sanity check of the fabric inside one node: runs nccl-tests'
 * {@code all_reduce_perf} on this node's GPUs for 8 MiB to 256 MiB, reads its log with the same
 * parser as {@code meshplan calibrate}, and compares the best bus bandwidth with the catalog's
 * NVLink bandwidth. Below half of it usually means NVLink is off or P2P is disabled. When the
 * binary is not there (as on a machine without GPUs) the check says so and is skipped.
 */
public final class LocalCheck {
  /** Below this fraction of the catalog NVLink bandwidth the check warns. */
  public static final double WARN_FRACTION = 0.5;

  private final ClusterSpec cluster;
  private final Path binary;
  private final long timeoutSeconds;

  /**
   * Creates the check.
   *
   * @param cluster the cluster (its GPU and GPUs per node)
   * @param binary the {@code all_reduce_perf} executable
   * @param timeoutSeconds how long the run may take
   */
  public LocalCheck(ClusterSpec cluster, Path binary, long timeoutSeconds) {
    this.cluster = cluster;
    this.binary = binary;
    this.timeoutSeconds = timeoutSeconds;
  }

  /**
   * Finds {@code all_reduce_perf}: in {@code $NCCL_TESTS/build}, else on {@code PATH}.
   *
   * @param ncclTestsHome the nccl-tests directory, or null
   * @param path the {@code PATH} value, or null
   * @return the executable, or null when absent
   */
  public static Path find(String ncclTestsHome, String path) {
    List<Path> candidates = new ArrayList<>();
    if (ncclTestsHome != null && !ncclTestsHome.isBlank()) {
      candidates.add(Path.of(ncclTestsHome, "build", "all_reduce_perf"));
      candidates.add(Path.of(ncclTestsHome, "all_reduce_perf"));
    }
    if (path != null) {
      for (String dir : path.split(java.io.File.pathSeparator)) {
        if (!dir.isBlank()) {
          candidates.add(Path.of(dir, "all_reduce_perf"));
        }
      }
    }
    for (Path c : candidates) {
      if (Files.isRegularFile(c) && Files.isExecutable(c)) {
        return c;
      }
    }
    return null;
  }

  /**
   * Runs the check.
   *
   * @return report lines; the first says whether the check passed, warned or could not run
   */
  public List<String> run() {
    List<String> lines = new ArrayList<>();
    List<String> cmd = List.of(binary.toString(), "-b", "8M", "-e", "256M", "-f", "2", "-g",
        Integer.toString(cluster.gpusPerNode()));
    String text;
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        lines.add("local check failed: " + String.join(" ", cmd) + " did not finish in "
            + timeoutSeconds + " s");
        return lines;
      }
      text = new String(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        lines.add("local check failed: " + String.join(" ", cmd) + " exited with "
            + p.exitValue());
        return lines;
      }
    } catch (IOException e) {
      lines.add("local check failed: cannot run " + binary + ": " + e.getMessage());
      return lines;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      lines.add("local check interrupted");
      return lines;
    }
    ParseResult r = new BenchmarkLogReader(cluster.gpusPerNode()).parse("local all_reduce_perf",
        text);
    double best = 0;
    for (MeasuredPoint pt : r.points()) {
      if (!Double.isNaN(pt.busbw())) {
        best = Math.max(best, pt.busbw());
      }
    }
    if (best == 0) {
      lines.add("local check failed: all_reduce_perf printed no bandwidth rows");
      return lines;
    }
    double nvlink = cluster.gpu().nvlinkBandwidth();
    double fraction = best / nvlink;
    String summary = String.format(Locale.ROOT,
        "best all-reduce bus bandwidth on %d GPUs: %.1f GB/s, %.0f%% of the %s NVLink %.0f GB/s",
        cluster.gpusPerNode(), best / 1e9, 100 * fraction, cluster.gpu().name(), nvlink / 1e9);
    lines.add((fraction < WARN_FRACTION ? "local check WARNING: " : "local check ok: ") + summary);
    if (fraction < WARN_FRACTION) {
      lines.add("  check that NVLink is up (nvidia-smi nvlink -s) and that NCCL_P2P_DISABLE is "
          + "not set");
    }
    return lines;
  }
}
