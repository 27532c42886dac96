package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.FabricCatalog;
import io.meshplan.cluster.GpuCatalog;
import io.meshplan.model.HfConfigReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every list of names in every help text and every "valid values" message is what the command
 * accepts: each listed value is run through the command and accepted, and every value the command
 * accepts is listed. The lists: the config.json model_types (one fixture per type, run through
 * plan, simulate, export and shard), the presets of an unknown-preset refusal, the GPUs and
 * fabrics of --cluster, the words of every option with completion candidates (found in picocli's
 * model of every command, so an option added later is checked too), and --debug in every help.
 */
class HelpListsCliTest {
  private static final String HF = "core/src/test/resources/hf/";

  /** One published config per model_type the reader reads. */
  private static final Map<String, String> FIXTURE = Map.ofEntries(
      Map.entry("llama", "meta-llama-3-8b.json"), Map.entry("mistral", "mistral-7b-v0.1.json"),
      Map.entry("gpt_neox", "gpt-neox-20b.json"), Map.entry("opt", "opt-1.3b.json"),
      Map.entry("qwen2", "qwen2.5-7b.json"), Map.entry("qwen3", "qwen3-8b.json"),
      Map.entry("gemma2", "gemma-2-9b.json"), Map.entry("gemma3", "gemma-3-4b-pt.json"),
      Map.entry("phi3", "phi-3-mini-4k-instruct.json"),
      Map.entry("olmo2", "olmo-2-1124-7b.json"), Map.entry("granite", "granite-3.0-8b-base.json"),
      Map.entry("starcoder2", "starcoder2-3b.json"), Map.entry("mixtral", "mixtral-8x7b-v0.1.json"),
      Map.entry("qwen3_moe", "qwen3-30b-a3b.json"), Map.entry("gpt_oss", "gpt-oss-20b.json"),
      Map.entry("deepseek_v3", "deepseek-v3.json"));

  /**
   * The fixture of a type; gemma3_text, llama4_text and kimi_k2 are Gemma 3's, Llama 4's and Kimi
   * K2.5's text_config on its own.
   */
  private static Path fixture(String type, Path dir) throws IOException {
    String outer = type.equals("gemma3_text") ? "gemma-3-4b-pt.json"
        : type.equals("llama4_text") ? "llama-4-scout-17b-16e.json"
        : type.equals("kimi_k2") ? "kimi-k2.5.json" : null;
    if (outer == null) {
      return FIXTURE.containsKey(type) ? Path.of(HF + FIXTURE.get(type)) : published(type);
    }
    var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    var text = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(
        Path.of(HF + outer).toFile()).get("text_config");
    text.put("model_type", type);
    Path p = dir.resolve(type + ".json");
    Files.writeString(p, mapper.writeValueAsString(text));
    return p;
  }

  /**
   * The first published config of a type among the fixtures, by file name, for a type registered
   * after this test's table (a new family brings its own fixture).
   */
  private static Path published(String type) throws IOException {
    var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    try (var files = Files.list(Path.of(HF))) {
      for (Path p : files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
        if (type.equals(mapper.readTree(p.toFile()).path("model_type").asText())) {
          return p;
        }
      }
    }
    throw new AssertionError("no config.json fixture of model_type " + type + " in " + HF);
  }

  @Test
  void eachCommandListsExactlyTheConfigModelTypesItTakes(@TempDir Path dir) throws IOException {
    assertThat(HfConfigReader.SUPPORTED).containsAll(FIXTURE.keySet());
    for (String command : List.of("plan", "simulate", "export", "shard")) {
      List<String> listed = HelpTruthCliTest.listed(command,
          "Hugging Face config.json model_types (--model PATH):");
      for (String type : HfConfigReader.SUPPORTED) {
        String[] args = HelpTruthCliTest.small(command, fixture(type, dir).toString());
        CliRun r = CliRun.of(args);
        String what = command + " " + type + "\n" + r.err();
        if (listed.contains(type)) {
          assertThat(r.code()).as(what).isIn(0, 3);
          assertThat(r.err()).as(what).doesNotContain("error");
        } else {
          assertThat(r.code()).as(what).isEqualTo(2);
          assertThat(r.err().lines().filter(l -> l.startsWith("meshplan: error:"))).as(what)
              .hasSize(1);
        }
      }
      // shard builds LLaMA's blocks only; the others take every type.
      // (The registry's LLaMA-block types: llama, mistral, phi3, granite and any added later.)
      List<String> llamaBlocks = io.meshplan.model.HfModelType.ALL.stream()
          .filter(io.meshplan.model.HfModelType::llamaBlocks)
          .map(io.meshplan.model.HfModelType::name).toList();
      assertThat(llamaBlocks).containsSubsequence("llama", "mistral", "phi3", "granite");
      assertThat(listed).as(command).isEqualTo(command.equals("shard")
          ? llamaBlocks : HfConfigReader.SUPPORTED);
    }
  }

