package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.plan.PlanJson;
import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plan file holds only the fields its writer puts there. A field it does not know, in any
 * object the reader prices from, is refused in one line that names the object and the field:
 * before, a misspelt optional field ({@code "contextParalel": 4} in a stage, {@code
 * "hsdpStepReduse"} in the overlaps) was dropped without a word and the plan priced without it.
 * Every plan {@code plan --out} writes, for models that fill every kind of object (adapters,
 * packed documents, FP8, experts, sinks and windows, chunked attention, Mamba-1 and Mamba-2
 * mixers, Gated DeltaNet), reads back whole.
 */
class PlanFileFieldsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The top-level objects the commands add for people and scripts; the reader prices none. */
  private static final Set<String> NOT_READ = Set.of("prices", "profile", "frameworks",
      "timeToTrain", "weights", "clusterDescription", "fallbacks");

  @TempDir Path dir;

  private String plan(String name, String... flags) throws Exception {
    Path out = dir.resolve(name + ".json");
    List<String> args = new ArrayList<>(List.of("plan", "--cluster", "1x8:h100", "--out",
        out.toString()));
    args.addAll(List.of(flags));
    CliRun r = CliRun.of(args.toArray(String[]::new));
    assertThat(r.code()).as(r.err()).isZero();
    return Files.readString(out);
  }

  @Test
  void everyWrittenFieldReadsBackAndEveryUnknownOneIsRefused() throws Exception {
    List<String> plans = List.of(
        plan("lora", "--model", "llama3.1-8b", "--layers", "4", "--finetune", "lora",
            "--lora-rank", "16", "--mean-doc-len", "1024", "--dtype", "fp8"),
        plan("gdn", "--model", "qwen3-next-80b-a3b", "--layers", "4"),
        plan("mamba1", "--model", "jamba-v0.1", "--layers", "8"),
        plan("scout", "--model", "llama4-scout", "--layers", "4"),
        plan("sinks", "--model", "gpt-oss-20b", "--layers", "4"));
    int refused = 0;
    for (String text : plans) {
      PlanJson.read("p.json", text);
      ObjectNode root = (ObjectNode) JSON.readTree(text);
      List<String> paths = new ArrayList<>();
      objects(root, "", paths);
      for (String path : paths) {
        ObjectNode edited = root.deepCopy();
        ((ObjectNode) edited.at(path)).put("bogusField", 1);
        String where = path.isEmpty() ? "p.json" : "p.json: ";
        assertThatThrownBy(() -> PlanJson.read("p.json", JSON.writeValueAsString(edited)))
            .as(path).isInstanceOf(InputException.class)
            .hasMessageStartingWith(where)
            .hasMessageContaining("unknown field 'bogusField'; valid: ")
            .hasMessageNotContaining("\n");
        refused++;
      }
    }
    // The LoRA plan alone has the top level, model, lora, packing, architecture, numerics and
    // its rope scaling, overlaps, the communication bytes, finetune, and a stage with its bytes
    // and tensors: every object of every plan was tried.
    assertThat(refused).isGreaterThan(5 * 8);
  }

  @Test
  void aMisspeltStageFieldIsNamed() throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(plan("typo", "--model", "llama3.1-8b",
        "--layers", "4"));
    ((ObjectNode) root.get("stages").get(0)).put("contextParalel", 4);
    assertThatThrownBy(() -> PlanJson.read("typo.json", JSON.writeValueAsString(root)))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith("typo.json: stages[0]: unknown field 'contextParalel'; valid: ")
        .hasMessageContaining("contextParallel");
    Path file = dir.resolve("typo-edited.json");
    Files.writeString(file, JSON.writeValueAsString(root));
    CliRun r = CliRun.of("simulate", "--plan", file.toString());
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("unknown field 'contextParalel'").hasLineCount(1);
  }

  /** The JSON pointers of every object under {@code node} that the reader prices from. */
  private static void objects(JsonNode node, String at, List<String> out) {
    if (node.isObject()) {
      out.add(at);
      for (var e : node.properties()) {
        if (at.isEmpty() && NOT_READ.contains(e.getKey())) {
          continue;
        }
        objects(e.getValue(), at + "/" + e.getKey(), out);
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        objects(node.get(i), at + "/" + i, out);
      }
    }
  }
}
