package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * JSON nested 10,000 deep, where a command reads JSON (a config.json, a plan file, a doctor
 * report): the reader's depth limit ends it in one line and exit 2, not an internal error. The
 * limit's exception carries no location, which the readers once dereferenced.
 */
class DeepJsonTest {
  @Test
  void deepJsonIsOneLineAndExitTwo(@TempDir Path dir) throws Exception {
    Path deep = dir.resolve("deep.json");
    Files.writeString(deep, "[".repeat(10_000) + "]".repeat(10_000));
    for (List<String> args : List.of(
        List.of("plan", "--model", deep.toString(), "--cluster", "1x4:a100-40gb"),
        List.of("simulate", "--plan", deep.toString()),
        List.of("export", "--to", "megatron", "--plan", deep.toString()),
        List.of("deploy", "--target", "slurm", "--cluster", "1x4:a100-40gb", "--fabric",
            deep.toString(), "--", "train.py"))) {
      CliRun r = CliRun.of(args.toArray(String[]::new));
      assertThat(r.code()).as(String.join(" ", args)).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(r.err()).as(String.join(" ", args)).hasLineCount(1)
          .startsWith("meshplan: error: " + deep + ": ").contains("nesting depth");
    }
  }
}