  /**
   * An unknown preset's refusal lists the command's presets and model_types, and an unknown
   * model_type's its model_types, as its help does.
   */
  @Test
  void theUnknownPresetRefusalListsWhatTheHelpLists(@TempDir Path dir) throws IOException {
    for (String command : List.of("plan", "simulate", "export", "shard")) {
      CliRun r = CliRun.of(HelpTruthCliTest.small(command, "no-such-model"));
      assertThat(r.code()).isEqualTo(2);
      String m = r.err().strip();
      String presets = m.substring(m.indexOf("valid presets: ") + 15, m.indexOf("; or the path"));
      String types = m.substring(m.indexOf("model_type ") + 11);
      assertThat(List.of(presets.split(", "))).as(command)
          .isEqualTo(HelpTruthCliTest.listedPresets(command));
      assertThat(List.of(types.split(", "))).as(command).isEqualTo(HelpTruthCliTest.listed(
          command, "Hugging Face config.json model_types (--model PATH):"));
    }
    // A config of a type shard does not take is refused naming what it has; an unknown type
    // lists the ones the command takes.
    CliRun.of("shard", "--model", HF + "qwen2.5-7b.json", "--mesh", "2").refusedInOneLine(2,
        "shard builds LLaMA's forward graph, and this model has QKV biases");
    Path bert = dir.resolve("bert.json");
    Files.writeString(bert, "{\"model_type\": \"bert\"}");
    for (String command : List.of("plan", "simulate", "export", "shard")) {
      CliRun r = CliRun.of(HelpTruthCliTest.small(command, bert.toString()));
      r.refusedInOneLine(2, "model_type 'bert' is not supported; supported: ");
      String m = r.err().strip();
      assertThat(List.of(m.substring(m.indexOf("supported: ") + 11).split(", "))).as(command)
          .isEqualTo(HelpTruthCliTest.listed(command,
              "Hugging Face config.json model_types (--model PATH):"));
    }
  }

  @Test
  void everyGpuAndFabricListedRunsAndEveryAcceptedOneIsListed() {
    for (String command : List.of("plan", "simulate", "export", "shard", "bench", "calibrate",
        "deploy")) {
      assertThat(HelpTruthCliTest.listed(command, "GPUs (--cluster NODESxGPUS:gpu[:fabric]):"))
          .as(command).isEqualTo(GpuCatalog.acceptedNames());
      assertThat(HelpTruthCliTest.listed(command, "Fabrics (--cluster NODESxGPUS:gpu:fabric):"))
          .as(command).isEqualTo(FabricCatalog.names());
    }
    for (String gpu : GpuCatalog.acceptedNames()) {
      // A rack-scale GPU's host holds fewer GPUs than its NVLink domain (4 of 72 on GB200):
      // one host of it is the cluster bench writes for. Elsewhere two nodes of one NVLink
      // domain each (8 GPUs on HGX boards, a bridged pair of H100 NVL).
      io.meshplan.cluster.GpuEntry e = io.meshplan.cluster.HardwareCatalog.shipped().gpu(gpu)
          .orElseThrow();
      String cluster = e.hostGpus() < e.spec().nvlinkDomain() ? "1x" + e.hostGpus() + ":" + gpu
          : "2x" + e.spec().nvlinkDomain() + ":" + gpu;
      assertThat(CliRun.of("bench", "--cluster", cluster).code()).as(gpu).isZero();
    }
    for (String fabric : FabricCatalog.names()) {
      assertThat(CliRun.of("bench", "--cluster", "2x8:h100:" + fabric).code()).as(fabric)
          .isZero();
    }
    String fabrics = CliRun.of("bench", "--cluster", "2x8:h100:ib-xyz").err().strip();
    assertThat(List.of(fabrics.substring(fabrics.indexOf("valid: ") + 7).split(", ")))
        .isEqualTo(FabricCatalog.names());
  }

  @Test
  void debugIsInEveryCommandsHelp() {
    CommandLine root = Main.commandLine(false);
    for (String command : root.getSubcommands().keySet()) {
      if (command.equals("help")) {
        continue;
      }
      assertThat(CliRun.of(command, "--help").out()).as(command).contains("--debug")
          .contains("Print the stack trace of an error");
    }
  }

  /** A valid, quick command line of each command, as option to value (null for a flag). */
  private static Map<String, String> base(String command) {
    Map<String, String> m = new LinkedHashMap<>();
    String[] words = switch (command) {
      case "plan" -> new String[] {"--model", "gpt", "--layers", "1", "--seq", "128",
          "--cluster", "1x1:h100-80gb", "--global-batch", "1"};
      case "simulate" -> new String[] {"--model", "gpt", "--layers", "1", "--seq", "256",
          "--cluster", "1x2:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "2",
          "--micro-batch", "1", "--global-batch", "2"};
      case "export" -> new String[] {"--to", "megatron", "--model", "gpt", "--layers", "1",
          "--seq", "256", "--cluster", "1x2:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "2",
          "--micro-batch", "1", "--global-batch", "2"};
      case "deploy" -> new String[] {"--target", "kuberay", "--cluster", "2x8:h100-80gb",
          "--image", "nvcr.io/nvidia/pytorch:24.05-py3"};
      case "shard" -> new String[] {"--model", "alpa-mlp", "--mesh", "2"};
      case "bench" -> new String[] {"--cluster", "2x8:h100-80gb"};
      default -> throw new IllegalArgumentException(command);
    };
    for (int i = 0; i < words.length; i += 2) {
      m.put(words[i], words[i + 1]);
    }
    return m;
  }

