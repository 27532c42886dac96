package io.meshplan.deploy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The acceptance case: LLaMA2-70B on 128x8:h100-80gb:ib-ndr400. */
final class Llama70b {
  static final int NODES = 128;
  static final int GPUS = 8;
  static final List<String> COMMAND = List.of("pretrain_gpt.py", "--data-path", "/data/corpus");

  private Llama70b() {}

  static LaunchSpec spec() {
    return spec(COMMAND);
  }

  static LaunchSpec spec(List<String> command) {
    return spec(command, new PodNetwork.Multus("kube-system", "roce", "net1"));
  }

  static LaunchSpec spec(List<String> command, PodNetwork network) {
    return spec(command, network, RayMode.TORCHRUN);
  }

  static LaunchSpec spec(List<String> command, PodNetwork network, RayMode mode) {
    return new LaunchSpec("llama2-70b", "train", Optional.of("nvcr.io/nvidia/pytorch:24.05-py3"), NODES, GPUS,
        command, "rdma/ib", 1, Optional.of("64Gi"), 29500, network,
        "/workspace/llama2-70b-node.sh", "ib0", Optional.of("gpu"), mode);
  }

  /**
   * The environment a pod on {@code kube-system/roce@net1} is given in its manifest: the fabric's,
   * with NCCL's socket on {@code net1}, the interface the annotation names, and without the
   * node's ports and GID index, which the pod finds itself when it starts.
   */
  static Map<String, String> onNet1(Map<String, String> env) {
    Map<String, String> m = new TreeMap<>(env);
    m.put("NCCL_SOCKET_IFNAME", "net1");
    m.keySet().removeAll(List.of("NCCL_IB_HCA", "UCX_NET_DEVICES", "NCCL_IB_GID_INDEX"));
    return m;
  }

  /** The doctor's JSON golden for a two-port InfiniBand HDR node. */
  static FabricEnv ib() {
    return DoctorFabric.read("ib-hdr.json", resource("/doctor-golden/ib-hdr.json"));
  }

  /** The doctor's JSON golden for a RoCE bond whose RoCE v2 IPv4 GID is index 9. */
  static FabricEnv roce() {
    return DoctorFabric.read("roce-bond-gid9.json", resource("/doctor-golden/roce-bond-gid9.json"));
  }

  static String resource(String path) {
    try (InputStream in = Llama70b.class.getResourceAsStream(path)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
