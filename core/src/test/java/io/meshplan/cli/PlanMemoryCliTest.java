package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory per GPU a plan was searched within ({@code plan --memory}) travels with it, as
 * {@code memoryPerGpu} in bytes: simulate judges the fit by it, export prints it in the nearest
 * configuration's command line and judges that by it, and replan searches the cluster left
 * within it and carries it on. Before, each read the plan against the GPU's default (76 GiB of an
 * H100's 80), silently.
 */
class PlanMemoryCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** 12 GiB = 12 x 2^30 = 12,884,901,888 bytes. */
  private static final long TWELVE_GIB = 12L << 30;

  @TempDir Path dir;

  private Path plan(String name, String cluster, String... more) {
    Path out = dir.resolve(name);
    List<String> args = new java.util.ArrayList<>(List.of("plan", "--model", "llama3.1-8b",
        "--layers", "8", "--seq", "2048", "--cluster", cluster, "--global-batch", "32", "--out",
        out.toString()));
    args.addAll(List.of(more));
    CliRun p = CliRun.of(args.toArray(String[]::new));
    assertThat(p.code()).as(p.err()).isZero();
    return out;
  }

  private static String fitsLine(CliRun r) {
    assertThat(r.code()).as(r.err()).isZero();
    return r.out().lines().filter(l -> l.startsWith("fits: ")).findFirst().orElseThrow();
  }

  @Test
  void simulateJudgesAPlanByTheMemoryItWasSearchedWithin() throws Exception {
    Path plan = plan("plan.json", "1x8:h100", "--memory", "12GiB");
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.get("memoryPerGpu").asLong()).isEqualTo(TWELVE_GIB);
    assertThat(saved.get("peakMemoryBytesPerGpu").asDouble()).isLessThanOrEqualTo(TWELVE_GIB);
    assertThat(fitsLine(CliRun.of("simulate", "--plan", plan.toString())))
        .endsWith("and 12GiB is available");
    // --memory replaces the plan's.
    assertThat(fitsLine(CliRun.of("simulate", "--plan", plan.toString(), "--memory", "70GiB")))
        .endsWith("and 70GiB is available");
    // A plan made without --memory carries none, and the GPU's default applies: 95% of the
    // H100's 80 GiB is 76 GiB.
    Path open = plan("open.json", "1x8:h100");
    assertThat(JSON.readTree(Files.readString(open)).has("memoryPerGpu")).isFalse();
    assertThat(fitsLine(CliRun.of("simulate", "--plan", open.toString())))
        .endsWith("and 76GiB is available");
  }

  @Test
  void replanSearchesTheClusterLeftWithinThePlansMemory() throws Exception {
    Path plan = plan("plan.json", "2x8:h100", "--memory", "12GiB");
    Path out = dir.resolve("left.json");
    CliRun r = CliRun.of("replan", "--plan", plan.toString(), "--lost-nodes", "1", "--out",
        out.toString());
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode left = JSON.readTree(Files.readString(out));
    assertThat(left.get("memoryPerGpu").asLong()).isEqualTo(TWELVE_GIB);
    assertThat(left.get("peakMemoryBytesPerGpu").asDouble()).isLessThanOrEqualTo(TWELVE_GIB);
    // The same plan without its memory is replanned within 76 GiB, and the plan for one node
    // that is fastest there holds more than 12 GiB per GPU (27.2 GiB when this was written),
    // so the bound above is the plan's memory at work.
    ObjectNode open = (ObjectNode) JSON.readTree(Files.readString(plan));
    open.remove("memoryPerGpu");
    Path openPlan = Files.writeString(dir.resolve("open.json"), open.toString());
    Path openOut = dir.resolve("open-left.json");
    CliRun o = CliRun.of("replan", "--plan", openPlan.toString(), "--lost-nodes", "1", "--out",
        openOut.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(JSON.readTree(Files.readString(openOut)).get("peakMemoryBytesPerGpu").asDouble())
        .isGreaterThan(TWELVE_GIB);
  }

  @Test
  void exportsNearestConfigurationRunsAsPrintedWithThePlansMemory() throws Exception {
    // At 10 GiB a GPU the plan is none Megatron-LM runs as planned (at 12 GiB it is one), so the
    // export prints the command of the nearest configuration it can run.
    Path plan = plan("plan.json", "1x8:h100", "--memory", "10GiB");
    CliRun e = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    String line = e.out().lines().filter(l -> l.startsWith("  meshplan export ")).findFirst()
        .orElseThrow(() -> new AssertionError(e.out() + e.err()));
    assertThat(line).endsWith(" --memory 10GiB");
    assertThat(e.out()).doesNotContain("it does not fit");
    // Run as printed, it is judged by the same 10 GiB and written.
    List<String> words = PrintedCommandLinesCliTest.shellWords(line.strip());
    List<String> args = new java.util.ArrayList<>(words.subList(1, words.size()));
    Path script = dir.resolve("pretrain.sh");
    args.addAll(List.of("--out", script.toString()));
    CliRun again = CliRun.of(args.toArray(String[]::new));
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(script).isRegularFile();
  }

  @Test
  void aPlansMemoryThatIsNoCapacityIsRefusedInOneLine() throws Exception {
    Path plan = plan("plan.json", "2x8:h100", "--memory", "12GiB");
    ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
    for (String bad : List.of("-1", "0", "1.5", "\"12GiB\"", "1e30", "[1]", "true")) {
      root.set("memoryPerGpu", JSON.readTree(bad));
      Path f = Files.writeString(dir.resolve("bad.json"), root.toString());
      // Each command that reads the plan refuses it in one line, export before it prints or
      // writes anything, replan before it writes the plan it chose, and deploy, which prices
      // nothing with the field, before it writes a launch file.
      Path out = dir.resolve("out.json");
      for (List<String> cmd : List.of(List.of("simulate", "--plan", f.toString()),
          List.of("export", "--to", "megatron", "--plan", f.toString()),
          List.of("replan", "--plan", f.toString(), "--lost-nodes", "1", "--out",
              out.toString()),
          List.of("deploy", "--plan", f.toString(), "--target", "slurm", "--out",
              out.toString(), "--", "pretrain_gpt.py"))) {
        CliRun r = CliRun.of(cmd.toArray(String[]::new));
        assertThat(r.code()).as(bad + " " + cmd.get(0)).isEqualTo(2);
        assertThat(r.out()).as(bad + " " + cmd.get(0)).isEmpty();
        assertThat(r.err().strip()).as(bad + " " + cmd.get(0)).doesNotContain("\n")
            .contains("field 'memoryPerGpu' must be");
        assertThat(out).doesNotExist();
      }
    }
    // More than an H100's 80 GiB: 200 GiB = 214,748,364,800 bytes.
    root.put("memoryPerGpu", 200L << 30);
    Path f = Files.writeString(dir.resolve("big.json"), root.toString());
    CliRun r = CliRun.of("simulate", "--plan", f.toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().strip()).doesNotContain("\n")
        .contains("searched within 200GiB per GPU").endsWith("give --memory");
    // --memory replaces the field, which is then not read.
    assertThat(CliRun.of("simulate", "--plan", f.toString(), "--memory", "70GiB").code())
        .isZero();
    // deploy has no --memory to give: it says what is wrong and no more.
    CliRun d = CliRun.of("deploy", "--plan", f.toString(), "--target", "slurm", "--",
        "pretrain_gpt.py");
    assertThat(d.code()).isEqualTo(2);
    assertThat(d.err().strip()).doesNotContain("\n")
        .endsWith("of physical memory of one h100-80gb");
  }

  @Test
  void deployRefusesABrokenProfileThePlanCarries() throws Exception {
    // deploy prices nothing with the plan's profile, but a plan whose profile is not one is
    // refused by every command that reads it, before a launch file is written.
    Path plan = plan("plan.json", "2x8:h100");
    Path f = withBrokenProfile(plan);
    Path out = dir.resolve("job.sbatch");
    CliRun r = CliRun.of("deploy", "--plan", f.toString(), "--target", "slurm", "--out",
        out.toString(), "--", "pretrain_gpt.py");
    r.refusedInOneLine(2, "profile p.yaml: not a valid profile");
    assertThat(out).doesNotExist();
    assertThat(CliRun.of("deploy", "--plan", plan.toString(), "--target", "slurm", "--",
        "pretrain_gpt.py").code()).isZero();
  }

  @Test
  void replanRefusesABrokenProfileItWouldCarry() throws Exception {
    // A stored fallback is written as it is, with the main plan's profile: a profile that is not
    // one is refused before anything is written, as simulate refuses it.
    Path plan = plan("plan.json", "2x8:h100", "--fallbacks", "1");
    Path f = withBrokenProfile(plan);
    Path out = dir.resolve("left.json");
    CliRun r = CliRun.of("replan", "--plan", f.toString(), "--lost-nodes", "1", "--out",
        out.toString());
    r.refusedInOneLine(2, "profile p.yaml: not a valid profile");
    assertThat(out).doesNotExist();
  }

  /** The plan with a profile that is not one beside it, as broken.json. */
  private Path withBrokenProfile(Path plan) throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
    ObjectNode profile = root.putObject("profile");
    profile.put("file", "p.yaml");
    profile.put("text", "version: [[[");
    return Files.writeString(dir.resolve("broken.json"), root.toString());
  }

  @Test
  void memoryWordsReadBackExactly() {
    assertThat(ExportCommand.memoryWord(TWELVE_GIB)).isEqualTo("12GiB");
    // 40 GB is no whole number of GiB: written in bytes with its unit, since --memory refuses a
    // bare number (PlanMemoryCliTest#bareNumberIsRefused).
    assertThat(ExportCommand.memoryWord(40e9)).isEqualTo("40000000000B");
    assertThat(CliValues.bytes("--memory", ExportCommand.memoryWord(40e9))).isEqualTo(40e9);
    assertThat(CliValues.bytes("--memory", ExportCommand.memoryWord(TWELVE_GIB)))
        .isEqualTo((double) TWELVE_GIB);
  }

  @Test
  void bareNumberIsRefused() {
    // "--memory 80" meant 80 GB to whoever typed it; read as bytes it was a capacity no GPU has,
    // and plan said no configuration fits in "80B". Each is refused in one line, exit 2, naming
    // the units to write instead; the same number with a unit (B included) still reads.
    for (String bare : List.of("80", "0.5", "76000000000", " 12 ")) {
      CliRun r = CliRun.of("plan", "--model", "llama3.1-8b", "--layers", "8", "--cluster",
          "1x8:h100", "--memory", bare);
      assertThat(r.code()).as(bare).isEqualTo(2);
      assertThat(r.err()).as(bare).contains("has no unit; write one, such as")
          .contains("GiB (2^30 bytes)").hasLineCount(1);
    }
    assertThat(CliValues.bytes("--memory", "80B")).isEqualTo(80.0);
    assertThat(CliValues.bytes("--memory", "80GB")).isEqualTo(80e9);
  }
}
