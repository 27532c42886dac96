package io.meshplan.deploy;

import java.util.List;
import java.util.Optional;

/**
 * The GPU vendor a container image is recognizably built for, from where it is published: a
 * CUDA image does not run on AMD GPUs, nor a ROCm image on NVIDIA's, so a launch that pairs them
 * would start pods that fail at their first GPU call. Only the vendors' own repositories are
 * recognized; any other image (a team's own build, a registry mirror) passes, since its name
 * does not say what it holds.
 *
 * <ul>
 *   <li>NVIDIA: its NGC registry's {@code nvcr.io/nvidia/} images (e.g. {@code
 *       nvcr.io/nvidia/pytorch}, NGC's PyTorch container, which NVIDIA/Megatron-LM's
 *       README.md recommends) and the CUDA images
 *       on Docker Hub, {@code nvidia/cuda} and its siblings ({@code nvidia/cudagl}).
 *   <li>AMD: the {@code rocm/} organisation on Docker Hub, where AMD publishes its ROCm images
 *       ({@code rocm/pytorch}, {@code rocm/megatron-lm}: ROCm documentation, "Training a model
 *       with Megatron-LM for ROCm", how-to/rocm-for-ai/training/benchmark-docker/megatron-lm).
 * </ul>
 *
 * Names are compared after the registry is written out as a runtime resolves it ({@link
 * OciReference#normalizedName}), so {@code rocm/pytorch} and {@code docker.io/rocm/pytorch} are
 * one image.
 */
final class ImageVendor {
  private static final List<String> NVIDIA = List.of("nvcr.io/nvidia/", "docker.io/nvidia/cuda");
  private static final List<String> AMD = List.of("docker.io/rocm/");

  private ImageVendor() {}

  /**
   * Why an image cannot run on the cluster's GPUs.
   *
   * @param image a valid image reference ({@link OciReference#problem} is empty)
   * @param rocm whether the GPUs are AMD's
   * @return the reason, or empty when the image is not recognizably the other vendor's
   */
  static Optional<String> mismatch(String image, boolean rocm) {
    String name = OciReference.normalizedName(image);
    if (rocm && NVIDIA.stream().anyMatch(name::startsWith)) {
      return Optional.of("image '" + image + "' is one of NVIDIA's CUDA images, which do not run"
          + " on the cluster's AMD GPUs; give a ROCm image, such as AMD's rocm/pytorch or"
          + " rocm/megatron-lm");
    }
    if (!rocm && AMD.stream().anyMatch(name::startsWith)) {
      return Optional.of("image '" + image + "' is one of AMD's ROCm images, which do not run on"
          + " the cluster's NVIDIA GPUs; give a CUDA image, such as nvcr.io/nvidia/pytorch");
    }
    return Optional.empty();
  }
}
