package io.meshplan.deploy;

import java.util.List;

/**
 * The Ray targets' {@code --ray-mode native}: the Ray job's entrypoint is a small launcher that
 * puts the cluster's size in the environment ({@link #SIZE_VARIABLES}) and replaces itself
 * ({@code os.execvp}) with the user's own Ray driver, run once, which then uses the whole cluster
 * itself: an Alpa program, as in {@code seeds/000}, calls {@code alpa.init(cluster="ray")} and can
 * hand the size on as {@code num_nodes} and {@code num_devices_per_node}. The driver's words come
 * from a JSON file in {@link RayEntrypoint}'s ConfigMap, never from a shell command line.
 */
public final class RayNativeDriver {
  /** The launcher's file name inside the ConfigMap. */
  public static final String FILE = "ray_native.py";

  /** The variables holding the cluster's nodes, GPUs per node and GPUs in all. */
  public static final List<String> SIZE_VARIABLES =
      List.of("MESHPLAN_NUM_NODES", "MESHPLAN_GPUS_PER_NODE", "MESHPLAN_NUM_GPUS");

  /** The launcher program. */
  static final String PROGRAM = """
      \"\"\"Runs the user's Ray driver with the Ray cluster's size (written by meshplan deploy).\"\"\"
      import argparse
      import json
      import os


      def main():
          p = argparse.ArgumentParser(description=__doc__)
          p.add_argument("--nodes", type=int, required=True)
          p.add_argument("--gpus-per-node", type=int, required=True)
          p.add_argument("--command-file", required=True)
          a = p.parse_args()
          with open(a.command_file, encoding="utf-8") as f:
              command = json.load(f)
          if not command:
              p.error("the command file holds no driver command")
          os.environ["MESHPLAN_NUM_NODES"] = str(a.nodes)
          os.environ["MESHPLAN_GPUS_PER_NODE"] = str(a.gpus_per_node)
          os.environ["MESHPLAN_NUM_GPUS"] = str(a.nodes * a.gpus_per_node)
          os.execvp(command[0], command)


      if __name__ == "__main__":
          main()
      """;

  private RayNativeDriver() {}

  /**
   * The launcher's words in the Ray job's entrypoint.
   *
   * @param spec the launch
   * @param commandFile where the driver command's JSON file is in the pods
   * @return the words, all plain (letters, digits, {@code /._-})
   */
  static List<String> entrypoint(LaunchSpec spec, String commandFile) {
    return List.of("python", RayEntrypoint.MOUNT + "/" + FILE,
        "--nodes", Integer.toString(spec.nodes()),
        "--gpus-per-node", Integer.toString(spec.gpusPerNode()), "--command-file", commandFile);
  }
}
