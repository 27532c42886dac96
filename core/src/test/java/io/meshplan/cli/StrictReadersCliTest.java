package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every reader refuses (#36, section 4), each in one line with exit 2 naming the file, the
 * line and the key: YAML anchors, aliases and tags; a key given twice in YAML, JSON and TOML (and
 * an argument printed twice, or two argument blocks, in a Megatron-LM log); text after a JSON
 * document or a second YAML document; whole numbers in digits other than ASCII's, in flags and in
 * files.
 */
class StrictReadersCliTest {
  @TempDir Path dir;

  private static final ObjectMapper JSON = new ObjectMapper();

  private Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  /** A refusal: exit 2, one line naming the file, with each of the texts. */
  private static void refused(CliRun r, Path file, String... contains) {
    String what = r.err();
    assertThat(r.code()).as(what).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).as(what).hasLineCount(1).startsWith("meshplan: error: ")
        .contains(file.getFileName().toString()).doesNotContain("\tat ")
        .doesNotContain("Exception");
    for (String c : contains) {
      assertThat(r.err()).as(what).contains(c);
    }
  }

  /** The commands that read each kind of file, given the file. */
  private Map<String, Function<Path, CliRun>> readers() {
    return Map.of(
        "plan", f -> CliRun.of("simulate", "--plan", f.toString()),
        "config.json", f -> CliRun.of("plan", "--model", f.toString(), "--cluster",
            "1x8:a100-80gb"),
        "doctor", f -> CliRun.of("deploy", "--target", "slurm", "--cluster", "1x4:a100-40gb",
            "--fabric", f.toString(), "--", "train.py"),
        "profile", f -> CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
            "1x4:a100-80gb", "--profile", f.toString()),
        "nccl", f -> CliRun.of("calibrate", f.toString(), "--cluster", "2x8:h100-80gb",
            "--out", dir.resolve("p.yaml").toString()),
        "cluster", f -> CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
            f.toString()),
        "sweep", f -> CliRun.of("sweep", "--grid", f.toString()));
  }

  /** The JSON inputs: a reader and a real file of its kind. */
  private static final Map<String, String> JSON_FILES = Map.of(
      "plan", "core/src/test/resources/plans/llama2-70b-128x8-h100-80gb-ib-ndr400.json",
      "config.json", "core/src/test/resources/hf/llama-2-7b-hf.json",
      "doctor", "examples/doctor-ib.json",
      "profile", "core/src/test/resources/profiles/slow-intra-node.yaml",
      "nccl", "core/src/test/resources/calibrate/reduce_scatter_perf_16gpu.json");

  /**
   * A leading byte order mark, which editors on Windows write, changes nothing: each JSON input
   * reads as without it (the run's exit code and output are the same).
   */
  @Test
  void aByteOrderMarkChangesNothing() throws IOException {
    for (Map.Entry<String, String> e : JSON_FILES.entrySet()) {
      Path plain = Path.of(e.getValue());
      String name = plain.getFileName().toString();
      Path bom = dir.resolve("bom-" + e.getKey() + name.substring(name.lastIndexOf('.')));
      Files.writeString(bom, "\uFEFF" + Files.readString(plain));
      // calibrate writes its profile: each run writes a new one.
      Files.deleteIfExists(dir.resolve("p.yaml"));
      CliRun without = readers().get(e.getKey()).apply(plain);
      Files.deleteIfExists(dir.resolve("p.yaml"));
      CliRun with = readers().get(e.getKey()).apply(bom);
      assertThat(with.code()).as(e.getKey() + ": " + with.err()).isEqualTo(without.code());
      assertThat(with.err()).as(e.getKey()).doesNotContain("\uFEFF", "internal error");
      // The file's name and shard's wall-clock times aside.
      assertThat(with.out().replace(bom.toString(), "F").replaceAll("time: .*", ""))
          .isEqualTo(without.out().replace(plain.toString(), "F").replaceAll("time: .*", ""));
    }
  }

  @Test
  void aJsonKeyGivenTwiceIsRefusedAtItsLine() throws IOException {
    for (Map.Entry<String, String> e : JSON_FILES.entrySet()) {
      // The profile is YAML; its JSON form is read by a .json name.
      JsonNode tree = e.getKey().equals("profile")
          ? new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
              .readTree(Path.of(e.getValue()).toFile())
          : JSON.readTree(Path.of(e.getValue()).toFile());
      String key = tree.fieldNames().next();
      // The first key again, with another value where it can have one, on a line of its own.
      String pretty = JSON.writerWithDefaultPrettyPrinter().writeValueAsString(tree);
      String twice = "{\n  \"" + key + "\" : " + tree.get(key) + ",\n" + pretty.substring(2);
      Path f = write(e.getKey() + "-dup.json", twice);
      refused(readers().get(e.getKey()).apply(f), f, "key '" + key + "' is given twice",
          "line 3");
      // Text after the document.
      Path g = write(e.getKey() + "-tail.json", pretty + "\n{\"more\": 1}\n");
      refused(readers().get(e.getKey()).apply(g), g, "more follows the end of the document");
    }
  }

  @Test
  void yamlKeysTwiceAnchorsAliasesTagsAndSecondDocumentsAreRefused() throws IOException {
    String cluster = "nodes: 2\ngpusPerNode: 8\ngpu: h100-80gb\n";
    String profile = Files.readString(Path.of(
        "core/src/test/resources/profiles/slow-intra-node.yaml"));
    String sweep = Files.readString(Path.of("examples/sweep.yaml"));
    Map<String, String> base = Map.of("cluster", cluster, "profile", profile, "sweep", sweep);
    for (Map.Entry<String, String> e : base.entrySet()) {
      Function<Path, CliRun> read = readers().get(e.getKey());
      String text = e.getValue();
      String first = text.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).findFirst()
          .orElseThrow();
      String key = first.substring(0, first.indexOf(':'));
      int line = (int) text.lines().count() + 1;
      Path dup = write(e.getKey() + "-dup.yaml", text + first + "\n");
      refused(read.apply(dup), dup, "key '" + key + "' is given twice", "line " + line);
      // The first value, anchored, and an alias to it under the same key's value.
      Path anchor = write(e.getKey() + "-anchor.yaml", text.replace(first,
          key + ": &v" + first.substring(first.indexOf(':') + 1)));
      refused(read.apply(anchor), anchor, "YAML anchor '&v' is not accepted");
      Path alias = write(e.getKey() + "-alias.yaml", text.replace(first, key + ": *v"));
      refused(read.apply(alias), alias, "YAML alias '*v' is not accepted", "line");
      Path tag = write(e.getKey() + "-tag.yaml", text.replace(first,
          key + ": !!java.net.URL" + first.substring(first.indexOf(':') + 1)));
      refused(read.apply(tag), tag, "YAML tag", "java.net.URL", "is not accepted");
      Path local = write(e.getKey() + "-local.yaml", text.replace(first,
          key + ": !local" + first.substring(first.indexOf(':') + 1)));
      refused(read.apply(local), local, "YAML tag '!local'");
      Path second = write(e.getKey() + "-docs.yaml", text + "---\n" + text);
      refused(read.apply(second), second, "more follows the end of the document");
      // A plain scalar YAML 1.1 reads in another base: 0x10 is 16, 010 is 8, 1:30 is 90.
      for (String other : new String[] {"0x10", "010", "0b101", "1:30"}) {
        Path base60 = write(e.getKey() + "-base.yaml", text.replace(first, key + ": " + other));
        refused(read.apply(base60), base60, "'" + other + "' is read by YAML as a number in "
            + "another base", "line");
      }
      // A plain number YAML 1.1 reads without its underscores or its plus sign: 1_024 is 1024,
      // +3_2 is 32.
      for (String sep : new String[] {"1_024", "+32", "+3_2", "1_0.5"}) {
        Path digits = write(e.getKey() + "-sep.yaml", text.replace(first, key + ": " + sep));
        refused(read.apply(digits), digits, "'" + sep + "' is read by YAML as a number without "
            + "its " + (sep.contains("_") ? "underscores" : "plus sign"), "line");
      }
      // A plain word YAML 1.1 reads as a boolean: on is true, NO is false.
      for (String word : new String[] {"on", "Off", "yes", "NO"}) {
        Path bool = write(e.getKey() + "-bool.yaml", text.replace(first, key + ": " + word));
        refused(read.apply(bool), bool, "'" + word + "' is read by YAML as the boolean "
            + (word.equalsIgnoreCase("on") || word.equalsIgnoreCase("yes")), "not as written",
            "line");
      }
    }
  }

  @Test
  void aTomlKeyOrTableTwiceIsRefusedAtItsLine() throws IOException {
    String toml = Files.readString(Path.of("examples/calibrate/torchtitan_llama3_8b.toml"));
    List<String> lines = toml.lines().toList();
    int table = lines.indexOf("[training]");
    String key = lines.get(table + 1);
    Path dup = write("dup.toml", toml.replace("[training]\n" + key + "\n",
        "[training]\n" + key + "\n" + key.replaceAll("= .*", "= 4") + "\n"));
    refused(train(Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log"), dup), dup,
        "dup.toml:" + (table + 3) + ":", "key 'training." + key.split(" ")[0]
            + "' is defined twice (first at line " + (table + 2) + ")");
    Path tables = write("tables.toml", toml + "\n[training]\nseq_len = 4096\n");
    refused(train(Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log"), tables), tables,
        "table '[training]' is defined twice");
  }

  private CliRun train(Path log, Path config) {
    return CliRun.of("calibrate", "--train", log.toString(), "--config", config.toString(),
        "--cluster", "1x8:h100-80gb", "--out", dir.resolve("t.yaml").toString());
  }

  @Test
  void aMegatronLogWithAnArgumentTwiceOrTwoArgumentBlocksIsRefused() throws IOException {
    String log = CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500});
    List<String> lines = new ArrayList<>(log.lines().toList());
    int at = 0;
    while (!lines.get(at).startsWith("  hidden_size ")) {
      at++;
    }
    // hidden_size printed again with another value, right after the first.
    lines.add(at + 1, lines.get(at).replace("2048", "4096"));
    Path twice = write("twice.log", String.join("\n", lines) + "\n");
    refused(CliRun.of("calibrate", "--train", twice.toString(), "--cluster", "1x4:a100-80gb",
        "--out", dir.resolve("t.yaml").toString()), twice, "twice.log:" + (at + 2) + ":",
        "argument hidden_size is printed twice", "first at line " + (at + 1), "= 2048",
        "= 4096");
    // The same argument block twice: a restarted job appended to its log.
    Path blocks = write("blocks.log", log + log);
    refused(CliRun.of("calibrate", "--train", blocks.toString(), "--cluster", "1x4:a100-80gb",
        "--out", dir.resolve("t.yaml").toString()), blocks, "a second '---- arguments ----' "
        + "block (the first is at line 1)");
  }

  /** Every decimal digit of Unicode but ASCII's: fullwidth, Arabic-Indic, Devanagari, ... */
  private static final List<Integer> DIGITS = java.util.stream.IntStream.rangeClosed(0x80,
      Character.MAX_CODE_POINT).filter(cp -> Character.getType(cp)
          == Character.DECIMAL_DIGIT_NUMBER).boxed().toList();

  /** A number with at least one of its digits written in another script. */
  private static String foreign(SplittableRandom r, int value) {
    String ascii = Integer.toString(value);
    StringBuilder sb = new StringBuilder();
    int forced = r.nextInt(ascii.length());
    for (int i = 0; i < ascii.length(); i++) {
      char c = ascii.charAt(i);
      if (i == forced || r.nextBoolean()) {
        int zero = DIGITS.get(r.nextInt(DIGITS.size()));
        zero -= Character.getNumericValue(zero);
        sb.appendCodePoint(zero + (c - '0'));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  @Test
  void digitsOtherThanAsciiAreNotNumbersInFlagsOrFiles() throws IOException {
    assertThat(DIGITS).hasSizeGreaterThan(600).contains(0xFF18, 0x0668, 0x096E);
    SplittableRandom r = new SplittableRandom(3608);
    String sim = "simulate --model gpt --cluster 1x8:h100-80gb --tp 1 --pp 1 --dp 8 "
        + "--micro-batch 1 --global-batch 8";
    for (int i = 0; i < 12; i++) {
      // The fullwidth eight of the issue first, then seeded numbers in any script.
      String eight = i == 0 ? "\uff18" : foreign(r, 8);
      for (String flag : List.of("--global-batch", "--dp", "--layers", "--seq")) {
        String line = sim.replaceAll(flag + " \\S+", "") + " " + flag + " " + eight;
        CliRun run = CliRun.of(line.trim().split(" +"));
        assertThat(run.code()).as(line + run.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).as(line).hasLineCount(1).contains(flag)
            .contains("is not a whole number written in ASCII digits 0-9");
      }
      CliRun mesh = CliRun.of("shard", "--model", "alpa-mlp", "--mesh", foreign(r, 2) + "x2");
      assertThat(mesh.code()).as(mesh.err()).isEqualTo(ExitCodes.BAD_INPUT);
      CliRun cluster = CliRun.of("simulate", "--model", "gpt", "--cluster",
          "1x" + foreign(r, 8) + ":h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8",
          "--micro-batch", "1", "--global-batch", "8");
      assertThat(cluster.code()).as(cluster.err()).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(cluster.err()).hasLineCount(1).contains("--cluster");
      // A torchtitan config and a Megatron-LM log with such a number where one is read.
      Path toml = write("d" + i + ".toml", Files.readString(Path.of(
          "examples/calibrate/torchtitan_llama3_8b.toml")).replaceFirst("(?m)^seq_len = \\d+",
          "seq_len = " + foreign(r, 8192)));
      // The refusal names the log whose job the config states, and the config's key.
      Path titan = Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log");
      refused(train(titan, toml), titan, "training.seq_len", "is not a whole number");
      Path log = write("d" + i + ".log", CalibrateTrainCliTest.megatronLog(3000,
          new double[] {500, 500}, Map.of("hidden_size", foreign(r, 2048))));
      refused(CliRun.of("calibrate", "--train", log.toString(), "--cluster", "1x4:a100-80gb",
          "--out", dir.resolve("t.yaml").toString()), log, "argument hidden_size",
          "is not a whole number");
    }
  }

  /**
   * A control character at either end of a value is part of the value, not dropped: a flag's
   * (#36's trailing BEL in {@code --cluster}), a torchtitan config's and a Megatron-LM log's
   * argument. Each is refused in one line, where the value without it was read before; and
   * numbers the JDK reads and no format writes ({@code 0x1p3}, {@code 5d}) are refused too.
   */
  @Test
  void aControlCharacterAroundAValueIsPartOfIt() throws IOException {
    List<String> controls = List.of("\u0007", "\u001b", "\u0001", "\u001f", "\u007f",
        "\u0085", "\u009b", "\u000b", "\f");
    SplittableRandom r = new SplittableRandom(4711);
    String sim = "simulate --model gpt --cluster 1x8:h100-80gb --tp 1 --pp 1 --dp 8 "
        + "--micro-batch 1 --global-batch 8";
    for (int i = 0; i < 6; i++) {
      String c = controls.get(r.nextInt(controls.size()));
      boolean front = r.nextBoolean();
      for (String[] flag : new String[][] {{"--cluster", "1x8:h100-80gb"},
          {"--recompute", "full"}, {"--prices", "kernel"}, {"--attention", "flash"},
          {"--schedule", "1f1b"}}) {
        String v = front ? c + flag[1] : flag[1] + c;
        List<String> args = new ArrayList<>(List.of(sim.replaceAll(flag[0] + " \\S+", "")
            .trim().split(" +")));
        args.add(flag[0]);
        args.add(v);
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertThat(run.code()).as(args + run.err()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(run.err()).as(flag[0]).hasLineCount(1).contains(flag[0].substring(2));
        // The plain value still runs: the refusal is the control character's.
        args.set(args.size() - 1, " " + flag[1] + " ");
        CliRun plain = CliRun.of(args.toArray(String[]::new));
        assertThat(plain.code()).as(args + plain.err()).isZero();
      }
      Path toml = write("c" + i + ".toml", Files.readString(Path.of(
          "examples/calibrate/torchtitan_llama3_8b.toml")).replaceFirst("(?m)^seq_len = (\\d+)",
          "seq_len = " + (front ? c + "$1" : "$1" + c)));
      Path titan = Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log");
      refused(train(titan, toml), titan, "training.seq_len");
      Path log = write("c" + i + ".log", CalibrateTrainCliTest.megatronLog(3000,
          new double[] {500, 500}, Map.of("hidden_size", front ? c + "2048" : "2048" + c)));
      refused(CliRun.of("calibrate", "--train", log.toString(), "--cluster", "1x4:a100-80gb",
          "--out", dir.resolve("t.yaml").toString()), log, "argument hidden_size");
    }
    // Whitespace to String#strip, which dropped it: the unit separator U+001F.
    CliRun lora = CliRun.of("simulate", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "8",
        "--finetune", "lora", "--lora-rank", "16", "--lora-targets", "q_proj\u001f,v_proj");
    assertThat(lora.code()).as(lora.err()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(lora.err()).hasLineCount(1).contains("--lora-targets");
    for (String v : List.of("0x1p3,1", "5d,1", "1,2f", "1\u0007,1")) {
      CliRun run = CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--alpha", v);
      assertThat(run.code()).as(v + run.err()).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(run.err()).as(v).hasLineCount(1).contains("--alpha").contains("is not a number");
    }
  }

  /**
   * No parser of the JDK that reads digits of every script, or hexadecimal and type suffixes, is
   * called from {@code src/main}: whole numbers and decimals go through {@code util.AsciiDigits}.
   */
  @Test
  void mainCodeParsesNumbersOnlyThroughAsciiDigits() throws IOException {
    java.util.regex.Pattern jdk = java.util.regex.Pattern.compile(
        "\\b(?:Integer|Long|Short|Byte)\\.(?:parse\\w*|valueOf|decode)\\("
        + "|\\b(?:Integer|Long)::(?:parse\\w*|valueOf|decode)"
        + "|Character\\.(?:isDigit|digit|getNumericValue)\\(|new (?:java\\.math\\.)?BigInteger\\("
        + "|\\b(?:Double|Float)\\.(?:parse\\w*|valueOf)\\("
        + "|\\b(?:Double|Float)::(?:parse\\w*|valueOf)");
    List<String> found = new ArrayList<>();
    try (var files = Files.walk(Path.of("core/src/main/java"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        if (f.endsWith("AsciiDigits.java")) {
          continue;
        }
        List<String> lines = Files.readAllLines(f);
        for (int i = 0; i < lines.size(); i++) {
          if (jdk.matcher(lines.get(i)).find()) {
            found.add(f + ":" + (i + 1) + ": " + lines.get(i).strip());
          }
        }
      }
    }
    assertThat(found).isEmpty();
  }
}
