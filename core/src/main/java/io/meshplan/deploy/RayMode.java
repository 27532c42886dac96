package io.meshplan.deploy;

import io.meshplan.util.Words;
import java.util.Arrays;
import java.util.Locale;

/**
 * How the Ray targets ({@link DeployTarget#KUBERAY}, {@link DeployTarget#RAY_K8S}) run the
 * training on the Ray cluster. Both give the job the whole cluster, one Ray node per machine with
 * all its GPUs; they differ in who starts the processes.
 */
public enum RayMode {
  /**
   * The job's entrypoint is {@link RayTorchrunDriver}'s driver, which starts {@code torchrun} on
   * every node through a placement group: nodes x GPUs per node ranks, for PyTorch programs
   * (Megatron-LM, torchtitan, DeepSpeed) that expect torchrun's environment.
   */
  TORCHRUN("torchrun"),
  /**
   * The job's entrypoint is the user's own Ray driver (Alpa, as in {@code seeds/000}; any program
   * that calls {@code ray.init} and places its work itself), run once with the cluster's size in
   * its environment ({@link RayNativeDriver#SIZE_VARIABLES}).
   */
  NATIVE("native");

  private final String label;

  RayMode(String label) {
    this.label = label;
  }

  /**
   * The name used on the command line.
   *
   * @return {@code torchrun} or {@code native}
   */
  public String label() {
    return label;
  }

  /**
   * Parses a mode name.
   *
   * @param text the name, any case
   * @return the mode
   * @throws IllegalArgumentException naming the modes
   */
  public static RayMode parse(String text) {
    String t = text == null ? "" : Words.trimmed(text).toLowerCase(Locale.ROOT);
    return Arrays.stream(values()).filter(m -> m.label.equals(t)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("Ray mode '" + text + "' is unknown; use"
            + " torchrun (a driver starts torchrun on every node) or native (your own Ray"
            + " driver, e.g. Alpa)"));
  }
}
