package io.meshplan.deploy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a Ray target's job runs, by {@link RayMode}: a fixed driver ({@link RayTorchrunDriver} or
 * {@link RayNativeDriver}) and the user's command as a JSON list of words, both in a ConfigMap
 * mounted at {@value #MOUNT} in every Ray pod, and an entrypoint of plain words naming them.
 *
 * <p>The command never enters the entrypoint because an entrypoint passes through shells that
 * do not agree on quoting: {@code ray job submit -- WORDS} rejoins its words with Python's {@code
 * subprocess.list2cmdline} (ray {@code dashboard/modules/job/cli.py}), which quotes only blanks
 * and double quotes, for Windows, and the job supervisor runs that line with {@code shell=True};
 * KubeRay's submitter runs {@code ray job submit ... -- ENTRYPOINT} as one {@code bash -c} line
 * in a container's args (KubeRay v1.7.0 {@code controllers/ray/common/job.go}, {@code
 * BuildJobSubmitCommand}), where Kubernetes also expands {@code $(VAR)}. A {@code $(...)} in a
 * training argument would run. Plain words mean the same to all of them.
 */
final class RayEntrypoint {
  /** Where the ConfigMap is mounted in the Ray pods. */
  static final String MOUNT = "/meshplan";
  /** The command's file name inside the ConfigMap. */
  static final String COMMAND_FILE = "command.json";
  /** Ray's GCS port on the head (the {@code ray start --head} default). */
  static final int GCS_PORT = 6379;
  /** The Ray dashboard's port, where {@code ray job submit} talks to the job API. */
  static final int DASHBOARD_PORT = 8265;
  /** The Ray client server's port. */
  static final int CLIENT_PORT = 10001;
  /** The ports the head pod declares and listens on. */
  static final Set<Integer> HEAD_PORTS = Set.of(GCS_PORT, DASHBOARD_PORT,
      CLIENT_PORT);

  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9/._-]+");
  private static final ObjectMapper JSON = new ObjectMapper();

  private RayEntrypoint() {}

  /**
   * The entrypoint's words.
   *
   * @param spec the launch
   * @return the mode's driver with the shape and the command file; each word plain, so quoting
   *     and {@code $} expansion leave it as it is in every shell on the way
   */
  static List<String> words(LaunchSpec spec) {
    String file = MOUNT + "/" + COMMAND_FILE;
    List<String> w = spec.rayMode() == RayMode.TORCHRUN
        ? RayTorchrunDriver.entrypoint(spec, file) : RayNativeDriver.entrypoint(spec, file);
    for (String x : w) {
      if (!PLAIN.matcher(x).matches()) {
        throw new IllegalStateException("entrypoint word '" + x + "' is not plain");
      }
    }
    return w;
  }

  /**
   * The ConfigMap: the mode's driver, the command's words as a JSON array, and the fabric script
   * when the pods find variables at start ({@link FabricLookupScript}).
   *
   * @param spec the launch
   * @param fabric the fabric
   * @return {@code NAME-ray-driver} in the job's namespace
   */
  static ConfigMap configMap(LaunchSpec spec, FabricEnv fabric) {
    String driver = spec.rayMode() == RayMode.TORCHRUN ? RayTorchrunDriver.FILE
        : RayNativeDriver.FILE;
    String program = spec.rayMode() == RayMode.TORCHRUN ? RayTorchrunDriver.PROGRAM
        : RayNativeDriver.PROGRAM;
    String command;
    try {
      command = JSON.writeValueAsString(spec.command()) + "\n";
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
    ConfigMapBuilder b = new ConfigMapBuilder().withNewMetadata().withName(configMapName(spec))
        .withNamespace(spec.namespace()).addToLabels(KubePods.JOB_LABEL, spec.name())
        .endMetadata().addToData(COMMAND_FILE, command).addToData(driver, program);
    ProcessFabric pod = ProcessFabric.inPod(spec, fabric);
    if (!pod.foundAtStart().isEmpty()) {
      b.addToData(FabricLookupScript.FILE, FabricLookupScript.file(pod));
    }
    return b.build();
  }

  /**
   * The pod template with the ConfigMap mounted read-only at {@value #MOUNT}.
   *
   * @param t the pod
   * @param spec the launch
   * @return a new template
   */
  static PodTemplateSpec pod(PodTemplateSpec t, LaunchSpec spec) {
    return KubePods.mount(t, configMapName(spec));
  }

  /**
   * The head pod's container ports, named.
   *
   * @return gcs, dashboard and client
   */
  static List<ContainerPort> headPorts() {
    return List.of(KubePods.port("gcs", GCS_PORT), KubePods.port("dashboard", DASHBOARD_PORT),
        KubePods.port("client", CLIENT_PORT));
  }

  private static String configMapName(LaunchSpec spec) {
    return spec.name() + "-ray-driver";
  }
}
