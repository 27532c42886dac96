package io.meshplan.deploy;

import io.meshplan.util.Require;
import java.util.List;

/**
 * Writes the launch files of a target for a launch and a fabric. Kubernetes manifests are typed
 * objects (the fabric8 model, and records for the KubeRay and Kubeflow custom resources)
 * serialized with Jackson; scripts quote every outside value with {@code util.ShellQuote}.
 */
public final class Deployer {
  /** Creates the deployer; it holds no state. */
  public Deployer() {}

  /**
   * Writes the files.
   *
   * @param target the launcher
   * @param spec the launch
   * @param fabric the environment
   * @return the files, in the order to use them
   * @throws IllegalArgumentException if a Kubernetes or RunAI target has no image, or the name
   *     is one KubeRay refuses
   */
  public List<Artifact> deploy(DeployTarget target, LaunchSpec spec, FabricEnv fabric) {
    Require.nonNull(target, "target");
    Require.nonNull(spec, "spec");
    Require.nonNull(fabric, "fabric");
    Require.that(!target.kubernetes() || spec.image().isPresent(), target.label()
        + " runs containers and needs an image");
    return switch (target) {
      case KUBERAY -> List.of(RayJobManifest.write(spec, fabric));
      case RAY_K8S -> List.of(RayOnK8sManifest.write(spec, fabric));
      case PYTORCHJOB -> List.of(PyTorchJobManifest.write(spec, fabric));
      case RUNAI -> RunaiLaunch.write(spec, fabric);
      case DASK -> List.of(DaskLaunch.write(spec, fabric));
      case SLURM -> List.of(SlurmScript.write(spec, fabric));
    };
  }
}
