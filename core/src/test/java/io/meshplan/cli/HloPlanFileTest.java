package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plan of an HLO module as a file: {@code plan --hlo --out --report}, {@code simulate --plan}
 * priced again from the module (the same iteration, a changed module refused), and {@code export}
 * and {@code deploy --megatron-args} refused with exit 3, each failure in one line.
 */
class HloPlanFileTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private Path module;
  private Path planFile;
  private JsonNode plan;

  @BeforeEach
  void planTheStep() throws Exception {
    module = dir.resolve("step.hlo");
    Files.copy(Path.of("examples/train_step.hlo"), module);
    planFile = dir.resolve("p.json");
    CliRun r = CliRun.of("plan", "--hlo", module.toString(), "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--out", planFile.toString(), "--report",
        dir.resolve("p.html").toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("plan for HLO module jit_train_step (2 layers)")
        .contains("wrote " + planFile).contains("wrote " + dir.resolve("p.html"));
    plan = JSON.readTree(Files.readString(planFile));
  }

  private static void oneLine(CliRun r, int code, String contains) {
    r.refusedInOneLine(code, contains);
  }

  @Test
  void theFileNamesTheModuleByPathAndHash() throws Exception {
    String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
        .digest(Files.readAllBytes(module)));
    assertThat(plan.get("format").asText()).isEqualTo("meshplan-plan");
    assertThat(plan.get("source").get("kind").asText()).isEqualTo("hlo");
    assertThat(plan.get("source").get("path").asText()).isEqualTo(module.toString());
    assertThat(plan.get("source").get("sha256").asText()).isEqualTo(sha);
    assertThat(plan.get("module").asText()).isEqualTo("jit_train_step");
    assertThat(plan.get("layerNames")).hasSize(2);
    assertThat(plan.has("model")).isFalse();
    // plan --json prints the very file --out wrote.
    CliRun j = CliRun.of("plan", "--hlo", module.toString(), "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--json");
    assertThat(j.out()).isEqualTo(Files.readString(planFile));
    String html = Files.readString(dir.resolve("p.html"));
    assertThat(html).contains("HLO module jit_train_step").contains("microbatches/s");
  }

  @Test
  void simulateThePlanPricesTheModuleAgainToTheSameIteration() throws Exception {
    CliRun r = CliRun.of("simulate", "--plan", planFile.toString(), "--json");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode sim = JSON.readTree(r.out());
    // Bit for bit: the same layer prices, stage sums and event simulation.
    assertThat(sim.get("iterationSeconds").asDouble())
        .isEqualTo(plan.get("iterationSeconds").asDouble());
    assertThat(sim.get("mfu").asDouble()).isEqualTo(plan.get("mfu").asDouble());
    CliRun text = CliRun.of("simulate", "--plan", planFile.toString());
    assertThat(text.out()).contains("microbatches/s");
  }

  @Test
  void simulateRepricesRatherThanReplayingStoredTimes() throws Exception {
    ObjectNode edited = (ObjectNode) plan.deepCopy();
    ObjectNode s0 = (ObjectNode) edited.get("stages").get(0);
    s0.put("forwardSeconds", 1000.0);
    s0.put("backwardSeconds", 1000.0);
    edited.put("iterationSeconds", 1e6);
    Path f = dir.resolve("edited.json");
    Files.writeString(f, JSON.writeValueAsString(edited));
    CliRun r = CliRun.of("simulate", "--plan", f.toString(), "--json");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(JSON.readTree(r.out()).get("iterationSeconds").asDouble())
        .isEqualTo(plan.get("iterationSeconds").asDouble());
  }

  @Test
  void aChangedModuleIsRefused() throws Exception {
    Files.writeString(module, Files.readString(module) + "\n", StandardCharsets.UTF_8);
    byte[] before = Files.readAllBytes(planFile);
    oneLine(CliRun.of("simulate", "--plan", planFile.toString()), 2, "has changed since plan");
    assertThat(Files.readAllBytes(planFile)).isEqualTo(before);
  }

  @Test
  void aMissingOrIrregularModuleIsOneLine() throws Exception {
    Files.delete(module);
    oneLine(CliRun.of("simulate", "--plan", planFile.toString()), 2, "step.hlo");
    Files.createDirectory(module);
    oneLine(CliRun.of("simulate", "--plan", planFile.toString()), 2, "step.hlo");
  }

  @Test
  void editedLayersOrMeshesAreRefused() throws Exception {
    ObjectNode names = (ObjectNode) plan.deepCopy();
    ((ArrayNode) names.get("layerNames")).set(0, "someone/else");
    Path f = dir.resolve("names.json");
    Files.writeString(f, JSON.writeValueAsString(names));
    oneLine(CliRun.of("simulate", "--plan", f.toString()), 2, "not the module's");
    ObjectNode mesh = (ObjectNode) plan.deepCopy();
    ((ArrayNode) mesh.get("stages").get(0).get("logicalMesh")).set(0, 3);
    Path g = dir.resolve("mesh.json");
    Files.writeString(g, JSON.writeValueAsString(mesh));
    oneLine(CliRun.of("simulate", "--plan", g.toString()), 2,
        "stages[0].logicalMesh: 3x1 does not fill the submesh 1x2");
    ObjectNode hash = (ObjectNode) plan.deepCopy();
    ((ObjectNode) hash.get("source")).put("sha256", "xyz");
    Path h = dir.resolve("hash.json");
    Files.writeString(h, JSON.writeValueAsString(hash));
    oneLine(CliRun.of("simulate", "--plan", h.toString()), 2, "SHA-256");
    ObjectNode kind = (ObjectNode) plan.deepCopy();
    ((ObjectNode) kind.get("source")).put("kind", "onnx");
    Path k = dir.resolve("kind.json");
    Files.writeString(k, JSON.writeValueAsString(kind));
    oneLine(CliRun.of("simulate", "--plan", k.toString()), 2, "source.kind");
  }

  @Test
  void noFrameworkRunsAModule() throws Exception {
    for (String to : new String[] {"megatron", "deepspeed", "torchtitan"}) {
      oneLine(CliRun.of("export", "--plan", planFile.toString(), "--to", to), 3,
          "no framework model exists for an XLA module");
    }
    oneLine(CliRun.of("deploy", "--plan", planFile.toString(), "--target", "slurm",
        "--megatron-args", "--", "python", "train.py"), 3,
        "no framework model exists for an XLA module");
  }

  @Test
  void outputsNeverReplaceTheModule() throws Exception {
    byte[] before = Files.readAllBytes(module);
    oneLine(CliRun.of("plan", "--hlo", module.toString(), "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--out", module.toString()), 2, "--hlo");
    oneLine(CliRun.of("plan", "--hlo", module.toString(), "--cluster", "1x4:a100-80gb",
        "--microbatches", "4", "--report", module.toString()), 2, "--hlo");
    assertThat(Files.readAllBytes(module)).isEqualTo(before);
  }
}
