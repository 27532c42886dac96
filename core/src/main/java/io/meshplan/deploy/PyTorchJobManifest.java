package io.meshplan.deploy;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kubeflow training-operator {@code kubeflow.org/v1} {@code PyTorchJob}: one Master and {@code
 * nodes - 1} Worker replicas, {@code nprocPerNode} processes each. The operator gives every pod
 * {@code MASTER_ADDR}, {@code MASTER_PORT}, {@code WORLD_SIZE} (pods) and {@code RANK} (the pod's
 * index); the container runs {@code torchrun} with the node count and processes per node written
 * out, and the pod's rank and the master's address taken from those variables through
 * Kubernetes' {@code $(VAR)} expansion. On a rack the job is one NVLink domain: a ComputeDomain
 * whose IMEX channel every pod claims, all pods on one clique ({@link ComputeDomains}).
 */
public final class PyTorchJobManifest {
  /**
   * The custom resource.
   *
   * @param apiVersion {@code kubeflow.org/v1}
   * @param kind {@code PyTorchJob}
   * @param metadata name, namespace and labels
   * @param spec the replicas
   */
  public record PyTorchJob(String apiVersion, String kind, ObjectMeta metadata, Spec spec) {}

  /**
   * The job spec.
   *
   * @param nprocPerNode processes per pod, as the CRD's string
   * @param pytorchReplicaSpecs {@code Master} and {@code Worker}
   */
  public record Spec(String nprocPerNode, Map<String, ReplicaSpec> pytorchReplicaSpecs) {}

  /**
   * One replica type.
   *
   * @param replicas pods of this type
   * @param restartPolicy the operator's restart policy
   * @param template the pod
   */
  public record ReplicaSpec(int replicas, String restartPolicy, PodTemplateSpec template) {}

  private PyTorchJobManifest() {}

  /**
   * Builds the typed object.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the PyTorchJob
   */
  public static PyTorchJob build(LaunchSpec spec, FabricEnv fabric) {
    List<String> cmd = new ArrayList<>(List.of("torchrun",
        "--nnodes=" + spec.nodes(),
        "--nproc-per-node=" + spec.gpusPerNode(),
        "--node-rank=$(RANK)",
        "--master-addr=$(MASTER_ADDR)",
        "--master-port=$(MASTER_PORT)"));
    spec.command().forEach(w -> cmd.add(KubeYaml.literal(w)));
    Map<String, ReplicaSpec> replicas = new LinkedHashMap<>();
    replicas.put("Master", new ReplicaSpec(1, "OnFailure", pod(spec, fabric, "master", cmd)));
    if (spec.nodes() > 1) {
      replicas.put("Worker", new ReplicaSpec(spec.nodes() - 1, "OnFailure",
          pod(spec, fabric, "worker", cmd)));
    }
    ObjectMeta meta = new ObjectMetaBuilder().withName(spec.name())
        .withNamespace(spec.namespace()).addToLabels(KubePods.JOB_LABEL, spec.name()).build();
    return new PyTorchJob("kubeflow.org/v1", "PyTorchJob", meta,
        new Spec(Integer.toString(spec.gpusPerNode()), replicas));
  }

  /**
   * Writes the manifest: on a rack (NVLink across hosts) its ComputeDomain first, then the
   * PyTorchJob, then, when the pods find fabric variables at start, the ConfigMap of {@link
   * FabricLookupScript}.
   *
   * @param spec the launch; on a rack, one NVLink domain ({@link DeployTarget.Racks#ONE})
   * @param fabric the environment
   * @return the YAML file
   */
  public static Artifact write(LaunchSpec spec, FabricEnv fabric) {
    List<Object> docs = new ArrayList<>();
    if (ComputeDomains.needed(spec)) {
      docs.addAll(ComputeDomains.all(spec));
    }
    docs.add(build(spec, fabric));
    ProcessFabric pod = ProcessFabric.inPod(spec, fabric);
    if (!pod.foundAtStart().isEmpty()) {
      docs.add(KubePods.fabricConfigMap(spec, pod));
    }
    return new Artifact(spec.name() + "-pytorchjob.yaml", KubeYaml.write(docs), false);
  }

  private static PodTemplateSpec pod(LaunchSpec spec, FabricEnv fabric, String role,
      List<String> cmd) {
    PodTemplateSpec t = KubePods.template(spec, fabric, role, "pytorch", cmd, List.of());
    if (ComputeDomains.needed(spec)) {
      // One domain: Master and Workers all claim its channel and share its clique.
      Require.that(ComputeDomains.count(spec) == 1, "a PyTorchJob pins one NVLink domain");
      t = ComputeDomains.join(t, spec, 0);
    }
    return ProcessFabric.inPod(spec, fabric).foundAtStart().isEmpty() ? t
        : KubePods.mount(t, spec.name() + "-fabric");
  }
}
