package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every output option of every command, as a table: named by a symbolic link to a file (what
 * {@code --force} as root once replaced), through a link to a directory, as a dangling link, or
 * as a link to one of the command's inputs, it is refused in one line with exit 2 and nothing a
 * link names is written, with {@code --force} as without. {@code -} is standard output where the
 * command prints that output when the option is left out (export, deploy, bench), and is refused
 * in one line everywhere else; no file named {@code -} is ever made.
 */
class OutputLinksAndDashCliTest {
  private static final String OUT = "OUT";
  private static final String IN = "IN";

  /**
   * An output option on a command line that runs quickly.
   *
   * @param line the command line, {@code OUT} for the output and {@code IN} for an input
   * @param input the file {@code IN} stands for
   * @param directory whether the option names a directory
   * @param dashIsStdout whether {@code -} means standard output for it
   */
  private record Output(String line, String input, boolean directory, boolean dashIsStdout) {
    List<String> args(String out) {
      List<String> a = new ArrayList<>();
      for (String w : line.split(" ")) {
        a.add(w.equals(OUT) ? out : w.equals(IN) ? input : w);
      }
      return a;
    }
  }

  private static final String SIM = " --tp 1 --pp 1 --dp 8 --micro-batch 1 --global-batch 8";
  private static final String LOG = "examples/alpa_profile_communication_4x8_a100.txt";
  private static final String HLO = "examples/train_step.hlo";
  private static final String GRID = "examples/sweep.yaml";
  private static final String CONFIG = "core/src/test/resources/hf/llama-2-7b-hf.json";

  private static List<Output> outputs() {
    return List.of(
        new Output("plan --model IN --layers 2 --cluster 1x8:h100-80gb --global-batch 8"
            + " --out OUT", CONFIG, false, false),
        new Output("plan --model IN --layers 2 --cluster 1x8:h100-80gb --global-batch 8"
            + " --report OUT", CONFIG, false, false),
        new Output("simulate --model IN --layers 2 --cluster 1x8:h100-80gb" + SIM
            + " --report OUT", CONFIG, false, false),
        new Output("export --to megatron --model IN --layers 2 --cluster 1x8:h100-80gb" + SIM
            + " --out OUT", CONFIG, false, true),
        new Output("deploy --target slurm --cluster 2x8:h100-80gb --fabric IN --out OUT"
            + " -- train.py", "examples/doctor-ib.json", false, true),
        new Output("deploy --target runai --image nvcr.io/nvidia/pytorch:24.05-py3 --cluster"
            + " 2x8:h100-80gb --fabric IN --out OUT -- train.py", "examples/doctor-ib.json", true,
            true),
        new Output("calibrate IN --cluster 4x8:a100-80gb --out OUT", LOG, false, false),
        new Output("calibrate --train IN --config examples/calibrate/torchtitan_llama3_8b.toml"
            + " --cluster 1x8:h100-80gb --out OUT",
            "examples/calibrate/torchtitan_llama3_8b_h100.log", false, false),
        new Output("sweep --grid IN --csv OUT", GRID, false, false),
        new Output("sweep --grid IN --jsonl OUT", GRID, false, false),
        new Output("sweep --grid IN --out OUT", GRID, true, false),
        new Output("shard --hlo IN --mesh 2x2 --out OUT", HLO, false, false),
        new Output("shard --hlo IN --mesh 2x2 --dump-ilp OUT", HLO, false, false),
        new Output("bench --cluster IN --out OUT", "examples/cluster.yaml", true, true));
  }

  private static CliRun run(Output o, String out, boolean force) {
    List<String> a = o.args(out);
    if (force) {
      int dashes = a.indexOf("--");
      a.add(dashes < 0 ? a.size() : dashes, "--force");
    }
    return CliRun.of(a.toArray(String[]::new));
  }

  private static void refused(CliRun r, String what, String contains) {
    assertThat(r.code()).as(what + "\n" + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err().lines()).as(what + "\n" + r.err()).hasSize(1);
    assertThat(r.err()).as(what).startsWith("meshplan: error: ").contains(contains)
        .doesNotContain("\tat ");
  }

