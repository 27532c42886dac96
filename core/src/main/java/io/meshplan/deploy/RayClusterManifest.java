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
 * the plan's GPUs. KubeRay writes each pod's {@code ray start} from {@code rayStartParams}. On a
 * rack (NVLink across hosts) there is a worker group per NVLink domain, {@code gpu-workers-K},
 * whose pods claim domain K's IMEX channel and share one clique ({@link ComputeDomains}); the head
 * is domain 0's first host, so that group has one worker fewer.
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
   * @return the head group and, with more than one node, one worker group, or one per NVLink
   *     domain on a rack
   */
  public static Spec build(LaunchSpec spec, FabricEnv fabric) {
    Map<String, String> head = new TreeMap<>();
    head.put("dashboard-host", "0.0.0.0");
    head.put("num-gpus", Integer.toString(spec.gpusPerNode()));
    Map<String, String> worker = new TreeMap<>();
    worker.put("num-gpus", Integer.toString(spec.gpusPerNode()));
    PodTemplateSpec workerPod = RayEntrypoint.pod(KubePods.template(spec, fabric, "worker",
        "ray-worker", List.of(), List.of()), spec);
    PodTemplateSpec headPod = RayEntrypoint.pod(KubePods.template(spec, fabric, "head",
        "ray-head", List.of(), RayEntrypoint.headPorts()), spec);
    List<WorkerGroupSpec> workers = new ArrayList<>();
    if (!ComputeDomains.needed(spec)) {
      if (spec.nodes() > 1) {
        int n = spec.nodes() - 1;
        workers.add(new WorkerGroupSpec("gpu-workers", n, n, n, worker, workerPod));
      }
      return new Spec(new HeadGroupSpec(head, headPod), workers);
    }
    // A rack: the head computes in domain 0, so that domain's group has one worker fewer.
    for (int k = 0; k < ComputeDomains.count(spec); k++) {
      int n = k == 0 ? spec.nvlinkHosts() - 1 : spec.nvlinkHosts();
      workers.add(new WorkerGroupSpec("gpu-workers-" + k, n, n, n, worker,
          ComputeDomains.join(workerPod, spec, k)));
    }
    return new Spec(new HeadGroupSpec(head, ComputeDomains.join(headPod, spec, 0)), workers);
  }
}
