package io.meshplan.calibrate;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.Collective;
import io.meshplan.cluster.FabricKind;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark runs that calibrate a cluster for the planner, as shell commands.
 *
 * <p>Groups: one node with all its GPUs (NVLink), two nodes, and all nodes (the fabric), each with
 * one process per GPU. Collectives: all-reduce, all-gather, reduce-scatter, all-to-all and
 * send/recv, with nccl-tests' {@code BINARY -b 8 -e MAX -f 2 -g 1} (doubling sizes from 8 bytes; MAX
 * is 8 GiB, or HBM/8 rounded down to a power of two when that is smaller, since the test allocates
 * send and receive buffers of up to MAX). Output goes through {@code tee} into {@code
 * $LOG_DIR/<binary>_<nodes>n<gpus>g.log}, a name from which {@code meshplan calibrate} recognizes
 * the collective even when the log lacks the start line of recent nccl-tests.
 *
 * <p>Launchers: {@code mpirun -np P --map-by ppr:G:node --hostfile $HOSTFILE -x NCCL_...} (Open
 * MPI; the first node of the host file gets the single-node runs); {@code srun --nodes=N
 * --ntasks-per-node=G --gpus-per-node=G --mpi=pmix}; and for {@code torchrun}, which cannot start
 * MPI programs, {@code all_reduce_bench.py} under {@code torchrun --nnodes N --nproc_per_node G},
 * run on each node with {@code NODE_RANK} set. The output is deterministic: the same cluster and
 * launcher give the same text.
 */
public final class BenchPlan {
  private static final List<Collective> COLLECTIVES = List.of(Collective.ALL_REDUCE,
      Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL,
      Collective.SEND_RECV);
  private final ClusterSpec cluster;
  private final Launcher launcher;

  /**
   * Creates a plan.
   *
   * @param cluster the cluster
   * @param launcher how processes are started
   */
  public BenchPlan(ClusterSpec cluster, Launcher launcher) {
    this.cluster = Require.nonNull(cluster, "cluster");
    this.launcher = Require.nonNull(launcher, "launcher");
  }

  /**
   * The nccl-tests binary of a collective.
   *
   * @param c the collective
   * @return e.g. {@code all_reduce_perf}
   */
  static String binary(Collective c) {
    return switch (c) {
      case ALL_REDUCE -> "all_reduce_perf";
      case ALL_GATHER -> "all_gather_perf";
      case REDUCE_SCATTER -> "reduce_scatter_perf";
      case ALL_TO_ALL -> "alltoall_perf";
      case SEND_RECV -> "sendrecv_perf";
      case BROADCAST -> "broadcast_perf";
      case REDUCE -> "reduce_perf";
    };
  }

  /**
   * The node counts measured: 1, 2 and all, without repeats.
   *
   * @return increasing node counts
   */
  public List<Integer> nodeCounts() {
    List<Integer> out = new ArrayList<>(List.of(1));
    if (cluster.nodes() >= 2) {
      out.add(2);
    }
    if (cluster.nodes() > 2) {
      out.add(cluster.nodes());
    }
    return out;
  }

  /**
   * The largest message size passed to {@code -e}.
   *
   * @return e.g. {@code 8G} or {@code 2G}
   */
  public String maxBytesFlag() {
    long cap = 8L << 30;
    long byHbm = Long.highestOneBit(Math.max(1, cluster.gpu().hbmBytes() / 8));
    long max = Math.min(cap, byHbm);
    if (max >= 1L << 30) {
      return (max >> 30) + "G";
    }
    return (max >> 20) + "M";
  }

  /**
   * The runs, node count by node count, collective by collective.
   *
   * @return the runs
   */
  public List<BenchRun> runs() {
    List<BenchRun> out = new ArrayList<>();
    int g = cluster.gpusPerNode();
    // A node is an NVLink domain; the launchers start processes on its hosts (a rack's trays).
    int host = cluster.hostGpus();
    int hostsPer = g / host;
    for (int n : nodeCounts()) {
      if (launcher == Launcher.TORCHRUN) {
        String log = "all_reduce_bench_" + n + "n" + g + "g.md";
        String cmd = "python -u -m torch.distributed.run --nproc_per_node " + host + " --nnodes "
            + n * hostsPer
            + " --node_rank \"${NODE_RANK:?set NODE_RANK on each node}\""
            + " --rdzv_endpoint \"${MASTER_ADDR:?}:${MASTER_PORT:-6000}\" --rdzv_backend c10d"
            + " \"${ALL_REDUCE_BENCH:-all_reduce_bench.py}\" 2>&1 | tee \"$LOG_DIR/" + log + "\"";
        out.add(new BenchRun(Collective.ALL_REDUCE, n, g, log, cmd));
        continue;
      }
      for (Collective c : COLLECTIVES) {
        String bin = binary(c);
        String log = bin + "_" + n + "n" + g + "g.log";
        String test = "\"$NCCL_TESTS/build/" + bin + "\" -b 8 -e " + maxBytesFlag() + " -f 2 -g 1";
        String cmd = switch (launcher) {
          case MPIRUN -> "mpirun -np " + n * g + " --map-by ppr:" + host + ":node --bind-to numa"
              + " --hostfile \"$HOSTFILE\"" + mpiEnv() + " " + test;
          case SRUN -> "srun --nodes=" + n * hostsPer + " --ntasks-per-node=" + host
              + " --gpus-per-node=" + host + (hostsPer > 1 ? " --segment=" + hostsPer : "")
              + " --mpi=pmix " + test;
          case TORCHRUN -> throw new IllegalStateException("handled above");
        };
        out.add(new BenchRun(c, n, g, log, cmd + " 2>&1 | tee \"$LOG_DIR/" + log + "\""));
      }
    }
    return out;
  }

