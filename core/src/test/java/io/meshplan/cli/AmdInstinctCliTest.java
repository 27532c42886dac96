package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An MI300X cluster end to end, as a user runs it: plan, simulate, export and deploy, and the
 * refusals the issue names, each one line with exit 2.
 */
class AmdInstinctCliTest {
  @TempDir Path dir;

  private static String shellcheck(Path script) throws Exception {
    Process p = new ProcessBuilder("shellcheck", "--shell=bash", "--severity=style",
        script.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    return out;
  }

  @Test
  void mi300xIsPlannedSimulatedExportedAndDeployed() throws Exception {
    String plan = dir.resolve("p.json").toString();
    CliRun p = CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:mi300x", "--for",
        "megatron", "--out", plan);
    assertThat(p.code()).as(p.err()).isZero();
    assertThat(p.out()).contains("on 2x8:mi300x:roce-400, 16 GPUs").contains("unfused attention")
        .contains("prices: cdna3 compute at kernel-level prices");
    CliRun s = CliRun.of("simulate", "--plan", plan);
    assertThat(s.code()).as(s.err()).isZero();
    for (String to : new String[] {"megatron", "deepspeed"}) {
      Path out = dir.resolve(to);
      CliRun e = CliRun.of("export", "--plan", plan, "--to", to, "--out", out.toString());
      assertThat(e.code()).as(to + e.err()).isZero();
    }
    Path megatron = dir.resolve("megatron");
    assertThat(Files.readString(megatron)).contains("export CUDA_DEVICE_MAX_CONNECTIONS=1")
        .contains("# AMD GPUs: these are upstream Megatron-LM's arguments; ROCm's fork");
    shellcheck(megatron);
    for (String t : new String[] {"kuberay", "pytorchjob", "ray-k8s"}) {
      Path out = dir.resolve("d-" + t);
      CliRun d = CliRun.of("deploy", "--plan", plan, "--target", t, "--image",
          "rocm/megatron-lm:v25.5_py312", "--env", "NCCL_IB_HCA==rdma0:1", "--out",
          out.toString(), "--", "pretrain_gpt.py");
      assertThat(d.code()).as(t + d.err()).isZero();
      String yaml = Files.isDirectory(out) ? String.join("\n", Files.list(out).sorted()
          .map(f -> read(f)).toList()) : Files.readString(out);
      assertThat(yaml).as(t).contains("amd.com/gpu: \"8\"").doesNotContain("nvidia.com/gpu")
          .contains("HSA_FORCE_FINE_GRAIN_PCIE");
    }
    Path slurm = dir.resolve("job.sbatch");
    CliRun d = CliRun.of("deploy", "--plan", plan, "--target", "slurm", "--env",
        "NCCL_IB_HCA==rdma0:1", "--out", slurm.toString(), "--", "pretrain_gpt.py");
    assertThat(d.code()).as(d.err()).isZero();
    assertThat(Files.readString(slurm)).contains("HSA_FORCE_FINE_GRAIN_PCIE")
        .doesNotContain("nvidia");
    shellcheck(slurm);
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void whatAnMi300xCannotDoIsRefusedInOneLine() {
    CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2xnvl72:mi300x")
        .refusedInOneLine(2, "--cluster '2xnvl72:mi300x': the mi300x has no NVLink: AMD "
            + "Infinity Fabric joins the 8 GPUs of one host and no more; give NODESx8:mi300x");
    CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:mi300x", "--dtype", "fp8")
        .refusedInOneLine(2, "--dtype fp8 is not priced on the mi300x (cdna3): it has FP8 math,"
            + " but meshplan has no published FP8 GEMM benchmark there to price it with; use "
            + "--dtype bf16, or a GPU that has them: ");
    CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:mi300x", "--attention", "flash")
        .refusedInOneLine(2, "--attention flash is not priced on the mi300x (cdna3)");
    CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:mi355x")
        .refusedInOneLine(2, "the mi355x (cdna4) cannot be priced");
    CliRun.of("deploy", "--cluster", "2x8:mi300x", "--target", "dask", "--out",
        dir.resolve("x").toString(), "--", "x.py")
        .refusedInOneLine(2, "--target dask runs dask-cuda workers, which need CUDA");
    CliRun.of("deploy", "--cluster", "2x8:mi300x", "--target", "runai", "--image", "rocm/x:1",
        "--out", dir.resolve("y").toString(), "--", "x.py")
        .refusedInOneLine(2, "--target runai is written for NVIDIA GPUs and not checked on the "
            + "mi300x");
    assertThat(dir.resolve("x")).doesNotExist();
  }
}
