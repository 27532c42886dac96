package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.util.TreeReaders;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every YAML reader (cluster, sweep grid, profile) against YAML nested 10,000 deep and a "billion
 * laughs" alias bomb (9 levels of 9 aliases, 9^9 = 387,420,489 strings if expanded): one line,
 * exit 2, never an internal error (#23 class 3). The JSON readers are in {@link DeepJsonTest}.
 */
class HostileTreeTest {
  @Test
  void deepYamlAndAliasBombsAreOneLineAndExitTwo(@TempDir Path dir) throws Exception {
    Path deep = dir.resolve("deep.yaml");
    Files.writeString(deep, "a: " + "[".repeat(10_000) + "]".repeat(10_000) + "\n");
    StringBuilder bomb = new StringBuilder("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (int i = 1; i < 9; i++) {
      String a = "*l" + (i - 1);
      bomb.append("l").append(i).append(": &l").append(i).append(" [")
          .append(String.join(", ", java.util.Collections.nCopies(9, a))).append("]\n");
    }
    Path laughs = dir.resolve("laughs.yaml");
    Files.writeString(laughs, bomb);
    for (Path f : List.of(deep, laughs)) {
      for (List<String> args : List.of(
          List.of("plan", "--model", "opt-125m", "--layers", "2", "--cluster", f.toString()),
          List.of("sweep", "--grid", f.toString()),
          List.of("plan", "--model", "opt-125m", "--layers", "2", "--cluster", "4x8:a100-80gb",
              "--profile", f.toString()))) {
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertThat(r.code()).as(args + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).as(args.toString()).hasLineCount(1)
            .startsWith("meshplan: error: " + f).doesNotContain("\tat ");
        if (f == deep) {
          assertThat(r.err()).contains("nesting depth above " + TreeReaders.MAX_DEPTH);
        } else {
          // Refused at the first anchor, before any alias could be expanded.
          assertThat(r.err()).contains("line 1, column ").contains("YAML anchor '&l0' is not "
              + "accepted");
        }
      }
    }
  }
}
