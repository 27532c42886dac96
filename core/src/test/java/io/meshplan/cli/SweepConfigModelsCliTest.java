package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sweep grid's models may be config.json paths, relative to the grid's directory or absolute,
 * read as {@code --model} reads them: a config of a preset's model gives the preset's rows, the
 * path as written names the rows, and a config named by the grid is an input no output replaces.
 */
class SweepConfigModelsCliTest {
  private static final String LLAMA3 = "core/src/test/resources/hf/meta-llama-3-8b.json";

  /** The CSV's rows without their first two columns (index, model). */
  private static List<String> figures(Path csv) throws IOException {
    return Files.readAllLines(csv).stream().skip(1)
        .map(l -> String.join(",", Arrays.asList(l.split(",", -1)).subList(2,
            l.split(",", -1).length)))
        .toList();
  }

  @Test
  void configPathsPlanAsTheirPresetsDo(@TempDir Path dir) throws IOException {
    Path models = Files.createDirectories(dir.resolve("grids/models/Meta Llama 3 8B"));
    Files.copy(Path.of(LLAMA3), models.resolve("config.json"));
    Path copy = Files.createDirectories(dir.resolve("grids/models/copy"));
    Files.copy(Path.of(LLAMA3), copy.resolve("config.json"));
    Path absolute = Files.copy(Path.of(LLAMA3), dir.resolve("llama3.json"));
    Path grid = dir.resolve("grids/grid.yaml");
    // Three spellings of one model (a directory, a file in one, an absolute path; three files,
    // since one file named twice is refused), and the GPU by its short name.
    Files.writeString(grid, "models: [llama3-8b, 'models/Meta Llama 3 8B', "
        + "'models/copy/config.json', " + absolute + "]\n"
        + "seq: 1024\ngpus: h100\nclusters: 1x8\nglobalBatch: 16\n");
    Path csv = dir.resolve("out.csv");
    CliRun r = CliRun.of("sweep", "--grid", grid.toString(), "--csv", csv.toString(),
        "--threads", "2");
    assertThat(r.code()).as(r.err()).isZero();
    List<String> rows = Files.readAllLines(csv);
    assertThat(rows).hasSize(5);
    assertThat(rows.get(2)).startsWith("1,models/Meta Llama 3 8B,1024,h100-80gb,");
    assertThat(rows.get(3)).startsWith("2,models/copy/config.json,1024,h100-80gb,");
    assertThat(rows.get(4)).startsWith("3," + absolute + ",1024,h100-80gb,");
    List<String> f = figures(csv);
    assertThat(f.get(0)).contains("ok");
    assertThat(f).containsOnly(f.get(0));
  }

  @Test
  void aBadModelIsOneLineNamingItsPlace(@TempDir Path dir) throws IOException {
    Path grid = dir.resolve("grid.yaml");
    Files.writeString(grid, "models: [opt-125m, missing/config.json]\nseq: 512\n"
        + "gpus: a100-40gb\nclusters: 1x2\nglobalBatch: 16\n");
    CliRun.of("sweep", "--grid", grid.toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        grid + ": field 'models[1]': " + dir.resolve("missing/config.json")
            + ": no such file");
    Files.writeString(grid, "models: [nope]\nseq: 512\ngpus: a100-40gb\nclusters: 1x2\n"
        + "globalBatch: 16\n");
    CliRun.of("sweep", "--grid", grid.toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        "unknown model 'nope'; valid presets: ");
    assertThat(CliRun.of("sweep", "--grid", grid.toString()).err()).contains(
        "; or the path of a config.json, absolute or relative to the grid's directory");
    // One config.json spelled two ways is one model listed twice.
    Files.createDirectories(dir.resolve("c"));
    Files.copy(Path.of(LLAMA3), dir.resolve("c/m.json"));
    Files.writeString(grid, "models: [c/m.json, c/../c/m.json]\nseq: 512\ngpus: a100-40gb\n"
        + "clusters: 1x2\nglobalBatch: 16\n");
    CliRun.of("sweep", "--grid", grid.toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        "field 'models[1]': 'c/../c/m.json' names the config.json 'c/m.json' names; list each "
            + "once");
    // A value of the wrong kind is named by its kind; a quoted number is told to lose its quotes.
    Files.writeString(grid, "models: [{a: 1}]\nseq: 512\ngpus: a100-40gb\nclusters: 1x2\n"
        + "globalBatch: 16\n");
    CliRun.of("sweep", "--grid", grid.toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        "field 'models[0]': expected a name, got a mapping");
    Files.writeString(grid, "models: opt-125m\nseq: [\"1024\"]\ngpus: a100-40gb\n"
        + "clusters: 1x2\nglobalBatch: 16\n");
    CliRun.of("sweep", "--grid", grid.toString()).refusedInOneLine(ExitCodes.BAD_INPUT,
        "field 'seq[0]': expected an integer from 1 to 1048576, got the quoted text '1024' "
            + "(write a number without quotes)");
  }

  @Test
  void aConfigTheGridNamesIsAnInput(@TempDir Path dir) throws IOException {
    Path config = Files.copy(Path.of(LLAMA3), dir.resolve("llama3.json"));
    byte[] before = Files.readAllBytes(config);
    Path grid = dir.resolve("grid.yaml");
    Files.writeString(grid, "models: llama3.json\nseq: 512\ngpus: h100\nclusters: 1x8\n"
        + "globalBatch: 16\n");
    CliRun.of("sweep", "--grid", grid.toString(), "--csv", config.toString(), "--force")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "is also an input: the grid's model");
    assertThat(Files.readAllBytes(config)).isEqualTo(before);
  }
}
