package io.meshplan.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The RunAI, Slurm and Dask scripts for LLaMA2-70B on 128 x 8 GPUs: each passes {@code bash -n}
 * and {@code shellcheck}, and, run against stand-in launchers, starts exactly the job of the plan.
 */
class ScriptsTest {
  private final Deployer deployer = new Deployer();

  private static void lint(Artifact a) {
    Shell.Result syntax = Shell.syntax(a.text());
    assertThat(syntax.code()).as(a.fileName() + ": " + syntax.err()).isZero();
    Shell.Result sc = Shell.shellcheck(a.text());
    assertThat(sc.code()).as(a.fileName() + ": " + sc.out()).isZero();
  }

  @Test
  void slurmRunsTorchrunOncePerNodeWithTheWorldOfThePlan() {
    Artifact a = deployer.deploy(DeployTarget.SLURM, Llama70b.spec(), Llama70b.ib()).get(0);
    lint(a);
    assertThat(a.text()).contains("#SBATCH --nodes=128\n", "#SBATCH --gpus-per-node=8\n",
        "#SBATCH --ntasks-per-node=1\n", "#SBATCH --partition=gpu\n");
    FakeTools fake = new FakeTools();
    Path script = Shell.temp(a.text());
    Shell.Result r = Shell.bash(script, List.of(), fake.env(Map.of("SLURM_NNODES", "128",
        "SLURM_JOB_NODELIST", "gpu-node-[001-128]", "SLURM_JOB_ID", "4242")), null);
    assertThat(r.code()).as(r.err()).isZero();
    // 128 nodes x 8 processes per node = 1024 ranks; rendezvous on the allocation's first node.
    assertThat(fake.argv()).containsExactly("torchrun", "--nnodes=128", "--nproc-per-node=8",
        "--rdzv-id=4242", "--rdzv-backend=c10d", "--rdzv-endpoint=gpu-node-001:29500",
        "--max-restarts=0", "pretrain_gpt.py", "--data-path", "/data/corpus");
    assertThat(fake.environment()).containsAllEntriesOf(Llama70b.ib().env());
  }

  @Test
  void theSlurmJobOfThePlanStartsMegatronWithThePlansSizes() {
    // The acceptance case end to end: tp 8 x pp 4 x dp 32 = 1024 GPUs = 128 nodes x 8.
    var model = new io.meshplan.model.ModelSpec("llama2-70b",
        io.meshplan.model.ModelSpec.Family.LLAMA, 80, 8192, 64, 8, 28672, 32000, 4096, 1,
        io.meshplan.graph.DType.BF16);
    var config = new io.meshplan.plan.ParallelConfig(8, 4, 32, 1, 1, 1024,
        io.meshplan.model.Recompute.SELECTIVE, true, true);
    var input = new io.meshplan.export.ExportInput(model,
        io.meshplan.cluster.ClusterSpec.parse("128x8:h100-80gb:ib-ndr400"), config);
    List<String> command = new java.util.ArrayList<>(List.of("pretrain_gpt.py"));
    io.meshplan.export.MegatronArgs.arguments(input).forEach(command::addAll);
    Artifact a = deployer.deploy(DeployTarget.SLURM, Llama70b.spec(command), Llama70b.ib()).get(0);
    FakeTools fake = new FakeTools();
    Shell.Result r = Shell.bash(Shell.temp(a.text()), List.of(), fake.env(Map.of("SLURM_NNODES",
        "128", "SLURM_JOB_NODELIST", "n[1-128]", "SLURM_JOB_ID", "9")), null);
    assertThat(r.code()).as(r.err()).isZero();
    List<String> argv = fake.argv();
    int nnodes = Integer.parseInt(value(argv, "--nnodes="));
    int nproc = Integer.parseInt(value(argv, "--nproc-per-node="));
    int tp = Integer.parseInt(argv.get(argv.indexOf("--tensor-model-parallel-size") + 1));
    int pp = Integer.parseInt(argv.get(argv.indexOf("--pipeline-model-parallel-size") + 1));
    assertThat(nnodes * nproc).isEqualTo(1024);
    // Megatron-LM's data-parallel size: world / (tp x pp) = 1024 / 32 = 32, the plan's.
    assertThat(nnodes * nproc / (tp * pp)).isEqualTo(config.dataParallel());
    assertThat(argv.get(argv.indexOf("--global-batch-size") + 1)).isEqualTo("1024");
    assertThat(argv.get(argv.indexOf("--micro-batch-size") + 1)).isEqualTo("1");
    assertThat(fake.environment()).containsAllEntriesOf(Llama70b.ib().env());
  }

  private static String value(List<String> argv, String prefix) {
    return argv.stream().filter(w -> w.startsWith(prefix)).findFirst().orElseThrow()
        .substring(prefix.length());
  }

