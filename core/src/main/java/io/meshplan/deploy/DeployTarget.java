package io.meshplan.deploy;

import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.util.List;
import java.util.Locale;

/** The launchers {@link Deployer} writes for. */
public enum DeployTarget {
  /** A KubeRay {@code RayJob} with its own Ray cluster; on racks a worker group per rack. */
  KUBERAY("kuberay", true, Racks.EACH_PINNED),
  /** Ray on plain Kubernetes: Deployments and a Service; on racks a worker Deployment per rack. */
  RAY_K8S("ray-k8s", true, Racks.EACH_PINNED),
  /** A Kubeflow {@code PyTorchJob}; on racks, one rack's NVLink domain at most. */
  PYTORCHJOB("pytorchjob", true, Racks.ONE),
  /** {@code runai submit-dist pytorch} and a per-node script. */
  RUNAI("runai", true, Racks.NONE),
  /** Dask scheduler and CUDA workers over UCX. */
  DASK("dask", false, Racks.NONE),
  /**
   * An {@code sbatch} script; on NVLink domains across hosts, each domain's hosts as one
   * segment ({@link LaunchSpec#nvlinkHosts}).
   */
  SLURM("slurm", false, Racks.EACH_PINNED);

  /**
   * How a target launches on NVLink domains that span hosts (NVL72 racks), whose hosts must land
   * in one NVLink partition (and, on Kubernetes, share the domain's IMEX channel).
   */
  public enum Racks {
    /** It cannot place a domain's hosts together: refused on racks. */
    NONE,
    /**
     * It places one domain's hosts together but cannot tell several domains' pods apart (a
     * PyTorchJob's Workers share one pod template): refused past one domain.
     */
    ONE,
    /** It places each domain's hosts together, as many domains as the job has. */
    EACH_PINNED
  }

  private final String label;
  private final boolean kubernetes;
  private final Racks nvlinkDomains;

  DeployTarget(String label, boolean kubernetes, Racks nvlinkDomains) {
    this.label = label;
    this.kubernetes = kubernetes;
    this.nvlinkDomains = nvlinkDomains;
  }

  /**
   * How the target launches on NVLink domains that span hosts (NVL72 racks). Slurm asks for each
   * domain's hosts as one segment of a topology block; the Kubernetes targets write a
   * ComputeDomain per domain (NVIDIA's DRA driver: the rack's IMEX channel) and keep each
   * domain's pods on one NVLink clique ({@link ComputeDomains}): KubeRay and Ray on Kubernetes
   * with a worker group per domain, a PyTorchJob for one domain only. RunAI's {@code submit-dist
   * pytorch} has no flag for a pod's resource claims or affinity, and Dask none here either.
   *
   * @return {@link Racks#EACH_PINNED} for Slurm, KubeRay and Ray on Kubernetes, {@link Racks#ONE}
   *     for PyTorchJob, {@link Racks#NONE} for RunAI and Dask
   */
  public Racks nvlinkDomains() {
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
      if (t.label.equals(text == null ? "" : Words.trimmed(text).toLowerCase(Locale.ROOT))) {
        return t;
      }
    }
    throw new InputException("deploy target '" + text + "' is unknown; use "
        + String.join(", ", List.of(values()).stream().map(DeployTarget::label).toList()));
  }
}
