package io.meshplan.deploy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * The Ray targets' {@code --ray-mode torchrun}: the Ray job's entrypoint is a driver that reserves
 * one placement-group bundle of all a node's GPUs on each node ({@code STRICT_SPREAD}, so no two
 * on one node), and runs {@code torchrun --nnodes=N --nproc-per-node=G --node-rank=I} in a task
 * on bundle I, with node 0's address as the master. So the job starts N x G ranks, one per GPU,
 * and the training script sees the whole world size.
 *
 * <p>The driver is a fixed Python file, shipped in a ConfigMap mounted at {@value #MOUNT} on
 * every Ray pod; everything that varies (node count, GPUs, port, the training command) reaches
 * it as arguments, so no outside value is ever part of the program's text. It uses Ray's public
 * API: {@code ray.util.placement_group.placement_group(bundles, strategy="STRICT_SPREAD")},
 * {@code PlacementGroupSchedulingStrategy(placement_group, placement_group_bundle_index)} and
 * {@code ray.util.get_node_ip_address()}.
 */
public final class RayTorchrunDriver {
  /** Where the ConfigMap is mounted in the Ray pods. */
  public static final String MOUNT = "/meshplan";
  /** The driver's file name inside the ConfigMap. */
  public static final String FILE = "ray_torchrun.py";

  /** The driver program. */
  static final String PROGRAM = """
      \"\"\"Runs torchrun once per Ray node, one process per GPU (written by meshplan deploy).\"\"\"
      import argparse
      import subprocess
      import sys

      import ray
      from ray.util.placement_group import placement_group
      from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


      @ray.remote(num_cpus=1)
      def node_ip():
          return ray.util.get_node_ip_address()


      @ray.remote(num_cpus=1)
      def torchrun(nodes, nproc, rank, addr, port, command):
          argv = ["torchrun", f"--nnodes={nodes}", f"--nproc-per-node={nproc}",
                  f"--node-rank={rank}", f"--master-addr={addr}", f"--master-port={port}",
                  "--max-restarts=0"] + command
          return subprocess.run(argv, check=False).returncode


      def main():
          p = argparse.ArgumentParser(description=__doc__)
          p.add_argument("--nodes", type=int, required=True)
          p.add_argument("--gpus-per-node", type=int, required=True)
          p.add_argument("--master-port", type=int, required=True)
          p.add_argument("command", nargs=argparse.REMAINDER)
          a = p.parse_args()
          command = a.command[1:] if a.command[:1] == ["--"] else a.command
          if not command:
              p.error("no training command after --")
          ray.init(address="auto")
          bundles = [{"GPU": a.gpus_per_node, "CPU": 1} for _ in range(a.nodes)]
          pg = placement_group(bundles, strategy="STRICT_SPREAD")
          ray.get(pg.ready())

          def on(i):
              return PlacementGroupSchedulingStrategy(
                  placement_group=pg, placement_group_bundle_index=i)

          addr = ray.get(node_ip.options(scheduling_strategy=on(0)).remote())
          runs = [torchrun.options(scheduling_strategy=on(i), num_gpus=a.gpus_per_node).remote(
              a.nodes, a.gpus_per_node, i, addr, a.master_port, command)
              for i in range(a.nodes)]
          codes = ray.get(runs)
          bad = [c for c in codes if c != 0]
          sys.exit(bad[0] if bad else 0)


      if __name__ == "__main__":
          main()
      """;

  private RayTorchrunDriver() {}

  /**
   * The ConfigMap holding the driver.
   *
   * @param spec the launch
   * @return {@code NAME-ray-driver} in the job's namespace
   */
  public static ConfigMap configMap(LaunchSpec spec) {
    return new ConfigMapBuilder().withNewMetadata().withName(configMapName(spec))
        .withNamespace(spec.namespace()).addToLabels(KubePods.JOB_LABEL, spec.name())
        .endMetadata().addToData(FILE, PROGRAM).build();
  }

  /**
   * The Ray job's entrypoint: the driver with the launch's shape, then the training command.
   *
   * @param spec the launch
   * @return the words, unquoted
   */
  public static List<String> entrypoint(LaunchSpec spec) {
    List<String> w = new ArrayList<>(List.of("python", MOUNT + "/" + FILE,
        "--nodes", Integer.toString(spec.nodes()),
        "--gpus-per-node", Integer.toString(spec.gpusPerNode()),
        "--master-port", Integer.toString(spec.masterPort()), "--"));
    w.addAll(spec.command());
    return w;
  }

  /**
   * The pod template with the driver's ConfigMap mounted read-only at {@value #MOUNT}.
   *
   * @param t the pod
   * @param spec the launch
   * @return a new template
   */
  static PodTemplateSpec mounted(PodTemplateSpec t, LaunchSpec spec) {
    return new PodTemplateSpecBuilder(t).editSpec()
        .addNewVolume().withName("meshplan-driver").withNewConfigMap()
        .withName(configMapName(spec)).endConfigMap().endVolume()
        .editFirstContainer().addNewVolumeMount().withName("meshplan-driver")
        .withMountPath(MOUNT).withReadOnly(true).endVolumeMount().endContainer()
        .endSpec().build();
  }

  private static String configMapName(LaunchSpec spec) {
    return spec.name() + "-ray-driver";
  }
}
