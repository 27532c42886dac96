package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GB200 racks as a user meets them: DeepSeek-V3's blocks planned on two racks of 64 GPUs keep
 * each expert group inside a rack's NVLink, the plan simulates and exports with one launcher per
 * 4-GPU host, and deploy writes a ComputeDomain (NVIDIA's DRA driver) per rack for the
 * Kubernetes targets that can pin each rack's pods, refusing in one line those that cannot.
 */
class RackScaleCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  /**
   * Three GB200 trays, each its own NVLink domain ({@code 3xnvl4:gb200}), are saved under that
   * name and read back as the same 12 GPUs in three domains of 4: {@code 3x4:gb200} would be
   * three trays in one domain of 12, on which the plan's stages of 8 GPUs do not lie.
   */
  @Test
  void aPlanOnDomainsOfOneTrayReadsBack() throws Exception {
    Path plan = dir.resolve("trays.json");
    CliRun p = CliRun.of("plan", "--model", "llama3.1-8b", "--layers", "4", "--seq", "1024",
        "--cluster", "3xnvl4:gb200", "--global-batch", "24", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(JSON.readTree(Files.readString(plan)).get("cluster").asText())
        .isEqualTo("3xnvl4:gb200:ib-ndr400");
    CliRun s = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(s.code()).as(s.err()).isZero();
    CliRun e = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(e.err()).doesNotContain("does not fit on");
  }

  @Test
  void expertGroupsStayInsideARack() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "deepseek-v3", "--layers", "8", "--cluster",
        "2xnvl64:gb200", "--global-batch", "256", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.get("cluster").asText()).isEqualTo("2xnvl64:gb200:ib-ndr400");
    int experts = 0;
    for (JsonNode st : saved.get("stages")) {
      int group = st.path("expertParallel").asInt(1) * st.path("expertTensorParallel").asInt(1);
      experts = Math.max(experts, group);
      // Megatron-Core's expert groups are runs of EP x ETP devices from the stage's first: each
      // lies in one 64-GPU domain when they tile it.
      assertThat(64 % group).isZero();
      assertThat(st.get("firstDevice").asInt() % group).isZero();
    }
    // The experts do spread over GPUs, past one 4-GPU host.
    assertThat(experts).isGreaterThan(4);
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    assertThat(JSON.readTree(s.out()).get("iterationSeconds").asDouble())
        .isCloseTo(saved.get("iterationSeconds").asDouble(), withinPercentage(0.01));
    // KubeRay: one ComputeDomain per rack of 16 trays, a worker group per rack.
    CliRun d = CliRun.of("deploy", "--plan", plan.toString(), "--target", "kuberay", "--image",
        "nvcr.io/nvidia/pytorch:24.05-py3", "--", "train.py");
    assertThat(d.code()).as(d.err()).isZero();
    assertThat(d.out().split("kind: ComputeDomain\n", -1)).hasSize(3);
    assertThat(d.out()).contains("numNodes: 16").contains("groupName: gpu-workers-1")
        .contains("--nodes 32 --gpus-per-node 4").contains("--nvlink-hosts 16");
    // A PyTorchJob cannot pin two racks' pods apart: refused, and nothing is written.
    Path out = dir.resolve("job.yaml");
    CliRun pj = CliRun.of("deploy", "--plan", plan.toString(), "--target", "pytorchjob",
        "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--out", out.toString(), "--", "train.py");
    pj.refusedInOneLine(2, "pytorchjob cannot launch on 2 NVLink domains of 16 hosts x 4 GPUs");
    assertThat(out).doesNotExist();
    // Slurm: one task per tray, 32 trays in segments of 16 (one rack's 64 GPUs), each segment
    // inside one topology block (sbatch --segment, Slurm's topology/block plugin).
    CliRun slurm = CliRun.of("deploy", "--plan", plan.toString(), "--target", "slurm", "--",
        "pretrain_gpt.py");
    assertThat(slurm.code()).as(slurm.err()).isZero();
    assertThat(slurm.out()).contains("#SBATCH --nodes=32\n").contains("#SBATCH --gpus-per-node=4\n")
        .contains("#SBATCH --segment=16\n").contains("--nnodes=32").contains("--nproc-per-node=4");
  }

  @Test
  void sixtyFourGpusOfOneRackDeployAsOneComputeDomainOfSixteenTrays() throws Exception {
    // 16 trays of 4 GPUs: one NVLink domain of 64 GPUs, the layout of NVIDIA's GB200 runs.
    for (String target : java.util.List.of("pytorchjob", "kuberay", "ray-k8s")) {
      CliRun d = CliRun.of("deploy", "--cluster", "16x4:gb200", "--target", target, "--image",
          "nvcr.io/nvidia/pytorch:24.05-py3", "--name", "gb", "--", "train.py");
      assertThat(d.code()).as(d.err()).isZero();
      assertThat(d.out()).as(target).startsWith("apiVersion: resource.nvidia.com/v1beta1\n"
          + "kind: ComputeDomain\n").contains("  numNodes: 16\n")
          .contains("resourceClaimTemplateName: gb-nvlink-0-channel")
          .contains("topologyKey: nvidia.com/gpu.clique");
    }
    CliRun runai = CliRun.of("deploy", "--cluster", "16x4:gb200", "--target", "runai",
        "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--", "train.py");
    runai.refusedInOneLine(2, "runai cannot launch on 1 NVLink domain of 16 hosts x 4 GPUs");
  }

  @Test
  void exportsLaunchOneProcessGroupPerHost() throws Exception {
    Path plan = dir.resolve("dense.json");
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2xnvl64:gb200", "--for",
        "megatron", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    CliRun m = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron");
    assertThat(m.code()).as(m.err()).isZero();
    // 2 racks x 64 GPUs = 32 hosts of 4 GPUs.
    assertThat(m.out()).contains("torchrun --nnodes 32 --nproc-per-node 4")
        .contains("0 to 31");
  }
}
