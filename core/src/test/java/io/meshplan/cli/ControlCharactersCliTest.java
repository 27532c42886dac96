package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
 * Terminal control characters in every input that reaches a message (#36, section 4): a model
 * name, a Hugging Face {@code model_type}, a GPU and a fabric name in a cluster string and a
 * cluster file, a plan file's model name, a profile's cluster, fields of an nccl-tests log, a
 * Megatron-LM log and a torchtitan config, a sysfs interface name and an unknown flag. Whatever
 * the command answers, no raw control or format character reaches standard output or standard
 * error, and where the input is echoed it is echoed as its escape (a backslash, u and four hex
 * digits).
 */
class ControlCharactersCliTest {
  @TempDir Path dir;

  /**
   * What a terminal acts on, written out here independently of TerminalText: C0 controls but
   * newline and tab, DEL, C1, format characters (bidirectional overrides and isolates among
   * them), the line and paragraph separators and lone surrogates.
   */
  static void noRawControls(String what, String text) {
    text.codePoints().forEach(cp -> {
      int type = Character.getType(cp);
      boolean raw = cp < 0x20 && cp != '\n' && cp != '\t' || cp >= 0x7f && cp <= 0x9f
          || type == Character.FORMAT || type == Character.LINE_SEPARATOR
          || type == Character.PARAGRAPH_SEPARATOR || type == Character.SURROGATE;
      assertThat(raw).as("%s holds the raw character U+%04X: %s", what, cp, text).isFalse();
    });
  }

  /** Pieces a hostile name is made of: escape sequences, C1, bidi and zero-width characters. */
  private static final List<String> PIECES = List.of("\u001b[31m", "\u001b]0;owned\u0007",
      "\u009b2J", "\r", "\b", "\u007f", "\u202e", "\u2066", "\u200f", "\ufeff", "\u0085",
      "\u2028", "\udb40\udc01", "\u001b[2J\u001b[H", "\u0000");

  /** A name with one to three hostile pieces inside, drawn from a seeded source. */
  private static String hostile(SplittableRandom r, String word) {
    StringBuilder sb = new StringBuilder(word);
    int n = 1 + r.nextInt(3);
    for (int i = 0; i < n; i++) {
      sb.insert(r.nextInt(sb.length() + 1), PIECES.get(r.nextInt(PIECES.size())));
    }
    // One more arbitrary C0 or C1 control (never NUL, which no path or argument can carry).
    char c = r.nextBoolean() ? (char) (1 + r.nextInt(0x1f)) : (char) (0x80 + r.nextInt(0x20));
    return sb.insert(r.nextInt(sb.length() + 1), c).toString().replace("\u0000", "\u0001");
  }

  /** A YAML or JSON double-quoted string of any text. */
  private static String quoted(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20 || c >= 0x7f) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"').toString();
  }

  private Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  private record Case(String label, List<String> args, boolean echoed) {}

  /** The inputs, each turned into a command line around one hostile name. */
  private List<Function<String, Case>> inputs() {
    String sim = "--tp 1 --pp 1 --dp 8 --micro-batch 1 --global-batch 8";
    List<Function<String, Case>> in = new ArrayList<>();
    in.add(n -> new Case("model preset", List.of("plan", "--model", n, "--cluster",
        "1x8:a100-80gb"), true));
    in.add(n -> new Case("GPU in --cluster", args("simulate --model gpt --cluster", "1x8:" + n,
        sim), true));
    in.add(n -> new Case("fabric in --cluster", args("simulate --model gpt --cluster",
        "1x8:h100-80gb:" + n, sim), true));
    in.add(n -> file("cluster file gpu", "cluster.yaml", "nodes: 1\ngpusPerNode: 8\ngpu: "
        + quoted(n) + "\n", f -> args("simulate --model gpt --cluster", f, sim)));
    in.add(n -> file("cluster file fabric", "fabric.yaml", "nodes: 1\ngpusPerNode: 8\n"
        + "gpu: h100-80gb\nfabric: " + quoted(n) + "\n",
        f -> args("simulate --model gpt --cluster", f, sim)));
    in.add(n -> file("HF model_type", "config.json", "{\"model_type\": " + quoted(n)
        + ", \"hidden_size\": 64}", f -> List.of("plan", "--model", f, "--cluster",
            "1x8:a100-80gb")));
    in.add(n -> file("profile cluster", "profile.yaml", "version: 1\ncluster: " + quoted(n)
        + "\nentries: []\n", f -> List.of("shard", "--model", "alpa-mlp", "--mesh", "2x2",
            "--cluster", "1x4:a100-80gb", "--profile", f)));
    in.add(n -> file("nccl-tests time field", "all_reduce.log", ncclLog(n), f -> List.of(
        "calibrate", f, "--cluster", "1x8:a100-80gb", "--out", dir.resolve("p.yaml")
            .toString(), "--force")));
    in.add(n -> file("Megatron-LM argument", "train.log", CalibrateTrainCliTest.megatronLog(
        3000, new double[] {500, 500}, Map.of("tensor_model_parallel_size", n)),
        f -> List.of("calibrate", "--train", f, "--cluster", "1x4:a100-80gb", "--out",
            dir.resolve("t.yaml").toString())));
    in.add(n -> file("torchtitan config", "job.toml", "[model]\nname = " + quoted(n)
        + "\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
        + "[activation_checkpoint]\nmode = \"none\"\n",
        f -> List.of("calibrate", "--train", "examples/calibrate/torchtitan_llama3_8b_h100.log",
            "--config", f, "--cluster", "1x8:h100-80gb", "--out", dir.resolve("u.yaml")
                .toString())));
    in.add(n -> new Case("unknown flag", List.of("simulate", "--" + n), true));
    return in;
  }

  private static List<String> args(String head, String value, String tail) {
    List<String> a = new ArrayList<>(List.of(head.split(" ")));
    a.add(value);
    a.addAll(List.of(tail.split(" ")));
    return a;
  }

  private Case file(String label, String name, String text, Function<String, List<String>> cmd) {
    try {
      return new Case(label, cmd.apply(write(name, text).toString()), true);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String ncclLog(String field) {
    try {
      String log = Files.readString(Path.of(
          "core/src/test/resources/calibrate/all_reduce_perf_8gpu_a100.log"));
      // The collective's name becomes the hostile text: a warning quotes it.
      return log.replace("Collective test starting: all_reduce_perf",
          "Collective test starting: " + field.replaceAll("\\s", ""));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void noInputPutsARawControlCharacterOnTheTerminal() {
    SplittableRandom r = new SplittableRandom(36);
    Map<String, Integer> echoes = new java.util.TreeMap<>();
    for (int round = 0; round < 3; round++) {
      for (Function<String, Case> input : inputs()) {
        Case c = input.apply(hostile(r, "x" + round));
        CliRun run = CliRun.of(c.args().toArray(String[]::new));
        String what = c.label() + " " + c.args();
        assertThat(run.code()).as(what + run.err()).isIn(0, 2, 3);
        noRawControls(what + ": stdout", run.out());
        noRawControls(what + ": stderr", run.err());
        boolean echoed = run.err().contains("\\u00") || run.err().contains("\\u20")
            || run.err().contains("\\udb40");
        echoes.merge(c.label(), echoed ? 1 : 0, Integer::sum);
      }
    }
    // Each input is quoted back, escaped, by at least one of its answers (a test that never saw
    // an echo would prove nothing about escaping).
    assertThat(echoes).allSatisfy((label, n) -> assertThat(n).as(label).isPositive());
  }

  @Test
  void aModelNameIsEscapedInTextAndJsonOutputAndInLaunchFileComments() throws IOException {
    ObjectMapper json = new ObjectMapper();
    String name = "llama\u001b]0;owned\u0007\u202e2\u009b31m";
    ObjectNode config = (ObjectNode) json.readTree(Path.of(
        "core/src/test/resources/hf/llama-2-7b-hf.json").toFile());
    config.put("_name_or_path", name);
    Path cfg = write("config.json", json.writeValueAsString(config));
    Path planFile = dir.resolve("plan.json");
    CliRun plan = CliRun.of("plan", "--model", cfg.toString(), "--layers", "2", "--cluster",
        "1x2:a100-80gb", "--global-batch", "4", "--json", "--quiet", "--out",
        planFile.toString());
    assertThat(plan.code()).as(plan.err()).isZero();
    noRawControls("plan --json", plan.out() + plan.err());
    // The escape inside a JSON string decodes back to the name: the JSON stays valid and true.
    assertThat(json.readTree(plan.out()).at("/model/name").asText()).isEqualTo(name);
    CliRun text = CliRun.of("plan", "--model", cfg.toString(), "--layers", "2", "--cluster",
        "1x2:a100-80gb", "--global-batch", "4", "--quiet");
    noRawControls("plan", text.out() + text.err());
    assertThat(text.out()).contains("\\u001b]0;owned\\u0007\\u202e2\\u009b31m");
    CliRun sim = CliRun.of("simulate", "--plan", planFile.toString());
    assertThat(sim.code()).as(sim.err()).isZero();
    noRawControls("simulate --plan", sim.out() + sim.err());
    // A launch file names the model in a comment: the comment holds the escapes, on one line.
    Path sh = dir.resolve("args.sh");
    CliRun exp = CliRun.of("export", "--to", "megatron", "--model", cfg.toString(), "--cluster",
        "1x8:h100-80gb", "--tp", "8", "--pp", "1", "--dp", "1", "--micro-batch", "1",
        "--global-batch", "8", "--out", sh.toString());
    assertThat(exp.code()).as(exp.err()).isZero();
    noRawControls("export", exp.out() + exp.err());
    String comment = Files.readString(sh).lines().filter(l -> l.startsWith("# model "))
        .findFirst().orElseThrow();
    assertThat(comment).contains("llama\\u001b]0;owned\\u0007\\u202e2\\u009b31m");
    noRawControls("launch file comment", comment);
  }
}
