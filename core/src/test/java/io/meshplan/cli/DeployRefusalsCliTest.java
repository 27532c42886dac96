package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.deploy.DeployTarget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code deploy} refuses in one line, exit 2, with nothing written: a fabric report carrying a
 * variable doctor never writes, an option the chosen target does not use (the whole table of
 * targets by options), and a value that would land in a manifest against its grammar.
 */
class DeployRefusalsCliTest {
  @TempDir Path dir;

  private static final String CLUSTER = "2x8:h100-80gb";

  /** The least each target needs besides the command. */
  private static List<String> base(DeployTarget t) {
    List<String> a = new ArrayList<>(List.of("deploy", "--target", t.label(), "--cluster",
        CLUSTER, "--env", "NCCL_IB_HCA=mlx5"));
    if (t.kubernetes()) {
      a.addAll(List.of("--image", "nvcr.io/nvidia/pytorch:24.05-py3"));
    }
    return a;
  }

  private static CliRun run(List<String> args) {
    List<String> a = new ArrayList<>(args);
    a.addAll(List.of("--", "train.py"));
    return CliRun.of(a.toArray(String[]::new));
  }

  @Test
  void aFabricWithLdPreloadIsRefusedInOneLineAndNothingIsWritten() throws Exception {
    String golden = Files.readString(Path.of("core/src/test/resources/doctor-golden/ib-hdr.json"));
    Path fabric = dir.resolve("doctor.json");
    Files.writeString(fabric, golden.replace("\"env\": {", "\"env\": {\"LD_PRELOAD\": \"/tmp/x.so\","));
    Path out = dir.resolve("job.sbatch");
    CliRun r = CliRun.of("deploy", "--target", "slurm", "--cluster", CLUSTER, "--fabric",
        fabric.toString(), "--out", out.toString(), "--", "train.py");
    r.refusedInOneLine(2, "env.LD_PRELOAD is not a variable meshplan doctor writes");
    assertThat(r.err()).endsWith("; set a variable of your own with --env NAME=VALUE instead\n");
    assertThat(out).doesNotExist();
  }

  @Test
  void anEnvValueWithAControlCharacterIsRefusedAndMetacharactersAreQuoted() {
    run(List.of("deploy", "--target", "slurm", "--cluster", CLUSTER, "--env",
        "NCCL_DEBUG=INFO\nrm -rf /")).refusedInOneLine(2, "--env: the value of NCCL_DEBUG holds"
            + " the control character U+000A");
    CliRun quoted = run(List.of("deploy", "--target", "slurm", "--cluster", CLUSTER, "--env",
        "NCCL_DEBUG_FILE=/tmp/$(id)'x'.log"));
    assertThat(quoted.code()).as(quoted.err()).isZero();
    assertThat(quoted.out()).contains("export NCCL_DEBUG_FILE='/tmp/$(id)'\\''x'\\''.log'\n");
  }

  /** An option, a value for it, and the targets that use it (all others refuse it). */
  private record Column(String option, String value, List<DeployTarget> targets) {}

