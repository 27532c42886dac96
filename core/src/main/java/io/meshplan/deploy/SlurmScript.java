package io.meshplan.deploy;

import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@code sbatch} script: one Slurm task per node, each running {@code torchrun} with one
 * process per GPU over a c10d rendezvous on the first node of the allocation. The script checks
 * that Slurm gave the node count it asked for before starting.
 */
public final class SlurmScript {
  private SlurmScript() {}

  /**
   * Writes the script.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the script
   */
  public static Artifact write(LaunchSpec spec, FabricEnv fabric) {
    ScriptText s = ScriptText.bash()
        .line("#SBATCH --job-name=" + spec.name())
        .line("#SBATCH --nodes=" + spec.nodes())
        .line("#SBATCH --ntasks-per-node=1")
        .line("#SBATCH --gpus-per-node=" + spec.gpusPerNode())
        .line("#SBATCH --exclusive")
        .line("#SBATCH --output=" + spec.name() + "-%j.out");
    if (spec.nvlinkHosts() > 1) {
      // Slurm's topology/block plugin (24.11 and later) allocates a job in segments of this
      // many nodes, each inside one block (sbatch --segment); with one block per NVLink domain
      // each segment is one rack's trays.
      s.line("#SBATCH --segment=" + spec.nvlinkHosts());
    }
    spec.partition().ifPresent(p -> s.line("#SBATCH --partition=" + p));
    s.comment("Written by meshplan deploy: " + io.meshplan.util.Words.count(spec.nodes(), "node") + " x "
            + io.meshplan.util.Words.count(spec.gpusPerNode(), "GPU") + " = "
            + io.meshplan.util.Words.count(spec.worldSize(), "training process") + ".");
    ProcessFabric.nodeNote(fabric).forEach(s::comment);
    if (spec.nvlinkHosts() > 1) {
      s.comment("Each " + spec.nvlinkHosts() + " nodes share one NVLink domain: the cluster's"
          + " topology.conf must hold");
      s.comment("one block per rack (TopologyPlugin=topology/block), and its IMEX channels come"
          + " from Slurm's");
      s.comment("switch/nvidia_imex plugin or the site's IMEX prolog.");
    }
    s.line("set -euo pipefail")
        .line("")
        .exports(ProcessFabric.onNode(fabric).env())
        .line("")
        .line("if [[ \"${SLURM_NNODES:-}\" != " + spec.nodes() + " ]]; then")
        .line("  echo \"meshplan: this job needs " + io.meshplan.util.Words.count(spec.nodes(), "node") + ", Slurm gave"
            + " ${SLURM_NNODES:-none}\" >&2")
        .line("  exit 1")
        .line("fi")
        // sed reads the whole list: head would close the pipe early, and scontrol's SIGPIPE
        // would fail the script under pipefail.
        .line("MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed -n 1p)\"")
        .line("MASTER_PORT=" + spec.masterPort());
    List<String> parts = new ArrayList<>(List.of(
        "srun --kill-on-bad-exit=1 --ntasks-per-node=1",
        "torchrun",
        "--nnodes=" + spec.nodes(),
        "--nproc-per-node=" + spec.gpusPerNode(),
        "--rdzv-id=\"$SLURM_JOB_ID\"",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\"",
        "--max-restarts=0"));
    parts.add(ShellQuote.join(spec.command()));
    s.command("", parts);
    return new Artifact(spec.name() + ".sbatch", s.text(), true);
  }
}
