package io.meshplan.deploy;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;

/**
 * A KubeRay {@code ray.io/v1} {@code RayJob}: KubeRay creates the Ray cluster of {@link
 * RayClusterManifest} (the plan's GPUs, no more), submits the entrypoint from a submitter
 * Kubernetes Job once the cluster is ready ({@code submissionMode: K8sJobMode}), and deletes the
 * cluster {@value #TTL_SECONDS} s after the job ends ({@code shutdownAfterJobFinishes}). The
 * entrypoint is {@link RayEntrypoint}'s, by {@link RayMode}, with its ConfigMap after the RayJob.
 * Field names and rules are KubeRay v1.7.0's ({@code
 * ray-operator/apis/ray/v1/rayjob_types.go}; {@code controllers/ray/utils/validation.go}: a TTL
 * needs {@code shutdownAfterJobFinishes}, the name is a DNS-1035 label of at most 47 characters).
 */
public final class RayJobManifest {
  /** Seconds KubeRay keeps the finished job's cluster, to read its logs, before deleting it. */
  public static final int TTL_SECONDS = 600;

  /**
   * The custom resource.
   *
   * @param apiVersion {@code ray.io/v1}
   * @param kind {@code RayJob}
   * @param metadata name, namespace and labels
   * @param spec the job
   */
  public record RayJob(String apiVersion, String kind, ObjectMeta metadata, Spec spec) {}

  /**
   * The job spec.
   *
   * @param entrypoint the shell command the Ray Jobs API runs once on the cluster
   * @param submissionMode how KubeRay submits: {@code K8sJobMode}
   * @param shutdownAfterJobFinishes whether the cluster is deleted when the job ends
   * @param ttlSecondsAfterFinished the delay before that deletion, in seconds
   * @param rayClusterSpec the cluster to create
   */
  public record Spec(String entrypoint, String submissionMode,
      boolean shutdownAfterJobFinishes, int ttlSecondsAfterFinished,
      RayClusterManifest.Spec rayClusterSpec) {}

  private RayJobManifest() {}

  /**
   * Writes the manifest: on a rack (NVLink across hosts) its ComputeDomains first, then the
   * RayJob, then the ConfigMap with the driver and the command.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the YAML file
   */
  public static Artifact write(LaunchSpec spec, FabricEnv fabric) {
    List<Object> docs = new ArrayList<>();
    if (ComputeDomains.needed(spec)) {
      docs.addAll(ComputeDomains.all(spec));
    }
    docs.add(build(spec, fabric));
    docs.add(RayEntrypoint.configMap(spec, fabric));
    return new Artifact(spec.name() + "-rayjob.yaml", KubeYaml.write(docs), false);
  }

  /**
   * Builds the typed object.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the RayJob
   */
  public static RayJob build(LaunchSpec spec, FabricEnv fabric) {
    ObjectMeta meta = new ObjectMetaBuilder().withName(spec.name())
        .withNamespace(spec.namespace())
        .addToLabels(KubePods.JOB_LABEL, spec.name())
        .build();
    return new RayJob("ray.io/v1", "RayJob", meta, new Spec(
        ShellQuote.join(RayEntrypoint.words(spec)), "K8sJobMode", true,
        TTL_SECONDS, RayClusterManifest.build(spec, fabric)));
  }

}
