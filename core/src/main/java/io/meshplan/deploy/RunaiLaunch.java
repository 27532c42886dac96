package io.meshplan.deploy;

import io.meshplan.util.Require;
import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * RunAI's {@code runai submit-dist pytorch} (as in {@code seeds/002}): a submit script that asks
 * for {@code nodes - 1} workers (RunAI adds the master), all GPUs of a node per pod, the RDMA
 * extended resource, the {@code IPC_LOCK} capability (RDMA registers, that is pins, memory), the
 * Multus network annotation ({@code NS/NAME@IFACE}, under {@code --pod-network multus:...}) and
 * a large {@code /dev/shm}; and the per-node script every pod runs. A RunAI pod has its own
 * network and RDMA namespaces, so the per-node script finds its RDMA ports and, on RoCE, its GID
 * index when it starts ({@link FabricLookupScript}, the doctor's rules); it then checks
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
    return List.of(submit(spec), node(spec, ProcessFabric.inPod(spec, fabric)));
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

  private static Artifact node(LaunchSpec spec, ProcessFabric fabric) {
    boolean lookup = !fabric.foundAtStart().isEmpty();
    ScriptText s = ScriptText.bash()
        .comment("Per-node launch for runai submit-dist pytorch, written by meshplan deploy.")
        .comment("RunAI sets WORLD_SIZE (pods, not GPUs), RANK (this pod), MASTER_ADDR and"
            + " MASTER_PORT.");
    if (lookup) {
      s.comment("The pod has its own network and RDMA namespaces, so meshplan_fabric finds its "
          + fabric.foundAtStart().stream().map(Enum::name).collect(Collectors.joining(", "))
          + " when it starts.");
    }
    s.line("set -euo pipefail").line("");
    if (lookup) {
      s.line(FabricLookupScript.functions(fabric).stripTrailing()).line("");
    }
    s.line("main() {")
        .line("  echo \"START TIME: $(date)\"");
    StringBuilder exports = new StringBuilder();
    fabric.env().forEach((k, v) -> exports.append("  export ").append(k).append('=')
        .append(ShellQuote.quote(v)).append('\n'));
    s.line(exports.toString().stripTrailing().isEmpty() ? "  :" : exports.toString()
        .stripTrailing());
    s.line("  if [[ \"${WORLD_SIZE:-}\" != " + spec.nodes() + " ]]; then")
        .line("    echo \"meshplan: this job needs " + io.meshplan.util.Words.count(spec.nodes(), "pod") + ", RunAI started"
            + " ${WORLD_SIZE:-none}\" >&2")
        .line("    exit 1")
        .line("  fi");
    if (lookup) {
      s.line("  meshplan_fabric || exit 1");
    }
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
