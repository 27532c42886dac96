package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every field of every generated Kubernetes object satisfies the grammar the API server, the
 * operators and the container runtime check it against, under every pod network, both Ray modes
 * and three fabrics: the KubeRay and training-operator CRD schemas ({@link CrdSchemas}), the
 * fabric8 model for core objects, and the rules below, restated here apart from the main code:
 * apimachinery eed236ce ({@code pkg/util/validation/validation.go}: DNS-1123 labels and
 * subdomains, DNS-1035 labels, {@code IsValidPortName}, {@code IsEnvVarName}, {@code
 * IsConfigMapKey}; {@code pkg/api/validate/content/kube.go}: label keys and values), the training
 * operator's DNS-1035 job names (06f6008e {@code pkg/webhooks/pytorch/pytorchjob_webhook.go}),
 * and distribution/reference 0965666a ({@code regexp.go}) for images. A seeded run then draws
 * names, namespaces, images, RDMA resources and /dev/shm sizes, valid and not: each launch is
 * either refused or written with every field valid.
 */
class ManifestFieldsTest {
  private static final Pattern DNS1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS1035_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern QUALIFIED = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern ENV_NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");
  private static final Pattern CONFIG_MAP_KEY = Pattern.compile("[-._a-zA-Z0-9]+");
  private static final Pattern PORT_NAME = Pattern.compile("[-a-z0-9]{1,15}");
  /** distribution/reference's ReferenceRegexp, anchored, with its name and tag parts. */
  private static final Pattern IMAGE = Pattern.compile(
      "(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9]"
          + "[a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
          + "(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*(?::[\\w][\\w.-]{0,127})?"
          + "(?:@sha256:[a-f0-9]{64})?");

  private static final List<String> NETWORKS = List.of("default", "host",
      "multus:kube-system/roce", "multus:kube-system/ib@ib1");

