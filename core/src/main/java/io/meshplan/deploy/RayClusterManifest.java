package io.meshplan.deploy;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The KubeRay {@code ray.io/v1} RayCluster spec that {@link RayJobManifest}'s RayJob embeds as
 * {@code rayClusterSpec}: one head pod and {@code nodes - 1} worker pods, each with all of its
 * node's GPUs (as in {@code seeds/000}, where the head computes too), so the cluster has exactly
 * the plan's GPUs. KubeRay writes each pod's {@code ray start} from {@code rayStartParams}.
 */
public final class RayClusterManifest {
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
   * Builds the cluster spec.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the head group and, with more than one node, one worker group
   */
  public static Spec build(LaunchSpec spec, FabricEnv fabric) {
    Map<String, String> head = new TreeMap<>();
    head.put("dashboard-host", "0.0.0.0");
    head.put("num-gpus", Integer.toString(spec.gpusPerNode()));
    Map<String, String> worker = new TreeMap<>();
    worker.put("num-gpus", Integer.toString(spec.gpusPerNode()));
    List<WorkerGroupSpec> workers = new ArrayList<>();
    if (spec.nodes() > 1) {
      int n = spec.nodes() - 1;
      workers.add(new WorkerGroupSpec("gpu-workers", n, n, n, worker,
          RayEntrypoint.pod(KubePods.template(spec, fabric, "worker", "ray-worker",
              List.of(), List.of()), spec)));
    }
    return new Spec(new HeadGroupSpec(head, RayEntrypoint.pod(KubePods.template(spec, fabric,
        "head", "ray-head", List.of(), RayEntrypoint.headPorts()), spec)), workers);
  }
}
