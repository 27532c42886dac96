package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Values no cluster or model can have (#36, section 4): bus bandwidths above a fabric's links in a
 * log or a profile, profile times of zero, 1e308, below zero or not a number, Alpa groups larger
 * than the cluster, compute scales outside what calibrate can fit, a plan file's sequence of 2^30,
 * and a hidden size of two billion. Each is refused in one line with exit 2 (or, for a log row,
 * left out with a warning at its line), never an internal error.
 */
class ImpossibleValuesCliTest {
  @TempDir Path dir;

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final String A100_LOG = "core/src/test/resources/calibrate/"
      + "all_reduce_perf_8gpu_a100.log";
  private Path profile;

  /** A real profile: the 8-GPU A100 all-reduce log fitted for 1x8:a100-80gb. */
  @BeforeEach
  void fit() {
    profile = dir.resolve("a100.yaml");
    CliRun r = CliRun.of("calibrate", A100_LOG, "--cluster", "1x8:a100-80gb", "--out",
        profile.toString());
    assertThat(r.code()).as(r.err()).isZero();
  }

  private static void refused(CliRun r, String... contains) {
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).hasLineCount(1).startsWith("meshplan: error: ").doesNotContain("\tat ");
    for (String c : contains) {
      assertThat(r.err()).contains(c);
    }
  }

  /** The profile with one edit, read by shard (the quickest command that prices with it). */
  private CliRun withProfile(String name, Consumer<ObjectNode> edit) throws IOException {
    ObjectNode root = (ObjectNode) YAML.readTree(profile.toFile());
    edit.accept(root);
    Path p = dir.resolve(name);
    YAML.writeValue(p.toFile(), root);
    return CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x4", "--cluster",
        "1x8:a100-80gb", "--profile", p.toString());
  }

  private static ObjectNode entry(ObjectNode root) {
    return (ObjectNode) root.get("entries").get(0);
  }

  private static void setTimes(ObjectNode root, double seconds) {
    for (var point : (ArrayNode) entry(root).get("curve")) {
      ((ArrayNode) point).set(1, seconds);
    }
  }

  @Test
  void profileTimesMustBePositiveFiniteAndAtMost1e30() throws IOException {
    assertThat(withProfile("ok.yaml", r -> { }).code()).isZero();
    for (double t : new double[] {0, 1e308, -1e-5}) {
      refused(withProfile("t.yaml", r -> ((ArrayNode) entry(r).get("curve").get(3)).set(1, t)),
          "t.yaml: entries[0]: curve[3] time " + t + " must be above 0 and at most 1.0E30");
    }
    // YAML's .nan (and .inf) are not numbers meshplan reads.
    Path nan = dir.resolve("nan.yaml");
    Files.writeString(nan, Files.readString(profile).replaceFirst("tailSlope: \\S+",
        "tailSlope: .nan"));
    refused(CliRun.of("shard", "--model", "alpa-mlp", "--mesh", "2x4", "--cluster",
        "1x8:a100-80gb", "--profile", nan.toString()), "nan.yaml", "line 11", "'.nan'");
    refused(withProfile("alpha.yaml", r -> entry(r).put("alpha", 2.0)),
        "alpha 2.0 s is above 1.0 s");
  }

  @Test
  void aProfileFasterThanItsClustersLinksIsRefused() throws IOException {
    // beta 1e-15 s per bus byte is 1e15 B/s = 1e6 GB/s; the bound of 1x8:a100-80gb inside a node
    // is 2 x 300 GB/s (NVLink per direction, catalog) = 600 GB/s.
    refused(withProfile("beta.yaml", r -> entry(r).put("beta", 1e-15)),
        "beta.yaml: entries[0]: beta 1.0E-15 (bus bandwidth 1.000e+06 GB/s) is above 600.0 GB/s"
            + " on 1x8:a100-80gb:ib-hdr200, twice its a100-80gb NVLink rate per direction");
    refused(withProfile("beta0.yaml", r -> entry(r).put("beta", 0.0)), "beta 0.0");
    // Every curve time 1 ns: the all-reduce factor 2 x 7/8 = 1.75 times 8 x 2^k bytes over
    // 1e-9 s passes 600 GB/s first at 512 bytes (k = 6: 896 GB/s; 256 bytes give 448).
    refused(withProfile("fast.yaml", r -> setTimes(r, 1e-9)),
        "curve[6] = [512, 1.0E-9] (bus bandwidth 896.0 GB/s) is above 600.0 GB/s");
  }

  @Test
  void computeScalesOutsideWhatCalibrateFitsAreRefused() throws IOException {
    // A100's fastest modelled kernel is a large GEMM at 0.8 of the dense peak (1 / 0.8 =
    // 1.25), and no factor reads above ComputeScale.MAX = 1.2.
    for (double s : new double[] {10, 1e308, 1.3, 1.21}) {
      refused(withProfile("s.yaml", r -> r.putObject("compute").putObject("a100")
          .put("scale", s).put("runs", 1)), "compute.a100.scale", "is above 1.200");
    }
    refused(withProfile("nan.yaml", r -> r.putObject("compute").putObject("hopper")
        .put("scale", Double.NaN).put("runs", 1)), "compute.hopper", "must be a number");
    refused(withProfile("neg.yaml", r -> r.putObject("compute").putObject("hopper")
        .put("scale", -0.5).put("runs", 1)), "compute scale must be > 0");
    refused(withProfile("zero.yaml", r -> r.putObject("compute").putObject("a100")
        .put("scale", 0.0).put("runs", 1)), "compute scale must be > 0");
    refused(withProfile("slow.yaml", r -> r.putObject("compute").putObject("a100")
        .put("scale", 1e-300).put("runs", 1)), "is below 0.0625");
    refused(withProfile("tpu.yaml", r -> r.putObject("compute").putObject("tpu")
        .put("scale", 1.0).put("runs", 1)), "'tpu' is neither a GPU architecture");
    CliRun fine = withProfile("fine.yaml", r -> r.putObject("compute").putObject("a100")
        .put("scale", 1.2).put("runs", 1));
    assertThat(fine.code()).as(fine.err()).isZero();
  }

  /**
   * Counts are whole numbers read without wrapping (2^32 + 8 GPUs once read as 8), bands lie
   * within the factors a fit may give (1/16 to 16; 1.7e308 printed "Infinity"), and a field the
   * format does not have is refused, as cluster files refuse theirs.
   */
  @Test
  void countsBandsAndFieldsOfAProfileAreReadStrictly() throws IOException {
    refused(withProfile("wrap.yaml", r -> entry(r).put("gpus", 4294967304L)),
        "entries[0]: field 'gpus' must be a whole number from 2 to 1048576, got 4294967304");
    refused(withProfile("one.yaml", r -> entry(r).put("gpus", 1)), "field 'gpus'", "got 1");
    refused(withProfile("frac.yaml", r -> entry(r).put("points", 2.5)), "field 'points'",
        "got 2.5");
    refused(withProfile("extra.yaml", r -> entry(r).put("bogus", 1)),
        "entries[0]: unknown field 'bogus'");
    refused(withProfile("top.yaml", r -> r.put("clusters", "x")), "unknown field 'clusters'");
    refused(withProfile("version.yaml", r -> r.put("version", "1")),
        "version must be a whole number (this meshplan reads 1), got \"1\"");
    refused(withProfile("size0.yaml", r -> ((ArrayNode) entry(r).get("curve").get(0)).set(0, 0)),
        "curve[0] size 0.0 bytes must be at least 1");
    ObjectNode band = YAML.createObjectNode().put("low", 0.8).put("high", 1.7e308)
        .put("residuals", 46).put("basis", "in-sample");
    refused(withProfile("band.yaml", r -> r.putObject("compute").putObject("a100")
        .put("scale", 1.0).put("runs", 1).set("band", band.deepCopy())),
        "band low 0.8 and high 1.7E308 must lie within 0.0625 and 16.0");
    refused(withProfile("resid.yaml", r -> r.putObject("compute").putObject("a100")
        .put("scale", 1.0).put("runs", 1).set("band", band.deepCopy().put("high", 1.2)
            .put("residuals", new java.math.BigInteger("99999999999999999999")))),
        "field 'residuals' must be a whole number");
    refused(withProfile("key.yaml", r -> r.putObject("compute").putObject("a100")
        .put("scale", 1.0).put("runs", 1).put("bogus", 1)), "compute.a100: unknown field 'bogus'");
    CliRun fine = withProfile("fine.yaml", r -> r.putObject("compute").putObject("a100")
        .put("scale", 1.0).put("runs", 1).set("band", band.deepCopy().put("high", 1.2)));
    assertThat(fine.code()).as(fine.err()).isZero();
  }

  @Test
  void logRowsAboveTheLinksAndAlpaGroupsLargerThanTheClusterAreLeftOut() throws IOException {
    // The 1 MiB row at 0.10 us: algbw 1,048,576 B / 1e-7 s = 10,486 GB/s, busbw x 1.75 =
    // 18,350 GB/s, above the 600 GB/s of the node's links (and below the parser's 1 PB/s sanity
    // cap; its time is above the parser's 0.01 us floor).
    Path log = dir.resolve("fast.log");
    Files.writeString(log, Files.readString(Path.of(A100_LOG)).replaceFirst(
        "(?m)^( +1048576 +262144 +float +sum +-1) +\\S+ +\\S+ +\\S+",
        "$1    0.10 10485.76 18350.08"));
    CliRun r = CliRun.of("calibrate", log.toString(), "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("f.yaml").toString());
    assertThat(r.code()).as(r.err()).isZero();
    // Line 36: the 8-byte row is on line 19, and 1 MiB = 2^20 is 17 doublings on.
    assertThat(r.err()).contains("fast.log:36: bus bandwidth 1.835e+04 GB/s is above 600.0 GB/s"
        + " on 1x8:a100-80gb:ib-hdr200").contains("row skipped");
    assertThat(r.out()).contains("from 30 points");
    // An Alpa line over 64 devices, on a cluster of 32.
    Path alpa = dir.resolve("alpa.txt");
    StringBuilder ids = new StringBuilder();
    for (int d = 0; d < 64; d++) {
      ids.append(d == 0 ? "" : ", ").append(d);
    }
    Files.writeString(alpa, Files.readString(Path.of(
        "examples/alpa_profile_communication_4x8_a100.txt")) + "AllReduce: [[" + ids
        + "]]\tBytes: 2.00000 GB\tTime: 0.04278 s\tBandwidth: 90.59 GB/s\n");
    CliRun a = CliRun.of("calibrate", alpa.toString(), "--cluster", "4x8:a100-80gb", "--out",
        dir.resolve("a.yaml").toString());
    assertThat(a.code()).as(a.err()).isZero();
    assertThat(a.err()).contains("measured on 1 x 64 GPUs on 8 node(s), more than "
        + "4x8:a100-80gb:ib-hdr200 has (32 GPUs on 4 node(s))");
    assertThat(a.out()).doesNotContain(" 64 ");
  }

  @Test
  void sizesPastTheirBoundsAreRefusedByName() throws IOException {
    refused(CliRun.of("simulate", "--model", "gpt", "--hidden", "2000000000", "--cluster",
        "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1",
        "--global-batch", "8"), "--hidden must be at most 1048576, got 2000000000");
    ObjectMapper json = new ObjectMapper();
    ObjectNode plan = (ObjectNode) json.readTree(Path.of(
        "core/src/test/resources/plans/llama2-70b-128x8-h100-80gb-ib-ndr400.json").toFile());
    ((ObjectNode) plan.get("model")).put("seq", 1 << 30);
    Path p = dir.resolve("seq.json");
    json.writeValue(p.toFile(), plan);
    refused(CliRun.of("simulate", "--plan", p.toString()), "seq.json: field 'model': "
        + "sequence length must be at most 16777216, got 1073741824");
    // A learned position table shorter than the sequence (the internal error of a GPT plan).
    ObjectNode model = (ObjectNode) plan.get("model");
    model.put("seq", 4096).put("family", "gpt");
    ((ObjectNode) model.get("architecture")).put("positions", "learned")
        .put("positionRows", 2048);
    json.writeValue(p.toFile(), plan);
    refused(CliRun.of("simulate", "--plan", p.toString()), "sequence length 4096 exceeds the "
        + "2048 rows of the learned position table");
  }
}