  @Test
  void everyManifestUnderEveryPodNetworkPassesItsSchemasAndFieldRules() throws Exception {
    int objects = 0;
    for (String golden : List.of("ib-hdr", "roce-bond-gid9", "no-rdma")) {
      FabricEnv fabric = DoctorFabric.read(golden,
          Llama70b.resource("/doctor-golden/" + golden + ".json"));
      for (String net : NETWORKS) {
        for (RayMode mode : RayMode.values()) {
          LaunchSpec spec = new LaunchSpec("llama2-70b", "train",
              Optional.of("nvcr.io/nvidia/pytorch:24.05-py3"), 128, 8, Llama70b.COMMAND,
              "rdma/ib", 1, Optional.of("64Gi"), 29500, PodNetwork.parse(net),
              "/workspace/node.sh", "ib0", Optional.empty(), mode);
          for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
              DeployTarget.PYTORCHJOB)) {
            if (t == DeployTarget.PYTORCHJOB && mode == RayMode.NATIVE) {
              continue;
            }
            objects += check(t, new Deployer().deploy(t, spec, fabric).get(0).text(),
                golden + " " + net + " " + t.label() + " " + mode.label());
          }
        }
      }
    }
    // Per fabric and network: kuberay RayJob + ConfigMap (2) and ray-k8s head, Service, worker,
    // ConfigMap (4) in 2 Ray modes = 12; pytorchjob 1, + its ConfigMap where a pod finds its
    // ports (RDMA fabrics off the host network: 2 fabrics x 3 networks).
    // 3 x 4 x 13 + 6 = 162.
    assertThat(objects).isEqualTo(162);
  }

  /**
   * AMD (ROCm) launches: the same manifests pass the same CRD schemas and field rules, and every
   * pod requests {@code amd.com/gpu} (ROCm/k8s-device-plugin, {@link RocmLaunch}) and never
   * {@code nvidia.com/gpu}.
   */
  @Test
  void rocmManifestsPassTheSameChecksAndRequestAmdGpus() throws Exception {
    int objects = 0;
    for (String golden : List.of("ib-hdr", "roce-bond-gid9", "no-rdma")) {
      FabricEnv fabric = DoctorFabric.read(golden,
          Llama70b.resource("/doctor-golden/" + golden + ".json")).with(RocmLaunch.env());
      for (String net : NETWORKS) {
        LaunchSpec spec = new LaunchSpec("llama3-8b", "train",
            Optional.of("rocm/megatron-lm:v25.5_py312"), 2, 8, Llama70b.COMMAND, "rdma/ib", 1,
            Optional.of("64Gi"), 29500, PodNetwork.parse(net), "/workspace/node.sh", "ib0",
            Optional.empty(), RayMode.TORCHRUN, 1, true);
        for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
            DeployTarget.PYTORCHJOB)) {
          String yaml = new Deployer().deploy(t, spec, fabric).get(0).text();
          String what = "rocm " + golden + " " + net + " " + t.label();
          objects += check(t, yaml, what);
          assertThat(yaml).as(what).contains("amd.com/gpu: \"8\"")
              .doesNotContain("nvidia.com/gpu").contains("HSA_FORCE_FINE_GRAIN_PCIE");
        }
      }
    }
    // Per fabric and network: kuberay 2 + ray-k8s 4 + pytorchjob 1 = 7, + the pytorchjob's
    // ConfigMap where a pod finds its ports (2 RDMA fabrics x 3 networks): 3 x 4 x 7 + 6 = 90.
    assertThat(objects).isEqualTo(90);
  }

  /**
   * Seeded: launch fields drawn from valid values and near misses. Each launch is refused by
   * {@link LaunchSpec} or {@link Deployer} with an {@link IllegalArgumentException}, or its
   * manifests pass every rule.
   */
  @Test
  void seededLaunchFieldsAreRefusedOrWrittenValid() throws Exception {
    Random rnd = new Random(3636);
    List<String> names = List.of("llama", "a", "job-1", "x".repeat(40), "x".repeat(41), "Job",
        "7b", "job-", "job.x", "job_x", "-job", "a--b");
    List<String> namespaces = List.of("train", "default", "a".repeat(63), "a".repeat(64),
        "Train", "ns.x", "ns-", "kube-system");
    List<String> images = List.of("nvcr.io/nvidia/pytorch:24.05-py3", "ubuntu",
        "localhost:5000/a/b:c", "registry.example.com/team/img@sha256:" + "a".repeat(64),
        "nvcr.io/NVIDIA/pytorch:24.05", "UBUNTU", "img:", "img::tag", "img@sha256:abc",
        "/img", "img//x", "a".repeat(64), "img:-tag", "MyRegistry/img:1");
    List<String> resources = List.of("rdma/ib", "rdma/hca", "example.com/rdma_shared_device_a",
        "rdma", "kubernetes.io/ib", "requests.rdma/ib", "nvidia.com/gpu", "rdma/-ib", "RDMA/ib");
    List<String> shm = List.of("64Gi", "500M", "1e9", "1.5Gi", "0", "64GB", "1.5", "100m",
        "-1Gi", "8Ei");
    int written = 0;
    int refused = 0;
    for (int i = 0; i < 400; i++) {
      DeployTarget t = List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
          DeployTarget.PYTORCHJOB).get(rnd.nextInt(3));
      String what = "draw " + i + " " + t.label();
      List<Artifact> files;
      try {
        LaunchSpec spec = new LaunchSpec(pick(rnd, names), pick(rnd, namespaces),
            Optional.of(pick(rnd, images)), 1 + rnd.nextInt(4), 8, Llama70b.COMMAND,
            pick(rnd, resources), 1, Optional.of(pick(rnd, shm)), 29500,
            PodNetwork.parse(pick(rnd, NETWORKS)), "/workspace/node.sh", "ib0",
            Optional.empty(), RayMode.TORCHRUN);
        files = new Deployer().deploy(t, spec, Llama70b.roce());
      } catch (IllegalArgumentException e) {
        assertThat(e.getMessage()).as(what).doesNotContain("\n");
        refused++;
        continue;
      }
      check(t, files.get(0).text(), what + " " + files.get(0).text().lines().limit(8).toList());
      written++;
    }
    assertThat(written).isPositive();
    assertThat(refused).isPositive();
  }

  /**
   * Words YAML 1.1 or 1.2 resolvers read as numbers, booleans, nulls or dates stay strings in a
   * container's command, its environment and a /dev/shm size: parsed back, each is the same text.
   */
  @Test
  void aValueYamlWouldReadAsANumberOrDateStaysAString() throws Exception {
    List<String> words = List.of("1e9", "1e-4", "-2.5E+3", "0x1F", "0o17", "0b101", "1_000",
        "1:30", ".inf", "-.Inf", ".NaN", "2024-01-31", "2024-01-31T10:00:00Z", "y", "N", "~",
        "=", "<<", "yes", "off", "null", "012", "+7", ".5");
    java.util.TreeMap<String, String> env = new java.util.TreeMap<>();
    for (int i = 0; i < words.size(); i++) {
      env.put("V" + i, words.get(i));
    }
    LaunchSpec spec = new LaunchSpec("llama", "train", Optional.of("img"), 2, 8, words,
        "rdma/ib", 1, Optional.of("1e9"), 29500, new PodNetwork.Default(), "/w/node.sh", "ib0",
        Optional.empty(), RayMode.TORCHRUN);
    String yaml = new Deployer().deploy(DeployTarget.PYTORCHJOB, spec, FabricEnv.of(env)).get(0)
        .text();
    JsonNode c = CrdSchemas.YAML.readTree(yaml).at(
        "/spec/pytorchReplicaSpecs/Master/template/spec/containers/0");
    List<JsonNode> command = new ArrayList<>();
    c.path("command").forEach(command::add);
    List<JsonNode> tail = command.subList(command.size() - words.size(), command.size());
    for (int i = 0; i < words.size(); i++) {
      assertThat(tail.get(i).isTextual()).as(words.get(i)).isTrue();
      assertThat(tail.get(i).asText()).isEqualTo(words.get(i));
    }
    for (JsonNode e : c.path("env")) {
      if (e.path("name").asText().equals("NCCL_SOCKET_IFNAME")) {
        continue;
      }
      assertThat(e.path("value").isTextual()).as(e.toString()).isTrue();
      assertThat(e.path("value").asText()).isEqualTo(env.get(e.path("name").asText()));
    }
    assertThat(CrdSchemas.violations("kubeflow.org_pytorchjobs.yaml", "v1",
        CrdSchemas.YAML.readTree(yaml))).isEmpty();
  }

  private static String pick(Random rnd, List<String> from) {
    return from.get(rnd.nextInt(from.size()));
  }

  /** Checks every document of a manifest; returns how many there were. */
  private static int check(DeployTarget t, String yaml, String what) throws Exception {
    List<JsonNode> docs = CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(yaml),
        JsonNode.class).readAll();
    for (JsonNode d : docs) {
      String kind = d.path("kind").asText();
      String w = what + " " + kind;
      switch (kind) {
        case "RayJob" -> {
          assertThat(CrdSchemas.violations("ray.io_rayjobs.yaml", "v1", d)).as(w).isEmpty();
          ObjectNode rc = CrdSchemas.YAML.createObjectNode();
          rc.put("apiVersion", "ray.io/v1").put("kind", "RayCluster");
          rc.set("metadata", d.path("metadata"));
          rc.set("spec", d.at("/spec/rayClusterSpec"));
          assertThat(CrdSchemas.violations("ray.io_rayclusters.yaml", "v1", rc)).as(w).isEmpty();
        }
        case "PyTorchJob" -> assertThat(CrdSchemas.violations("kubeflow.org_pytorchjobs.yaml",
            "v1", d)).as(w).isEmpty();
        case "Deployment" -> roundTrips(d, Deployment.class, w);
        case "Service" -> roundTrips(d, Service.class, w);
        case "ConfigMap" -> {
          roundTrips(d, ConfigMap.class, w);
          d.path("data").fieldNames().forEachRemaining(k ->
              assertThat(k).as(w).matches(CONFIG_MAP_KEY).hasSizeLessThanOrEqualTo(253));
        }
        default -> throw new AssertionError(w + ": unexpected kind");
      }
      boolean dns1035 = List.of("RayJob", "PyTorchJob", "Service").contains(kind);
      metadata(d.path("metadata"), dns1035, w);
      for (JsonNode pod : templates(d)) {
        metadata(pod.path("metadata"), false, w);
        podSpec(pod.path("spec"), w);
      }
    }
    return docs.size();
  }

  private static <T> void roundTrips(JsonNode d, Class<T> type, String what) throws Exception {
    T value = CrdSchemas.YAML.treeToValue(d, type);
    JsonNode back = CrdSchemas.YAML.valueToTree(value);
    assertThat(back).as(what).isEqualTo(d);
  }

  private static void metadata(JsonNode m, boolean dns1035, String what) {
    if (m.has("name")) {
      String name = m.path("name").asText();
      if (dns1035) {
        assertThat(name).as(what + " name").matches(DNS1035_LABEL).hasSizeLessThanOrEqualTo(63);
      } else {
        assertThat(subdomain(name)).as(what + " name " + name).isTrue();
      }
    }
    if (m.has("namespace")) {
      assertThat(m.path("namespace").asText()).as(what).matches(DNS1123_LABEL)
          .hasSizeLessThanOrEqualTo(63);
    }
    m.path("labels").properties().forEach(e -> {
      assertThat(qualifiedName(e.getKey())).as(what + " label " + e.getKey()).isTrue();
      String v = e.getValue().asText();
      assertThat(v.isEmpty() || (v.length() <= 63 && QUALIFIED.matcher(v).matches()))
          .as(what + " label value " + v).isTrue();
    });
    m.path("annotations").fieldNames().forEachRemaining(k ->
        assertThat(qualifiedName(k)).as(what + " annotation " + k).isTrue());
  }

  private static void podSpec(JsonNode spec, String what) {
    List<String> volumes = new ArrayList<>();
    spec.path("volumes").forEach(v -> {
      volumes.add(v.path("name").asText());
      assertThat(v.path("name").asText()).as(what).matches(DNS1123_LABEL);
      if (v.at("/emptyDir/sizeLimit").isTextual()) {
        assertThat(Quantity.getAmountInBytes(new Quantity(v.at("/emptyDir/sizeLimit").asText()))
            .signum()).as(what).isPositive();
      }
    });
    for (JsonNode c : spec.path("containers")) {
      assertThat(c.path("name").asText()).as(what).matches(DNS1123_LABEL);
      assertThat(c.path("image").asText()).as(what).matches(IMAGE);
      for (JsonNode p : c.path("ports")) {
        String n = p.path("name").asText();
        assertThat(n).as(what).matches(PORT_NAME).matches(".*[a-z].*").doesNotContain("--")
            .doesNotStartWith("-").doesNotEndWith("-");
        assertThat(p.path("containerPort").asInt()).as(what).isBetween(1, 65535);
      }
      c.path("env").forEach(e -> assertThat(e.path("name").asText()).as(what).matches(ENV_NAME));
      c.path("volumeMounts").forEach(v -> assertThat(volumes).as(what)
          .contains(v.path("name").asText()));
      for (String side : List.of("limits", "requests")) {
        c.path("resources").path(side).properties().forEach(e -> {
          String r = e.getKey();
          assertThat(r.contains("/") && !r.contains("kubernetes.io/")
              && !r.startsWith("requests.") && qualifiedName("requests." + r))
              .as(what + " resource " + r).isTrue();
          assertThat(Quantity.getAmountInBytes(new Quantity(e.getValue().asText())).signum())
              .as(what).isPositive();
        });
      }
    }
  }

  private static boolean subdomain(String s) {
    return s.length() <= 253 && List.of(s.split("\\.", -1)).stream()
        .allMatch(l -> DNS1123_LABEL.matcher(l).matches());
  }

  private static boolean qualifiedName(String s) {
    int slash = s.indexOf('/');
    String name = slash < 0 ? s : s.substring(slash + 1);
    return (slash < 0 || subdomain(s.substring(0, slash))) && name.length() <= 63
        && QUALIFIED.matcher(name).matches();
  }

  private static List<JsonNode> templates(JsonNode n) {
    List<JsonNode> out = new ArrayList<>();
    if (n.isObject() && n.path("spec").path("containers").isArray()) {
      out.add(n);
    }
    n.forEach(c -> out.addAll(templates(c)));
    return out;
  }
}
