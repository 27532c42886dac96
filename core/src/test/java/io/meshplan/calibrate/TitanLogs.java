package io.meshplan.calibrate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The example torchtitan log restated for another layout, for tests. */
public final class TitanLogs {
  /** The example log of 8 GPUs and a global batch of 8. */
  public static final Path EXAMPLE = Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log");

  private TitanLogs() {}

  /**
   * The example log as a run of {@code world} GPUs and a global batch of {@code global}
   * sequences prints its device mesh and batch: its step rates as they are.
   *
   * @param dir where to write it
   * @param world the GPUs of its device mesh
   * @param global its global batch, sequences
   * @return the log
   * @throws IOException when it cannot be written
   */
  public static Path of(Path dir, int world, int global) throws IOException {
    Path log = dir.resolve("titan-" + world + "-" + global + ".log");
    Files.writeString(log, Files.readString(EXAMPLE)
        .replace("['dp_shard'], [8]", "['dp_shard'], [" + world + "]")
        .replace("global batch size 8,", "global batch size " + global + ","));
    return log;
  }
}
