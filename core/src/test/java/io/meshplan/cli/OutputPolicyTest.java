package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one output policy (#23 classes 1 and 2), as a table over every command that writes files:
 * an output that exists is refused without {@code --force} (exit 2, one line, the file keeps its
 * bytes) and replaced with it; a directory or FIFO is refused even with {@code --force}; an output
 * that names an input, also through a symbolic link or a {@code dir/../file} spelling, is refused.
 */
class OutputPolicyTest {
  /** A command line whose output file is the argument. */
  private static final List<Function<Path, List<String>>> WRITERS = List.of(
      f -> List.of("plan", "--model", "opt-125m", "--layers", "2", "--cluster", "1x4:a100-40gb",
          "--out", f.toString()),
      f -> List.of("plan", "--model", "opt-125m", "--layers", "2", "--cluster", "1x4:a100-40gb",
          "--report", f.toString()),
      f -> List.of("simulate", "--model", "opt-125m", "--layers", "2", "--cluster",
          "1x4:a100-40gb", "--tp", "1", "--pp", "1", "--dp", "4", "--micro-batch", "1",
          "--global-batch", "4", "--report", f.toString()),
      f -> List.of("shard", "--hlo", "examples/train_step.hlo", "--mesh", "2x2", "--alpha", "1,1",
          "--beta", "1,0.01", "--out", f.toString()),
      f -> List.of("shard", "--hlo", "examples/train_step.hlo", "--mesh", "2x2", "--alpha", "1,1",
          "--beta", "1,0.01", "--dump-ilp", f.toString()),
      f -> List.of("calibrate", "examples/alpa_profile_communication_4x8_a100.txt", "--cluster",
          "4x8:a100-80gb", "--out", f.toString()),
      f -> List.of("export", "--to", "megatron", "--model", "llama2-7b", "--layers", "2",
          "--cluster", "1x4:a100-80gb", "--tp", "1", "--pp", "1", "--dp", "4", "--micro-batch", "1",
          "--global-batch", "4", "--out", f.toString()));

  @Test
  void existingOutputNeedsForce(@TempDir Path dir) throws Exception {
    for (Function<Path, List<String>> w : WRITERS) {
      Path f = dir.resolve("out-" + WRITERS.indexOf(w));
      Files.writeString(f, "mine");
      List<String> args = w.apply(f);
      CliRun r = CliRun.of(args.toArray(String[]::new));
      assertThat(r.code()).as(args + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(r.err()).as(args.toString()).hasLineCount(1).contains("exists")
          .contains("--force");
      assertThat(Files.readString(f)).isEqualTo("mine");
      List<String> forced = new ArrayList<>(args);
      forced.add("--force");
      CliRun ok = CliRun.of(forced.toArray(String[]::new));
      assertThat(ok.code()).as(forced + ok.err()).isZero();
      assertThat(Files.readString(f)).as(forced.toString()).isNotEqualTo("mine");
    }
  }

  @Test
  void directoryOrFifoIsNeverReplaced(@TempDir Path dir) throws Exception {
    Path sub = Files.createDirectory(dir.resolve("sub"));
    Path fifo = dir.resolve("fifo");
    boolean hasFifo = new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0;
    for (Function<Path, List<String>> w : WRITERS) {
      for (Path target : hasFifo ? List.of(sub, fifo) : List.of(sub)) {
        List<String> args = new ArrayList<>(w.apply(target));
        args.add("--force");
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertThat(r.code()).as(args + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).as(args.toString()).hasLineCount(1).doesNotContain("\tat ");
      }
    }
    assertThat(Files.isDirectory(sub)).isTrue();
  }

  @Test
  void inputNamedAsOutputIsRefusedAlsoThroughLinksAndDotDot(@TempDir Path dir)
      throws Exception {
    Path cluster = dir.resolve("cl.yaml");
    Files.copy(Path.of("examples/cluster.yaml"), cluster);
    Path link = Files.createSymbolicLink(dir.resolve("link.yaml"), cluster);
    Files.createDirectory(dir.resolve("d"));
    byte[] before = Files.readAllBytes(cluster);
    for (Path spelling : List.of(cluster, link, dir.resolve("d/../cl.yaml"))) {
      for (String flag : List.of("--out", "--report")) {
        String[] args = {"plan", "--model", "opt-125m", "--layers", "2", "--cluster",
            cluster.toString(), flag, spelling.toString(), "--force"};
        CliRun r = CliRun.of(args);
        assertThat(r.code()).as(List.of(args) + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).hasLineCount(1).contains("is also an input");
        assertThat(Files.readAllBytes(cluster)).isEqualTo(before);
      }
    }
  }
}
