package io.meshplan.deploy;

import io.meshplan.util.InputException;
import java.util.List;
import java.util.Locale;

/** The launchers {@link Deployer} writes for. */
public enum DeployTarget {
  /** A KubeRay {@code RayJob} with its own Ray cluster. */
  KUBERAY("kuberay", true),
  /** Ray on plain Kubernetes: Deployments and a Service. */
  RAY_K8S("ray-k8s", true),
  /** A Kubeflow {@code PyTorchJob}. */
  PYTORCHJOB("pytorchjob", true),
  /** {@code runai submit-dist pytorch} and a per-node script. */
  RUNAI("runai", true),
  /** Dask scheduler and CUDA workers over UCX. */
  DASK("dask", false),
  /** An {@code sbatch} script. */
  SLURM("slurm", false);

  private final String label;
  private final boolean kubernetes;

  DeployTarget(String label, boolean kubernetes) {
    this.label = label;
    this.kubernetes = kubernetes;
  }

  /**
   * The name used on the command line.
   *
   * @return for example {@code ray-k8s}
   */
  public String label() {
    return label;
  }

  /**
   * Whether the target runs pods on Kubernetes.
   *
   * @return true for KubeRay, Ray on Kubernetes, PyTorchJob and RunAI
   */
  public boolean kubernetes() {
    return kubernetes;
  }

  /**
   * Parses a target name.
   *
   * @param text a label, any case
   * @return the target
   * @throws InputException listing the valid names
   */
  public static DeployTarget parse(String text) {
    for (DeployTarget t : values()) {
      if (t.label.equals(text == null ? "" : text.trim().toLowerCase(Locale.ROOT))) {
        return t;
      }
    }
    throw new InputException("deploy target '" + text + "' is unknown; use "
        + String.join(", ", List.of(values()).stream().map(DeployTarget::label).toList()));
  }
}
