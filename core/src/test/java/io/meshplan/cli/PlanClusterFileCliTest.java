package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a plan was priced on travels with it. A plan made on a cluster file is priced again on the
 * file's figures: its cluster name (here
 * {@code 2x8:h100-80gb:ib-ndr400}) says only which catalog entries it uses, so the plan embeds the
 * file's content ({@code clusterDescription}) and simulate, export, deploy and replan read it
 * back. Before, {@code simulate --plan} priced such a plan on the catalog's NVLink and NICs,
 * silently (here 20 GB/s NVLink and 10 Gb/s NICs, against the catalog's 450 GB/s and 400 Gb/s,
 * came out about twice as fast).
 */
class PlanClusterFileCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private Path clusterFile;

  @BeforeEach
  void writeClusterFile() throws Exception {
    clusterFile = Files.writeString(dir.resolve("slow links.yaml"), """
        nodes: 2
        gpusPerNode: 8
        gpu: h100-80gb
        nvlinkBandwidth: 20GB/s
        nicBandwidth: 10Gbps
        """);
  }

  private Path plan(String name) {
    Path out = dir.resolve(name);
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--layers", "4", "--seq", "1024",
        "--cluster", clusterFile.toString(), "--global-batch", "32", "--out", out.toString());
    assertThat(p.code()).as(p.err()).isZero();
    return out;
  }

  /** A plan's iteration seconds as simulate prints them, to 4 decimals. */
  private static double printed(double seconds) {
    return Math.round(seconds * 1e4) / 1e4;
  }

  private static double iteration(CliRun r) {
    assertThat(r.code()).as(r.err()).isZero();
    String line = r.out().lines().filter(l -> l.startsWith("iteration ")).findFirst()
        .orElseThrow();
    return Double.parseDouble(line.split(" ")[1]);
  }

  @Test
  void aPlanOnAClusterFileSimulatesOnTheFilesFigures() throws Exception {
    Path plan = plan("plan.json");
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.get("cluster").asText()).isEqualTo("2x8:h100-80gb:ib-ndr400");
    assertThat(saved.get("clusterDescription").get("nicBandwidth").asText()).isEqualTo("10Gbps");
    double planned = saved.get("iterationSeconds").asDouble();
    double again = iteration(CliRun.of("simulate", "--plan", plan.toString()));
    // The plan's own figure, as printed to 4 decimals.
    assertThat(again).isEqualTo(printed(planned));
    double catalog = iteration(CliRun.of("simulate", "--plan", plan.toString(), "--cluster",
        "2x8:h100-80gb:ib-ndr400"));
    assertThat(catalog).isLessThan(0.8 * again);
  }

  @Test
  void theCommandsThatReadAPlanReadItsClusterFile() throws Exception {
    Path plan = plan("plan.json");
    // Export's nearest configuration (Megatron-LM cannot write the ILP's layouts) is priced on
    // the plan's cluster, and says its --cluster string would not be.
    CliRun e = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(e.code()).as(e.err()).isIn(ExitCodes.OK, ExitCodes.INFEASIBLE);
    if (e.code() == ExitCodes.INFEASIBLE) {
      assertThat(e.out()).contains("priced on the plan's cluster file, embedded as "
          + "clusterDescription");
    }
    // Replan on the node left carries the cluster file, resized to that node.
    Path left = dir.resolve("left.json");
    CliRun r = CliRun.of("replan", "--plan", plan.toString(), "--lost-nodes", "1", "--out",
        left.toString());
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode replanned = JSON.readTree(Files.readString(left));
    assertThat(replanned.get("cluster").asText()).isEqualTo("1x8:h100-80gb:ib-ndr400");
    assertThat(replanned.get("clusterDescription").get("nodes").asInt()).isEqualTo(1);
    assertThat(replanned.get("clusterDescription").get("nvlinkBandwidth").asText())
        .isEqualTo("20GB/s");
    double again = iteration(CliRun.of("simulate", "--plan", left.toString()));
    assertThat(again).isEqualTo(
        printed(replanned.get("iterationSeconds").asDouble()));
  }

  @Test
  void aNearestConfigurationNamesTheClusterFileAsGiven() {
    // DeepSpeed's pipeline engine has no interleaved schedule: the nearest drops --vpp, and
    // names --cluster as the user gave it, the file's path quoted for the shell.
    CliRun r = CliRun.of("export", "--to", "deepspeed", "--model", "llama2-7b", "--layers", "8",
        "--seq", "1024", "--cluster", clusterFile.toString(), "--tp", "1", "--pp", "4", "--dp",
        "4", "--vpp", "2", "--micro-batch", "1", "--global-batch", "32");
    assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.out()).contains("--cluster '" + clusterFile + "'");
  }

  /**
   * The calibration profile a plan was priced with travels with it as well: a profile fitted to
   * the shipped Megatron-LM log (A100 compute x0.703) prices the plan, and simulate and export
   * price it again with it; without it (a plan written before plans carried it) the plan is
   * priced at the shipped prices, with a warning that says so.
   */
  @Test
  void aPlanCarriesTheProfileItWasPricedWith() throws Exception {
    Path profile = dir.resolve("a100.yaml");
    CliRun c = CliRun.of("calibrate", "--train", "examples/calibrate/megatron_a100_8gpu.log",
        "--cluster", "1x8:a100-80gb", "--out", profile.toString());
    assertThat(c.code()).as(c.err()).isZero();
    Path plan = dir.resolve("profiled.json");
    CliRun p = CliRun.of("plan", "--model", "llama2-7b", "--layers", "4", "--seq", "1024",
        "--cluster", "1x8:a100-80gb", "--global-batch", "16", "--profile", profile.toString(),
        "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
    assertThat(root.get("profile").get("file").asText()).isEqualTo("a100.yaml");
    assertThat(root.get("profile").get("text").asText()).isEqualTo(Files.readString(profile));
    double planned = printed(root.get("iterationSeconds").asDouble());
    CliRun s = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(iteration(s)).isEqualTo(planned);
    assertThat(s.out()).contains("prices: --profile: ampere compute x0.703");
    root.remove("profile");
    Path old = Files.writeString(dir.resolve("old.json"), JSON.writeValueAsString(root));
    CliRun o = CliRun.of("simulate", "--plan", old.toString());
    assertThat(iteration(o)).isLessThan(planned);
    assertThat(o.err()).isEqualTo("meshplan: warning: " + old + " was priced with a calibration "
        + "profile it does not carry; priced now at the shipped prices (give --profile FILE for"
        + " its own)\n");
    root.putObject("profile").put("file", "a100.yaml").put("text", "version: 9\n");
    Path bad = Files.writeString(dir.resolve("bad-profile.json"), JSON.writeValueAsString(root));
    CliRun b = CliRun.of("simulate", "--plan", bad.toString());
    assertThat(b.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(b.err()).hasLineCount(1).contains("profile version 9 is not supported");
  }

  /**
   * And the catalog: an entry of {@code --catalog} that replaces the shipped H100 (its 16-bit
   * peak cut from 989 to 500 TFLOP/s) prices the plan, and simulate and replan price it again on
   * that entry without {@code --catalog}; a plan's {@code catalog} that is not a catalog's text is
   * refused in one line.
   */
  @Test
  void aPlanCarriesTheCatalogItWasPlannedWith() throws Exception {
    Path catalog = dir.resolve("slow h100.yaml");
    Files.writeString(catalog, """
        gpus:
          - name: h100-80gb
            aliases: [h100]
            architecture: hopper
            peakTflops: {fp32: 67, tf32: 494.5, bf16: 500, fp16: 500, fp8: 1979}
            memoryGiB: 80
            hbmGBps: 3350
            nvlinkDomain: 8
            nvlinkGBpsPerDirection: 450
            defaultFabric: ib-ndr400
            source: a test's H100 at half its 16-bit peak
        """);
    Path plan = dir.resolve("catalogued.json");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--layers", "4", "--seq", "1024",
        "--cluster", "2x8:h100", "--global-batch", "32", "--catalog", catalog.toString(),
        "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
    assertThat(root.get("catalog").asText()).isEqualTo(Files.readString(catalog));
    double planned = printed(root.get("iterationSeconds").asDouble());
    assertThat(iteration(CliRun.of("simulate", "--plan", plan.toString()))).isEqualTo(planned);
    double shipped = iteration(CliRun.of("simulate", "--plan", plan.toString(), "--catalog",
        "core/src/main/resources/io/meshplan/cluster/catalog.yaml"));
    assertThat(shipped).isLessThan(planned);
    Path left = dir.resolve("left.json");
    CliRun r = CliRun.of("replan", "--plan", plan.toString(), "--lost-nodes", "1", "--out",
        left.toString());
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode replanned = JSON.readTree(Files.readString(left));
    assertThat(replanned.get("catalog").asText()).isEqualTo(Files.readString(catalog));
    assertThat(iteration(CliRun.of("simulate", "--plan", left.toString()))).isEqualTo(
        printed(replanned.get("iterationSeconds").asDouble()));
    root.put("catalog", "gpus: 7\n");
    Path bad = Files.writeString(dir.resolve("bad-catalog.json"), JSON.writeValueAsString(root));
    CliRun b = CliRun.of("simulate", "--plan", bad.toString());
    assertThat(b.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(b.err()).hasLineCount(1).contains(bad + ": catalog");
  }

  @Test
  void aBrokenEmbeddedClusterIsRefusedInOneLine() throws Exception {
    Path plan = plan("plan.json");
    String[][] edits = {
        {"nodes", "4", "clusterDescription describes 4x8:h100-80gb:ib-ndr400, but the plan's "
            + "cluster is 2x8:h100-80gb:ib-ndr400; give --cluster"},
        {"bogus", "1", "clusterDescription: unknown field 'bogus'"},
        {"nicBandwidth", "1e-300", "clusterDescription: field 'nicBandwidth' must be a "
            + "bandwidth"},
    };
    for (String[] edit : edits) {
      ObjectNode root = (ObjectNode) JSON.readTree(Files.readString(plan));
      ObjectNode d = (ObjectNode) root.get("clusterDescription");
      if (edit[0].equals("nodes")) {
        d.put("nodes", Integer.parseInt(edit[1]));
      } else {
        d.put(edit[0], edit[1]);
      }
      Path bad = Files.writeString(dir.resolve("bad-" + edit[0] + ".json"),
          JSON.writeValueAsString(root));
      CliRun r = CliRun.of("simulate", "--plan", bad.toString());
      assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(r.err().lines()).hasSize(1);
      assertThat(r.err()).contains(edit[2]);
    }
  }
}
