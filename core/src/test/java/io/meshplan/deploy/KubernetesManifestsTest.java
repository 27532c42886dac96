package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Every Kubernetes manifest for LLaMA2-70B on 128 nodes x 8 GPUs, parsed back and checked against
 * its schema (the CRDs' OpenAPI v3 schemas; the fabric8 model for core objects) and against the
 * launch: replicas 1 + 127 = 128 pods of 8 GPUs = world size 1024, the RDMA resource, IPC_LOCK,
 * a memory-backed /dev/shm and the doctor's NCCL environment.
 */
class KubernetesManifestsTest {
  private final Deployer deployer = new Deployer();

  private JsonNode parse(DeployTarget t, FabricEnv f) throws Exception {
    return docs(t, Llama70b.spec(), f).get(0);
  }

  private List<JsonNode> docs(DeployTarget t, LaunchSpec spec, FabricEnv f) throws Exception {
    List<Artifact> files = deployer.deploy(t, spec, f);
    assertThat(files).hasSize(1);
    return CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(files.get(0).text()),
        JsonNode.class).readAll();
  }

  @Test
  void rayJobMatchesTheKubeRayCrdAndTheLaunchInBothModes() throws Exception {
    for (RayMode mode : RayMode.values()) {
      List<JsonNode> docs = docs(DeployTarget.KUBERAY, Llama70b.spec(Llama70b.COMMAND,
          new PodNetwork.Multus("kube-system", "roce", "net1"), mode), Llama70b.ib());
      assertThat(docs).hasSize(2);
      JsonNode rj = docs.get(0);
      assertThat(CrdSchemas.violations("ray.io_rayjobs.yaml", "v1", rj)).isEmpty();
      // The embedded cluster spec also passes the RayCluster CRD's own spec schema.
      assertThat(CrdSchemas.violations("ray.io_rayclusters.yaml", "v1", rayCluster(rj)))
          .isEmpty();
      assertThat(rj.path("apiVersion").asText()).isEqualTo("ray.io/v1");
      assertThat(rj.path("kind").asText()).isEqualTo("RayJob");
      assertThat(rj.at("/spec/submissionMode").asText()).isEqualTo("K8sJobMode");
      // KubeRay refuses a TTL without shutdownAfterJobFinishes (validation.go).
      assertThat(rj.at("/spec/shutdownAfterJobFinishes").asBoolean()).isTrue();
      assertThat(rj.at("/spec/ttlSecondsAfterFinished").asInt()).isEqualTo(600);
      JsonNode cluster = rj.at("/spec/rayClusterSpec");
      JsonNode worker = cluster.at("/workerGroupSpecs/0");
      // 128 nodes = 1 head + 127 workers, each with all 8 GPUs of its node.
      assertThat(worker.path("replicas").asInt()).isEqualTo(127);
      assertThat(worker.path("minReplicas").asInt()).isEqualTo(127);
      assertThat(worker.path("maxReplicas").asInt()).isEqualTo(127);
      assertThat(cluster.at("/headGroupSpec/rayStartParams/num-gpus").asText()).isEqualTo("8");
      assertThat(worker.at("/rayStartParams/num-gpus").asText()).isEqualTo("8");
      checkPod(template(cluster.at("/headGroupSpec/template")), Llama70b.ib());
      checkPod(template(worker.path("template")), Llama70b.ib());
      ConfigMap cm = strict(CrdSchemas.YAML.writeValueAsString(docs.get(1)), ConfigMap.class);
      // The command reaches the driver as JSON words, never in the entrypoint.
      assertThat(cm.getData().get("command.json"))
          .isEqualTo("[\"pretrain_gpt.py\",\"--data-path\",\"/data/corpus\"]\n");
      String file = mode == RayMode.TORCHRUN ? RayTorchrunDriver.FILE : RayNativeDriver.FILE;
      // On a Multus network the pods find their own ports at start with fabric.sh.
      assertThat(cm.getData()).containsOnlyKeys("command.json", file, FabricLookupScript.FILE);
      // KubeRay writes the container's command itself and runs the args first
      // (ray-operator/controllers/ray/common/pod.go, BuildPod, v1.7.0).
      assertThat(template(cluster.at("/headGroupSpec/template")).getSpec().getContainers().get(0)
          .getArgs()).containsExactly(". /meshplan/fabric.sh");
      assertThat(rj.at("/spec/entrypoint").asText()).isEqualTo(mode == RayMode.TORCHRUN
          ? "python /meshplan/ray_torchrun.py --nodes 128 --gpus-per-node 8 --master-port 29500"
              + " --command-file /meshplan/command.json"
          : "python /meshplan/ray_native.py --nodes 128 --gpus-per-node 8"
              + " --command-file /meshplan/command.json");
    }
  }

  /** A RayCluster object around a RayJob's {@code rayClusterSpec}. */
  private static JsonNode rayCluster(JsonNode rayJob) {
    ObjectNode rc = CrdSchemas.YAML.createObjectNode();
    rc.put("apiVersion", "ray.io/v1");
    rc.put("kind", "RayCluster");
    rc.set("metadata", rayJob.path("metadata"));
    rc.set("spec", rayJob.at("/spec/rayClusterSpec"));
    return rc;
  }

  @Test
  void schemaCheckRejectsAWrongTypeAndAnUnknownField() throws Exception {
    JsonNode rj = parse(DeployTarget.KUBERAY, Llama70b.ib());
    ObjectNode badType = rj.deepCopy();
    ((ObjectNode) badType.at("/spec/rayClusterSpec/workerGroupSpecs/0")).put("replicas", "many");
    assertThat(CrdSchemas.violations("ray.io_rayjobs.yaml", "v1", badType)).isNotEmpty();
    ObjectNode unknown = rj.deepCopy();
    ((ObjectNode) unknown.at("/spec")).put("entryPoint", "x");
    assertThat(CrdSchemas.violations("ray.io_rayjobs.yaml", "v1", unknown)).isNotEmpty();
    ObjectNode badMode = rj.deepCopy();
    ((ObjectNode) badMode.at("/spec")).put("shutdownAfterJobFinishes", "yes");
    assertThat(CrdSchemas.violations("ray.io_rayjobs.yaml", "v1", badMode)).isNotEmpty();
    JsonNode job = parse(DeployTarget.PYTORCHJOB, Llama70b.ib());
    ObjectNode badJob = job.deepCopy();
    ((ObjectNode) badJob.at("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0"))
        .putArray("ports").addObject().put("containerPort", "not-a-port");
    assertThat(CrdSchemas.violations("kubeflow.org_pytorchjobs.yaml", "v1", badJob)).isNotEmpty();
  }

  @Test
  void kubeRayRefusesANameThatStartsWithADigit() {
    LaunchSpec spec = new LaunchSpec("7b-run", "train", Optional.of("img"), 2, 8,
        List.of("train.py"), "rdma/ib", 1, Optional.empty(), 29500, new PodNetwork.Default(),
        "/workspace/node.sh", "ib0", Optional.empty(), RayMode.TORCHRUN);
    assertThatThrownBy(() -> deployer.deploy(DeployTarget.KUBERAY, spec, Llama70b.ib()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'7b-run' must start with a letter");
  }

  @Test
  void pyTorchJobMatchesTheTrainingOperatorCrdAndTheLaunch() throws Exception {
    JsonNode job = parse(DeployTarget.PYTORCHJOB, Llama70b.roce());
    assertThat(CrdSchemas.violations("kubeflow.org_pytorchjobs.yaml", "v1", job)).isEmpty();
    assertThat(job.path("apiVersion").asText()).isEqualTo("kubeflow.org/v1");
    assertThat(job.path("kind").asText()).isEqualTo("PyTorchJob");
    assertThat(job.at("/spec/nprocPerNode").asText()).isEqualTo("8");
    JsonNode specs = job.at("/spec/pytorchReplicaSpecs");
    assertThat(specs.at("/Master/replicas").asInt()).isEqualTo(1);
    assertThat(specs.at("/Worker/replicas").asInt()).isEqualTo(127);
    for (String role : List.of("Master", "Worker")) {
      PodTemplateSpec t = template(specs.at("/" + role + "/template"));
      checkPod(t, Llama70b.roce());
      Container c = t.getSpec().getContainers().get(0);
      assertThat(c.getName()).isEqualTo("pytorch");
      // 128 nodes x 8 processes = world size 1024.
      assertThat(c.getCommand()).containsExactly("bash", "/meshplan/fabric.sh",
          "torchrun", "--nnodes=128", "--nproc-per-node=8",
          "--node-rank=$(RANK)", "--master-addr=$(MASTER_ADDR)", "--master-port=$(MASTER_PORT)",
          "pretrain_gpt.py", "--data-path", "/data/corpus");
    }
    // The node's GID index 9 is not the pod's: the pod finds its own when it starts.
    PodTemplateSpec master = template(specs.at("/Master/template"));
    assertThat(envOf(master)).doesNotContainKeys("NCCL_IB_GID_INDEX", "NCCL_IB_HCA");
    assertThat(master.getMetadata().getAnnotations())
        .containsEntry(KubePods.RDMA_NAMESPACE_ANNOTATION, "pod")
        .containsEntry(KubePods.FOUND_AT_START_ANNOTATION,
            "NCCL_IB_HCA,UCX_NET_DEVICES,NCCL_IB_GID_INDEX");
  }

  @Test
  void rayOnKubernetesIsTwoDeploymentsAndAServiceInTheFabric8Model() throws Exception {
    String text = deployer.deploy(DeployTarget.RAY_K8S, Llama70b.spec(), Llama70b.ib()).get(0)
        .text();
    String[] docs = text.split("(?m)^---\\n");
    assertThat(docs).hasSize(4);
    Deployment head = strict(docs[0], Deployment.class);
    Service svc = strict(docs[1], Service.class);
    Deployment worker = strict(docs[2], Deployment.class);
    ConfigMap driver = strict(docs[3], ConfigMap.class);
    assertThat(driver.getData()).containsOnlyKeys(RayTorchrunDriver.FILE, "command.json",
        FabricLookupScript.FILE);
    assertThat(head.getSpec().getReplicas()).isEqualTo(1);
    assertThat(worker.getSpec().getReplicas()).isEqualTo(127);
    assertThat(head.getSpec().getSelector().getMatchLabels())
        .isEqualTo(head.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(worker.getSpec().getSelector().getMatchLabels())
        .isEqualTo(worker.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(svc.getSpec().getSelector())
        .isEqualTo(head.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(svc.getSpec().getPorts()).extracting(p -> p.getPort())
        .containsExactly(6379, 8265, 10001);
    checkPod(head.getSpec().getTemplate(), Llama70b.ib());
    checkPod(worker.getSpec().getTemplate(), Llama70b.ib());
    assertThat(head.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand())
        .containsExactly("bash", "/meshplan/fabric.sh", "ray", "start", "--head", "--port=6379", "--dashboard-host=0.0.0.0",
            "--num-gpus=8", "--block");
    assertThat(worker.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand())
        .containsExactly("bash", "/meshplan/fabric.sh", "ray", "start",
            "--address=llama2-70b-ray-head.train.svc.cluster.local:6379", "--num-gpus=8",
            "--block");
  }

  /** Parses a core object with the fabric8 model and insists nothing landed in its catch-alls. */
  private static <T> T strict(String doc, Class<T> type) throws Exception {
    T value = CrdSchemas.YAML.readValue(doc, type);
    JsonNode back = CrdSchemas.YAML.valueToTree(value);
    assertThat(back).isEqualTo(CrdSchemas.YAML.readTree(doc));
    assertNoAdditional(value);
    return value;
  }

  private static void assertNoAdditional(Object o) {
    if (o instanceof Deployment d) {
      assertThat(d.getAdditionalProperties()).isEmpty();
      assertThat(d.getSpec().getAdditionalProperties()).isEmpty();
      assertNoAdditional(d.getSpec().getTemplate());
    } else if (o instanceof Service s) {
      assertThat(s.getAdditionalProperties()).isEmpty();
      assertThat(s.getSpec().getAdditionalProperties()).isEmpty();
    } else if (o instanceof PodTemplateSpec t) {
      assertThat(t.getAdditionalProperties()).isEmpty();
      assertThat(t.getSpec().getAdditionalProperties()).isEmpty();
      for (Container c : t.getSpec().getContainers()) {
        assertThat(c.getAdditionalProperties()).isEmpty();
        assertThat(c.getResources().getAdditionalProperties()).isEmpty();
        assertThat(c.getSecurityContext().getAdditionalProperties()).isEmpty();
      }
    }
  }

  private static PodTemplateSpec template(JsonNode node) throws Exception {
    PodTemplateSpec t = CrdSchemas.YAML.treeToValue(node, PodTemplateSpec.class);
    assertNoAdditional(t);
    return t;
  }

  private static Map<String, String> envOf(PodTemplateSpec t) {
    Map<String, String> m = new TreeMap<>();
    for (EnvVar e : t.getSpec().getContainers().get(0).getEnv()) {
      m.put(e.getName(), e.getValue());
    }
    return m;
  }

  /** The checks every pod of every Kubernetes target must pass. */
  static void checkPod(PodTemplateSpec t, FabricEnv fabric) {
    assertThat(t.getSpec().getContainers()).hasSize(1);
    Container c = t.getSpec().getContainers().get(0);
    assertThat(c.getImage()).isEqualTo("nvcr.io/nvidia/pytorch:24.05-py3");
    Map<String, Quantity> want = Map.of("nvidia.com/gpu", new Quantity("8"), "rdma/ib",
        new Quantity("1"));
    assertThat(c.getResources().getLimits()).isEqualTo(want);
    assertThat(c.getResources().getRequests()).isEqualTo(want);
    assertThat(c.getSecurityContext().getCapabilities().getAdd()).containsExactly("IPC_LOCK");
    // /dev/shm on every pod; the Ray pods also mount the driver's ConfigMap at /meshplan.
    assertThat(c.getVolumeMounts()).filteredOn(m -> m.getMountPath().equals("/dev/shm"))
        .hasSize(1);
    assertThat(c.getVolumeMounts()).extracting(m -> m.getMountPath())
        .isSubsetOf("/dev/shm", RayEntrypoint.MOUNT);
    String vol = c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/dev/shm"))
        .findFirst().orElseThrow().getName();
    assertThat(t.getSpec().getVolumes()).filteredOn(v -> v.getName().equals(vol))
        .singleElement().satisfies(v -> {
      assertThat(v.getName()).isEqualTo(vol);
      assertThat(v.getEmptyDir().getMedium()).isEqualTo("Memory");
      assertThat(v.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("64Gi"));
    });
    assertThat(envOf(t)).isEqualTo(Llama70b.onNet1(fabric.env()));
    assertThat(t.getMetadata().getAnnotations())
        .containsEntry("k8s.v1.cni.cncf.io/networks", "kube-system/roce@net1");
  }
}
