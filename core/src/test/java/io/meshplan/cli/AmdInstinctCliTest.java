package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    assertThat(p.out()).contains("on 2x8:mi300x:roce-400, 16 GPUs").contains("flash attention")
        .contains("prices: cdna3 compute at kernel-level prices");
    CliRun s = CliRun.of("simulate", "--plan", plan);
    assertThat(s.code()).as(s.err()).isZero();
    for (String to : new String[] {"megatron", "deepspeed"}) {
      Path out = dir.resolve(to);
      CliRun e = CliRun.of("export", "--plan", plan, "--to", to, "--out", out.toString());
      assertThat(e.code()).as(to + e.err()).isZero();
    }
    Path megatron = dir.resolve("megatron");
    // With FlashAttention-2 priced on CDNA 3 the plan is data-parallel (tensor 1), so no
    // CUDA_DEVICE_MAX_CONNECTIONS is asked for; the fork's missing arguments are named.
    assertThat(Files.readString(megatron)).contains("--tensor-model-parallel-size 1")
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
    CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:mi300x", "--dtype", "fp8",
        "--fp8-recipe", "mxfp8")
        .refusedInOneLine(2, "mxfp8");
    CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:mi300x", "--attention", "cudnn")
        .refusedInOneLine(2, "meshplan has no published cudnn attention benchmark on cdna3");
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
  /**
   * An image recognizably built for the other vendor's GPUs is refused before anything is
   * written, under any spelling a container runtime resolves to the same repository (Docker
   * Hub's default registry and its old name, a registry host in capitals, a tag or a digest);
   * an image whose name says nothing of its GPU stack is taken.
   */
  @Test
  void anImageOfTheOtherVendorIsRefused() throws Exception {
    String amd = dir.resolve("amd.json").toString();
    String nv = dir.resolve("nv.json").toString();
    assertThat(CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:mi300x", "--out",
        amd).code()).isZero();
    assertThat(CliRun.of("plan", "--model", "llama3-8b", "--cluster", "2x8:h100-80gb", "--out",
        nv).code()).isZero();
    String digest = "@sha256:" + "ab".repeat(32);
    List<String> cuda = List.of("nvcr.io/nvidia/pytorch:24.05-py3", "NVCR.IO/nvidia/nemo:24.07",
        "nvidia/cuda:12.4.1-devel-ubuntu22.04", "docker.io/nvidia/cuda", "index.docker.io/nvidia/"
        + "cudagl:11.4.2-base", "nvcr.io/nvidia/pytorch" + digest,
        // A registry by another of its names: HTTPS's port written out passed the check.
        "nvcr.io:443/nvidia/pytorch:24.05-py3");
    List<String> rocm = List.of("rocm/megatron-lm:v25.5_py312", "docker.io/rocm/pytorch:latest",
        "index.docker.io/rocm/vllm" + digest, "registry-1.docker.io/rocm/pytorch");
    List<String> neither = List.of("myorg/train:1", "nvcr.io/nim/meta/llama:1",
        "registry.local:5000/rocm/pytorch:1", "ghcr.io/nvidia/cuda:1", "nvidia/pytorch-mirror:1",
        "rocmx/pytorch:1", "library/ubuntu:22.04");
    for (String t : List.of("kuberay", "pytorchjob", "ray-k8s", "runai")) {
      for (String img : cuda) {
        Path out = dir.resolve("cuda-" + t);
        CliRun r = CliRun.of("deploy", "--plan", amd, "--target", t, "--image", img, "--out",
            out.toString(), "--", "pretrain_gpt.py");
        if (t.equals("runai")) {
          // RunAI is refused on AMD GPUs whatever the image.
          assertThat(r.code()).as(r.err()).isEqualTo(2);
          continue;
        }
        r.refusedInOneLine(2, "image '" + img + "' is one of NVIDIA's CUDA images, which do not"
            + " run on the cluster's AMD GPUs; give a ROCm image, such as AMD's rocm/pytorch or"
            + " rocm/megatron-lm");
        assertThat(Files.exists(out)).as(img).isFalse();
      }
      for (String img : rocm) {
        Path out = dir.resolve("rocm-" + t);
        CliRun.of("deploy", "--plan", nv, "--target", t, "--image", img, "--out",
            out.toString(), "--", "pretrain_gpt.py").refusedInOneLine(2, "image '" + img
            + "' is one of AMD's ROCm images, which do not run on the cluster's NVIDIA GPUs; "
            + "give a CUDA image, such as nvcr.io/nvidia/pytorch");
        assertThat(Files.exists(out)).as(img).isFalse();
      }
    }
    for (String img : neither) {
      for (String plan : List.of(amd, nv)) {
        Path out = dir.resolve("ok-" + Math.abs((img + plan).hashCode()));
        CliRun r = CliRun.of("deploy", "--plan", plan, "--target", "pytorchjob", "--image", img,
            "--out", out.toString(), "--", "pretrain_gpt.py");
        assertThat(r.code()).as(img + r.err()).isZero();
        assertThat(Files.readString(out)).contains("image: " + img);
      }
    }
  }
}
