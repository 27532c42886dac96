package io.meshplan.cli;

import io.meshplan.deploy.DeployTarget;
import io.meshplan.deploy.RayMode;
import io.meshplan.util.InputException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import picocli.CommandLine.ParseResult;

/**
 * Which of {@code deploy}'s options mean something for which target. An option given for a
 * target it does not apply to would be dropped without a word (an image for Slurm, Megatron-LM's
 * arguments for a Dask client, a partition for a pod), so it is refused in one line naming the
 * targets it is for. Options every target uses ({@code --plan}, {@code --cluster}, {@code
 * --fabric}, {@code --env}, {@code --name}, {@code --out}, {@code --force}) are not listed.
 */
final class DeployOptionScope {
  private static final Set<DeployTarget> PODS = EnumSet.of(DeployTarget.KUBERAY,
      DeployTarget.RAY_K8S, DeployTarget.PYTORCHJOB, DeployTarget.RUNAI);
  private static final Set<DeployTarget> RAY = EnumSet.of(DeployTarget.KUBERAY,
      DeployTarget.RAY_K8S);

  /**
   * One option and the targets it applies to.
   *
   * @param option the option's name
   * @param targets the targets that use it
   */
  record Rule(String option, Set<DeployTarget> targets) {}

  /**
   * The table: every option that some target does not use. {@code --shm-size} is the size of the
   * pods' memory-backed {@code /dev/shm}, which RunAI asks for with {@code --large-shm} alone;
   * {@code --master-port} is torchrun's rendezvous port where meshplan starts torchrun's master
   * (Slurm, Ray's torchrun mode), the operators and RunAI setting {@code MASTER_PORT} themselves;
   * {@code --megatron-args} adds to a command that torchrun runs, which no Dask role is.
   */
  static final List<Rule> RULES = List.of(
      new Rule("--image", PODS),
      new Rule("--namespace", PODS),
      new Rule("--rdma-resource", PODS),
      new Rule("--rdma-count", PODS),
      new Rule("--pod-network", PODS),
      new Rule("--shm-size", EnumSet.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
          DeployTarget.PYTORCHJOB)),
      new Rule("--ray-mode", RAY),
      new Rule("--master-port", EnumSet.of(DeployTarget.KUBERAY, DeployTarget.RAY_K8S,
          DeployTarget.SLURM)),
      new Rule("--node-script", EnumSet.of(DeployTarget.RUNAI)),
      new Rule("--interface", EnumSet.of(DeployTarget.DASK)),
      new Rule("--partition", EnumSet.of(DeployTarget.SLURM)),
      new Rule("--megatron-args", EnumSet.complementOf(EnumSet.of(DeployTarget.DASK))));

  private DeployOptionScope() {}

  /**
   * Refuses the first option given that the target does not use.
   *
   * @param given what the command line held
   * @param target the target
   * @param mode the Ray mode (native starts no torchrun, so it has no master port)
   * @throws InputException naming the option, its value and the targets it is for
   */
  static void check(ParseResult given, DeployTarget target, RayMode mode) {
    for (Rule r : RULES) {
      if (!given.hasMatchedOption(r.option())) {
        continue;
      }
      String shown = r.option() + value(given, r.option());
      if (!r.targets().contains(target)) {
        throw new InputException(shown + " is for --target " + labels(r.targets()) + ", not "
            + target.label());
      }
      if (r.option().equals("--master-port") && RAY.contains(target) && mode == RayMode.NATIVE) {
        throw new InputException(shown + " is torchrun's port; --ray-mode native starts no"
            + " torchrun");
      }
    }
  }

  private static String value(ParseResult given, String option) {
    List<String> v = given.matchedOption(option).stringValues();
    return v.isEmpty() || given.matchedOption(option).typeInfo().isBoolean() ? ""
        : " " + v.get(v.size() - 1);
  }

  private static String labels(Set<DeployTarget> targets) {
    List<String> l = targets.stream().map(DeployTarget::label).toList();
    return l.size() == 1 ? l.get(0) : l.subList(0, l.size() - 1).stream()
        .collect(Collectors.joining(", ")) + " or " + l.get(l.size() - 1);
  }
}