  @Test
  void slurmRefusesAnAllocationOfTheWrongSize() {
    Artifact a = deployer.deploy(DeployTarget.SLURM, Llama70b.spec(), Llama70b.ib()).get(0);
    FakeTools fake = new FakeTools();
    Shell.Result r = Shell.bash(Shell.temp(a.text()), List.of(), fake.env(Map.of(
        "SLURM_NNODES", "64", "SLURM_JOB_NODELIST", "n[1-64]", "SLURM_JOB_ID", "1")), null);
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("needs 128 nodes, Slurm gave 64");
  }

  @Test
  void runaiSubmitsMasterPlus127WorkersAndTheNodeScriptFindsTheRoceGid() {
    List<Artifact> files = deployer.deploy(DeployTarget.RUNAI, Llama70b.spec(), Llama70b.roce());
    assertThat(files).extracting(Artifact::fileName)
        .containsExactly("llama2-70b-submit.sh", "llama2-70b-node.sh");
    files.forEach(ScriptsTest::lint);
    FakeTools fake = new FakeTools();
    Shell.Result submit = Shell.bash(Shell.temp(files.get(0).text()), List.of(), fake.env(Map.of()),
        null);
    assertThat(submit.code()).as(submit.err()).isZero();
    // RunAI adds the master: 127 workers + 1 = 128 pods of 8 GPUs. IPC_LOCK through CLI v1's
    // --add-capability, as on every Kubernetes target.
    assertThat(fake.argv()).containsExactly("runai", "submit-dist", "pytorch",
        "--name", "llama2-70b", "--project", "train",
        "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--workers", "127", "--gpu", "8",
        "--extended-resource", "rdma/ib=1", "--add-capability", "IPC_LOCK", "--large-shm",
        "--annotation", "k8s.v1.cni.cncf.io/networks=kube-system/roce@net1",
        "--", "bash", "/workspace/llama2-70b-node.sh");

    Path sysfs = Path.of("core/src/test/resources/sysfs/roce-bond-gid9").toAbsolutePath();
    Shell.Result node = Shell.bash(Shell.temp(files.get(1).text()), List.of(), fake.env(Map.of(
        "WORLD_SIZE", "128", "RANK", "5", "MASTER_ADDR", "10.1.2.3", "MASTER_PORT", "23456",
        "MESHPLAN_SYSFS_ROOT", sysfs.toString())), null);
    assertThat(node.code()).as(node.err()).isZero();
    assertThat(fake.argv()).containsExactly("torchrun", "--nproc-per-node=8", "--nnodes=128",
        "--node-rank=5", "--rdzv-endpoint=10.1.2.3:23456", "--rdzv-backend=c10d",
        "--max-restarts=0", "pretrain_gpt.py", "--data-path", "/data/corpus");
    // The doctor chose GID index 9 on this node; the script finds the same one, and the same
    // port, in a pod that sees this node's tree.
    assertThat(fake.environment()).containsAllEntriesOf(Llama70b.onNet1(Llama70b.roce().env()))
        .containsEntry("NCCL_IB_GID_INDEX", "9").containsEntry("NCCL_IB_HCA", "=mlx5_bond_0:1")
        .containsEntry("UCX_NET_DEVICES", "mlx5_bond_0:1");
  }

