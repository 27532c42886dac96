package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Ray targets start one rank per GPU on every node: the entrypoint (the RayJob's, or the
 * words after {@code --} in ray-k8s's submit annotation) goes the way Ray takes it, split by bash,
 * rejoined with {@code subprocess.list2cmdline} as {@code ray job submit} does and run with {@code
 * shell=True} as Ray's job supervisor does, with the driver and command file from the manifest's
 * ConfigMap, against a stand-in {@code ray} package (placement groups and tasks run in-process)
 * and a {@code torchrun} that logs its arguments. For LLaMA2-70B on 128 x 8 that is 128 torchrun calls with node ranks 0..127 and 8
 * processes each: 128 x 8 = 1024 ranks, the plan's GPUs.
 */
class RayTorchrunDriverTest {
  private static final String FAKE_RAY = """
      import json, os
      def _log(name, obj):
          with open(os.path.join(os.environ["LOG"], name), "a") as f:
              f.write(json.dumps(obj) + "\\n")
      class _Remote:
          def __init__(self, f, opts):
              self.f, self.opts = f, opts
          def options(self, **kw):
              return _Remote(self.f, dict(self.opts, **kw))
          def remote(self, *args):
              s = self.opts.get("scheduling_strategy")
              _log("tasks", {"task": self.f.__name__, "num_gpus": self.opts.get("num_gpus", 0),
                             "bundle": s.placement_group_bundle_index if s else None})
              # FAKE_DOMAINS: the NVLink domain of each bundle's node, as its pod would hold it.
              if s and os.environ.get("FAKE_DOMAINS"):
                  os.environ["MESHPLAN_NVLINK_DOMAIN"] = os.environ["FAKE_DOMAINS"].split(",")[
                      s.placement_group_bundle_index]
              return self.f(*args)
      def remote(**opts):
          return lambda f: _Remote(f, opts)
      def get(x):
          return x
      def init(address=None):
          _log("init", address)
      from . import util
      """;
  private static final String FAKE_UTIL = "def get_node_ip_address():\n    return '10.0.0.7'\n";
  private static final String FAKE_PG = """
      from ray import _log
      class _PG:
          def ready(self):
              return True
      def placement_group(bundles, strategy):
          _log("pg", {"bundles": bundles, "strategy": strategy})
          return _PG()
      """;
  private static final String FAKE_STRATEGY = """
      class PlacementGroupSchedulingStrategy:
          def __init__(self, placement_group, placement_group_bundle_index):
              self.placement_group_bundle_index = placement_group_bundle_index
      """;

  @TempDir Path dir;

  @Test
  void hostileCommandWordsReachTorchrunAsWordsAndAreNeverRun() throws Exception {
    List<String> command = List.of("pretrain_gpt.py", "$(touch pwned)", "a b;c", "'\"`x`",
        "--", "");
    for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S)) {
      Path run = Files.createDirectories(dir.resolve("hostile-" + t.label()));
      String text = new Deployer().deploy(t, Llama70b.spec(command), Llama70b.ib()).get(0)
          .text();
      runDriver(run, text);
      String[] argv = Files.readString(run.resolve("log/last")).split("\0", -1);
      List<String> words =
          List.of(argv).subList(argv.length - 1 - command.size(), argv.length - 1);
      assertThat(words).as(t.label()).isEqualTo(command);
      assertThat(run.resolve("pwned")).doesNotExist();
      assertThat(Path.of("pwned")).doesNotExist();
    }
  }

  /**
   * The entrypoint of a manifest: the RayJob's, or what follows {@code --} in the submit
   * annotation, as {@code ray job submit} receives it.
   */
  static String entrypoint(List<JsonNode> docs) {
    for (JsonNode doc : docs) {
      if (doc.path("kind").asText().equals("RayJob")) {
        return doc.at("/spec/entrypoint").asText();
      }
      JsonNode a = doc.at("/metadata/annotations/" + "meshplan.io~1submit");
      if (!a.isMissingNode()) {
        return a.asText().substring(a.asText().indexOf(" -- ") + 4);
      }
    }
    throw new AssertionError("no entrypoint");
  }

  /**
   * Writes the ConfigMap's files into {@code run} and runs the entrypoint there as Ray does:
   * bash splits it (KubeRay's submitter, or the user pasting the annotation), {@code ray job
   * submit} rejoins the words with {@code subprocess.list2cmdline}, the job supervisor runs the
   * line with {@code shell=True}.
   */
  static String runAsRay(Path run, String text, Map<String, String> env) throws Exception {
    return runAsRay(run, text, env, 0);
  }

  /** {@link #runAsRay(Path, String, Map)}, expecting the exit status {@code code}. */
  static String runAsRay(Path run, String text, Map<String, String> env, int code)
      throws Exception {
    List<JsonNode> docs = CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(text),
        JsonNode.class).readAll();
    for (JsonNode doc : docs) {
      if (doc.path("kind").asText().equals("ConfigMap")) {
        for (var e : doc.path("data").properties()) {
          Files.writeString(run.resolve(e.getKey()), e.getValue().asText());
        }
      }
    }
    String entry = entrypoint(docs).replace("python /meshplan/", "python3 " + run + "/")
        .replace("/meshplan/", run + "/");
    ProcessBuilder pb = new ProcessBuilder("python3", "-c", "import shlex, subprocess, sys;"
        + " line = subprocess.list2cmdline(shlex.split(sys.argv[1]));"
        + " sys.exit(subprocess.run(line, shell=True).returncode)", entry)
        .directory(run.toFile()).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isEqualTo(code);
    return out;
  }

  @Test
  void kubeRayAndRayOnKubernetesStartAsManyRanksAsThePlanHasGpus() throws Exception {
    for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S)) {
      Path run = Files.createDirectories(dir.resolve(t.label()));
      String text = new Deployer().deploy(t, Llama70b.spec(), Llama70b.ib()).get(0).text();
      List<String> torchruns = runDriver(run, text);
      // 128 nodes, one torchrun each, 8 processes per torchrun: 1024 ranks.
      assertThat(torchruns).hasSize(Llama70b.NODES);
      Set<String> ranks = new TreeSet<>();
      int processes = 0;
      for (String line : torchruns) {
        List<String> w = List.of(line.split(" "));
        assertThat(w).contains("--nnodes=128", "--master-addr=10.0.0.7", "--master-port=29500");
        assertThat(w.subList(w.size() - 3, w.size())).isEqualTo(Llama70b.COMMAND);
        ranks.add(w.stream().filter(x -> x.startsWith("--node-rank=")).findFirst().orElseThrow());
        processes += Integer.parseInt(w.stream().filter(x -> x.startsWith("--nproc-per-node="))
            .findFirst().orElseThrow().substring("--nproc-per-node=".length()));
      }
      assertThat(ranks).hasSize(Llama70b.NODES).contains("--node-rank=0", "--node-rank=127");
      assertThat(processes).isEqualTo(Llama70b.NODES * Llama70b.GPUS);
      String pg = Files.readString(run.resolve("log/pg"));
      assertThat(pg).contains("\"strategy\": \"STRICT_SPREAD\"");
      assertThat(pg.split("\\{\"GPU\": 8, \"CPU\": 1\\}", -1)).hasSize(Llama70b.NODES + 1);
      List<String> tasks = Files.readAllLines(run.resolve("log/tasks"));
      for (int i = 0; i < Llama70b.NODES; i++) {
        assertThat(tasks).contains("{\"task\": \"torchrun\", \"num_gpus\": 8, \"bundle\": " + i
            + "}");
      }
    }
  }

  @Test
  void onRacksNodeRanksFollowTheNvlinkDomainsOfTheBundlesNodes() throws Exception {
    // 2 racks of 3 trays: Ray may give bundle i any node, so the driver reads each bundle's
    // domain and gives ranks 0-2 to domain 0's bundles (1, 3, 4) and 3-5 to domain 1's (0, 2, 5).
    LaunchSpec spec = ComputeDomainManifestsTest.rack(2, 3, new PodNetwork.Default(),
        RayMode.TORCHRUN);
    for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S)) {
      Path run = Files.createDirectories(dir.resolve("racks-" + t.label()));
      String text = new Deployer().deploy(t, spec, Llama70b.ib()).get(0).text();
      List<String> torchruns = runDriver(run, text, "1,0,1,0,0,1", 0);
      assertThat(torchruns).extracting(l -> List.of(l.split(" ")).stream()
          .filter(w -> w.startsWith("--node-rank=")).findFirst().orElseThrow())
          .containsExactly("--node-rank=0", "--node-rank=1", "--node-rank=2", "--node-rank=3",
              "--node-rank=4", "--node-rank=5");
      List<String> bundles = Files.readAllLines(run.resolve("log/tasks")).stream()
          .filter(l -> l.contains("\"torchrun\"")).map(l -> l.replaceAll(".*\"bundle\": ", "")
              .replace("}", "")).toList();
      assertThat(bundles).as(t.label()).containsExactly("1", "3", "4", "0", "2", "5");
      // A Ray cluster whose nodes are not 3 per domain is refused before any torchrun.
      Path bad = Files.createDirectories(dir.resolve("bad-" + t.label()));
      runDriver(bad, text, "0,0,0,0,1,1", 1);
      assertThat(bad.resolve("log/torchrun")).doesNotExist();
    }
  }

  private List<String> runDriver(Path run, String text) throws Exception {
    return runDriver(run, text, "", 0);
  }

  private List<String> runDriver(Path run, String text, String domains, int code)
      throws Exception {
    Files.createDirectories(run.resolve("ray/util"));
    Files.createDirectories(run.resolve("bin"));
    Files.createDirectories(run.resolve("log"));
    Files.writeString(run.resolve("ray/__init__.py"), FAKE_RAY);
    Files.writeString(run.resolve("ray/util/__init__.py"), FAKE_UTIL);
    Files.writeString(run.resolve("ray/util/placement_group.py"), FAKE_PG);
    Files.writeString(run.resolve("ray/util/scheduling_strategies.py"), FAKE_STRATEGY);
    Path torchrun = run.resolve("bin/torchrun");
    Files.writeString(torchrun, "#!/usr/bin/env bash\necho \"$*\" >> \"$LOG/torchrun\"\n"
        + "printf '%s\\0' \"$@\" > \"$LOG/last\"\n");
    assertThat(torchrun.toFile().setExecutable(true)).isTrue();
    String out = runAsRay(run, text, Map.of("PYTHONPATH", run.toString(), "LOG",
        run.resolve("log").toString(), "PATH", run.resolve("bin") + ":" + System.getenv("PATH"),
        "FAKE_DOMAINS", domains), code);
    if (code != 0) {
      assertThat(out).contains("meshplan: the Ray nodes per NVLink domain are {0: 4, 1: 2};"
          + " each of the 2 domains needs 3");
      return List.of();
    }
    return new ArrayList<>(Files.readAllLines(run.resolve("log/torchrun")));
  }
}
