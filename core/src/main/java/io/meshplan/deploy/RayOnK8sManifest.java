package io.meshplan.deploy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.List;

/**
 * Ray on plain Kubernetes, the form of {@code seeds/000}: a head {@code Deployment} (one replica),
 * a {@code Service} in front of it, and a worker {@code Deployment} of {@code nodes - 1} replicas;
 * each container runs {@code ray start} itself. Without an operator nothing submits the job: the
 * {@code ray job submit} command line is written in the head Deployment's annotation {@value
 * #SUBMIT_ANNOTATION}, its entrypoint {@link RayEntrypoint}'s by {@link RayMode}, and a ConfigMap
 * after the Deployments holds the mode's driver and the command.
 */
public final class RayOnK8sManifest {
  /** The annotation holding the {@code ray job submit} command line. */
  public static final String SUBMIT_ANNOTATION = "meshplan.io/submit";

  private RayOnK8sManifest() {}

  /**
   * Builds the manifest: head Deployment, Service, worker Deployment.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the Kubernetes objects, in apply order: the head {@link Deployment}, its {@link
   *     Service}, the worker {@link Deployment} when there is more than one node, and the
   *     ConfigMap of the driver and the command
   */
  public static List<HasMetadata> build(LaunchSpec spec, FabricEnv fabric) {
    String head = spec.name() + "-ray-head";
    String address = head + "." + spec.namespace() + ".svc.cluster.local";
    String gpus = "--num-gpus=" + spec.gpusPerNode();
    List<String> submit = new ArrayList<>(List.of("ray", "job", "submit", "--address",
        "http://" + address + ":" + RayEntrypoint.DASHBOARD_PORT));
    submit.add("--");
    submit.addAll(RayEntrypoint.words(spec));
    List<HasMetadata> out = new ArrayList<>();
    out.add(deployment(spec, fabric, head, "head", 1,
        List.of("ray", "start", "--head", "--port=" + RayEntrypoint.GCS_PORT, "--dashboard-host=0.0.0.0", gpus,
            "--block"), ShellQuote.join(submit)));
    List<ServicePort> ports = List.of(svcPort("gcs", RayEntrypoint.GCS_PORT),
        svcPort("dashboard", RayEntrypoint.DASHBOARD_PORT),
        svcPort("client", RayEntrypoint.CLIENT_PORT));
    Service svc = new ServiceBuilder()
        .withNewMetadata().withName(head).withNamespace(spec.namespace())
        .addToLabels(KubePods.JOB_LABEL, spec.name()).endMetadata()
        .withNewSpec().withType("ClusterIP").withPorts(ports)
        .addToSelector(KubePods.JOB_LABEL, spec.name()).addToSelector("meshplan.io/role", "head")
        .endSpec()
        .build();
    out.add(svc);
    if (spec.nodes() > 1) {
      out.add(deployment(spec, fabric, spec.name() + "-ray-worker", "worker", spec.nodes() - 1,
          List.of("ray", "start", "--address=" + address + ":" + RayEntrypoint.GCS_PORT, gpus, "--block"), null));
    }
    out.add(RayEntrypoint.configMap(spec, fabric));
    return out;
  }

  /**
   * Writes the manifest.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the YAML file
   */
  public static Artifact write(LaunchSpec spec, FabricEnv fabric) {
    return new Artifact(spec.name() + "-ray.yaml", KubeYaml.write(build(spec, fabric)), false);
  }

  private static Deployment deployment(LaunchSpec spec, FabricEnv fabric, String name,
      String role, int replicas, List<String> command, String submit) {
    DeploymentBuilder b = new DeploymentBuilder()
        .withNewMetadata().withName(name).withNamespace(spec.namespace())
        .addToLabels(KubePods.JOB_LABEL, spec.name()).endMetadata();
    if (submit != null) {
      b.editMetadata().addToAnnotations(SUBMIT_ANNOTATION, submit)
          .endMetadata();
    }
    return b.withNewSpec().withReplicas(replicas)
        .withNewSelector().addToMatchLabels(KubePods.JOB_LABEL, spec.name())
        .addToMatchLabels("meshplan.io/role", role).endSelector()
        .withTemplate(RayEntrypoint.pod(KubePods.template(spec, fabric, role,
            "ray-" + role, command.stream().map(KubeYaml::literal).toList(),
            role.equals("head") ? RayEntrypoint.headPorts() : List.of()),
            spec))
        .endSpec()
        .build();
  }

  private static ServicePort svcPort(String name, int port) {
    return new ServicePortBuilder().withName(name).withPort(port).withProtocol("TCP")
        .withTargetPort(new IntOrString(port)).build();
  }
}
