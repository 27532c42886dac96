package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.TensorShape;
import io.meshplan.sharding.ShardingSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input, one test per class of failure of issue 9: data loss through outputs, silent
 * arithmetic overflow, stack traces and raw errors, hangs, and misleading messages. Each class is
 * probed with several inputs, since the fix is at the class's root, not at one example.
 */
class HardeningTest {
  @TempDir Path dir;

  private Path corpus(String name) throws IOException {
    Path p = dir.resolve(name);
    try (var in = getClass().getResourceAsStream("/hlo/" + name)) {
      Files.write(p, in.readAllBytes());
    }
    return p;
  }

  private Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  private Path fifo(String name) throws Exception {
    Path p = dir.resolve(name);
    Process mk = new ProcessBuilder("mkfifo", p.toString()).start();
    assertThat(mk.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(mk.exitValue()).isZero();
    return p;
  }

  /** Bad input: exit 2 and exactly one line on stderr, with no Java class names. */
  private static void oneLineError(CliRun r, String... contains) {
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
    assertThat(r.err()).doesNotContain("Exception").doesNotContain("\tat ")
        .doesNotContain("java.");
    for (String c : contains) {
      assertThat(r.err()).contains(c);
    }
  }

  // Class 1: data loss through the writer.

  @Test
  @Timeout(120)
  void outputsNeverReplaceWhatIsNotARegularFileNorEachOtherNorAnInput() throws Exception {
    Path hlo = corpus("mlp_train_step.hlo");
    // A FIFO, a directory and a device as the target: refused, and still what they were.
    Path pipe = fifo("pipe");
    oneLineError(CliRun.of("shard", "--hlo", hlo.toString(), "--mesh", "2x2", "--out",
        pipe.toString()), "--out", "not a regular file");
    assertThat(Files.isRegularFile(pipe)).isFalse();
    assertThat(Files.exists(pipe)).isTrue();
    Path sub = Files.createDirectory(dir.resolve("sub"));
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--dump-ilp",
        sub.toString()), "--dump-ilp", "is a directory");
    assertThat(Files.isDirectory(sub)).isTrue();
    if (Files.exists(Path.of("/dev/null"))) {
      oneLineError(CliRun.of("calibrate", calibrateLog("all_reduce_perf_8gpu_a100.log"),
          "--cluster", "1x8:a100-80gb", "--out", "/dev/null"), "--out /dev/null");
      assertThat(Files.isRegularFile(Path.of("/dev/null"))).isFalse();
    }
    // Two outputs naming one file through '..'.
    Path out = dir.resolve("x.hlo");
    oneLineError(CliRun.of("shard", "--hlo", hlo.toString(), "--mesh", "2x2", "--out",
        out.toString(), "--dump-ilp", sub.resolve("../x.hlo").toString()), "name the same file");
    // Through a link the second output is refused as a link, before it is compared.
    Path link = Files.createSymbolicLink(dir.resolve("link.json"), out);
    oneLineError(CliRun.of("shard", "--hlo", hlo.toString(), "--mesh", "2x2", "--out",
        out.toString(), "--dump-ilp", link.toString()), "is a symbolic link");
    assertThat(Files.exists(out)).isFalse();
    // An output that is an input (here through a link to the log) is refused.
    Path log = Path.of(calibrateLog("all_reduce_perf_8gpu_a100.log"));
    Path logLink = Files.createSymbolicLink(dir.resolve("log-link.yaml"), log.toAbsolutePath());
    oneLineError(CliRun.of("calibrate", log.toString(), "--cluster", "1x8:a100-80gb", "--out",
        logLink.toString()), "never overwrites its inputs");
    // bench: a FIFO in place of commands.txt is refused before anything is written.
    Path benchDir = Files.createDirectory(dir.resolve("bench"));
    fifo("bench/commands.txt");
    oneLineError(CliRun.of("bench", "--cluster", "2x8:h100-80gb", "--out", benchDir.toString()),
        "commands.txt");
    assertThat(Files.exists(benchDir.resolve("run_benchmarks.sh"))).isFalse();
    // Even with --force, a symbolic link to a regular file is refused: no write goes through a
    // link, and the file it names keeps its bytes.
    Path real = write("real.hlo", "old");
    Path toReal = Files.createSymbolicLink(dir.resolve("to-real.hlo"), real);
    oneLineError(CliRun.of("shard", "--hlo", hlo.toString(), "--mesh", "2x2", "--out",
        toReal.toString(), "--force"), "never writes through a symbolic link");
    assertThat(Files.isSymbolicLink(toReal)).isTrue();
    assertThat(Files.readString(real)).isEqualTo("old");
  }

  private static String calibrateLog(String name) {
    return "core/src/test/resources/calibrate/" + name;
  }

  // Class 2: arithmetic overflow.

  @Test
  void sizesThatOverflowAreRefusedNamingTheValue() {
    // 2147483647 * 2 = 4294967294 devices: more than an int, and more than any cluster.
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2147483647x2"),
        "4294967294");
    // 65536 * 65536 = 2^32 = 4294967296 wraps to 0 in an int (the old division by zero).
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "65536x65536"),
        "4294967296");
    // A hidden size of 2^31 - 1 (whose f32 weight would be (2^31 - 1)^2 * 4 > 2^63 bytes) is
    // past ModelSpec.MAX_HIDDEN = 2^20 and refused by its flag before any tensor is sized.
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--hidden",
        "2147483647"), "--hidden must be at most 1048576, got 2147483647");
    // 2147483647 nodes * 8 GPUs = 17179869176 processes (the old 'mpirun -np -8').
    oneLineError(CliRun.of("bench", "--cluster", "2147483647x8:h100-80gb"), "17179869176");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "4x4",
        "--cluster", "65536x65536:a100-80gb"), "4294967296");
  }

  /**
   * Strategies grow as (rank + 1)^axes per matrix: 4 axes (81 layouts, solved exactly in well
   * under a second on small graphs) are the most a mesh may have; 5 axes (243 layouts, where the
   * exact solver gives way to a minute of CP-SAT) are refused before any work.
   */
  @Test
  void meshesOfMoreThanFourAxesAreRefusedBeforeAnyWork() {
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2x2x2x2"),
        "has 5 axes, more than the limit of 4");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "1x1x1x1x1x1x1"),
        "has 7 axes, more than the limit of 4");
    CliRun four = CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2x2x2");
    assertThat(four.code()).as(four.err()).isZero();
    assertThat(four.out()).contains("OPTIMAL");
  }

  @Test
  void paddedLocalBytesDoNotWrap() {
    // f32[2147483647] split 2 ways: ceil((2^31 - 1) / 2) = 2^30 elements of 4 bytes = 2^32.
    TensorShape s = TensorShape.of(DType.F32, Integer.MAX_VALUE);
    assertThat(ShardingSpec.split(1, 0, 0).localBytes(s, LogicalMesh.of(2)))
        .isEqualTo(4.0 * (1L << 30));
  }

  /**
   * A solver time limit so large that its deadline in nanoseconds overflows (1e400 reads as
   * Infinity; 1e6 s is past a week) is refused, not run with a deadline in the past.
   */
  @Test
  void solverTimeLimitsThatOverflowADeadlineAreRefused() {
    for (String limit : new String[] {"1e400", "1000000", "0", "-1", "NaN"}) {
      oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--time-limit",
          limit), "--time-limit must be more than 0 and at most 604800 seconds");
    }
    assertThat(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--time-limit",
        "604800").code()).isZero();
  }

  // Class 3: stack traces and raw errors.

  @Test
  void strangeInputsEndInOneLine() throws Exception {
    // A dot contracting a dimension its operand does not have (was: index out of bounds).
    Path dot = write("dot.hlo", """
        HloModule m

        ENTRY %main (a: f32[4,8], b: f32[8,16]) -> f32[4,16] {
          %a = f32[4,8]{1,0} parameter(0)
          %b = f32[8,16]{1,0} parameter(1)
          ROOT %d = f32[4,16]{1,0} dot(%a, %b), lhs_contracting_dims={7}, rhs_contracting_dims={0}
        }
        """);
    oneLineError(CliRun.of("shard", "--hlo", dot.toString(), "--mesh", "2x2"),
        "dot.hlo:6:", "lhs_contracting_dims={7}");
    // Contracting sizes that differ, and a transpose that is no permutation.
    oneLineError(CliRun.of("shard", "--hlo", write("dot2.hlo", """
        HloModule m

        ENTRY %main (a: f32[4,8], b: f32[9,16]) -> f32[4,16] {
          %a = f32[4,8]{1,0} parameter(0)
          %b = f32[9,16]{1,0} parameter(1)
          ROOT %d = f32[4,16]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
        }
        """).toString(), "--mesh", "2x2"), "different sizes");
    oneLineError(CliRun.of("shard", "--hlo", write("tr.hlo", """
        HloModule m

        ENTRY %main (a: f32[4,8]) -> f32[8,4] {
          %a = f32[4,8]{1,0} parameter(0)
          ROOT %t = f32[8,4]{1,0} transpose(%a), dimensions={1,5}
        }
        """).toString(), "--mesh", "2x2"), "transpose");
    // Dimensions of 2e9: a 16e18-byte tensor is refused at its position in the file.
    oneLineError(CliRun.of("shard", "--hlo", write("huge.hlo", """
        HloModule m

        ENTRY %main (a: f32[2000000000,2000000000]) -> f32[2000000000,2000000000] {
          ROOT %a = f32[2000000000,2000000000]{1,0} parameter(0)
        }
        """).toString(), "--mesh", "2x2"), "huge.hlo:3:", "16000000000000000000 bytes");
    // A device instead of a module (was: out of memory reading /dev/zero).
    if (Files.exists(Path.of("/dev/zero"))) {
      oneLineError(CliRun.of("shard", "--hlo", "/dev/zero", "--mesh", "2x2"), "/dev/zero");
    }
    // A huge file: more than the cap of its format, refused before it is read whole.
    Path big = dir.resolve("big.log");
    try (var ch = java.nio.channels.FileChannel.open(big,
        java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {'x'}), (64L << 20) + 10);
    }
    oneLineError(CliRun.of("calibrate", big.toString(), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("p.yaml").toString()), "larger than 64MiB");
    // 100,000 layers: about 6.1 million instructions, refused before the graph is built.
    oneLineError(CliRun.of("shard", "--model", "llama2-7b", "--layers", "100000", "--mesh",
        "2x2"), "--layers 100000", "per layer");
    // A measurement of 1e300 s: skipped with a warning instead of a NaN fit.
    Path log = write("all_reduce_perf.log", Files.readString(Path.of(calibrateLog(
        "all_reduce_perf_8gpu_a100.log"))).replaceFirst("(?m)^(\\s+8\\s+2\\s+float\\s+sum\\s+-1\\s+)"
        + "\\S+", "$11e300"));
    CliRun cal = CliRun.of("calibrate", log.toString(), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("q.yaml").toString());
    assertThat(cal.code()).as(cal.err()).isZero();
    assertThat(cal.out()).doesNotContain("NaN");
  }

  @Test
  void internalErrorsAreOneLineUnlessDebug() {
    StringWriter err = new StringWriter();
    PrintWriter pw = new PrintWriter(err);
    int code = new ExceptionMapper(false).handle(new IllegalStateException("broken\nmore"), pw);
    pw.flush();
    assertThat(code).isEqualTo(ExitCodes.INTERNAL);
    assertThat(err.toString().strip().lines().count()).isEqualTo(1);
    assertThat(err.toString()).contains("--debug").contains("broken");
    StringWriter err2 = new StringWriter();
    PrintWriter pw2 = new PrintWriter(err2);
    new ExceptionMapper(true).handle(new IllegalStateException("broken"), pw2);
    pw2.flush();
    assertThat(err2.toString()).contains("\tat ");
    StringWriter err3 = new StringWriter();
    PrintWriter pw3 = new PrintWriter(err3);
    assertThat(new ExceptionMapper(false).handle(new OutOfMemoryError("Java heap space"), pw3))
        .isEqualTo(ExitCodes.INTERNAL);
    pw3.flush();
    assertThat(err3.toString().strip().lines().count()).isEqualTo(1);
    // --debug is accepted anywhere on the command line.
    CliRun r = CliRun.of("shard", "--debug", "--model", "alpa-mlp", "--mesh", "0x2");
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).contains("\tat ");
  }

  // Class 4: hangs.

  @Test
  @Timeout(120)
  void nonRegularFilesAndHugeRanksDoNotHang() throws Exception {
    // A FIFO nobody writes to, where a module, a log, a profile or a cluster file is expected.
    Path pipe = fifo("pipe");
    oneLineError(CliRun.of("shard", "--hlo", pipe.toString(), "--mesh", "2x2"), "regular file");
    oneLineError(CliRun.of("calibrate", pipe.toString(), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("p.yaml").toString()), "regular file");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
        pipe.toString()), "regular file");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
        "1x4:a100-80gb", "--profile", pipe.toString()), "regular file");
    // A FIFO in place of a sysfs attribute: reported, not read.
    Path root = dir.resolve("sys");
    copyTree(Path.of("core/src/test/resources/sysfs/roce-bond"), root);
    Path state = root.resolve("class/infiniband/mlx5_bond_0/ports/1/state");
    Files.delete(state);
    fifo("sys/class/infiniband/mlx5_bond_0/ports/1/state");
    CliRun doc = CliRun.of("doctor", "--sysfs-root", root.toString());
    assertThat(doc.code()).as(doc.err()).isZero();
    assertThat(doc.out()).contains("not a regular file");
    // A shape of rank 10^6: refused at the 65th dimension.
    String dims = "1,".repeat(1_000_000) + "1";
    Path rank = write("rank.hlo", "HloModule m\n\nENTRY %main (a: f32[" + dims + "]) -> f32[] {\n"
        + "  ROOT %a = f32[" + dims + "] parameter(0)\n}\n");
    oneLineError(CliRun.of("shard", "--hlo", rank.toString(), "--mesh", "2x2"),
        "at most 64 dimensions");
    // Rank 40 on a 4-axis mesh: 41^4 layouts, refused before enumerating.
    String d40 = "2,".repeat(39) + "2";
    Path r40 = write("r40.hlo", "HloModule m\n\nENTRY %main (a: f32[" + d40 + "]) -> f32[" + d40
        + "] {\n  ROOT %a = f32[" + d40 + "] parameter(0)\n}\n");
    oneLineError(CliRun.of("shard", "--hlo", r40.toString(), "--mesh", "2x2x2x2"),
        "more than 2048 layouts");
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (var s = Files.walk(from)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Path t = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(t);
        } else {
          Files.copy(p, t);
        }
      }
    }
  }

  // Class 5: misleading or unhelpful messages.

  @Test
  void messagesSayWhatIsWrong() throws Exception {
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--beta",
        "1e308,1e308"), "--beta", "too large");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
        "/no/such.yaml"), "no such file");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
        "1x4:a100-80gb", "--profile", dir.resolve("missing.yaml").toString()),
        "no such file");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
        write("bad.yaml", "nodes: [1,\n").toString()), "bad.yaml", "line");
    Path binary = dir.resolve("binary.json");
    Files.write(binary, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 0, (byte) 0xc3, 0x28});
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--cluster",
        "1x4:a100-80gb", "--profile", binary.toString()), "binary.json");
    // A sysfs root that is empty, or has a file where class/infiniband should be a directory.
    Path empty = Files.createDirectory(dir.resolve("empty"));
    oneLineError(CliRun.of("doctor", "--sysfs-root", empty.toString()), "--sysfs-root");
    Path odd = dir.resolve("odd");
    Files.createDirectories(odd.resolve("class/net"));
    Files.writeString(odd.resolve("class/infiniband"), "x");
    oneLineError(CliRun.of("doctor", "--sysfs-root", odd.toString()), "class/infiniband");
    // Flags that would be ignored, and element types that are not supported.
    Path hlo = corpus("mlp_train_step.hlo");
    oneLineError(CliRun.of("shard", "--hlo", hlo.toString(), "--mesh", "2x2", "--layers", "4"),
        "--layers");
    // shard plans one element type: not the FP8 training recipe.
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--dtype", "s32"),
        "use f32, bf16 or f16");
    oneLineError(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x2", "--dtype", "fp8"),
        "shard plans a forward graph in one element type: use --dtype bf16");
    oneLineError(CliRun.of("shard", "--mesh", "2x2"), "--model", "--hlo");
    // A tuple sharding of {replicated} elements is no reason for a warning.
    CliRun kept = CliRun.of("shard", "--hlo", hlo.toString(), "--mesh", "2x2",
        "--keep-shardings");
    assertThat(kept.code()).as(kept.err()).isZero();
    assertThat(kept.err()).doesNotContain("tuple.64");
    // A 16-GPU inter-node log with a one-node cluster, and a file given twice: warnings, and
    // the rows the cluster could not have measured are left out of the fit (#36).
    String log16 = calibrateLog("all_reduce_perf_16gpu_2node_tagged.log");
    CliRun cal = CliRun.of("calibrate", log16, log16, calibrateLog(
        "all_reduce_perf_8gpu_a100.log"), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("p.yaml").toString());
    assertThat(cal.code()).as(cal.err()).isZero();
    assertThat(cal.err()).contains("more than once").contains("another cluster")
        .contains("skipped");
    assertThat(cal.out()).contains("1 entry").doesNotContain("inter-node");
    // A profile measured on another cluster.
    Path profile = dir.resolve("a100.yaml");
    assertThat(CliRun.of("calibrate", "examples/alpa_profile_communication_4x8_a100.txt",
        "--cluster", "4x8:a100-80gb", "--out", profile.toString()).code()).isZero();
    CliRun prof = CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x8", "--cluster",
        "2x8:h100-80gb", "--profile", profile.toString());
    assertThat(prof.code()).as(prof.err()).isZero();
    assertThat(prof.err()).contains("measured on 4x8:a100-80gb");
  }

  @Test
  void helpAndUsageAreConsistent() {
    CliRun help = CliRun.of("help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).contains("shard").contains("--debug");
    CliRun bare = CliRun.of();
    assertThat(bare.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(bare.err()).contains("Usage: meshplan");
    CliRun unknown = CliRun.of("frobnicate");
    assertThat(unknown.err()).contains("Try 'meshplan --help'");
    CliRun shardHelp = CliRun.of("shard", "--help");
    assertThat(shardHelp.out()).contains("One of --model").contains("(default: reducing)")
        .doesNotContain("IlpProblemJson");
    assertThat(CliRun.of("bench", "--help").out()).contains("$NCCL_TESTS/build")
        .doesNotContain("NCCL_TESTS_HOME");
  }

  /**
   * Every command's help renders cleanly: picocli reports a bad format string in a description
   * (an unescaped percent sign, say) on the process's standard error rather than failing.
   */
  @Test
  void everyCommandsHelpRendersWithoutPicocliWarnings() {
    java.io.PrintStream saved = System.err;
    java.io.ByteArrayOutputStream raw = new java.io.ByteArrayOutputStream();
    java.util.List<String> commands = new java.util.ArrayList<>();
    try {
      System.setErr(new java.io.PrintStream(raw, true, java.nio.charset.StandardCharsets.UTF_8));
      for (String name : new picocli.CommandLine(new MeshplanCommand()).getSubcommands()
          .keySet()) {
        commands.add(name);
        CliRun r = CliRun.of(name, "--help");
        assertThat(r.code()).as(name).isZero();
        assertThat(r.out()).as(name).contains("Usage: meshplan " + name);
      }
    } finally {
      System.setErr(saved);
    }
    assertThat(commands).contains("plan", "simulate", "shard");
    assertThat(raw.toString(java.nio.charset.StandardCharsets.UTF_8)).isEmpty();
  }

  @Test
  void warningsGoToStderr() throws Exception {
    CliRun r = CliRun.of("shard", "--hlo", corpus("custom_calls.hlo").toString(), "--mesh", "2x2");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.err()).contains("meshplan: warning:");
    assertThat(r.out()).doesNotContain("warning");
  }
}