  @Test
  void theFabricScriptOfEveryKubernetesTargetPassesBashAndShellcheck() throws Exception {
    int linted = 0;
    for (FabricEnv fabric : List.of(Llama70b.ib(), Llama70b.roce())) {
      for (DeployTarget t : List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
          DeployTarget.PYTORCHJOB)) {
        String yaml = deployer.deploy(t, Llama70b.spec(), fabric).get(0).text();
        for (var doc : CrdSchemas.YAML.readValues(CrdSchemas.YAML.createParser(yaml),
            com.fasterxml.jackson.databind.JsonNode.class).readAll()) {
          var script = doc.path("data").path(FabricLookupScript.FILE);
          if (!script.isMissingNode()) {
            lint(new Artifact(FabricLookupScript.FILE, script.asText(), true));
            linted++;
          }
        }
      }
    }
    // 2 fabrics x 3 targets, one ConfigMap each on the Multus network of Llama70b.spec().
    assertThat(linted).isEqualTo(6);
  }

  @Test
  void theRunaiCommandShownAfterWritingIsTheOneTheSubmitScriptRuns() {
    String submit = deployer.deploy(DeployTarget.RUNAI, Llama70b.spec(), Llama70b.ib()).get(0)
        .text();
    String command = RunaiLaunch.submitCommand(Llama70b.spec());
    assertThat(submit).endsWith("set -euo pipefail\n" + command);
    assertThat(command).startsWith("runai submit-dist pytorch \\\n")
        .contains("  --add-capability IPC_LOCK \\\n")
        .endsWith("  -- bash /workspace/llama2-70b-node.sh\n");
    assertThat(submit).contains("# RunAI CLI v2 names the job as an argument ('runai training"
        + " pytorch submit llama2-70b') and spells --gpu as --gpu-devices-request,"
        + " --add-capability as --capability.");
  }

  @Test
  void runaiNodeScriptStopsWhenThePodCountIsWrong() {
    Artifact node = deployer.deploy(DeployTarget.RUNAI, Llama70b.spec(), Llama70b.ib()).get(1);
    FakeTools fake = new FakeTools();
    Shell.Result r = Shell.bash(Shell.temp(node.text()), List.of(), fake.env(Map.of(
        "WORLD_SIZE", "127", "RANK", "0", "MASTER_ADDR", "a", "MASTER_PORT", "1")), null);
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("needs 128 pods, RunAI started 127");
  }

  @Test
  void daskStartsTheSchedulerAndCudaWorkersOverUcxOnTheIpoibInterface() {
    Artifact a = deployer.deploy(DeployTarget.DASK, Llama70b.spec(), Llama70b.ib()).get(0);
    lint(a);
    FakeTools fake = new FakeTools();
    Path script = Shell.temp(a.text());
    Shell.Result s = Shell.bash(script, List.of("scheduler"), fake.env(Map.of()), null);
    assertThat(s.code()).as(s.err()).isZero();
    // distributed's dask_cli entry point "scheduler" (pyproject.toml, dask/distributed 40fcd99a).
    assertThat(fake.argv()).containsExactly("dask", "scheduler", "--protocol", "ucx",
        "--interface", "ib0", "--port", "8786");
    // dask-cuda docs/source/ucx.rst (63a1ea97): a hand-set UCX_TLS must hold tcp; the scheduler
    // needs a CUDA context (docs/source/examples/ucx.rst) and takes its switches and RMM pool
    // from DASK_DISTRIBUTED_UCXX__*; rdmacm on InfiniBand.
    assertThat(fake.environment()).containsEntry("UCX_TLS", "rc,cuda_copy,cuda_ipc,tcp")
        .containsEntry("UCX_NET_DEVICES", "mlx5_0:1,mlx5_1:1")
        .containsEntry("DASK_DISTRIBUTED_UCXX__CREATE_CUDA_CONTEXT", "True")
        .containsEntry("DASK_DISTRIBUTED_UCXX__TCP", "True")
        .containsEntry("DASK_DISTRIBUTED_UCXX__INFINIBAND", "True")
        .containsEntry("DASK_DISTRIBUTED_UCXX__RDMACM", "True")
        .containsEntry("DASK_DISTRIBUTED_UCXX__RMM__POOL_SIZE", "1GB");
    Shell.Result w = Shell.bash(script, List.of("worker", "10.0.0.50"), fake.env(Map.of()), null);
    assertThat(w.code()).as(w.err()).isZero();
    // dask-cuda's dask_cli entry point "cuda" and its "worker" command; the switches are the
    // --enable-*/--disable-* options of dask_cuda/cli.py lines 313-339 (rdmacm needs infiniband).
    assertThat(fake.argv()).containsExactly("dask", "cuda", "worker", "ucx://10.0.0.50:8786",
        "--interface", "ib0", "--nthreads", "1", "--rmm-pool-size", "1GB",
        "--enable-tcp-over-ucx", "--enable-nvlink", "--enable-infiniband", "--enable-rdmacm");
    Shell.Result c = Shell.bash(script, List.of("client", "10.0.0.50"), fake.env(Map.of()), null);
    assertThat(c.code()).as(c.err()).isZero();
    assertThat(fake.argv()).containsExactly("pretrain_gpt.py", "--data-path", "/data/corpus");
    assertThat(fake.environment()).containsEntry("DASK_SCHEDULER_ADDRESS",
        "ucx://10.0.0.50:8786");
    Shell.Result bad = Shell.bash(script, List.of("worker"), fake.env(Map.of()), null);
    assertThat(bad.code()).isEqualTo(2);
  }

  @Test
  void daskNamesItsPackagesAndLeavesRdmacmOffOnRoce() {
    Artifact a = deployer.deploy(DeployTarget.DASK, Llama70b.spec(), Llama70b.roce()).get(0);
    // dask-cuda docs/source/install.rst: UCX comes with the distributed-ucxx package.
    assertThat(a.text().lines().filter(l -> l.startsWith("#") && l.contains("distributed-ucxx")
        && l.contains("dask-cuda"))).hasSize(1);
    assertThat(a.text()).doesNotContain("dask-scheduler", "dask-cuda-worker")
        .contains("export DASK_DISTRIBUTED_UCXX__RDMACM=False\n", "--disable-rdmacm");
    FakeTools fake = new FakeTools();
    Shell.Result s = Shell.bash(Shell.temp(a.text()), List.of("scheduler"),
        fake.env(Map.of("RMM_POOL_SIZE", "30GB")), null);
    assertThat(s.code()).as(s.err()).isZero();
    assertThat(fake.environment().get("UCX_TLS").split(",")).contains("tcp");
    assertThat(fake.environment()).containsEntry("DASK_DISTRIBUTED_UCXX__RMM__POOL_SIZE", "30GB");
  }
}
