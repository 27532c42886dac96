package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Class 1 of the trust issue as a table: every command, with every file it reads named as every
 * file it writes, spelled three ways (the path itself, a symbolic link to it, and {@code
 * sub/../file}), and always with {@code --force}, ends in one line and exit 2, and the input keeps
 * every byte. Each row's input is a valid file of its kind, so the refusal is the output rule's
 * and not a parse error.
 */
class InputNeverOutputCliTest {
  private static final String IN = "IN";
  private static final String OUT = "OUT";

  @TempDir static Path samples;
  private static Path plan;
  private static Path profile;

  /** One command line; {@code IN} and {@code OUT} are replaced by the same file. */
  private record Row(String kind, List<String> args) {
    Row(String kind, String line) {
      this(kind, Arrays.asList(line.split(" ")));
    }
  }

  @BeforeAll
  static void writeSamples() {
    plan = samples.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "2", "--cluster",
        "1x8:h100-80gb", "--global-batch", "8", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    profile = samples.resolve("profile.yaml");
    CliRun c = CliRun.of("calibrate", "examples/alpa_profile_communication_4x8_a100.txt",
        "--cluster", "4x8:a100-80gb", "--out", profile.toString());
    assertThat(c.code()).as(c.err()).isZero();
  }

  private static List<Row> rows() {
    String sim = " --tp 1 --pp 1 --dp 8 --micro-batch 1 --global-batch 8";
    String sim32 = " --tp 1 --pp 1 --dp 32 --micro-batch 1 --global-batch 32";
    String exp = "export --to megatron";
    return List.of(
        new Row("config", "plan --model IN --layers 2 --cluster 1x8:h100-80gb --out OUT"),
        new Row("config", "plan --model IN --layers 2 --cluster 1x8:h100-80gb --report OUT"),
        new Row("cluster", "plan --model llama2-7b --layers 2 --cluster IN --out OUT"),
        new Row("cluster", "plan --model llama2-7b --layers 2 --cluster IN --report OUT"),
        new Row("profile", "plan --model llama2-7b --layers 2 --cluster 4x8:a100-80gb"
            + " --profile IN --out OUT"),
        new Row("hlo", "plan --hlo IN --cluster 1x8:h100-80gb --microbatches 1 --out OUT"),
        new Row("plan", "plan --model llama2-7b --layers 2 --cluster 1x8:h100-80gb --compare IN"
            + " --report OUT"),
        new Row("config", "simulate --model IN --layers 2 --cluster 1x8:h100-80gb" + sim
            + " --report OUT"),
        new Row("cluster", "simulate --model llama2-7b --layers 2 --cluster IN" + sim
            + " --report OUT"),
        new Row("profile", "simulate --model llama2-7b --layers 2 --cluster 4x8:a100-80gb" + sim32
            + " --profile IN --report OUT"),
        new Row("plan", "simulate --plan IN --report OUT"),
        new Row("config", exp + " --model IN --layers 2 --cluster 1x8:h100-80gb" + sim
            + " --out OUT"),
        new Row("cluster", exp + " --model llama2-7b --layers 2 --cluster IN" + sim + " --out OUT"),
        new Row("profile", exp + " --model llama2-7b --layers 2 --cluster 4x8:a100-80gb" + sim32
            + " --profile IN --out OUT"),
        new Row("plan", exp + " --plan IN --out OUT"),
        new Row("plan", "deploy --target slurm --plan IN --name x --out OUT -- train.py"),
        new Row("fabric", "deploy --target slurm --cluster 2x8:h100-80gb --fabric IN --name x"
            + " --out OUT -- train.py"),
        new Row("grid", "sweep --grid IN --csv OUT"),
        new Row("grid", "sweep --grid IN --jsonl OUT"),
        new Row("hlo", "shard --hlo IN --mesh 2x2 --out OUT"),
        new Row("hlo", "shard --hlo IN --mesh 2x2 --dump-ilp OUT"),
        new Row("cluster", "shard --hlo examples/train_step.hlo --mesh 2x4 --cluster IN --out OUT"),
        new Row("profile", "shard --model llama2-7b --layers 1 --mesh 4x8 --cluster 4x8:a100-80gb"
            + " --profile IN --dump-ilp OUT"),
        new Row("alpa", "calibrate IN --cluster 4x8:a100-80gb --out OUT"),
        new Row("cluster32", "calibrate examples/alpa_profile_communication_4x8_a100.txt"
            + " --cluster IN --out OUT"),
        new Row("titanlog", "calibrate --train IN --config"
            + " examples/calibrate/torchtitan_llama3_8b.toml --cluster 1x8:h100-80gb --out OUT"),
        new Row("titantoml", "calibrate --train examples/calibrate/torchtitan_llama3_8b_h100.log"
            + " --config IN --cluster 1x8:h100-80gb --out OUT"),
        new Row("cluster", "bench --cluster IN --out OUT"));
  }

