package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceClaim;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Launches on GB200/GB300 NVL72 racks (NVLink domains of several 4-GPU compute trays) as NVIDIA's
 * DRA driver for GPUs consumes them, its rules restated from kubernetes-sigs/dra-driver-nvidia-gpu
 * 95932046:
 *
 * <ul>
 *   <li>a ComputeDomain is valid under the CRD's OpenAPI schema ({@code
 *       deployments/helm/dra-driver-nvidia-gpu/crds/resource.nvidia.com_computedomains.yaml},
 *       copied unchanged under {@code crd/}): {@code resource.nvidia.com/v1beta1}, {@code
 *       spec.channel.resourceClaimTemplate.name} required, {@code numNodes} at least 0;
 *   <li>a pod gets the domain's IMEX channel by naming the template in {@code
 *       spec.resourceClaims[].resourceClaimTemplateName} and that claim's name in its container's
 *       {@code resources.claims} ({@code demo/specs/imex/nvbandwidth-test-job-1.yaml}, {@code
 *       site/content/docs/guides/compute-domain-workloads.md});
 *   <li>the NVLink partition of a node is its {@code nvidia.com/gpu.clique} label ({@code
 *       cmd/compute-domain-kubelet-plugin/computedomain.go}, {@code gpuCliqueLabelKey}).
 * </ul>
 *
 * <p>And meshplan's own: one ComputeDomain per NVLink domain the job uses, {@code numNodes} its
 * hosts, each pod all 4 GPUs of its tray, the pods of a domain as many as its hosts and held on one
 * clique by a pod affinity that matches the pod itself (so the first one can be placed).
 */
class ComputeDomainManifestsTest {
  private static final String CD_CRD = "resource.nvidia.com_computedomains.yaml";
  private static final String IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3";
  private final Deployer deployer = new Deployer();

  /** A launch of {@code domains} NVLink domains of {@code hosts} trays of 4 GPUs. */
  static LaunchSpec rack(int domains, int hosts, PodNetwork net, RayMode mode) {
    return new LaunchSpec("gb-run", "train", Optional.of(IMAGE), domains * hosts, 4,
        List.of("pretrain_gpt.py"), "rdma/ib", 1, Optional.empty(), 29500, net,
        "/workspace/node.sh", "ib0", Optional.empty(), mode, hosts);
  }