  /** What else a value needs to run: an option's own prerequisites. */
  private static Map<String, String> needs(String option, String value) {
    Map<String, String> m = new LinkedHashMap<>();
    switch (option) {
      case "--recompute-modules" -> {
        m.putAll(Map.of("--model", "deepseek-v3", "--layers", "4", "--hidden", "1024",
            "--heads", "8", "--cluster", "1x8:h100-80gb", "--dp", "8", "--ep", "8",
            "--global-batch", "8"));
        m.put("--recompute", "selective");
      }
      case "--cp-comm-type" -> m.putAll(Map.of("--cp", "2", "--dp", "1", "--global-batch",
          "1"));
      case "--framework-version" -> m.put("--to", "torchtitan");
      // cuDNN's FP8 attention runs under the FP8 recipe.
      case "--attention" -> {
        if (value.equals("cudnn-fp8")) {
          m.put("--dtype", "fp8");
        }
      }
      default -> { }
    }
    return m;
  }

  /** A form in a list (multus:NS/NAME[@IFACE]) as a value that has it. */
  private static String example(String word) {
    return word.equals("multus:NS/NAME[@IFACE]") ? "multus:kube-system/roce@net1" : word;
  }

  private static CliRun run(String command, Map<String, String> options) {
    List<String> args = new ArrayList<>(List.of(command));
    options.forEach((k, v) -> {
      args.add(k);
      if (v != null) {
        args.add(v);
      }
    });
    if (command.equals("deploy")) {
      args.addAll(List.of("--", "train.py"));
    }
    return CliRun.of(args.toArray(String[]::new));
  }

  /** The words a refusal lists: after "use " or "is not ", parentheses dropped. */
  static Set<String> refusalWords(String message) {
    int use = message.indexOf("; use ");
    int from = use >= 0 ? use + 6 : message.indexOf(" is not ") + 8;
    String list = message.substring(from).replaceAll("\\s*\\([^)]*\\)", "");
    int end = list.indexOf(" such as");
    list = (end >= 0 ? list.substring(0, end) : list).strip();
    Set<String> words = new LinkedHashSet<>();
    for (String w : list.split(",\\s*|\\s+or\\s+")) {
      if (!w.isBlank()) {
        words.add(w.strip());
      }
    }
    return words;
  }

  @Test
  void everyOptionWithAFixedSetListsItRunsItAndRefusesAnythingElseListingIt() {
    CommandLine root = Main.commandLine(false);
    int checked = 0;
    for (String command : List.of("plan", "simulate", "export", "deploy", "shard", "bench")) {
      String help = CliRun.of(command, "--help").out().replaceAll("\\s+", " ");
      for (OptionSpec o : root.getSubcommands().get(command).getCommandSpec().options()) {
        if (o.completionCandidates() == null) {
          continue;
        }
        List<String> words = new ArrayList<>();
        o.completionCandidates().forEach(words::add);
        String option = o.longestName();
        // Without spaces: the help wraps lines at any space, also inside multus: NS/NAME.
        assertThat(help.replace(" ", "").toLowerCase(java.util.Locale.ROOT).contains(("oneof:"
            + String.join(",", words)).toLowerCase(java.util.Locale.ROOT)))
            .as(command + " " + option + " lists " + words).isTrue();
        for (String w : words) {
          Map<String, String> args = base(command);
          args.putAll(needs(option, w));
          args.put(option, example(w));
          if (option.equals("--target") && List.of("dask", "slurm").contains(w)) {
            // Their launch files run no container image: DeployOptionScope refuses --image.
            args.remove("--image");
          }
          CliRun r = run(command, args);
          assertThat(r.code()).as(command + " " + option + " " + w + "\n" + r.err())
              .isIn(0, 3);
        }
        Map<String, String> args = base(command);
        args.putAll(needs(option, "zz-bad"));
        args.put(option, "zz-bad");
        CliRun bad = run(command, args);
        String what = command + " " + option + "\n" + bad.err();
        assertThat(bad.code()).as(what).isEqualTo(2);
        assertThat(bad.err().lines()).as(what).hasSize(1);
        assertThat(bad.err()).as(what).contains("'zz-bad'");
        assertThat(refusalWords(bad.err().strip())).as(what)
            .containsExactlyInAnyOrderElementsOf(words);
        checked++;
      }
    }
    // plan: --schedule, --attention, --dtype; simulate: those but plan's --schedule, and
    // --recompute, --recompute-modules, --cp-comm-type; export: simulate's and --to,
    // --framework-version; deploy: --target, --pod-network, --ray-mode; shard: --dtype,
    // --solver, --param-liveness; bench: --launcher. 3 + 6 + 8 + 3 + 3 + 1 = 24, and every
    // option given candidates later is checked as well.
    assertThat(checked).isGreaterThanOrEqualTo(24);
  }
}
