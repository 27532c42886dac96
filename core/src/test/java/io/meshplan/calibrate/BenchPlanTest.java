package io.meshplan.calibrate;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchPlanTest {
  private final ClusterSpec cluster = ClusterSpec.parse("4x8:a100-80gb");

  @Test
  void scriptIsDeterministic() {
    for (Launcher l : Launcher.values()) {
      assertThat(new BenchPlan(cluster, l).script()).isEqualTo(new BenchPlan(cluster, l).script());
    }
  }

  @Test
  void mpirunProcessCountsFollowTheNodeCounts() {
    List<BenchRun> runs = new BenchPlan(cluster, Launcher.MPIRUN).runs();
    // 5 collectives x {1, 2, 4} nodes
    assertThat(runs).hasSize(15);
    // 1 node: 8 processes; 2 nodes: 16; all 4 nodes: 32, always 8 per node.
    assertThat(runs.get(0).command()).startsWith("mpirun -np 8 --map-by ppr:8:node ");
    assertThat(runs.get(5).command()).startsWith("mpirun -np 16 --map-by ppr:8:node ");
    assertThat(runs.get(10).command()).startsWith("mpirun -np 32 --map-by ppr:8:node ");
    assertThat(runs).allSatisfy(r -> assertThat(r.command())
        .contains("-x NCCL_IB_HCA=").contains("-b 8 -e 8G -f 2 -g 1")
        .endsWith("| tee \"$LOG_DIR/" + r.logFile() + "\""));
    assertThat(runs).extracting(BenchRun::logFile).contains("all_reduce_perf_1n8g.log",
        "alltoall_perf_2n8g.log", "sendrecv_perf_4n8g.log");
  }

  @Test
  void srunAsksForNodesTasksAndGpus() {
    List<BenchRun> runs = new BenchPlan(cluster, Launcher.SRUN).runs();
    assertThat(runs.get(5).command())
        .startsWith("srun --nodes=2 --ntasks-per-node=8 --gpus-per-node=8 --mpi=pmix ");
  }

  @Test
  void smallMemoryCapsTheLargestMessage() {
    // V100 16 GiB: 16 GiB / 8 = 2 GiB < 8 GiB.
    assertThat(new BenchPlan(ClusterSpec.parse("2x8:v100-16gb"), Launcher.MPIRUN).maxBytesFlag())
        .isEqualTo("2G");
    // One node: only the single-node runs.
    assertThat(new BenchPlan(ClusterSpec.parse("1x8:h100-80gb"), Launcher.MPIRUN).runs())
        .hasSize(5);
  }

  @Test
  void tcpClustersDisableInfiniband() {
    String s = new BenchPlan(ClusterSpec.parse("2x8:a100-40gb:tcp-25"), Launcher.MPIRUN).script();
    assertThat(s).contains("-x NCCL_IB_DISABLE=1").doesNotContain("NCCL_IB_HCA");
  }

  @Test
  void logNamesAreReadBackAsTheirCollective() {
    // A log without the 'Collective test starting' line (nccl-tests before 2.17): the collective
    // must come from the file name the plan chose.
    String log = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5\n"
        + "#  Rank  0 Group  0 Pid      1 on      host1 device  0 [0000:07:00] NVIDIA A100\n"
        + "#  Rank  1 Group  0 Pid      2 on      host1 device  1 [0000:0f:00] NVIDIA A100\n"
        + "     1048576        262144     float     sum      -1    20.00   52.43   52.43       0"
        + "    20.00   52.43   52.43       0\n"
        + "# Avg bus bandwidth    : 52.43 \n";
    for (BenchRun r : new BenchPlan(cluster, Launcher.MPIRUN).runs()) {
      ParseResult p = new BenchmarkLogReader(8).parse("logs/" + r.logFile(), log);
      assertThat(p.points()).singleElement()
          .satisfies(x -> assertThat(x.collective()).isEqualTo(r.collective()));
    }
  }

  @Test
  void torchrunRunsAllReduceBenchOnEveryNode() {
    List<BenchRun> runs = new BenchPlan(cluster, Launcher.TORCHRUN).runs();
    assertThat(runs).hasSize(3);
    assertThat(runs.get(2).command()).contains("--nproc_per_node 8 --nnodes 4")
        .contains("NODE_RANK");
  }

  /**
   * On two GB200 racks a node is a rack: the one-node runs cover its 72 GPUs on its 18 trays
   * (mpirun 72 ranks, 4 per host; srun 18 hosts in one segment), logged as 1 node of 72 GPUs so
   * that calibrate reads them as the NVLink level; the two-node runs cover both racks.
   */
  @Test
  void aRackIsOneNodeOfItsTrays() {
    ClusterSpec racks = ClusterSpec.parse("2xnvl72:gb200");
    List<BenchRun> mpi = new BenchPlan(racks, Launcher.MPIRUN).runs();
    assertThat(mpi.get(0).command()).startsWith("mpirun -np 72 --map-by ppr:4:node ")
        .contains("all_reduce_perf_1n72g.log");
    assertThat(mpi).anyMatch(r -> r.nodes() == 2 && r.command().startsWith("mpirun -np 144 "));
    List<BenchRun> srun = new BenchPlan(racks, Launcher.SRUN).runs();
    assertThat(srun.get(0).command()).startsWith("srun --nodes=18 --ntasks-per-node=4 "
        + "--gpus-per-node=4 --segment=18 ");
    assertThat(new BenchPlan(racks, Launcher.SRUN).script())
        .contains("salloc --nodes=36 --gpus-per-node=4 --segment=18");
    // A board whose NVLink stops at the host: nothing changes.
    assertThat(new BenchPlan(ClusterSpec.parse("2x8:h100"), Launcher.SRUN).runs().get(0)
        .command()).startsWith("srun --nodes=1 --ntasks-per-node=8 --gpus-per-node=8 --mpi=pmix");
  }
}