  /** A fresh copy of a valid input of a kind. */
  private static Path sample(String kind, Path dir) throws IOException {
    Path to = dir.resolve("input-" + kind);
    switch (kind) {
      case "config" -> Files.copy(Path.of("core/src/test/resources/hf/llama-2-7b-hf.json"), to);
      case "cluster" -> Files.writeString(to, "nodes: 1\ngpusPerNode: 8\ngpu: h100-80gb\n");
      case "cluster32" -> Files.writeString(to, "nodes: 4\ngpusPerNode: 8\ngpu: a100-80gb\n");
      case "profile" -> Files.copy(profile, to);
      case "hlo" -> Files.copy(Path.of("examples/train_step.hlo"), to);
      case "plan" -> Files.copy(plan, to);
      case "fabric" -> Files.copy(Path.of("examples/doctor-ib.json"), to);
      case "grid" -> Files.copy(Path.of("examples/sweep.yaml"), to);
      case "alpa" -> Files.copy(Path.of("examples/alpa_profile_communication_4x8_a100.txt"), to);
      case "titanlog" ->
          Files.copy(Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log"), to);
      case "titantoml" -> Files.copy(Path.of("examples/calibrate/torchtitan_llama3_8b.toml"), to);
      default -> throw new IllegalArgumentException(kind);
    }
    return to;
  }

  @Test
  void noInputIsEverAnOutput(@TempDir Path dir) throws IOException {
    int runs = 0;
    for (Row row : rows()) {
      for (int spelling = 0; spelling < 3; spelling++) {
        Path work = Files.createDirectory(dir.resolve("run-" + runs++));
        Path in = sample(row.kind(), work);
        byte[] before = Files.readAllBytes(in);
        String out = switch (spelling) {
          case 0 -> in.toString();
          case 1 -> Files.createSymbolicLink(work.resolve("link"), in).toString();
          default -> Files.createDirectory(work.resolve("sub")).resolve("..")
              .resolve(in.getFileName()).toString();
        };
        List<String> args = new ArrayList<>();
        for (String a : row.args()) {
          args.add(a.equals(IN) ? in.toString() : a.equals(OUT) ? out : a);
        }
        int dashes = args.indexOf("--");
        args.add(dashes < 0 ? args.size() : dashes, "--force");
        CliRun r = CliRun.of(args.toArray(String[]::new));
        List<String> errors = r.err().lines().filter(l -> l.startsWith("meshplan: error:"))
            .toList();
        assertThat(r.code()).as(args + "\n" + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(errors).as(args + "\n" + r.err()).hasSize(1);
        // bench --out names a directory: a file there is refused as not one, before the inputs.
        if (!row.args().get(0).equals("bench")) {
          assertThat(errors.get(0)).as(args.toString()).contains("input");
        }
        assertThat(r.err()).as(args.toString()).doesNotContain("\tat ");
        assertThat(Files.readAllBytes(in)).as(args.toString()).isEqualTo(before);
      }
    }
    // 28 rows x 3 spellings.
    assertThat(runs).isEqualTo(84);
  }

  /**
   * {@code --model DIR} reads {@code DIR/config.json}: that file, named directly or through a
   * link, is an input no output may replace, even with {@code --force} (it was replaced before).
   */
  @Test
  void aModelDirectorysConfigIsAnInput(@TempDir Path dir) throws IOException {
    Path model = Files.createDirectory(dir.resolve("model"));
    Path config = Files.copy(Path.of("core/src/test/resources/hf/llama-2-7b-hf.json"),
        model.resolve("config.json"));
    byte[] before = Files.readAllBytes(config);
    String sim = " --tp 1 --pp 1 --dp 8 --micro-batch 1 --global-batch 8 --force";
    for (String line : List.of(
        "plan --model MODEL --layers 2 --cluster 1x8:h100-80gb --force --out OUT",
        "simulate --model MODEL --layers 2 --cluster 1x8:h100-80gb --report OUT" + sim,
        "export --to megatron --model MODEL --layers 2 --cluster 1x8:h100-80gb --out OUT"
            + sim)) {
      for (Path out : List.of(config, Files.createTempDirectory(dir, "l")
          .resolve("link.json"))) {
        if (!Files.exists(out, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.createSymbolicLink(out, config);
        }
        String[] args = line.replace("MODEL", model.toString()).replace("OUT", out.toString())
            .split(" ");
        CliRun r = CliRun.of(args);
        r.refusedInOneLine(ExitCodes.BAD_INPUT, "input");
        assertThat(Files.readAllBytes(config)).as(line).isEqualTo(before);
      }
    }
  }

  /** A flag the parser refuses (an int too large, an unknown option) is one line and exit 2. */
  @Test
  void parserRefusalsAreOneLine() {
    CliRun.of("simulate", "--model", "llama2-7b", "--ep", "99999999999")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "'99999999999' is out of range: this flag takes "
            + "a whole number from -2,147,483,648 to 2,147,483,647. Try 'meshplan simulate --help' "
            + "for usage.");
    // Past a long too, an int flag names its own range, not a long's.
    CliRun.of("simulate", "--model", "llama2-7b", "--mean-doc-len", "100000000000000000000")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "'100000000000000000000' is out of range: this "
            + "flag takes a whole number from -2,147,483,648 to 2,147,483,647");
    CliRun.of("plan", "--model", "llama2-7b", "--train-tokens", "99999999999999999999")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "'99999999999999999999' is out of range: this "
            + "flag takes a whole number from -9,223,372,036,854,775,808 to "
            + "9,223,372,036,854,775,807");
    CliRun.of("plan", "--bogus-flag").refusedInOneLine(ExitCodes.BAD_INPUT, "--bogus-flag");
    // An empty path would name the current directory: every path flag refuses it.
    CliRun.of("bench", "--cluster", "1x8:a100-80gb", "--out", "").refusedInOneLine(
        ExitCodes.BAD_INPUT, "Invalid value for option '--out': an empty path names no file");
    CliRun.of("plan", "--model", "llama2-7b", "--out", "").refusedInOneLine(
        ExitCodes.BAD_INPUT, "an empty path names no file");
    CliRun.of("calibrate", "", "--cluster", "1x8:a100-80gb", "--out", "o.yaml")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "Unmatched argument at index 1: ''");
  }
}
