package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --ray-mode native}: the Ray cluster has exactly the plan's GPUs, and the user's own
 * driver runs once, with its words as given and the cluster's size in its environment. The
 * driver here is a Python probe that records its arguments and environment; the entrypoint is run
 * the way Ray runs it ({@link RayTorchrunDriverTest#runAsRay}).
 */
class RayNativeDriverTest {
  /** Writes its arguments and the size variables to {@code probe.json} in the working directory. */
  private static final String PROBE = "import json, os, sys; json.dump({'argv': sys.argv[1:],"
      + " 'env': {k: os.environ.get(k) for k in ('MESHPLAN_NUM_NODES', 'MESHPLAN_GPUS_PER_NODE',"
      + " 'MESHPLAN_NUM_GPUS')}}, open('probe.json', 'w'))";

  @TempDir Path dir;

  private static LaunchSpec spec(List<String> command) {
    return Llama70b.spec(command, new PodNetwork.Multus("kube-system", "roce", "net1"),
        RayMode.NATIVE);
  }

  @Test
  void theUsersDriverRunsOnceWithItsWordsAndTheClustersSize() throws Exception {
    List<String> args = List.of("--model", "$(touch pwned)", "a b;c", "'\"`x`", "--", "",
        "multi\nline");
    List<String> command = new ArrayList<>(List.of("python3", "-c", PROBE));
    command.addAll(args);
    for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S)) {
      Path run = Files.createDirectories(dir.resolve(t.label()));
      String text = new Deployer().deploy(t, spec(command), Llama70b.ib()).get(0).text();
      RayTorchrunDriverTest.runAsRay(run, text, Map.of());
      JsonNode probe = CrdSchemas.YAML.readTree(run.resolve("probe.json").toFile());
      List<String> argv = new ArrayList<>();
      probe.path("argv").forEach(a -> argv.add(a.asText()));
      assertThat(argv).as(t.label()).isEqualTo(args);
      // 128 nodes x 8 GPUs per node = 1024 GPUs.
      assertThat(probe.at("/env/MESHPLAN_NUM_NODES").asText()).isEqualTo("128");
      assertThat(probe.at("/env/MESHPLAN_GPUS_PER_NODE").asText()).isEqualTo("8");
      assertThat(probe.at("/env/MESHPLAN_NUM_GPUS").asText()).isEqualTo("1024");
      assertThat(RayNativeDriver.SIZE_VARIABLES).containsExactlyElementsOf(
          List.of("MESHPLAN_NUM_NODES", "MESHPLAN_GPUS_PER_NODE", "MESHPLAN_NUM_GPUS"));
      assertThat(run.resolve("pwned")).doesNotExist();
      assertThat(Path.of("pwned")).doesNotExist();
    }
  }

  @Test
  void kubeRayClusterHasThePlansGpus() throws Exception {
    JsonNode rj = CrdSchemas.YAML.readTree(new Deployer().deploy(DeployTarget.KUBERAY,
        spec(Llama70b.COMMAND), Llama70b.ib()).get(0).text().split("(?m)^---\\n")[0]);
    JsonNode cluster = rj.at("/spec/rayClusterSpec");
    int gpus = gpus(cluster.at("/headGroupSpec/template"));
    assertThat(cluster.at("/headGroupSpec/rayStartParams/num-gpus").asInt()).isEqualTo(gpus);
    for (JsonNode g : cluster.path("workerGroupSpecs")) {
      int each = gpus(g.path("template"));
      assertThat(g.at("/rayStartParams/num-gpus").asInt()).isEqualTo(each);
      gpus += g.path("replicas").asInt() * each;
    }
    // Head 8 + 127 worker replicas x 8 GPUs = 1024 = the plan's 128 x 8.
    assertThat(gpus).isEqualTo(Llama70b.NODES * Llama70b.GPUS).isEqualTo(1024);
  }

  @Test
  void rayOnKubernetesClusterHasThePlansGpus() throws Exception {
    String text = new Deployer().deploy(DeployTarget.RAY_K8S, spec(Llama70b.COMMAND),
        Llama70b.ib()).get(0).text();
    int gpus = 0;
    for (JsonNode doc : CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(text),
        JsonNode.class).readAll()) {
      if (doc.path("kind").asText().equals("Deployment")) {
        int each = gpus(doc.at("/spec/template"));
        List<String> cmd = new ArrayList<>();
        doc.at("/spec/template/spec/containers/0/command").forEach(c -> cmd.add(c.asText()));
        assertThat(cmd).contains("--num-gpus=" + each);
        gpus += doc.at("/spec/replicas").asInt() * each;
      }
    }
    // Head Deployment 1 x 8 + worker Deployment 127 x 8 = 1024.
    assertThat(gpus).isEqualTo(1024);
  }

  private static int gpus(JsonNode template) {
    return template.at("/spec/containers/0/resources/limits").path("nvidia.com/gpu").asInt();
  }
}