  private String mpiEnv() {
    StringBuilder sb = new StringBuilder(" -x NCCL_DEBUG=WARN -x LD_LIBRARY_PATH");
    FabricKind k = cluster.fabric().kind();
    if (k == FabricKind.ETHERNET) {
      sb.append(" -x NCCL_IB_DISABLE=1 -x NCCL_SOCKET_IFNAME=\"${NCCL_SOCKET_IFNAME:-eth0}\"");
    } else {
      sb.append(" -x NCCL_IB_HCA=\"${NCCL_IB_HCA:-mlx5}\"");
      if (k == FabricKind.ROCE) {
        sb.append(" -x NCCL_IB_GID_INDEX=\"${NCCL_IB_GID_INDEX:-3}\"");
      }
    }
    return sb.toString();
  }

  /**
   * A bash script that runs every command and then prints the calibrate command.
   *
   * @return the script text
   */
  public String script() {
    String c = cluster.toShortString();
    StringBuilder sb = new StringBuilder();
    sb.append("#!/usr/bin/env bash\n");
    sb.append("# Collective benchmarks for ").append(c).append(", written by meshplan bench.\n");
    switch (launcher) {
      case MPIRUN -> sb.append("# Needs nccl-tests built with MPI=1 in $NCCL_TESTS and an Open MPI"
          + " host file in $HOSTFILE\n# (one line per host, 'slots=").append(cluster.hostGpus())
          .append("'); the single-node runs use its first ")
          .append(cluster.rackScale() ? (cluster.gpusPerNode() / cluster.hostGpus())
              + " hosts, one NVLink domain.\n" : "host.\n");
      case SRUN -> sb.append("# Run inside an allocation of ").append(cluster.hosts())
          .append(" node(s): salloc --nodes=").append(cluster.hosts()).append(" --gpus-per-node=")
          .append(cluster.hostGpus())
          .append(cluster.rackScale() ? " --segment=" + cluster.gpusPerNode() / cluster.hostGpus()
              : "").append("; nccl-tests built with MPI=1 in $NCCL_TESTS.\n");
      case TORCHRUN -> sb.append("# torchrun cannot start nccl-tests: this runs all_reduce_bench.py"
          + " (stas00/ml-engineering, network/benchmarks)\n# on EVERY node at once, with NODE_RANK,"
          + " MASTER_ADDR and MASTER_PORT set. Only all-reduce is measured.\n");
    }
    sb.append("set -euo pipefail\n");
    if (launcher != Launcher.TORCHRUN) {
      sb.append(": \"${NCCL_TESTS:?set NCCL_TESTS to the nccl-tests checkout}\"\n");
    }
    if (launcher == Launcher.MPIRUN) {
      sb.append(": \"${HOSTFILE:?set HOSTFILE to an Open MPI host file}\"\n");
    }
    sb.append("LOG_DIR=\"${LOG_DIR:-logs}\"\nmkdir -p \"$LOG_DIR\"\n");
    for (BenchRun r : runs()) {
      // A node of a rack-scale cluster is an NVLink domain of several hosts.
      sb.append("\n# ").append(CollectiveNames.label(r.collective())).append(", ")
          .append(r.nodes()).append(cluster.rackScale() ? " NVLink domain(s) x " : " node(s) x ")
          .append(r.gpusPerNode()).append(" GPU(s)\n");
      sb.append(r.command()).append('\n');
    }
    String ext = launcher == Launcher.TORCHRUN ? "md" : "log";
    sb.append("\necho \"done; now run: meshplan calibrate $LOG_DIR/*.").append(ext)
        .append(" --cluster ").append(c).append(" --out profile.yaml\"\n");
    return sb.toString();
  }
}
