package io.meshplan.deploy;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A KubeRay {@code ray.io/v1} {@code RayCluster}: one head pod and {@code nodes - 1} worker pods,
 * each with all of its node's GPUs (as in {@code seeds/000}, where the head trains too). KubeRay
 * writes each pod's {@code ray start} from {@code rayStartParams}. The job is submitted to the
 * head with {@code ray job submit}, its entrypoint {@link RayTorchrunDriver}'s driver, which runs
 * torchrun on every node (one rank per GPU); the manifest carries that command line in the
 * annotation {@value #SUBMIT_ANNOTATION}, and a ConfigMap after the RayCluster holds the driver.
 */
public final class RayClusterManifest {
  /** The annotation holding the {@code ray job submit} command line. */
  public static final String SUBMIT_ANNOTATION = "meshplan.io/submit";

  /**
   * The custom resource.
   *
   * @param apiVersion {@code ray.io/v1}
   * @param kind {@code RayCluster}
   * @param metadata name, namespace, labels and annotations
   * @param spec the head and worker groups
   */
  public record RayCluster(String apiVersion, String kind, ObjectMeta metadata, Spec spec) {}

  /**
   * The cluster spec.
   *
   * @param headGroupSpec the head pod
   * @param workerGroupSpecs the worker groups
   */
  public record Spec(HeadGroupSpec headGroupSpec, List<WorkerGroupSpec> workerGroupSpecs) {}

  /**
   * The head group.
   *
   * @param rayStartParams {@code ray start} options without their dashes
   * @param template the head pod
   */
  public record HeadGroupSpec(Map<String, String> rayStartParams, PodTemplateSpec template) {}

  /**
   * A worker group.
   *
   * @param groupName the group's name
   * @param replicas worker pods
   * @param minReplicas the same, as the cluster does not autoscale
   * @param maxReplicas the same
   * @param rayStartParams {@code ray start} options without their dashes
   * @param template the worker pod
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record WorkerGroupSpec(String groupName, int replicas, int minReplicas, int maxReplicas,
      Map<String, String> rayStartParams, PodTemplateSpec template) {}

  private RayClusterManifest() {}

  /**
   * Builds the manifest.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the YAML file
   */
  public static Artifact write(LaunchSpec spec, FabricEnv fabric) {
    return new Artifact(spec.name() + "-raycluster.yaml", KubeYaml.write(List.of(build(spec,
        fabric), RayTorchrunDriver.configMap(spec))), false);
  }

  /**
   * Builds the typed object.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the RayCluster
   */
  public static RayCluster build(LaunchSpec spec, FabricEnv fabric) {
    Map<String, String> head = new TreeMap<>();
    head.put("dashboard-host", "0.0.0.0");
    head.put("num-gpus", Integer.toString(spec.gpusPerNode()));
    Map<String, String> worker = new TreeMap<>();
    worker.put("num-gpus", Integer.toString(spec.gpusPerNode()));
    List<WorkerGroupSpec> workers = new ArrayList<>();
    if (spec.nodes() > 1) {
      int n = spec.nodes() - 1;
      workers.add(new WorkerGroupSpec("gpu-workers", n, n, n, worker,
          RayTorchrunDriver.mounted(KubePods.template(spec, fabric, "worker", "ray-worker",
              List.of(), List.of()), spec)));
    }
    List<String> submit = new ArrayList<>(List.of("ray", "job", "submit", "--address",
        "http://" + spec.name() + "-head-svc." + spec.namespace() + ".svc.cluster.local:8265",
        "--"));
    submit.addAll(RayTorchrunDriver.entrypoint(spec));
    ObjectMeta meta = new ObjectMetaBuilder().withName(spec.name())
        .withNamespace(spec.namespace())
        .addToLabels(KubePods.JOB_LABEL, spec.name())
        .addToAnnotations(SUBMIT_ANNOTATION, ShellQuote.join(submit))
        .build();
    return new RayCluster("ray.io/v1", "RayCluster", meta, new Spec(
        new HeadGroupSpec(head, RayTorchrunDriver.mounted(KubePods.template(spec, fabric, "head",
            "ray-head", List.of(), List.of(KubePods.port("gcs", 6379),
                KubePods.port("dashboard", 8265), KubePods.port("client", 10001))), spec)),
        workers));
  }
}