  private List<JsonNode> docs(DeployTarget t, LaunchSpec spec) throws Exception {
    List<Artifact> files = deployer.deploy(t, spec, Llama70b.ib());
    assertThat(files).hasSize(1);
    return CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(files.get(0).text()),
        JsonNode.class).readAll();
  }

  @Test
  void twoFullRacksOnKubeRayAreTwoComputeDomainsOfEighteenTrays() throws Exception {
    // 2 racks x 18 trays x 4 GPUs = 144 GPUs = 36 pods.
    List<JsonNode> docs = docs(DeployTarget.KUBERAY, rack(2, 18, new PodNetwork.Default(),
        RayMode.TORCHRUN));
    assertThat(docs).extracting(d -> d.path("kind").asText())
        .containsExactly("ComputeDomain", "ComputeDomain", "RayJob", "ConfigMap");
    Map<String, Integer> pods = checkAll(docs, 2, 18);
    // The head is domain 0's first tray: 1 + 17 workers; domain 1 is 18 workers.
    JsonNode groups = docs.get(2).at("/spec/rayClusterSpec/workerGroupSpecs");
    assertThat(groups).extracting(g -> g.path("groupName").asText())
        .containsExactly("gpu-workers-0", "gpu-workers-1");
    assertThat(groups).extracting(g -> g.path("replicas").asInt()).containsExactly(17, 18);
    assertThat(pods).containsExactly(Map.entry("0", 18), Map.entry("1", 18));
    assertThat(docs.get(2).at("/spec/entrypoint").asText()).endsWith("--nvlink-hosts 18");
  }

  @Test
  void sixtyFourGpusOfOneRackAreOneDomainOfSixteenTraysOnEveryKubernetesTarget()
      throws Exception {
    // NVIDIA's GB200 runs use 64 of a rack's 72 GPUs: 16 trays x 4 GPUs, numNodes 16.
    for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
        DeployTarget.PYTORCHJOB)) {
      List<JsonNode> docs = docs(t, rack(1, 16, new PodNetwork.Multus("kube-system", "ib",
          "net1"), RayMode.TORCHRUN));
      assertThat(docs.get(0).at("/spec/numNodes").asInt()).as(t.label()).isEqualTo(16);
      assertThat(checkAll(docs, 1, 16)).as(t.label()).containsExactly(Map.entry("0", 16));
    }
  }

  @Test
  void rayOnKubernetesHasAWorkerDeploymentPerRackOwningOnlyItsPods() throws Exception {
    List<JsonNode> docs = docs(DeployTarget.RAY_K8S, rack(3, 18, new PodNetwork.Host(),
        RayMode.NATIVE));
    List<Deployment> ds = new ArrayList<>();
    for (JsonNode d : docs) {
      if (d.path("kind").asText().equals("Deployment")) {
        ds.add(CrdSchemas.YAML.treeToValue(d, Deployment.class));
      }
    }
    assertThat(ds).extracting(d -> d.getMetadata().getName()).containsExactly(
        "gb-run-ray-head", "gb-run-ray-worker-0", "gb-run-ray-worker-1", "gb-run-ray-worker-2");
    assertThat(ds).extracting(d -> d.getSpec().getReplicas()).containsExactly(1, 17, 18, 18);
    for (Deployment d : ds) {
      // A Deployment's selector must match its template's labels; the domain keeps the
      // workers' Deployments from selecting each other's pods.
      assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
          .containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
      assertThat(d.getSpec().getSelector().getMatchLabels())
          .containsKey(ComputeDomains.DOMAIN_LABEL);
    }
    checkAll(docs, 3, 18);
  }

  @Test
  void randomRackLayoutsKeepEveryConsumerRule() throws Exception {
    Random r = new Random(39);
    List<DeployTarget> targets = List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
        DeployTarget.PYTORCHJOB);
    for (int i = 0; i < 40; i++) {
      DeployTarget t = targets.get(r.nextInt(targets.size()));
      int domains = t == DeployTarget.PYTORCHJOB ? 1 : 1 + r.nextInt(8);
      int hosts = 2 + r.nextInt(17);
      PodNetwork net = switch (r.nextInt(3)) {
        case 0 -> new PodNetwork.Default();
        case 1 -> new PodNetwork.Host();
        default -> new PodNetwork.Multus("kube-system", "roce", "net1");
      };
      RayMode mode = r.nextBoolean() ? RayMode.TORCHRUN : RayMode.NATIVE;
      String what = t.label() + " " + domains + " x " + hosts;
      Map<String, Integer> pods = checkAll(docs(t, rack(domains, hosts, net, mode)), domains,
          hosts);
      assertThat(pods).as(what).hasSize(domains);
      assertThat(pods.values()).as(what).allMatch(n -> n == hosts);
    }
  }

  @Test
  void theSchemaCheckRefusesWhatTheDriversCrdRefuses() throws Exception {
    JsonNode cd = docs(DeployTarget.KUBERAY, rack(1, 4, new PodNetwork.Default(),
        RayMode.TORCHRUN)).get(0);
    assertThat(CrdSchemas.violations(CD_CRD, "v1beta1", cd)).isEmpty();
    ObjectNode noChannel = cd.deepCopy();
    ((ObjectNode) noChannel.path("spec")).remove("channel");
    assertThat(CrdSchemas.violations(CD_CRD, "v1beta1", noChannel)).isNotEmpty();
    ObjectNode noName = cd.deepCopy();
    ((ObjectNode) noName.at("/spec/channel/resourceClaimTemplate")).remove("name");
    assertThat(CrdSchemas.violations(CD_CRD, "v1beta1", noName)).isNotEmpty();
    ObjectNode negative = cd.deepCopy();
    ((ObjectNode) negative.path("spec")).put("numNodes", -1);
    assertThat(CrdSchemas.violations(CD_CRD, "v1beta1", negative)).isNotEmpty();
    ObjectNode badMode = cd.deepCopy();
    ((ObjectNode) badMode.at("/spec/channel")).put("allocationMode", "Some");
    assertThat(CrdSchemas.violations(CD_CRD, "v1beta1", badMode)).isNotEmpty();
    ObjectNode unknown = cd.deepCopy();
    ((ObjectNode) unknown.path("spec")).put("nodes", 4);
    assertThat(CrdSchemas.violations(CD_CRD, "v1beta1", unknown)).isNotEmpty();
  }

  @Test
  void targetsThatCannotPinRacksAreRefusedInOneSentence() {
    LaunchSpec two = rack(2, 18, new PodNetwork.Default(), RayMode.TORCHRUN);
    assertThatThrownBy(() -> deployer.deploy(DeployTarget.PYTORCHJOB, two, Llama70b.ib()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pytorchjob cannot launch on 2 NVLink domains of 18 hosts x 4 GPUs: a"
            + " PyTorchJob's Workers share one pod template, so its pods cannot be pinned rack"
            + " by rack; kuberay, ray-k8s and slurm pin each domain's hosts together");
    LaunchSpec one = rack(1, 16, new PodNetwork.Default(), RayMode.TORCHRUN);
    assertThatThrownBy(() -> deployer.deploy(DeployTarget.RUNAI, one, Llama70b.ib()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("runai cannot launch on 1 NVLink domain of 16 hosts x 4 GPUs:"
            + " runai submit-dist pytorch has no flag for the pods' claim");
    assertThatThrownBy(() -> deployer.deploy(DeployTarget.DASK, one, Llama70b.ib()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dask cannot launch on 1 NVLink domain");
    FabricEnv taken = Llama70b.ib().with(new TreeMap<>(Map.of(ComputeDomains.DOMAIN_ENV, "3")));
    assertThatThrownBy(() -> deployer.deploy(DeployTarget.KUBERAY, one, taken))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("MESHPLAN_NVLINK_DOMAIN is the pod's NVLink domain");
  }

  @Test
  void nodesWhoseNvlinkStopsAtTheHostGetNoComputeDomain() throws Exception {
    for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
        DeployTarget.PYTORCHJOB)) {
      String text = deployer.deploy(t, Llama70b.spec(), Llama70b.ib()).get(0).text();
      assertThat(text).as(t.label()).doesNotContain("ComputeDomain", "resourceClaims",
          ComputeDomains.CLIQUE_LABEL, "name: " + ComputeDomains.DOMAIN_ENV, "command.json --nvlink-hosts");
    }
  }

  /**
   * Checks every ComputeDomain and every pod of a manifest, and the operators' schemas.
   *
   * @return the pods per domain label
   */
  private static Map<String, Integer> checkAll(List<JsonNode> docs, int domains, int hosts)
      throws Exception {
    Map<String, String> templateOf = new TreeMap<>();
    for (JsonNode d : docs) {
      switch (d.path("kind").asText()) {
        case "ComputeDomain" -> {
          assertThat(CrdSchemas.violations(CD_CRD, "v1beta1", d)).isEmpty();
          assertThat(d.path("apiVersion").asText()).isEqualTo("resource.nvidia.com/v1beta1");
          assertThat(d.at("/spec/numNodes").asInt()).isEqualTo(hosts);
          String k = d.at("/metadata/labels").path(ComputeDomains.DOMAIN_LABEL).asText();
          assertThat(d.at("/metadata/namespace").asText()).isEqualTo("train");
          templateOf.put(k, d.at("/spec/channel/resourceClaimTemplate/name").asText());
        }
        case "RayJob" -> {
          assertThat(CrdSchemas.violations("ray.io_rayjobs.yaml", "v1", d)).isEmpty();
          ObjectNode rc = CrdSchemas.YAML.createObjectNode();
          rc.put("apiVersion", "ray.io/v1");
          rc.put("kind", "RayCluster");
          rc.set("spec", d.at("/spec/rayClusterSpec"));
          assertThat(CrdSchemas.violations("ray.io_rayclusters.yaml", "v1", rc)).isEmpty();
        }
        case "PyTorchJob" -> assertThat(
            CrdSchemas.violations("kubeflow.org_pytorchjobs.yaml", "v1", d)).isEmpty();
        default -> { }
      }
    }
    assertThat(templateOf).hasSize(domains);
    assertThat(templateOf.values()).doesNotHaveDuplicates();
    Map<String, Integer> pods = new TreeMap<>();
    for (JsonNode d : docs) {
      for (Map.Entry<JsonNode, Integer> p : pods(d)) {
        PodTemplateSpec t = CrdSchemas.YAML.treeToValue(p.getKey(), PodTemplateSpec.class);
        String k = checkPod(t, templateOf);
        pods.merge(k, p.getValue(), Integer::sum);
      }
    }
    // As many pods in each domain as the ComputeDomain's numNodes: domains x hosts in all.
    assertThat(pods.keySet()).isEqualTo(templateOf.keySet());
    assertThat(pods.values()).allMatch(n -> n == hosts);
    return pods;
  }

  /** The pod templates of a document, each with its replicas. */
  private static List<Map.Entry<JsonNode, Integer>> pods(JsonNode d) {
    List<Map.Entry<JsonNode, Integer>> out = new ArrayList<>();
    switch (d.path("kind").asText()) {
      case "RayJob" -> {
        JsonNode c = d.at("/spec/rayClusterSpec");
        out.add(Map.entry(c.at("/headGroupSpec/template"), 1));
        for (JsonNode g : c.path("workerGroupSpecs")) {
          assertThat(g.path("minReplicas").asInt()).isEqualTo(g.path("replicas").asInt());
          assertThat(g.path("maxReplicas").asInt()).isEqualTo(g.path("replicas").asInt());
          out.add(Map.entry(g.path("template"), g.path("replicas").asInt()));
        }
      }
      case "Deployment" -> out.add(Map.entry(d.at("/spec/template"),
          d.at("/spec/replicas").asInt()));
      case "PyTorchJob" -> d.at("/spec/pytorchReplicaSpecs").forEach(r ->
          out.add(Map.entry(r.path("template"), r.path("replicas").asInt())));
      default -> { }
    }
    return out;
  }

  /** One pod's claim, GPUs, placement and variable; returns its domain label. */
  private static String checkPod(PodTemplateSpec t, Map<String, String> templateOf) {
    Map<String, String> labels = t.getMetadata().getLabels();
    String k = labels.get(ComputeDomains.DOMAIN_LABEL);
    assertThat(templateOf).containsKey(k);
    // The pod claims its own domain's channel template, under the name its container uses.
    List<PodResourceClaim> claims = t.getSpec().getResourceClaims();
    assertThat(claims).hasSize(1);
    assertThat(claims.get(0).getResourceClaimTemplateName()).isEqualTo(templateOf.get(k));
    assertThat(claims.get(0).getResourceClaimName()).isNull();
    Container c = t.getSpec().getContainers().get(0);
    assertThat(c.getResources().getClaims()).extracting(ResourceClaim::getName)
        .containsExactly(claims.get(0).getName());
    // A tray's 4 GPUs per pod.
    assertThat(c.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("4"));
    assertThat(c.getResources().getRequests()).containsEntry("nvidia.com/gpu",
        new Quantity("4"));
    // Kept with its domain on one clique: the term selects the pod itself, so the first of the
    // group can be placed, and the node must carry the clique label.
    List<PodAffinityTerm> terms = t.getSpec().getAffinity().getPodAffinity()
        .getRequiredDuringSchedulingIgnoredDuringExecution();
    assertThat(terms).hasSize(1);
    assertThat(terms.get(0).getTopologyKey()).isEqualTo("nvidia.com/gpu.clique");
    assertThat(labels).containsAllEntriesOf(terms.get(0).getLabelSelector().getMatchLabels());
    assertThat(terms.get(0).getLabelSelector().getMatchLabels())
        .containsEntry(ComputeDomains.DOMAIN_LABEL, k)
        .containsEntry(KubePods.JOB_LABEL, "gb-run");
    assertThat(t.getSpec().getAffinity().getNodeAffinity()
        .getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms().get(0)
        .getMatchExpressions().get(0)).satisfies(e -> {
          assertThat(e.getKey()).isEqualTo("nvidia.com/gpu.clique");
          assertThat(e.getOperator()).isEqualTo("Exists");
        });
    assertThat(c.getEnv()).filteredOn(e -> e.getName().equals(ComputeDomains.DOMAIN_ENV))
        .singleElement().satisfies(e -> assertThat(e.getValue()).isEqualTo(k));
    assertThat(c.getEnv()).isSortedAccordingTo((a, b) -> a.getName().compareTo(b.getName()));
    return k;
  }
}
