package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * NCCL's socket interface in every pod names an interface the pod has, under each pod network.
 *
 * <p>NVIDIA/nccl at 5067397c2676d5aed50042fc39e5c8ee96eb0027, {@code src/misc/socket.cc}
 * ({@code ncclFindInterfaces}, lines 196-203): a set {@code NCCL_SOCKET_IFNAME} is "find or fail";
 * {@code src/bootstrap.cc} line 126 then stops with "Bootstrap : no socket interface found". So
 * the interfaces a pod has are worked out here from the manifest alone: {@code lo}; {@code eth0}
 * on the cluster network; the host's interfaces (the doctor's {@code interfaces[]}) under {@code
 * hostNetwork}; and the Multus attachment, named after its {@code @} or {@code net1} for the
 * first attachment without one (Multus' default naming, net1, net2, ...).
 */
class PodNetworkTest {
  private static final Pattern EXPORT = Pattern.compile("export NCCL_SOCKET_IFNAME=(\\S+)");

  private static List<PodNetwork> networks() {
    return List.of(PodNetwork.parse("default"), PodNetwork.parse("host"),
        PodNetwork.parse("multus:kube-system/roce"), PodNetwork.parse("multus:kube-system/ib@ib0"));
  }

  @Test
  void everyPodsNcclSocketInterfaceIsOneThePodHas() throws Exception {
    int pods = 0;
    for (String doctor : List.of("ib-hdr.json", "roce-bond-gid9.json")) {
      String json = Llama70b.resource("/doctor-golden/" + doctor);
      FabricEnv fabric = DoctorFabric.read(doctor, json);
      Set<String> host = new TreeSet<>();
      CrdSchemas.YAML.readTree(json).path("interfaces")
          .forEach(i -> host.add(i.path("name").asText()));
      for (PodNetwork n : networks()) {
        LaunchSpec spec = Llama70b.spec(Llama70b.COMMAND, n);
        for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
            DeployTarget.PYTORCHJOB)) {
          for (Artifact a : new Deployer().deploy(t, spec, fabric)) {
            for (JsonNode doc : CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(a.text()),
                JsonNode.class).readAll()) {
              for (JsonNode pod : templates(doc)) {
                checkPod(pod, host, t + " " + n);
                pods++;
              }
            }
          }
        }
      }
    }
    // 2 fabrics x 4 networks x (KubeRay head + workers, ray-k8s head + workers, Master + Worker).
    assertThat(pods).isEqualTo(2 * 4 * 6);
  }

  /** One row: a target on a pod network, and the interface NCCL must be told (null: refused). */
  private record Row(DeployTarget target, String network, String iface) {}

  /**
   * The whole table, on the InfiniBand fabric whose host interface is ib0: every Kubernetes
   * target under each pod network, in both Ray modes for the Ray targets.
   */
  @Test
  void ncclSocketInterfaceByTargetAndPodNetwork() throws Exception {
    List<Row> table = new ArrayList<>();
    for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
        DeployTarget.PYTORCHJOB, DeployTarget.RUNAI)) {
      table.add(new Row(t, "default", "eth0"));
      // hostNetwork: the host's own interface; RunAI's CLI has no host network (refused).
      table.add(new Row(t, "host", t == DeployTarget.RUNAI ? null : "ib0"));
      table.add(new Row(t, "multus:kube-system/roce", "net1"));
      table.add(new Row(t, "multus:kube-system/ib@ib1", "ib1"));
    }
    int checked = 0;
    for (Row row : table) {
      for (RayMode mode : RayMode.values()) {
        LaunchSpec spec = Llama70b.spec(Llama70b.COMMAND, PodNetwork.parse(row.network()), mode);
        String what = row + " " + mode.label();
        if (row.iface() == null) {
          assertThatThrownBy(() -> new Deployer().deploy(row.target(), spec, Llama70b.ib()))
              .as(what).isInstanceOf(IllegalArgumentException.class);
          continue;
        }
        List<Artifact> files = new Deployer().deploy(row.target(), spec, Llama70b.ib());
        assertThat(ncclInterfaces(row.target(), files)).as(what).isNotEmpty()
            .containsOnly(row.iface());
        checked++;
      }
    }
    // 4 targets x 4 networks x 2 modes, less runai on host in 2 modes.
    assertThat(checked).isEqualTo(4 * 4 * 2 - 2);
  }

  /** Every NCCL_SOCKET_IFNAME the files give: pod env, or the RunAI node script's export. */
  private static List<String> ncclInterfaces(DeployTarget t, List<Artifact> files)
      throws Exception {
    List<String> out = new ArrayList<>();
    if (t == DeployTarget.RUNAI) {
      Matcher m = EXPORT.matcher(files.get(1).text());
      while (m.find()) {
        out.add(m.group(1));
      }
      return out;
    }
    for (JsonNode doc : CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(
        files.get(0).text()), JsonNode.class).readAll()) {
      for (JsonNode pod : templates(doc)) {
        for (JsonNode e : pod.at("/spec/containers/0/env")) {
          if (e.path("name").asText().equals("NCCL_SOCKET_IFNAME")) {
            out.add(e.path("value").asText());
          }
        }
      }
    }
    return out;
  }

  @Test
  void runaiNodeScriptExportsTheMultusInterfaceOrEth0() {
    for (PodNetwork n : List.of(networks().get(0), networks().get(2), networks().get(3))) {
      String node = new Deployer().deploy(DeployTarget.RUNAI,
          Llama70b.spec(Llama70b.COMMAND, n), Llama70b.roce()).get(1).text();
      Matcher m = EXPORT.matcher(node);
      assertThat(m.find()).as(node).isTrue();
      // roce-bond-gid9's host interface is net1; the pod's is eth0, net1 or ib0 by network.
      String want = n instanceof PodNetwork.Multus mu ? mu.iface() : "eth0";
      assertThat(m.group(1)).isEqualTo(want);
    }
    assertThatThrownBy(() -> new Deployer().deploy(DeployTarget.RUNAI,
        Llama70b.spec(Llama70b.COMMAND, new PodNetwork.Host()), Llama70b.ib()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void parseReadsTheThreeFormsAndRefusesOthers() {
    assertThat(PodNetwork.parse("multus:kube-system/roce"))
        .isEqualTo(new PodNetwork.Multus("kube-system", "roce", "net1"));
    assertThat(PodNetwork.parse("multus:ns/ib@ib1"))
        .isEqualTo(new PodNetwork.Multus("ns", "ib", "ib1"));
    for (String bad : List.of("", "Host", "multus:", "multus:roce", "multus:a/b@",
        "multus:a/b@x;y", "multus:A/b", "kube-system/roce", "multus:a/b@c@d")) {
      assertThatThrownBy(() -> PodNetwork.parse(bad)).as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  private static void checkPod(JsonNode pod, Set<String> hostInterfaces, String what) {
    Set<String> has = new TreeSet<>(Set.of("lo"));
    boolean hostNet = pod.at("/spec/hostNetwork").asBoolean(false);
    if (hostNet) {
      has.addAll(hostInterfaces);
      // Kubernetes: only ClusterFirstWithHostNet resolves Services from a hostNetwork pod.
      assertThat(pod.at("/spec/dnsPolicy").asText()).as(what)
          .isEqualTo("ClusterFirstWithHostNet");
    } else {
      has.add("eth0");
    }
    String multus = pod.at("/metadata/annotations").path("k8s.v1.cni.cncf.io/networks").asText();
    if (!multus.isEmpty()) {
      has.add(multus.contains("@") ? multus.substring(multus.indexOf('@') + 1) : "net1");
    }
    for (JsonNode e : pod.at("/spec/containers/0/env")) {
      if (e.path("name").asText().equals("NCCL_SOCKET_IFNAME")) {
        assertThat(has).as(what).contains(e.path("value").asText());
        return;
      }
    }
    throw new AssertionError(what + ": no NCCL_SOCKET_IFNAME");
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
