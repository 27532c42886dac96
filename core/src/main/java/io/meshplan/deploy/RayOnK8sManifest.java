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
 * after the Deployments holds the mode's driver and the command. On a rack (NVLink across hosts)
 * there is a worker Deployment per NVLink domain, {@code NAME-ray-worker-K}, whose pods claim
 * domain K's IMEX channel and share one clique ({@link ComputeDomains}); the head is domain 0's
 * first host, so that Deployment has one replica fewer.
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
   *     Service}, the worker {@link Deployment} when there is more than one node (one per NVLink
   *     domain on a rack), and the ConfigMap of the driver and the command
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
    Deployment headDeployment = deployment(spec, fabric, head, "head", 1,
        List.of("ray", "start", "--head", "--port=" + RayEntrypoint.GCS_PORT, "--dashboard-host=0.0.0.0", gpus,
            "--block"), ShellQuote.join(submit));
    out.add(ComputeDomains.needed(spec) ? inDomain(headDeployment, spec, 0) : headDeployment);
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
    List<String> join = List.of("ray", "start", "--address=" + address + ":"
        + RayEntrypoint.GCS_PORT, gpus, "--block");
    if (!ComputeDomains.needed(spec) && spec.nodes() > 1) {
      out.add(deployment(spec, fabric, spec.name() + "-ray-worker", "worker", spec.nodes() - 1,
          join, null));
    }
    // A rack: a worker Deployment per NVLink domain; the head is domain 0's first host.
    for (int k = 0; ComputeDomains.needed(spec) && k < ComputeDomains.count(spec); k++) {
      int n = k == 0 ? spec.nvlinkHosts() - 1 : spec.nvlinkHosts();
      out.add(inDomain(deployment(spec, fabric, spec.name() + "-ray-worker-" + k, "worker", n,
          join, null), spec, k));
    }
    out.add(RayEntrypoint.configMap(spec, fabric));
    return out;
  }

  /**
   * Writes the manifest: on a rack (NVLink across hosts) its ComputeDomains first, then {@link
   * #build}'s objects.
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
    docs.addAll(build(spec, fabric));
    return new Artifact(spec.name() + "-ray.yaml", KubeYaml.write(docs), false);
  }

  /**
   * A Deployment whose pods are one NVLink domain's ({@link ComputeDomains#join}), its selector
   * naming the domain too, so that each domain's Deployment owns only its own pods.
   */
  private static Deployment inDomain(Deployment d, LaunchSpec spec, int k) {
    return new DeploymentBuilder(d).editSpec()
        .editSelector().addToMatchLabels(ComputeDomains.DOMAIN_LABEL, Integer.toString(k))
        .endSelector()
        .withTemplate(ComputeDomains.join(d.getSpec().getTemplate(), spec, k))
        .endSpec().build();
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
