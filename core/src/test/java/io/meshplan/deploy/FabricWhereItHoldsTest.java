package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.doctor.EnvAdvisor;
import io.meshplan.doctor.SysfsReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every deploy target under every pod network, on an InfiniBand, a RoCE and an RDMA-less fabric:
 * each launched process is run (its fabric script, node script or batch script, against stand-in
 * launchers) in the sysfs tree it would see, and each variable that names a node's own things is
 * checked against what {@code meshplan doctor} says in that tree. A Slurm task, a Dask process and
 * a {@code hostNetwork} pod see the node's tree, where the report was read: the node's values
 * hold. A pod on the cluster network or a Multus attachment sees an SR-IOV virtual function of its
 * own ({@link FakeSysfs}): on RoCE {@code mlx5_3} with its RoCE v2 IPv4 GID at index 3, where the
 * node's bond had index 9; on InfiniBand {@code mlx5_4}, where the node had mlx5_0 and mlx5_1.
 * {@code NCCL_SOCKET_IFNAME} (and UCX's interface without RDMA) must name an interface the process
 * has: the node's, or {@code lo}, {@code eth0} and the Multus attachment in a pod.
 */
class FabricWhereItHoldsTest {
  @TempDir Path tmp;

  private static final List<String> NETWORKS = List.of("default", "host",
      "multus:kube-system/roce", "multus:kube-system/ib@ib1");
  private static final List<String> PORT_VARIABLES = List.of("NCCL_IB_HCA", "UCX_NET_DEVICES");

  /** A doctor golden, the sysfs fixture it was read from, and the pod a VF gives. */
  private record Fabric(String name, BiFunction<Path, String, FakeSysfs> pod) {}

  private static final List<Fabric> FABRICS = List.of(
      new Fabric("ib-hdr", FakeSysfs::infinibandPod),
      new Fabric("roce-bond-gid9", FakeSysfs::rocePod),
      new Fabric("no-rdma", FakeSysfs::plainPod));

  /** One launched process: what it is, the environment it ran with, what it sees. */
  private record Launched(String what, Map<String, String> env, Path sysfs,
      Set<String> interfaces) {}

  @Test
  void everyHostSpecificVariableHoldsWhereItsProcessRuns() throws Exception {
    int processes = 0;
    int refused = 0;
    for (Fabric f : FABRICS) {
      FabricEnv fabric = DoctorFabric.read(f.name(),
          Llama70b.resource("/doctor-golden/" + f.name() + ".json"));
      Path host = fixture(f.name());
      for (String net : NETWORKS) {
        PodNetwork network = PodNetwork.parse(net);
        String multus = network instanceof PodNetwork.Multus m ? m.iface() : "net1";
        Path pod = f.pod().apply(Files.createTempDirectory(tmp, "pod"), multus).root();
        for (DeployTarget t : DeployTarget.values()) {
          LaunchSpec spec = spec(network);
          String what = f.name() + " " + t.label() + " " + net;
          if (t == DeployTarget.RUNAI && network instanceof PodNetwork.Host) {
            assertThatThrownBy(() -> new Deployer().deploy(t, spec, fabric)).as(what)
                .isInstanceOf(IllegalArgumentException.class);
            refused++;
            continue;
          }
          List<Artifact> files = new Deployer().deploy(t, spec, fabric);
          for (Launched p : launch(what, t, files, host, pod, multus)) {
            check(p);
            processes++;
          }
        }
      }
    }
    // Per fabric and network: kuberay 2 pods (head, worker), ray-k8s 2, pytorchjob 2 (Master,
    // Worker), runai 1, slurm 1, dask 1 = 9, less runai on the host network:
    // 3 fabrics x (4 networks x 9 - 1) = 105 processes; runai refused 3 times.
    assertThat(processes).isEqualTo(105);
    assertThat(refused).isEqualTo(3);
  }

  /** The pod of the issue: a RoCE pytorchjob on the cluster network gets the pod's GID, not 9. */
  @Test
  void aRocePodOnTheClusterNetworkUsesItsOwnGidIndexNotTheNodes() throws Exception {
    FabricEnv fabric = Llama70b.roce();
    assertThat(fabric.env()).containsEntry("NCCL_IB_GID_INDEX", "9");
    List<Artifact> files = new Deployer().deploy(DeployTarget.PYTORCHJOB,
        spec(new PodNetwork.Default()), fabric);
    Path pod = FakeSysfs.rocePod(tmp, "net1").root();
    Launched master = launch("pytorchjob default", DeployTarget.PYTORCHJOB, files,
        fixture("roce-bond-gid9"), pod, "net1").get(0);
    // mlx5_3's GID table: 0/1 link-local (v1, v2), 2/3 ::ffff:10.1.2.3 (v1, v2): RoCE v2 IPv4 is 3.
    assertThat(master.env()).containsEntry("NCCL_IB_GID_INDEX", "3")
        .containsEntry("NCCL_IB_HCA", "=mlx5_3:1").containsEntry("UCX_NET_DEVICES", "mlx5_3:1")
        .containsEntry("NCCL_SOCKET_IFNAME", "eth0");
  }

  @Test
  void aPodWithoutTheRdmaPortStopsInOneLine() throws Exception {
    List<Artifact> files = new Deployer().deploy(DeployTarget.PYTORCHJOB,
        spec(new PodNetwork.Default()), Llama70b.roce());
    Path script = Shell.temp(fabricScript(docs(files.get(0))).orElseThrow());
    Path empty = FakeSysfs.plainPod(tmp, "net1").root();
    FakeTools fake = new FakeTools();
    Shell.Result r = Shell.bash(script, List.of("torchrun"),
        fake.env(Map.of("MESHPLAN_SYSFS_ROOT", empty.toString())), null);
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).hasLineCount(1).startsWith("meshplan: no ACTIVE Ethernet RDMA port under ");
  }

  /** What a user's --env gives stays as given: the pod does not look it up. */
  @Test
  void aVariableGivenForTheLaunchIsKeptInEveryPod() {
    FabricEnv fabric = Llama70b.roce().with(new TreeMap<>(Map.of("NCCL_IB_HCA", "mlx5")));
    ProcessFabric pod = ProcessFabric.inPod(spec(new PodNetwork.Default()), fabric);
    assertThat(pod.env()).containsEntry("NCCL_IB_HCA", "mlx5");
    assertThat(pod.foundAtStart()).extracting(Enum::name)
        .containsExactly("UCX_NET_DEVICES", "NCCL_IB_GID_INDEX");
  }

  private static LaunchSpec spec(PodNetwork network) {
    return new LaunchSpec("llama", "train", Optional.of("nvcr.io/nvidia/pytorch:24.05-py3"), 2,
        8, List.of("pretrain_gpt.py"), "rdma/ib", 1, Optional.empty(), 29500, network,
        "/workspace/llama-node.sh", "ib0", Optional.empty(), RayMode.TORCHRUN);
  }

  private static Path fixture(String name) throws Exception {
    return Path.of(FabricWhereItHoldsTest.class.getResource("/sysfs/" + name).toURI());
  }

  /** The processes the files start, each run to the point where it would start NCCL. */
  private List<Launched> launch(String what, DeployTarget t, List<Artifact> files, Path host,
      Path pod, String multus) throws Exception {
    Set<String> hostIfaces = interfaces(host);
    Set<String> podIfaces = new TreeSet<>(Set.of("lo", "eth0", multus));
    List<Launched> out = new ArrayList<>();
    FakeTools fake = new FakeTools();
    switch (t) {
      case SLURM -> {
        run(files.get(0), List.of(), Map.of("SLURM_NNODES", "2", "SLURM_JOB_NODELIST", "n[1-2]",
            "SLURM_JOB_ID", "7"), host, fake);
        out.add(new Launched(what, fake.environment(), host, hostIfaces));
      }
      case DASK -> {
        run(files.get(0), List.of("scheduler"), Map.of(), host, fake);
        out.add(new Launched(what, fake.environment(), host, hostIfaces));
      }
      case RUNAI -> {
        run(files.get(1), List.of(), Map.of("WORLD_SIZE", "2", "RANK", "1", "MASTER_ADDR",
            "10.0.0.1", "MASTER_PORT", "23456"), pod, fake);
        out.add(new Launched(what, fake.environment(), pod, podIfaces));
      }
      default -> {
        List<JsonNode> docs = docs(files.get(0));
        Optional<String> script = fabricScript(docs);
        for (JsonNode tpl : templates(docs)) {
          boolean hostNet = tpl.at("/spec/hostNetwork").asBoolean(false);
          String ns = tpl.at("/metadata/annotations").path(KubePods.RDMA_NAMESPACE_ANNOTATION)
              .asText();
          assertThat(ns).as(what).isEqualTo(hostNet ? "node" : "pod");
          out.add(new Launched(what + " " + tpl.at("/metadata/labels/meshplan.io~1role")
              .asText(), startPod(what, tpl, script, hostNet ? host : pod, fake),
              hostNet ? host : pod, hostNet ? hostIfaces : podIfaces));
        }
      }
    }
    return out;
  }

  /** Runs a pod's container up to its command: the fabric script, if it has one, then torchrun. */
  private static Map<String, String> startPod(String what, JsonNode tpl, Optional<String> script,
      Path sysfs, FakeTools fake) {
    JsonNode c = tpl.at("/spec/containers/0");
    Map<String, String> env = new TreeMap<>();
    c.path("env").forEach(e -> env.put(e.path("name").asText(),
        e.path("value").asText().replace("$$", "$")));
    env.put("MESHPLAN_SYSFS_ROOT", sysfs.toString());
    List<String> command = new ArrayList<>();
    c.path("command").forEach(w -> command.add(w.asText()));
    List<String> args = new ArrayList<>();
    c.path("args").forEach(w -> args.add(w.asText()));
    boolean exec = command.size() > 1 && command.get(1).equals(FabricLookupScript.PATH);
    boolean sourced = args.equals(List.of(". " + FabricLookupScript.PATH));
    if (!exec && !sourced) {
      return env;
    }
    assertThat(tpl.at("/spec/volumes").toString()).as(what).contains("configMap");
    Path file = Shell.temp(script.orElseThrow(() -> new AssertionError(what + ": no fabric.sh")));
    Shell.Result r = exec
        ? Shell.bash(file, List.of("torchrun"), fake.env(env), null)
        : Shell.run(List.of("bash", "-c", ". " + file + " && torchrun"), fake.env(env), null);
    assertThat(r.code()).as(what + ": " + r.err()).isZero();
    return fake.environment();
  }

  private static void run(Artifact a, List<String> args, Map<String, String> more, Path sysfs,
      FakeTools fake) {
    Map<String, String> env = new TreeMap<>(more);
    env.put("MESHPLAN_SYSFS_ROOT", sysfs.toString());
    Shell.Result r = Shell.bash(Shell.temp(a.text()), args, fake.env(env), null);
    assertThat(r.code()).as(a.fileName() + ": " + r.err()).isZero();
  }

  /** Each variable against the doctor's answer in the tree the process sees. */
  private static void check(Launched p) {
    Map<String, String> truth = new EnvAdvisor().advise(new SysfsReader(p.sysfs()).read()).env();
    Map<String, String> env = p.env();
    boolean rdma = truth.containsKey("NCCL_IB_HCA");
    if (rdma) {
      for (String v : PORT_VARIABLES) {
        assertThat(ports(env.get(v))).as(p.what() + " " + v).isEqualTo(ports(truth.get(v)));
      }
    } else {
      assertThat(env).as(p.what()).doesNotContainKey("NCCL_IB_HCA")
          .containsEntry("NCCL_IB_DISABLE", "1");
      assertThat(p.interfaces()).as(p.what() + " UCX_NET_DEVICES")
          .contains(env.get("UCX_NET_DEVICES"));
    }
    assertThat(env.get("NCCL_IB_GID_INDEX")).as(p.what() + " NCCL_IB_GID_INDEX")
        .isEqualTo(truth.get("NCCL_IB_GID_INDEX"));
    assertThat(p.interfaces()).as(p.what() + " NCCL_SOCKET_IFNAME")
        .contains(env.get("NCCL_SOCKET_IFNAME"));
  }

  private static Set<String> ports(String list) {
    if (list == null) {
      return Set.of();
    }
    return new TreeSet<>(Arrays.asList(list.replaceFirst("^=", "").split(",")));
  }

  private static Set<String> interfaces(Path sysfs) throws Exception {
    try (Stream<Path> s = Files.list(sysfs.resolve("class/net"))) {
      return new TreeSet<>(s.filter(Files::isDirectory).map(x -> x.getFileName().toString())
          .toList());
    }
  }

  private static List<JsonNode> docs(Artifact a) throws Exception {
    return CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(a.text()), JsonNode.class)
        .readAll();
  }

  private static Optional<String> fabricScript(List<JsonNode> docs) {
    return docs.stream().filter(d -> d.path("kind").asText().equals("ConfigMap"))
        .map(d -> d.path("data").path(FabricLookupScript.FILE))
        .filter(n -> !n.isMissingNode()).map(JsonNode::asText).findFirst();
  }

  private static List<JsonNode> templates(List<JsonNode> docs) {
    List<JsonNode> out = new ArrayList<>();
    docs.forEach(d -> collect(d, out));
    return out;
  }

  private static void collect(JsonNode n, List<JsonNode> out) {
    if (n.isObject() && n.path("spec").path("containers").isArray()) {
      out.add(n);
    }
    n.forEach(c -> collect(c, out));
  }
}
