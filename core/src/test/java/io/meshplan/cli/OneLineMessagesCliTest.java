package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A message that quotes a value holding a line break, or any other control or format character,
 * is still one line on standard error and still says everything after the value: the characters
 * are written as escapes instead of the message being cut at the first line break (which once
 * printed {@code image 'i ...} and lost why the image was refused).
 */
class OneLineMessagesCliTest {
  @TempDir Path dir;

  /** One character of each class a terminal acts on or breaks a line at. */
  private static final List<String> CLASSES = List.of("\n", "\r", "\r\n", "\t", "\u0000",
      "\u0007", "\u001b[31m", "\u007f", "\u0085", "\u009b", "\u2028", "\u2029", "\u202e",
      "\u2066", "\u200f", "\ufeff", "\u000b", "\u000c");

  /**
   * The escaped form, written here apart from the code under test: the three short escapes,
   * else a backslash, u and four lower-case hex digits for C0, DEL, C1, format characters and
   * the two separators.
   */
  private static String escaped(String value) {
    StringBuilder sb = new StringBuilder();
    for (char c : value.toCharArray()) {
      int type = Character.getType(c);
      if (c == '\n' || c == '\r' || c == '\t') {
        sb.append(c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t");
      } else if (c < 0x20 || c >= 0x7f && c <= 0x9f || type == Character.FORMAT
          || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /**
   * Values for case {@code i}: a word with the class {@code i} cycles to and one more drawn
   * class inside it, so every class is met in 2 x 18 = 36 cases.
   */
  private static List<String> hostileValues(String word, boolean pathSafe) {
    SplittableRandom r = new SplittableRandom(39);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < 2 * CLASSES.size(); i++) {
      StringBuilder sb = new StringBuilder(word);
      for (String piece : List.of(CLASSES.get(i % CLASSES.size()),
          CLASSES.get(r.nextInt(CLASSES.size())))) {
        // Never first or last: a value is not stripped of what it starts or ends with here.
        sb.insert(1 + r.nextInt(sb.length() - 1), piece);
      }
      // A path cannot hold NUL; its place takes SOH.
      out.add(pathSafe ? sb.toString().replace('\u0000', '\u0001') : sb.toString());
    }
    return out;
  }

  /** Exactly one line, ended by one newline, with no raw control or format character. */
  private static void oneLine(CliRun r, int code, String value, String... after) {
    String what = escaped(value) + " -> " + escaped(r.err());
    assertThat(r.code()).as(what).isEqualTo(code);
    assertThat(r.err()).as(what).endsWith("\n");
    String line = r.err().substring(0, r.err().length() - 1);
    assertThat(escaped(line)).as(what).isEqualTo(line);
    assertThat(line).as(what).contains(escaped(value));
    int at = line.indexOf(escaped(value)) + escaped(value).length();
    for (String a : after) {
      assertThat(line.substring(at)).as(what).contains(a);
    }
  }

  @Test
  void deployImageKeepsItsReason() {
    for (String v : hostileValues("image", false)) {
      oneLine(CliRun.of("deploy", "--target", "pytorchjob", "--cluster", "2x8:h100-80gb",
          "--image", v, "--", "train.py"), 2, v, "is not an OCI image reference",
          "reference grammar");
    }
    // The grammar takes any digits for a registry's port; no registry listens past 65535.
    oneLine(CliRun.of("deploy", "--target", "pytorchjob", "--cluster", "2x8:h100-80gb",
        "--image", "nvcr.io:99999999/x", "--", "train.py"), 2, "nvcr.io:99999999/x",
        "is not an OCI image reference", "the registry's port 99999999 is not 1 to 65535");
  }

  @Test
  void anUnknownModelNameKeepsTheValidOnes() {
    for (String v : hostileValues("weird", false)) {
      oneLine(CliRun.of("plan", "--model", v, "--cluster", "1x8:h100-80gb"), 2, v,
          "valid presets: llama2-7b", "deepseek_v3");
    }
  }

  @Test
  void aPathWithALineBreakKeepsWhatIsWrongWithIt() throws Exception {
    for (String v : hostileValues("dir", true)) {
      String path = dir.resolve(v).resolve("config.json").toString();
      oneLine(CliRun.of("plan", "--model", path, "--cluster", "1x8:h100-80gb"), 2, path,
          "no such file (a Hugging Face config.json expected)");
    }
  }

  @Test
  void aWarningQuotingAPathWithALineBreakIsOneLine() throws Exception {
    // calibrate warns of a log named twice; the warning names the file, whatever it holds.
    byte[] log = Files.readAllBytes(Path.of("core/src/test/resources/calibrate/"
        + "all_reduce_perf_8gpu_a100.log"));
    for (String v : hostileValues("log", true).subList(0, CLASSES.size())) {
      Path f = Files.createDirectories(dir.resolve("w" + Integer.toHexString(v.hashCode())))
          .resolve(v + ".log");
      Files.write(f, log);
      Path out = f.resolveSibling("p.yaml");
      CliRun r = CliRun.of("calibrate", f.toString(), f.toString(), "--cluster", "1x8:a100-80gb",
          "--out", out.toString());
      String what = escaped(v) + " -> " + escaped(r.err());
      assertThat(r.code()).as(what).isZero();
      List<String> warnings = r.err().lines().filter(l -> l.contains("given more than once"))
          .toList();
      assertThat(warnings).as(what).hasSize(1);
      assertThat(r.err().lines()).as(what).allMatch(l -> l.startsWith("meshplan: "));
      assertThat(escaped(warnings.get(0))).as(what).isEqualTo(warnings.get(0));
      assertThat(warnings.get(0)).as(what).contains(escaped(v));
    }
  }

  @Test
  void picocliEchoingAnOptionKeepsTheUsageHint() {
    for (String v : hostileValues("--flag", false)) {
      oneLine(CliRun.of("plan", "--model", "llama3-8b", v), 2, v,
          "Try 'meshplan plan --help' for usage.");
    }
  }

  /** A JSON key with a line break given twice: Jackson's message echoes the key. */
  @Test
  void aJsonParseErrorEchoingFileContentKeepsItsReason() throws Exception {
    Path config = dir.resolve("config.json");
    Files.writeString(config, "{\"a\\nb\\u2028c\": 1, \"a\\nb\\u2028c\": 2}");
    oneLine(CliRun.of("plan", "--model", config.toString(), "--cluster", "1x8:h100-80gb"), 2,
        "a\nb\u2028c", "is given twice in one mapping; give each key once");
  }

  /**
   * SnakeYAML words a syntax error on several lines (what it was reading, the quoted line and a
   * caret, then the problem): the one line keeps both sentences.
   */
  @Test
  void aYamlSyntaxErrorKeepsItsProblemNotOnlyItsContext() throws Exception {
    Path cluster = dir.resolve("c.yaml");
    Files.writeString(cluster, "nodes: 2\ngpus: [a\nfoo: b: c\n");
    CliRun r = CliRun.of("plan", "--model", "llama3-8b", "--cluster", cluster.toString());
    r.refusedInOneLine(2, "line 3, column 4: while parsing a flow sequence: expected ',' or "
        + "']', but got :");
  }

  /** Each exception kind the mapper meets, with a line break and a bidi override inside. */
  @Test
  void everyExceptionKindIsOneLineWithItsWholeReason() {
    String m = "value 'a\nb\u202ec' is wrong\nbecause of this";
    String shown = "value 'a\\nb\\u202ec' is wrong\\nbecause of this";
    Object[][] cases = {
        {new InputException(m), 2, "meshplan: error: " + shown},
        {new InfeasibleException(m), 3, "meshplan: infeasible: " + shown},
        {new java.io.UncheckedIOException(new java.io.IOException(m)), 1,
            "UncheckedIOException: java.io.IOException: " + shown},
        {new IllegalStateException(m), 1, "IllegalStateException: " + shown}};
    for (Object[] c : cases) {
      StringWriter err = new StringWriter();
      int code = new ExceptionMapper(false).handle((Throwable) c[0], new PrintWriter(err));
      assertThat(code).isEqualTo(c[1]);
      assertThat(err.toString().lines()).hasSize(1);
      assertThat(err.toString().strip()).endsWith((String) c[2]);
    }
  }

  /**
   * A message over 1,000 characters keeps its first 600 and its last 400, where the reason after
   * a long value stands: 5,000 x's and the 14 characters of " is the reason" are 5,014, of
   * which 5,014 - 1,000 = 4,014 are left out, and the 32 characters of the marker say so.
   */
  @Test
  void anOverLongLineKeepsItsStartAndItsReason() {
    String line = ExceptionMapper.oneLine("x".repeat(5000) + " is the reason");
    assertThat(line).startsWith("x".repeat(600) + " ... (4014 more characters) ... ")
        .endsWith("x".repeat(386) + " is the reason").hasSize(1000 + 32);
  }
}
