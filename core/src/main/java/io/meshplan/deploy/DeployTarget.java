package io.meshplan.deploy;

import io.meshplan.util.InputException;
import java.util.List;
import java.util.Locale;

/** The launchers {@link Deployer} writes for. */
public enum DeployTarget {
  /** A KubeRay {@code RayJob} with its own Ray cluster. */
  KUBERAY("kuberay", true, false),
  /** Ray on plain Kubernetes: Deployments and a Service. */
  RAY_K8S("ray-k8s", true, false),
  /** A Kubeflow {@code PyTorchJob}. */
  PYTORCHJOB("pytorchjob", true, false),
  /** {@code runai submit-dist pytorch} and a per-node script. */
  RUNAI("runai", true, false),
  /** Dask scheduler and CUDA workers over UCX. */
  DASK("dask", false, false),
  /**
   * An {@code sbatch} script; on NVLink domains across hosts, each domain's hosts as one
   * segment ({@link LaunchSpec#nvlinkHosts}).
   */
  SLURM("slurm", false, true);

  private final String label;
  private final boolean kubernetes;
  private final boolean nvlinkDomains;

  DeployTarget(String label, boolean kubernetes, boolean nvlinkDomains) {
    this.label = label;
    this.kubernetes = kubernetes;
    this.nvlinkDomains = nvlinkDomains;
  }

  /**
   * Whether the target launches on NVLink domains that span hosts (NVL72 racks): it places each
   * domain's hosts together. The Kubernetes targets would need the rack's IMEX channels (NVIDIA's
   * DRA driver's ComputeDomain) and workers placed rack by rack, which they do not write.
   *
   * @return true for Slurm
   */
  public boolean nvlinkDomains() {
    return nvlinkDomains;
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
