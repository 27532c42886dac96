package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.testing.Cases;
import io.meshplan.testing.Cases.Gen;
import io.meshplan.util.ShellQuote;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Words and values with spaces, quotes, {@code $}, backticks and backslashes (and, in words,
 * newlines and tabs) never break the generated files or inject a command: every script still
 * parses, and, run against stand-in launchers, passes exactly the given words and values; every
 * manifest parses back to the same words and values (after Kubernetes' {@code $$} unescaping);
 * names that are not DNS labels are refused. A variable's value is one line of printable text: one
 * with a control character (a newline, a tab) is refused.
 */
class InjectionProperties {
  /** The characters of hostile text: shell syntax, quotes, blanks, and a, b and c. */
  private static final String HOSTILE = " '\"$`\n\\();&|*~{}=#!\t<>-abc";

  /** Up to 16 characters of {@link #HOSTILE}. */
  static String hostile(Gen gen) {
    return gen.string(HOSTILE, 16);
  }

  /** One to four hostile words. */
  static List<String> words(Gen gen) {
    return gen.list(1, 4, InjectionProperties::hostile);
  }

  /**
   * Hostile edge cases: empty, one character (plain, blank, quote, {@code $}, newline, dash),
   * the whole alphabet in two halves, 16 of one quote or backslash, and command substitutions.
   */
  static List<String> hostileEdges() {
    return List.of("", "a", " ", "'", "\"", "$", "\n", "-", HOSTILE.substring(0, 13),
        HOSTILE.substring(13), "'".repeat(16), "\\".repeat(16), "$(a)`b`${c}\\");
  }

  /** Word lists: each hostile edge case alone, four empty words, and the whole alphabet. */
  static List<List<String>> wordEdges() {
    List<List<String>> out = new ArrayList<>();
    for (String word : hostileEdges()) {
      out.add(List.of(word));
    }
    out.add(List.of("", "", "", ""));
    out.add(List.of(HOSTILE.substring(0, 13), HOSTILE.substring(13), "", "-"));
    return out;
  }

  /** Arguments of a launch command and the value of an environment variable. */
  private record Launch(List<String> args, String value) {
  }

  /** A few launches that take the edge cases: empty, quotes, expansions, the whole alphabet. */
  static List<Launch> launchEdges() {
    return List.of(new Launch(List.of(""), ""),
        new Launch(List.of("", "", "", ""), "$(a)`b`${c}\\"),
        new Launch(List.of(HOSTILE.substring(0, 13), HOSTILE.substring(13)), "'\"\\"),
        new Launch(List.of("-", "'".repeat(16)), HOSTILE.substring(0, 13).replace("\n", "")),
        new Launch(List.of("\\".repeat(16)), HOSTILE.substring(13).replace("\t", "")));
  }

  static Launch launch(Gen gen) {
    return new Launch(words(gen), hostile(gen).replaceAll("[\n\t]", "_"));
  }

  @Test
  void aValueWithAControlCharacterIsRefused() {
    for (String value : List.of("'\"\n", "a\tb", "x\u001b[31m", "\u009b")) {
      assertThatThrownBy(() -> Llama70b.ib().with(new TreeMap<>(Map.of("MESHPLAN_TEST_VALUE",
          value)))).as(value).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("the value of MESHPLAN_TEST_VALUE holds the control character");
    }
  }

  /**
   * A command word holds printable text, newlines and tabs included; another control character
   * or a line or paragraph separator is refused: \u0001 reached the Slurm script as the six
   * characters of its escape, and U+2028 was folded by the YAML emitter into the word with the
   * manifest's indentation. A variable's value refuses the separators too.
   */
  @Test
  void aCommandWordWithAnotherControlCharacterOrASeparatorIsRefused() {
    for (String word : List.of("a\u0001b", "x\u001b[31m", "c\u2028d", "e\u2029f", "\u0085",
        "\u007f")) {
      assertThatThrownBy(() -> Llama70b.spec(List.of("train.py", word))).as(word)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("the training command holds the");
    }
    Llama70b.spec(List.of("train.py", "-c", "import os\n\tprint(1)"));
    assertThatThrownBy(() -> Llama70b.ib().with(new TreeMap<>(Map.of("MESHPLAN_TEST_VALUE",
        "x\u2028y")))).hasMessageContaining("holds the line-breaking character U+2028");
  }

  @Test
  void quotedWordsReadBackExactly() {
    Cases.check(31, 60, wordEdges(), InjectionProperties::words, words -> {
      Path script = Shell.temp("printf '%s\\0' " + ShellQuote.join(words) + "\n");
      try {
        Shell.Result r = Shell.bash(script, List.of(), Map.of(), null);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().split("\0", -1)).containsExactlyElementsOf(withEmptyTail(words));
      } finally {
        Shell.delete(script);
      }
    });
  }

  private static List<String> withEmptyTail(List<String> words) {
    List<String> w = new ArrayList<>(words);
    w.add("");
    return w;
  }

  @Test
  void scriptsPassExactlyTheGivenWordsAndValues() {
    Cases.check(32, 15, launchEdges(), InjectionProperties::launch,
        launch -> scriptsPass(launch.args(), launch.value()));
  }

  private static void scriptsPass(List<String> args, String value) {
    List<String> command = new ArrayList<>(List.of("pretrain_gpt.py"));
    command.addAll(args);
    FabricEnv fabric = Llama70b.ib().with(new TreeMap<>(Map.of("MESHPLAN_TEST_VALUE", value)));
    LaunchSpec spec = Llama70b.spec(command);
    Deployer d = new Deployer();
    FakeTools fake = new FakeTools();

    Artifact slurm = d.deploy(DeployTarget.SLURM, spec, fabric).get(0);
    assertThat(Shell.syntax(slurm.text()).code()).isZero();
    Shell.Result r = Shell.bash(Shell.temp(slurm.text()), List.of(), fake.env(Map.of(
        "SLURM_NNODES", "128", "SLURM_JOB_NODELIST", "n1", "SLURM_JOB_ID", "7")), null);
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(tail(fake.argv(), command.size())).isEqualTo(command);
    assertThat(fake.environment()).containsEntry("MESHPLAN_TEST_VALUE", value);

    Artifact node = d.deploy(DeployTarget.RUNAI, spec, fabric).get(1);
    assertThat(Shell.syntax(node.text()).code()).isZero();
    // The pod finds its InfiniBand ports at start: here in the ib-hdr node's tree.
    String sysfs = Path.of("core/src/test/resources/sysfs/ib-hdr").toAbsolutePath().toString();
    r = Shell.bash(Shell.temp(node.text()), List.of(), fake.env(Map.of("WORLD_SIZE", "128",
        "RANK", "0", "MASTER_ADDR", "m", "MASTER_PORT", "1", "MESHPLAN_SYSFS_ROOT", sysfs)), null);
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(tail(fake.argv(), command.size())).isEqualTo(command);
    assertThat(fake.environment()).containsEntry("MESHPLAN_TEST_VALUE", value);

    Artifact dask = d.deploy(DeployTarget.DASK, spec, fabric).get(0);
    assertThat(Shell.syntax(dask.text()).code()).isZero();
    r = Shell.bash(Shell.temp(dask.text()), List.of("client", "10.0.0.1"), fake.env(Map.of()),
        null);
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(fake.argv()).isEqualTo(command);
    assertThat(fake.environment()).containsEntry("MESHPLAN_TEST_VALUE", value);
  }

  private static List<String> tail(List<String> argv, int n) {
    return argv.subList(argv.size() - n, argv.size());
  }

  @Test
  void manifestsKeepTheGivenWordsAndValues() {
    Cases.check(33, 15, launchEdges(), InjectionProperties::launch, launch -> {
      try {
        manifestsKeep(launch.args(), launch.value());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }

  private static void manifestsKeep(List<String> args, String value) throws IOException {
    List<String> command = new ArrayList<>(List.of("pretrain_gpt.py"));
    command.addAll(args);
    FabricEnv fabric = Llama70b.ib().with(new TreeMap<>(Map.of("MESHPLAN_TEST_VALUE", value)));
    Deployer d = new Deployer();
    JsonNode job = CrdSchemas.YAML.readTree(d.deploy(DeployTarget.PYTORCHJOB,
        Llama70b.spec(command), fabric).get(0).text());
    assertThat(CrdSchemas.violations("kubeflow.org_pytorchjobs.yaml", "v1", job)).isEmpty();
    JsonNode c = job.at("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0");
    List<String> cmd = new ArrayList<>();
    c.path("command").forEach(n -> cmd.add(unescape(n.asText())));
    assertThat(tail(cmd, command.size())).isEqualTo(command);
    Map<String, String> env = new TreeMap<>();
    c.path("env").forEach(n -> env.put(n.path("name").asText(), unescape(n.path("value")
        .asText())));
    // Llama70b's pods are on the Multus network kube-system/roce@net1, so NCCL's socket is net1.
    assertThat(env).isEqualTo(Llama70b.onNet1(fabric.env()));

    for (RayMode mode : RayMode.values()) {
      LaunchSpec spec = Llama70b.spec(command, new PodNetwork.Multus("kube-system", "roce",
          "net1"), mode);
      for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S)) {
        List<JsonNode> docs = CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(
            d.deploy(t, spec, fabric).get(0).text()), JsonNode.class).readAll();
        if (t == DeployTarget.KUBERAY) {
          assertThat(CrdSchemas.violations("ray.io_rayjobs.yaml", "v1", docs.get(0))).isEmpty();
        }
        // The command travels as JSON words in the ConfigMap; the entrypoint, which passes
        // through bash, list2cmdline and sh, holds plain words only.
        JsonNode cm = docs.get(docs.size() - 1);
        List<String> back = new ArrayList<>();
        CrdSchemas.YAML.readTree(cm.at("/data/command.json").asText())
            .forEach(w -> back.add(w.asText()));
        assertThat(back).as(t.label() + " " + mode.label()).isEqualTo(command);
        assertThat(RayTorchrunDriverTest.entrypoint(docs)).matches("[A-Za-z0-9/._ -]+");
      }
    }
  }

  /** Kubernetes reads {@code $$} as {@code $} in command, args and env values. */
  private static String unescape(String k8s) {
    return k8s.replace("$$", "$");
  }

  @Test
  void namesThatAreNotDnsLabelsAreRefused() {
    List<String> edges = new ArrayList<>(hostileEdges());
    edges.addAll(List.of("abc", "a-b", "a-", "-a", "c".repeat(16), "a-".repeat(8)));
    Cases.check(34, 100, edges, InjectionProperties::hostile, name -> {
      boolean label = name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?") && name.length() <= 40;
      if (label) {
        assertThat(spec(name, "default", "img").name()).isEqualTo(name);
      } else {
        assertThatThrownBy(() -> spec(name, "default", "img"))
            .isInstanceOf(IllegalArgumentException.class);
      }
      if (!name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?")) {
        assertThatThrownBy(() -> spec("job", name, "img"))
            .isInstanceOf(IllegalArgumentException.class);
      }
      if (!name.matches("[A-Za-z0-9][A-Za-z0-9._/:@+-]*")) {
        assertThatThrownBy(() -> spec("job", "default", name))
            .isInstanceOf(IllegalArgumentException.class);
      }
    });
  }

  private static LaunchSpec spec(String name, String namespace, String image) {
    return new LaunchSpec(name, namespace, Optional.of(image), 2, 8, List.of("train.py"), "rdma/ib",
        1, Optional.empty(), 29500, new PodNetwork.Default(), "/workspace/node.sh", "ib0",
        Optional.empty(), RayMode.TORCHRUN);
  }
}
