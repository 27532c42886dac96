package io.meshplan.deploy;

import io.meshplan.util.Require;
import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * RunAI's {@code runai submit-dist pytorch} (as in {@code seeds/002}): a submit script that asks
 * for {@code nodes - 1} workers (RunAI adds the master), all GPUs of a node per pod, the RDMA
 * extended resource, the {@code IPC_LOCK} capability (RDMA registers, that is pins, memory), the
 * Multus network annotation ({@code NS/NAME@IFACE}, under {@code --pod-network multus:...}) and a large {@code /dev/shm}; and the per-node script every pod
 * runs. On RoCE the per-node script finds the GID index on the node at run time with {@link
 * GidLookupScript} (the doctor's rule) and exports {@code NCCL_IB_GID_INDEX}; it then checks
 * RunAI's {@code WORLD_SIZE} (pods) and starts {@code torchrun} with one process per GPU over c10d
 * at {@code MASTER_ADDR:MASTER_PORT}.
 *
 * <p>The flags are those of RunAI's CLI v1 reference for {@code runai submit-dist pytorch}
 * (https://docs.run.ai/v2.13/Researcher/cli-reference/runai-submit-dist-pytorch/, the page
 * {@code seeds/002} cites; source {@code docs/Researcher/cli-reference/runai-submit-dist-pytorch.md}
 * in {@code github.com/run-ai/docs}): {@code --workers}, {@code --gpu}, {@code
 * --extended-resource NAME=QUANTITY}, {@code --large-shm}, {@code --annotation} and, under
 * "Container Definition", {@code --add-capability <stringArray>} ("Add linux capabilities to the
 * container"). RunAI's CLI v2 replaces the command with {@code runai training pytorch submit NAME}
 * (alias {@code runai pytorch submit}), whose flag is {@code --capability stringArray}
 * (https://docs.nvidia.com/run-ai/self-hosted/reference/cli/runai/training/runai-training-pytorch-submit);
 * the submit script says so in a comment.
 */
public final class RunaiLaunch {
  private RunaiLaunch() {}

  /**
   * Writes the two scripts.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the submit script, then the per-node script
   */
  public static List<Artifact> write(LaunchSpec spec, FabricEnv fabric) {
    Require.that(!(spec.podNetwork() instanceof PodNetwork.Host), "runai submit-dist pytorch"
        + " writes no host network; use the default pod network or a multus one");
    return List.of(submit(spec), node(spec, KubePods.podFabric(spec, fabric)));
  }

  /**
   * The file name of the per-node script.
   *
   * @param spec the launch
   * @return {@code NAME-node.sh}
   */
  public static String nodeScriptFileName(LaunchSpec spec) {
    return spec.name() + "-node.sh";
  }

  /**
   * The {@code runai submit-dist pytorch} command, split over lines with backslashes as in the
   * submit script.
   *
   * @param spec the launch; it needs an image
   * @return the command's shell text, ending in a newline
   */
  public static String submitCommand(LaunchSpec spec) {
    return ScriptText.fragment().command("", submitParts(spec)).text();
  }

  private static List<String> submitParts(LaunchSpec spec) {
    List<String> parts = new ArrayList<>(List.of(
        "runai submit-dist pytorch",
        "--name " + spec.name(),
        "--project " + spec.namespace(),
        "--image " + ShellQuote.quote(spec.image().orElseThrow()),
        "--workers " + (spec.nodes() - 1),
        "--gpu " + spec.gpusPerNode(),
        "--extended-resource " + ShellQuote.quote(spec.rdmaResource() + "=" + spec.rdmaCount()),
        "--add-capability " + ShellQuote.quote(KubePods.IPC_LOCK),
        "--large-shm"));
    if (spec.podNetwork() instanceof PodNetwork.Multus m) {
      parts.add("--annotation " + ShellQuote.quote(PodNetwork.MULTUS_ANNOTATION + "="
          + m.annotation()));
    }
    parts.add("-- bash " + ShellQuote.quote(spec.nodeScriptPath()));
    return parts;
  }

  private static Artifact submit(LaunchSpec spec) {
    ScriptText s = ScriptText.bash()
        .comment("Written by meshplan deploy: " + io.meshplan.util.Words.count(spec.nodes(), "pod") + " (1 master + "
            + io.meshplan.util.Words.count(spec.nodes() - 1, "worker") + ") x " + io.meshplan.util.Words.count(spec.gpusPerNode(), "GPU") + ".")
        .comment("Copy " + nodeScriptFileName(spec) + " to " + spec.nodeScriptPath()
            + " on storage every pod mounts (or into the image) first.")
        .comment("RunAI CLI v2 names the job as an argument ('runai training pytorch submit "
            + spec.name() + "') and spells --gpu as --gpu-devices-request, --add-capability as"
            + " --capability.")
        .line("set -euo pipefail")
        .command("", submitParts(spec));
    return new Artifact(spec.name() + "-submit.sh", s.text(), true);
  }

  private static Artifact node(LaunchSpec spec, FabricEnv fabric) {
    TreeMap<String, String> env = new TreeMap<>(fabric.env());
    boolean lookup = fabric.roce() && !fabric.ports().isEmpty();
    if (lookup) {
      env.remove("NCCL_IB_GID_INDEX");
    }
    ScriptText s = ScriptText.bash()
        .comment("Per-node launch for runai submit-dist pytorch, written by meshplan deploy.")
        .comment("RunAI sets WORLD_SIZE (pods, not GPUs), RANK (this pod), MASTER_ADDR and"
            + " MASTER_PORT.")
        .line("set -euo pipefail")
        .line("")
        .line(GidLookupScript.FUNCTION.stripTrailing())
        .line("")
        .line("main() {")
        .line("  echo \"START TIME: $(date)\"");
    StringBuilder exports = new StringBuilder();
    env.forEach((k, v) -> exports.append("  export ").append(k).append('=')
        .append(ShellQuote.quote(v)).append('\n'));
    s.line(exports.toString().stripTrailing().isEmpty() ? "  :" : exports.toString()
        .stripTrailing());
    if (lookup) {
      String port = fabric.ports().get(0);
      int colon = port.lastIndexOf(':');
      String dev = port.substring(0, colon);
      String num = port.substring(colon + 1);
      s.line("  local gid")
          .line("  if ! gid=\"$(meshplan_gid_index " + ShellQuote.quote(dev) + " " + num + ")\";"
              + " then")
          .line("    echo \"meshplan: no usable RoCE GID on " + dev + " port " + num + "\" >&2")
          .line("    exit 1")
          .line("  fi")
          .line("  export NCCL_IB_GID_INDEX=\"$gid\"");
    }
    s.line("  if [[ \"${WORLD_SIZE:-}\" != " + spec.nodes() + " ]]; then")
        .line("    echo \"meshplan: this job needs " + io.meshplan.util.Words.count(spec.nodes(), "pod") + ", RunAI started"
            + " ${WORLD_SIZE:-none}\" >&2")
        .line("    exit 1")
        .line("  fi");
    List<String> parts = new ArrayList<>(List.of(
        "torchrun",
        "--nproc-per-node=" + spec.gpusPerNode(),
        "--nnodes=\"$WORLD_SIZE\"",
        "--node-rank=\"$RANK\"",
        "--rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\"",
        "--rdzv-backend=c10d",
        "--max-restarts=0"));
    parts.add(ShellQuote.join(spec.command()));
    s.command("  ", parts)
        .line("  echo \"END TIME: $(date)\"")
        .line("}")
        .line("")
        .line("if [[ \"${BASH_SOURCE[0]}\" == \"$0\" ]]; then")
        .line("  main \"$@\"")
        .line("fi");
    return new Artifact(nodeScriptFileName(spec), s.text(), true);
  }
}
