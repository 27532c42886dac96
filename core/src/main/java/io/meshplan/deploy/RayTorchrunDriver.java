package io.meshplan.deploy;

import java.util.ArrayList;
import java.util.List;

/**
 * The Ray targets' {@code --ray-mode torchrun}: the Ray job's entrypoint is a driver that reserves
 * one placement-group bundle of all a node's GPUs on each node ({@code STRICT_SPREAD}, so no two
 * on one node), and runs {@code torchrun --nnodes=N --nproc-per-node=G --node-rank=I} in a task
 * on bundle I, with node 0's address as the master. So the job starts N x G ranks, one per GPU,
 * and the training script sees the whole world size. On a rack each pod holds its NVLink domain
 * in {@code MESHPLAN_NVLINK_DOMAIN} ({@link ComputeDomains}); the driver reads it on every
 * bundle's node and gives node ranks domain by domain, so that each domain's hosts hold the
 * consecutive ranks the plan puts in one NVLink domain, and stops if the domains do not hold
 * {@code --nvlink-hosts} nodes each.
 *
 * <p>The driver is a fixed Python file, shipped with the training command in {@link
 * RayEntrypoint}'s ConfigMap; the shape reaches it as arguments and the command as a JSON list
 * of words in a file, so no outside value is ever part of the program's text or of a shell
 * command line. It uses Ray's public API: {@code
 * ray.util.placement_group.placement_group(bundles, strategy="STRICT_SPREAD")},
 * {@code PlacementGroupSchedulingStrategy(placement_group, placement_group_bundle_index)} and
 * {@code ray.util.get_node_ip_address()}.
 */
public final class RayTorchrunDriver {
  /** The driver's file name inside the ConfigMap. */
  public static final String FILE = "ray_torchrun.py";

  /** The driver program. */
  static final String PROGRAM = """
      \"\"\"Runs torchrun once per Ray node, one process per GPU (written by meshplan deploy).\"\"\"
      import argparse
      import json
      import os
      import subprocess
      import sys

      import ray
      from ray.util.placement_group import placement_group
      from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


      @ray.remote(num_cpus=1)
      def place():
          domain = int(os.environ.get("MESHPLAN_NVLINK_DOMAIN", "0"))
          return ray.util.get_node_ip_address(), domain


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
          p.add_argument("--command-file", required=True)
          p.add_argument("--nvlink-hosts", type=int, default=1)
          a = p.parse_args()
          with open(a.command_file, encoding="utf-8") as f:
              command = json.load(f)
          if not command:
              p.error("the command file holds no training command")
          ray.init(address="auto")
          bundles = [{"GPU": a.gpus_per_node, "CPU": 1} for _ in range(a.nodes)]
          pg = placement_group(bundles, strategy="STRICT_SPREAD")
          ray.get(pg.ready())

          def on(i):
              return PlacementGroupSchedulingStrategy(
                  placement_group=pg, placement_group_bundle_index=i)

          places = ray.get([place.options(scheduling_strategy=on(i)).remote()
                            for i in range(a.nodes)])
          # Node ranks follow NVLink domains: each domain's hosts hold consecutive ranks.
          order = sorted(range(a.nodes), key=lambda i: (places[i][1], i))
          held = [places[i][1] for i in order]
          if a.nvlink_hosts > 1 and held != [r // a.nvlink_hosts for r in range(a.nodes)]:
              counts = {d: held.count(d) for d in sorted(set(held))}
              sys.exit(f"meshplan: the Ray nodes per NVLink domain are {counts}; each of the"
                       f" {a.nodes // a.nvlink_hosts} domains needs {a.nvlink_hosts}")
          addr = places[order[0]][0]
          runs = [torchrun.options(scheduling_strategy=on(i), num_gpus=a.gpus_per_node).remote(
              a.nodes, a.gpus_per_node, rank, addr, a.master_port, command)
              for rank, i in enumerate(order)]
          codes = ray.get(runs)
          bad = [c for c in codes if c != 0]
          sys.exit(bad[0] if bad else 0)


      if __name__ == "__main__":
          main()
      """;

  private RayTorchrunDriver() {}

  /**
   * The driver's words in the Ray job's entrypoint: the launch's shape and the command file.
   *
   * @param spec the launch
   * @param commandFile where the training command's JSON file is in the pods
   * @return the words, all plain (letters, digits, {@code /._-})
   */
  static List<String> entrypoint(LaunchSpec spec, String commandFile) {
    List<String> w = new ArrayList<>(List.of("python", RayEntrypoint.MOUNT + "/" + FILE,
        "--nodes", Integer.toString(spec.nodes()),
        "--gpus-per-node", Integer.toString(spec.gpusPerNode()),
        "--master-port", Integer.toString(spec.masterPort()), "--command-file", commandFile));
    if (spec.nvlinkHosts() > 1) {
      w.addAll(List.of("--nvlink-hosts", Integer.toString(spec.nvlinkHosts())));
    }
    return List.copyOf(w);
  }
}