  /**
   * Every target by every option that some target does not use: the targets that use it write
   * their files (exit 0), the others refuse it in one line naming the option and the target.
   */
  @Test
  void everyOptionIsRefusedForEveryTargetThatDoesNotUseIt() {
    List<DeployTarget> pods = List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
        DeployTarget.PYTORCHJOB, DeployTarget.RUNAI);
    List<Column> table = List.of(
        new Column("--namespace", "llm", pods),
        new Column("--rdma-resource", "rdma/hca", pods),
        new Column("--rdma-count", "2", pods),
        new Column("--pod-network", "multus:kube-system/roce", pods),
        new Column("--shm-size", "64Gi", List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
            DeployTarget.PYTORCHJOB)),
        new Column("--ray-mode", "torchrun", List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S)),
        new Column("--master-port", "29600", List.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
            DeployTarget.SLURM)),
        new Column("--node-script", "/work/node.sh", List.of(DeployTarget.RUNAI)),
        new Column("--interface", "ib1", List.of(DeployTarget.DASK)),
        new Column("--partition", "gpu", List.of(DeployTarget.SLURM)));
    int accepted = 0;
    int refused = 0;
    for (Column c : table) {
      for (DeployTarget t : DeployTarget.values()) {
        List<String> args = base(t);
        args.addAll(List.of(c.option(), c.value()));
        CliRun r = run(args);
        String what = t.label() + " " + c.option();
        if (c.targets().contains(t)) {
          assertThat(r.code()).as(what + ": " + r.err()).isZero();
          accepted++;
        } else {
          r.refusedInOneLine(2, c.option() + " " + c.value() + " is for --target ");
          assertThat(r.err()).as(what).endsWith(", not " + t.label() + "\n");
          refused++;
        }
      }
    }
    // --image: the four pod targets need it; slurm and dask refuse it.
    for (DeployTarget t : List.of(DeployTarget.SLURM, DeployTarget.DASK)) {
      List<String> args = base(t);
      args.addAll(List.of("--image", "img"));
      run(args).refusedInOneLine(2, "--image img is for --target kuberay, ray-k8s, pytorchjob"
          + " or runai, not " + t.label());
      refused++;
    }
    // 10 options x 6 targets: 4 x 4 + 3 + 2 + 3 + 1 + 1 + 1 = 27 accepted, 33 refused, + 2.
    assertThat(accepted).isEqualTo(27);
    assertThat(refused).isEqualTo(35);
  }

  @Test
  void megatronArgumentsAndMasterPortAreRefusedWhereNothingRunsTorchrun() {
    // The options are checked before any file is read: the plan need not exist.
    Path plan = dir.resolve("plan.json");
    CliRun dask = CliRun.of("deploy", "--target", "dask", "--plan", plan.toString(),
        "--megatron-args", "--", "python", "train.py");
    dask.refusedInOneLine(2, "--megatron-args is for --target kuberay, ray-k8s, pytorchjob,"
        + " runai or slurm, not dask");
    List<String> args = base(DeployTarget.KUBERAY);
    args.addAll(List.of("--ray-mode", "native", "--master-port", "29600"));
    run(args).refusedInOneLine(2, "--master-port 29600 is torchrun's port; --ray-mode native"
        + " starts no torchrun");
  }

  /**
   * Values that land in a manifest, against the grammar they must satisfy: the OCI reference
   * grammar (distribution/reference), Kubernetes' DNS labels, extended resource names and
   * quantities (apimachinery), interface names (Linux), and Ray's own head ports.
   */
  @Test
  void aValueOutsideItsGrammarIsRefusedInOneLine() {
    Map<String, List<String>> bad = Map.of(
        "--image", List.of("nvcr.io/NVIDIA/pytorch:24.05-py3", "PyTorch", "img:tag with space",
            "img@sha256:abc", "img@md5:" + "a".repeat(32), "img:" + "t".repeat(129),
            "a".repeat(64), "img:tag\u001b[31m", ""),
        "--namespace", List.of("Default", "a".repeat(64), "-ns", "ns_1", "ns.sub"),
        "--name", List.of("Job", "a".repeat(41), "job-", "7b", "job.x"),
        "--rdma-resource", List.of("rdma", "kubernetes.io/rdma", "requests.x/rdma",
            "nvidia.com/gpu", "rdma/" + "x".repeat(64), "Rdma.Com/ib"),
        "--shm-size", List.of("0", "-1Gi", "64GB", "1.5", "10m", "1e30", "64 Gi", "1e9999999999"),
        "--master-port", List.of("0", "65536", "6379", "8265", "10001"),
        "--pod-network", List.of("multus:kube-system/roce@" + "x".repeat(16), "multus:A/b"));
    int refused = 0;
    for (Map.Entry<String, List<String>> e : bad.entrySet()) {
      for (String v : e.getValue()) {
        List<String> args = base(DeployTarget.KUBERAY);
        if (e.getKey().equals("--image")) {
          args.subList(args.indexOf("--image"), args.indexOf("--image") + 2).clear();
        }
        args.addAll(List.of(e.getKey(), v));
        CliRun r = run(args);
        assertThat(r.code()).as(e.getKey() + " " + v + ": " + r.err() + r.out()).isEqualTo(2);
        assertThat(r.err().lines()).as(e.getKey() + " " + v).hasSize(1);
        assertThat(r.out()).isEmpty();
        refused++;
      }
    }
    assertThat(refused).isEqualTo(9 + 5 + 5 + 6 + 8 + 5 + 2);
    CliRun upper = run(List.of("deploy", "--target", "pytorchjob", "--cluster", CLUSTER,
        "--image", "nvcr.io/NVIDIA/pytorch:24.05-py3"));
    upper.refusedInOneLine(2, "image 'nvcr.io/NVIDIA/pytorch:24.05-py3' is not an OCI image"
        + " reference: the repository path must be lower-case");
  }
}