  @Test
  void noOutputIsEverWrittenThroughASymbolicLink(@TempDir Path dir) throws IOException {
    int cases = 0;
    for (Output o : outputs()) {
      for (boolean force : new boolean[] {false, true}) {
        Path work = Files.createDirectory(dir.resolve("case-" + cases++));
        Path victim = Files.writeString(work.resolve("victim"), "secret\n");
        Path realDir = Files.createDirectory(work.resolve("real"));
        // A link to a file (a directory for the directory outputs).
        Path link = Files.createSymbolicLink(work.resolve("link"), o.directory() ? realDir
            : victim);
        refused(run(o, link.toString(), force), o.line() + " link", "symbolic link");
        // A link in a directory above the output.
        Path dirLink = Files.createSymbolicLink(work.resolve("dirlink"), realDir);
        refused(run(o, dirLink.resolve("out").toString(), force), o.line() + " dir link",
            "passes through the symbolic link " + dirLink);
        // A dangling link: following it would create the file it names.
        Path dangling = Files.createSymbolicLink(work.resolve("dangling"),
            work.resolve("created"));
        refused(run(o, dangling.toString(), force), o.line() + " dangling", "symbolic link");
        assertThat(work.resolve("created")).doesNotExist();
        assertThat(Files.readString(victim)).isEqualTo("secret\n");
        try (var s = Files.list(realDir)) {
          assertThat(s).as(o.line()).isEmpty();
        }
        assertThat(Files.isSymbolicLink(link)).isTrue();
      }
    }
    // 14 outputs, with and without --force.
    assertThat(cases).isEqualTo(28);
  }

  @Test
  void aLinkToAnInputIsRefusedAndTheInputKeepsEveryByte(@TempDir Path dir) throws IOException {
    for (Output o : outputs()) {
      if (o.directory()) {
        continue;
      }
      Path in = Files.copy(Path.of(o.input()), dir.resolve("in-" + Path.of(o.input())
          .getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      byte[] before = Files.readAllBytes(in);
      Path link = dir.resolve("to-input");
      Files.deleteIfExists(link);
      Files.createSymbolicLink(link, in);
      List<String> a = new ArrayList<>();
      for (String w : o.line().split(" ")) {
        a.add(w.equals(OUT) ? link.toString() : w.equals(IN) ? in.toString() : w);
      }
      a.add(a.indexOf("--") < 0 ? a.size() : a.indexOf("--"), "--force");
      CliRun r = CliRun.of(a.toArray(String[]::new));
      assertThat(r.code()).as(a + r.err()).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(r.err().lines()).as(a + r.err()).hasSize(1);
      assertThat(Files.readAllBytes(in)).as(o.line()).isEqualTo(before);
      assertThat(Files.isSymbolicLink(link)).isTrue();
    }
  }

  /** deploy --out DIR writes runai's two scripts: a link in place of one of them is refused. */
  @Test
  void aLinkInsideAnOutputDirectoryIsRefused(@TempDir Path dir) throws IOException {
    Path victim = Files.writeString(dir.resolve("victim"), "secret\n");
    Path out = Files.createDirectory(dir.resolve("out"));
    Files.createSymbolicLink(out.resolve("meshplan-train-node.sh"), victim);
    CliRun r = CliRun.of("deploy", "--target", "runai", "--image",
        "nvcr.io/nvidia/pytorch:24.05-py3", "--cluster", "2x8:h100-80gb", "--out",
        out.toString(), "--force", "--", "train.py");
    refused(r, "runai", "meshplan-train-node.sh: is a symbolic link (to " + victim + ")");
    assertThat(Files.readString(victim)).isEqualTo("secret\n");
    try (var s = Files.list(out)) {
      assertThat(s).hasSize(1);
    }
  }

  @Test
  void dashIsStandardOutputOrRefusedAndNeverAFileNamedDash() {
    Path dash = Path.of("-");
    assertThat(Files.exists(dash, LinkOption.NOFOLLOW_LINKS)).isFalse();
    for (Output o : outputs()) {
      CliRun r = run(o, "-", false);
      if (o.dashIsStdout()) {
        // The same as leaving the option out.
        List<String> without = o.args("-");
        int at = without.indexOf("-");
        without.remove(at);
        without.remove(at - 1);
        CliRun plain = CliRun.of(without.toArray(String[]::new));
        assertThat(r.code()).as(o.line() + r.err()).isZero();
        assertThat(r.out()).as(o.line()).isNotEmpty().isEqualTo(plain.out());
      } else {
        refused(r, o.line(), " -: this output goes to a file only");
        assertThat(r.out()).isEmpty();
      }
      assertThat(Files.exists(dash, LinkOption.NOFOLLOW_LINKS)).as(o.line()).isFalse();
    }
  }

  /** Every command with an output option says in its help what '-' and a link do. */
  @Test
  void everyHelpStatesTheLinkAndDashRules() {
    for (String c : List.of("plan", "simulate", "export", "deploy", "calibrate", "sweep",
        "shard", "bench")) {
      String help = CliRun.of(c, "--help").out().replaceAll("\\s+", " ");
      assertThat(help).as(c).containsAnyOf("Never '-'", "'-' or none")
          .containsAnyOf("never writes through a link", "Never a symbolic link",
              "never a symbolic link");
    }
    for (String c : List.of("export", "deploy")) {
      assertThat(CliRun.of(c, "--help").out().replaceAll("\\s+", " "))
          .contains("'-' or none: standard output");
    }
  }
}
