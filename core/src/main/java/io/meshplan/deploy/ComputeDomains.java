package io.meshplan.deploy;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.PodAffinityTermBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A launch on NVLink domains that span hosts (GB200/GB300 NVL72 racks, {@link
 * LaunchSpec#nvlinkHosts} above 1) as NVIDIA's DRA driver for GPUs defines one: a {@code
 * resource.nvidia.com/v1beta1} {@code ComputeDomain} per NVLink domain the job uses, whose
 * controller creates the ResourceClaimTemplate named in {@code spec.channel.resourceClaimTemplate};
 * every pod of that domain claims it ({@code spec.resourceClaims} with {@code
 * resourceClaimTemplateName}, and the container's {@code resources.claims} by the same name), which
 * gives the container the domain's IMEX channel, without which GPU memory is not shared over
 * NVLink across trays. Sources: kubernetes-sigs/dra-driver-nvidia-gpu 95932046 ({@code
 * api/nvidia.com/resource/v1beta1/computedomain.go}, {@code
 * deployments/helm/dra-driver-nvidia-gpu/crds/resource.nvidia.com_computedomains.yaml}, {@code
 * demo/specs/imex/nvbandwidth-test-job-1.yaml}, {@code
 * site/content/docs/guides/compute-domain-workloads.md}).
 *
 * <p>The pods of one domain are kept on one NVLink partition by a required pod affinity to each
 * other ({@value #DOMAIN_LABEL} and the job label) on the node label {@value #CLIQUE_LABEL}, which
 * GPU Feature Discovery (or the driver's kubelet plugin) sets to the node's {@code
 * <cluster UUID>.<clique ID>} ({@code cmd/compute-domain-kubelet-plugin/computedomain.go}; {@code
 * site/content/docs/install.md}), and a required node affinity to nodes that have that label, as
 * the driver's install guide writes its test pod. The scheduler lets the first pod of a group whose
 * affinity matches itself land where no pod of the group runs yet, and every later one only on
 * the group's clique (kubernetes/kubernetes {@code
 * pkg/scheduler/framework/plugins/interpodaffinity/filtering.go}, {@code
 * satisfiesPodsAffinityAntiAffinity}). Each pod also holds its domain's index in {@value
 * #DOMAIN_ENV}, which Ray's torchrun driver orders node ranks by.
 *
 * <p>{@code numNodes} is the domain's hosts. The driver deprecates the field and recommends 0
 * under its default {@code IMEXDaemonsWithDNSNames} gate, where a non-zero value only sets when the
 * domain's status reads Ready (all its IMEX daemons up); with the gate off it must be the number
 * of nodes that join, and pods wait until they all have. The host count is right in both.
 */
final class ComputeDomains {
  /** The ComputeDomain's API version, the one the driver's CRD serves. */
  static final String API_VERSION = "resource.nvidia.com/v1beta1";
  /** The node label of the NVLink partition (clique) a node's GPUs belong to. */
  static final String CLIQUE_LABEL = "nvidia.com/gpu.clique";
  /** The pod label holding the index of the pod's NVLink domain in the job. */
  static final String DOMAIN_LABEL = "meshplan.io/nvlink-domain";
  /** The container variable holding the same index. */
  static final String DOMAIN_ENV = "MESHPLAN_NVLINK_DOMAIN";
  /** The pod's name for its IMEX channel claim. */
  static final String CLAIM = "imex-channel";

  /**
   * The custom resource.
   *
   * @param apiVersion {@value #API_VERSION}
   * @param kind {@code ComputeDomain}
   * @param metadata name, namespace and labels
   * @param spec the domain
   */
  public record ComputeDomain(String apiVersion, String kind, ObjectMeta metadata, Spec spec) {}

  /**
   * The domain's spec.
   *
   * @param numNodes the hosts (compute trays) of the domain the job uses
   * @param channel the channel the pods claim
   */
  public record Spec(int numNodes, Channel channel) {}

  /**
   * The channel; its allocation mode is left to the CRD's default, one channel per pod.
   *
   * @param resourceClaimTemplate the template the controller creates for it
   */
  public record Channel(TemplateName resourceClaimTemplate) {}

  /**
   * The name of a ResourceClaimTemplate.
   *
   * @param name a DNS-1123 subdomain
   */
  public record TemplateName(String name) {}

  private ComputeDomains() {}

  /**
   * The NVLink domains the job uses.
   *
   * @param spec the launch
   * @return nodes / hosts per domain
   */
  static int count(LaunchSpec spec) {
    return spec.nodes() / spec.nvlinkHosts();
  }

  /**
   * Whether the launch needs ComputeDomains: its NVLink domains span hosts.
   *
   * @param spec the launch
   * @return true when a domain has more than one host
   */
  static boolean needed(LaunchSpec spec) {
    return spec.nvlinkHosts() > 1;
  }

  /**
   * One ComputeDomain per NVLink domain, in order.
   *
   * @param spec the launch; its domains span hosts
   * @return {@code NAME-nvlink-K} for K from 0, each of {@code nvlinkHosts} nodes
   */
  static List<ComputeDomain> all(LaunchSpec spec) {
    List<ComputeDomain> out = new ArrayList<>();
    for (int k = 0; k < count(spec); k++) {
      ObjectMeta meta = new ObjectMetaBuilder().withName(name(spec, k))
          .withNamespace(spec.namespace()).addToLabels(KubePods.JOB_LABEL, spec.name())
          .addToLabels(DOMAIN_LABEL, Integer.toString(k)).build();
      out.add(new ComputeDomain(API_VERSION, "ComputeDomain", meta,
          new Spec(spec.nvlinkHosts(), new Channel(new TemplateName(channelTemplate(spec, k))))));
    }
    return out;
  }

  /**
   * The ComputeDomain's name.
   *
   * @param spec the launch
   * @param domain the domain's index
   * @return {@code NAME-nvlink-K}
   */
  static String name(LaunchSpec spec, int domain) {
    String n = spec.name() + "-nvlink-" + domain;
    Require.that(KubeNames.dns1123Label(n + "-channel"), "ComputeDomain name '" + n
        + "-channel' is longer than a DNS-1123 label's 63 characters; shorten the job name");
    return n;
  }

  /**
   * The name of the ResourceClaimTemplate the domain's controller creates and its pods claim.
   *
   * @param spec the launch
   * @param domain the domain's index
   * @return {@code NAME-nvlink-K-channel}
   */
  static String channelTemplate(LaunchSpec spec, int domain) {
    return name(spec, domain) + "-channel";
  }

  /**
   * A pod of one NVLink domain: labelled with the domain, claiming its IMEX channel (pod and
   * container), kept with the domain's other pods on one {@value #CLIQUE_LABEL}, and told its
   * domain in {@value #DOMAIN_ENV}.
   *
   * @param t the pod, as {@link KubePods#template} builds it (one container)
   * @param spec the launch
   * @param domain the domain's index
   * @return a new template
   * @throws IllegalArgumentException if the environment already sets {@value #DOMAIN_ENV}
   */
  static PodTemplateSpec join(PodTemplateSpec t, LaunchSpec spec, int domain) {
    String k = Integer.toString(domain);
    List<EnvVar> env = new ArrayList<>(t.getSpec().getContainers().get(0).getEnv());
    Require.that(env.stream().noneMatch(e -> e.getName().equals(DOMAIN_ENV)), "environment"
        + " variable " + DOMAIN_ENV + " is the pod's NVLink domain, which deploy sets on racks;"
        + " drop it");
    env.add(new EnvVar(DOMAIN_ENV, k, null));
    env.sort(Comparator.comparing(EnvVar::getName));
    PodAffinityTerm together = new PodAffinityTermBuilder().withNewLabelSelector()
        .addToMatchLabels(KubePods.JOB_LABEL, spec.name()).addToMatchLabels(DOMAIN_LABEL, k)
        .endLabelSelector().withTopologyKey(CLIQUE_LABEL).build();
    return new PodTemplateSpecBuilder(t)
        .editMetadata().addToLabels(DOMAIN_LABEL, k).endMetadata()
        .editSpec()
        .addNewResourceClaim().withName(CLAIM)
        .withResourceClaimTemplateName(channelTemplate(spec, domain)).endResourceClaim()
        .withNewAffinity().withNewPodAffinity()
        .addToRequiredDuringSchedulingIgnoredDuringExecution(together)
        .endPodAffinity()
        .withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
        .addNewNodeSelectorTerm().addNewMatchExpression().withKey(CLIQUE_LABEL)
        .withOperator("Exists").endMatchExpression().endNodeSelectorTerm()
        .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity()
        .endAffinity()
        .editFirstContainer()
        .withEnv(env)
        .editResources().addNewClaim().withName(CLAIM).endClaim().endResources()
        .endContainer()
        .endSpec().build();
  }
}
