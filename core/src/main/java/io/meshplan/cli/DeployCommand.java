package io.meshplan.cli;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.deploy.Artifact;
import io.meshplan.deploy.Deployer;
import io.meshplan.deploy.DeployTarget;
import io.meshplan.deploy.DoctorFabric;
import io.meshplan.deploy.FabricEnv;
import io.meshplan.deploy.LaunchSpec;
import io.meshplan.deploy.PodNetwork;
import io.meshplan.deploy.RayMode;
import io.meshplan.deploy.RunaiLaunch;
import io.meshplan.export.ExportInput;
import io.meshplan.export.ExportResult;
import io.meshplan.export.ExportTarget;
import io.meshplan.export.Exporter;
import io.meshplan.export.MegatronArgs;
import io.meshplan.export.MegatronConnections;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.util.AtomicFiles;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code meshplan deploy}: launch manifests and scripts for a cluster and a training command. */
@Command(
    name = "deploy",
    mixinStandardHelpOptions = true,
    description = {
      "Writes what launches a training job on the cluster: a KubeRay RayJob, Ray on"
          + " Kubernetes (Deployments + Service), a Kubeflow PyTorchJob, RunAI submit-dist with a"
          + " per-node script, Dask over UCX, or a Slurm sbatch script. The NCCL/UCX environment"
          + " comes from 'doctor --json' (--fabric) and --env.",
      "The training command follows '--': meshplan deploy ... -- pretrain_gpt.py --flag ...",
      "An option for other targets than the one chosen is refused (each option's help names"
          + " its targets).",
      "Exit codes: 0 written, 2 bad input, 3 the plan is not a Megatron-LM configuration"
          + " (--megatron-args)."
    })
final class DeployCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--target", required = true, paramLabel = "T",
      completionCandidates = Choices.DeployTargets.class,
      description = "One of: ${COMPLETION-CANDIDATES}.")
  String target;

  @Option(names = "--plan", paramLabel = "FILE", description = "A plan written by 'plan --out';"
      + " its cluster is the default for --cluster.")
  Path plan;

  @Option(names = "--cluster", paramLabel = "C", description = "NODESxGPUS:gpu[:fabric] or a"
      + " YAML cluster file.")
  String cluster;

  @picocli.CommandLine.Mixin CatalogOption catalog = new CatalogOption();

  @Option(names = "--fabric", paramLabel = "FILE", description = "Output of 'meshplan doctor"
      + " --json' on a node: the NCCL/UCX environment and the RDMA ports. Only the variables"
      + " doctor writes, with values of its forms, are accepted. In a pod with its own network"
      + " (--pod-network default or multus:...) the ports and the RoCE GID index are found when"
      + " the pod starts; the node's hold on the host network, Slurm and Dask.")
  Path fabric;

  @Option(names = "--env", paramLabel = "NAME=VALUE", description = "An environment variable for"
      + " every rank; repeatable; replaces the same name from --fabric.")
  List<String> env = new ArrayList<>();

  @Option(names = "--image", paramLabel = "IMAGE", description = "Container image; required"
      + " for kuberay, ray-k8s, pytorchjob and runai.")
  String image;

  @Option(names = "--namespace", defaultValue = "default", paramLabel = "NS",
      description = "kuberay, ray-k8s, pytorchjob: the Kubernetes namespace; runai: the project."
      + " Default: ${DEFAULT-VALUE}.")
  String namespace;

  @Option(names = "--name", defaultValue = "meshplan-train", description = "Job name (a DNS"
      + " label). Default: ${DEFAULT-VALUE}.")
  String name;

  @Option(names = "--rdma-resource", defaultValue = "rdma/ib", description = "kuberay, ray-k8s,"
      + " pytorchjob, runai: the extended resource of the RDMA device, e.g. rdma/ib, rdma/hca,"
      + " rdma/rdma. Default: ${DEFAULT-VALUE}.")
  String rdmaResource;

  @Option(names = "--rdma-count", defaultValue = "1", description = "kuberay, ray-k8s,"
      + " pytorchjob, runai: RDMA resources per pod. Default: ${DEFAULT-VALUE}.")
  int rdmaCount;

  @Option(names = "--shm-size", description = "kuberay, ray-k8s, pytorchjob: size limit of the"
      + " memory-backed /dev/shm, a quantity of bytes such as 64Gi (default: none).")
  String shmSize;

  @Option(names = "--master-port", defaultValue = "29500", description = "slurm; kuberay and"
      + " ray-k8s in torchrun mode: torchrun's rendezvous port. Default: ${DEFAULT-VALUE}.")
  int masterPort;

  @Option(names = "--pod-network", defaultValue = "default", paramLabel = "NET",
      description = "Kubernetes targets: default (NCCL on the pod's eth0, RDMA from the device"
      + " plugin), host (hostNetwork; the fabric's interface) or multus:NS/NAME[@IFACE] (the"
      + " k8s.v1.cni.cncf.io/networks annotation; NCCL on IFACE, net1 if none)."
      + " Default: ${DEFAULT-VALUE}. One of: ${COMPLETION-CANDIDATES}.",
      completionCandidates = Choices.PodNetworks.class)
  String podNetwork;

  @Option(names = "--network", hidden = true, description = "Replaced by --pod-network.")
  String network;

  @Option(names = "--ray-mode", defaultValue = "torchrun", paramLabel = "MODE",
      description = "kuberay, ray-k8s: torchrun (a driver starts torchrun on every node, one rank"
      + " per GPU) or native (the command is your own Ray driver, e.g. Alpa's, run once with"
      + " MESHPLAN_NUM_NODES, MESHPLAN_GPUS_PER_NODE and MESHPLAN_NUM_GPUS set)."
      + " Default: ${DEFAULT-VALUE}. One of: ${COMPLETION-CANDIDATES}.",
      completionCandidates = Choices.RayModes.class)
  String rayMode;

  @Option(names = "--node-script", description = "runai: where the per-node script is in the"
      + " pod (default /workspace/NAME-node.sh).")
  String nodeScript;

  @Option(names = "--interface", description = "dask: the interface Dask listens on (default:"
      + " the fabric's NCCL_SOCKET_IFNAME, else ib0); rdmacm is enabled only when it is an IPoIB"
      + " interface or the RoCE netdev of the fabric's ports.")
  String iface;

  @Option(names = "--partition", description = "slurm: the partition.")
  String partition;

  @Option(names = "--megatron-args", description = "All targets but dask: append the plan's"
      + " Megatron-LM arguments to the training command (needs --plan).")
  boolean megatronArgs;

  @Option(names = "--out", paramLabel = "PATH", description = "Write here: a file, or a"
      + " directory for runai's two scripts, after which the runai command is printed (default:"
      + " stdout)." + OutputPaths.DASH_IS_STDOUT + " A directory must not be a link, nor"
      + " hold links in place of the files.")
  Path out;

  @Option(names = "--force", description = ForceOption.DESCRIPTION)
  boolean force;

  @Parameters(paramLabel = "COMMAND", description = "The training command, after '--'.")
  List<String> command = new ArrayList<>();

  @Override
  public Integer call() {
    DeployTarget t = DeployTarget.parse(target);
    DeployOptionScope.check(spec.commandLine().getParseResult(), t, parseRayMode());
    out = OutputPaths.stdout(out);
    Map<String, Path> inputs = new LinkedHashMap<>();
    Optional<PlanFile> planFile = Optional.empty();
    if (plan != null) {
      inputs.put("--plan", plan);
      inputs.putAll(PlanFiles.namedFiles(plan));
      planFile = Optional.of(PlanFile.read(plan));
    }
    // A file that is not a plan is refused before anything else is said of it.
    Optional<PipelinePlan> p = planFile.map(PlanFile::plan);
    if (cluster == null && p.isEmpty()) {
      throw new InputException("give --cluster or --plan");
    }
    ClusterSpec c = cluster(planFile, inputs);
    planFile.ifPresent(file -> file.checkCarried(c));
    FabricEnv f = readFabric(inputs);
    TreeMap<String, String> envs = envFlags();
    List<String> cmd = new ArrayList<>(command);
    if (megatronArgs) {
      ExportInput in = megatron(p.orElseThrow(() -> new InputException(
          "--megatron-args needs --plan")), c, plan);
      MegatronArgs.arguments(in).forEach(cmd::addAll);
      connections(MegatronConnections.of(in), envs);
    }
    boolean rocm = c.gpu().architecture().vendor() == io.meshplan.cluster.Architecture.Vendor.AMD;
    if (fabric != null) {
      f.gpuMismatch(rocm).ifPresent(why -> {
        throw new InputException("--fabric: " + why);
      });
    }
    if (rocm) {
      refuseOnRocm(t, c);
      io.meshplan.deploy.RocmLaunch.env().forEach(envs::putIfAbsent);
    }
    try {
      f = f.with(envs);
    } catch (IllegalArgumentException e) {
      throw new InputException("--env: " + e.getMessage());
    }
    if (cmd.isEmpty()) {
      throw new InputException("the training command is missing; give it after '--', e.g."
          + " -- pretrain_gpt.py --data-path ...");
    }
    // The program to run is a word: an empty or blank one runs nothing (torchrun '' fails on
    // every node at launch).
    if (command.isEmpty() || command.get(0).isBlank()) {
      throw new InputException("the training command's program is empty; give it after '--', "
          + "e.g. -- pretrain_gpt.py --data-path ...");
    }
    if (t.kubernetes() && image == null) {
      throw new InputException("--image is required for --target " + t.label());
    }
    LaunchSpec ls;
    try {
      // One task per host: a rack's trays are its nodes to the launcher.
      ls = new LaunchSpec(name, namespace, Optional.ofNullable(image), c.hosts(),
          c.hostGpus(), cmd, rdmaResource, rdmaCount, Optional.ofNullable(shmSize), masterPort, podNetwork(t),
          nodeScript != null ? nodeScript : "/workspace/" + name + "-node.sh",
          iface != null ? iface : f.socketInterface().orElse("ib0"),
          Optional.ofNullable(partition), rayMode(), c.gpusPerNode() / c.hostGpus(), rocm);
    } catch (IllegalArgumentException e) {
      throw new InputException(e.getMessage());
    }
    List<Artifact> files = deploy(t, ls, f);
    // The outputs are checked (and written) first, so that a refusal is the only line.
    emit(t, ls, files, inputs);
    warnWithoutNccl(t, f);
    return ExitCodes.OK;
  }

  /**
   * The targets that do not run on AMD GPUs: Dask's workers are dask-cuda's, which need CUDA
   * (rapidsai/dask-cuda); meshplan's Run:ai file requests GPUs through Run:ai's {@code --gpu},
   * whose AMD support meshplan has not checked.
   */
  private static void refuseOnRocm(DeployTarget t, ClusterSpec c) {
    String on = " on the " + c.gpu().name() + " (AMD, ROCm)";
    if (t == DeployTarget.DASK) {
      throw new InputException("--target dask runs dask-cuda workers, which need CUDA, not"
          + on + "; use --target slurm, kuberay or pytorchjob");
    }
    if (t == DeployTarget.RUNAI) {
      throw new InputException("--target runai is written for NVIDIA GPUs and not checked" + on
          + "; use --target slurm, kuberay or pytorchjob");
    }
  }

  /**
   * The cluster the launch files are for: {@code --cluster}, else the plan's, checked against the
   * plan's GPUs and devices; the cluster and catalog files join the inputs no output may name.
   */
  private ClusterSpec cluster(Optional<PlanFile> file, Map<String, Path> inputs) {
    Optional<PipelinePlan> p = file.map(PlanFile::plan);
    String text = cluster != null ? cluster : p.get().cluster();
    if (cluster != null && file.isPresent()) {
      // The catalog the plan was made with names its GPUs, unless --catalog is given.
      file.get().adoptCatalog(catalog);
    }
    // A plan's own cluster: the cluster file it embeds, or its name (in the plan's catalog).
    ClusterSpec c = cluster != null ? catalog.cluster(text) : file.get().own(catalog);
    // The plan's cluster may be a file as well as --cluster's: either is read.
    Path clusterFile = CliValues.existingFile(text);
    if (clusterFile != null) {
      inputs.putIfAbsent(cluster != null ? "--cluster" : "the cluster of plan " + plan,
          clusterFile);
    }
    if (catalog.file != null) {
      inputs.put("--catalog", catalog.file);
    }
    if (p.isPresent() && p.get().gpus() != c.gpuCount()) {
      throw new InputException("--plan uses " + p.get().gpus() + " GPUs but --cluster "
          + c.toShortString() + " has " + c.gpuCount());
    }
    if (p.isPresent()) {
      PlanFiles.checkDevices(plan, p.get(), c);
    }
    return c;
  }

  /** The files; a name KubeRay refuses is bad input. */
  private static List<Artifact> deploy(DeployTarget t, LaunchSpec ls, FabricEnv f) {
    try {
      return new Deployer().deploy(t, ls, f);
    } catch (IllegalArgumentException e) {
      throw new InputException(e.getMessage());
    }
  }

  /** Warns on standard error when no NCCL variable reaches a target that runs NCCL. */
  private void warnWithoutNccl(DeployTarget t, FabricEnv f) {
    if (f.env().keySet().stream().noneMatch(k -> k.startsWith("NCCL_"))
        && t != DeployTarget.DASK) {
      spec.commandLine().getErr().println(ExceptionMapper.warning("no NCCL variables are set;"
          + " NCCL will pick interfaces itself. Give --fabric (the output of 'meshplan doctor"
          + " --json' on a node) or --env NCCL_IB_HCA=..."));
    }
  }

  /** The doctor report's environment, or none without {@code --fabric}; records the input. */
  private FabricEnv readFabric(Map<String, Path> inputs) {
    if (fabric == null) {
      return FabricEnv.of(new TreeMap<>());
    }
    inputs.put("--fabric", fabric);
    String text = InputFiles.readString(fabric, InputFiles.FABRIC_MAX_BYTES, "doctor JSON report");
    return FlagWords.call(FlagWords.FABRIC, () -> DoctorFabric.read(fabric.toString(), text));
  }

  private RayMode parseRayMode() {
    try {
      return RayMode.parse(rayMode);
    } catch (IllegalArgumentException e) {
      throw new InputException("--ray-mode: " + e.getMessage());
    }
  }

  /** The Ray mode (given only for Ray targets), refused with Megatron-LM's arguments if native. */
  private RayMode rayMode() {
    RayMode m = parseRayMode();
    if (m == RayMode.NATIVE && megatronArgs) {
      throw new InputException("--megatron-args needs torchrun's ranks; use --ray-mode torchrun"
          + " (native runs your own Ray driver once)");
    }
    return m;
  }

  private PodNetwork podNetwork(DeployTarget t) {
    if (network != null) {
      throw new InputException("--network was replaced by --pod-network multus:NS/NAME[@IFACE]");
    }
    PodNetwork n;
    try {
      n = PodNetwork.parse(podNetwork);
    } catch (IllegalArgumentException e) {
      throw new InputException("--pod-network: " + e.getMessage());
    }
    // RunAI's CLI reference for submit-dist pytorch / training pytorch submit
    // (docs.nvidia.com/run-ai/self-hosted/reference/cli/runai/training/runai-training-pytorch-submit)
    // was searched for a host-network flag and none was found, so host stays refused here.
    if (t == DeployTarget.RUNAI && n instanceof PodNetwork.Host) {
      throw new InputException("--pod-network host: runai submit-dist pytorch has no host"
          + " network here; use default or multus:NS/NAME[@IFACE]");
    }
    return n;
  }

  private TreeMap<String, String> envFlags() {
    TreeMap<String, String> m = new TreeMap<>();
    for (String e : env) {
      int eq = e.indexOf('=');
      if (eq <= 0) {
        throw new InputException("--env '" + e + "' is not NAME=VALUE");
      }
      // Two values for one variable: which the user meant is not for meshplan to guess.
      if (m.put(e.substring(0, eq), e.substring(eq + 1)) != null) {
        throw new InputException("--env " + e.substring(0, eq) + " is given twice; give each "
            + "variable once");
      }
    }
    return m;
  }

  /**
   * Gives the pods the {@code CUDA_DEVICE_MAX_CONNECTIONS} that Megatron-LM's {@code
   * validate_args} requires ({@link MegatronConnections}), refusing an {@code --env} against it.
   */
  private static void connections(MegatronConnections need, TreeMap<String, String> envs) {
    String key = "CUDA_DEVICE_MAX_CONNECTIONS";
    String given = envs.get(key);
    if (need == MegatronConnections.ONE && given != null && !given.equals("1")) {
      throw new InputException("--env " + key + "=" + given + ": Megatron-LM asserts " + key
          + "=1 with tensor parallelism on GPUs before Blackwell; drop it");
    }
    if (need == MegatronConnections.NOT_ONE && "1".equals(given)) {
      throw new InputException("--env " + key + "=1: Megatron-FSDP (the plan's ZeRO stage)"
          + " asserts " + key + " is unset or above 1; drop it");
    }
    if (need == MegatronConnections.ONE) {
      envs.put(key, "1");
    }
  }

  private static ExportInput megatron(PipelinePlan p, ClusterSpec c, Path file) {
    ExportResult r = new Exporter().export(ExportTarget.MEGATRON, p, c);
    if (r instanceof ExportResult.NotExpressible n) {
      throw new InfeasibleException("--megatron-args: Megatron-LM cannot express the plan: "
          + n.missing() + " (see 'meshplan export --to megatron --plan "
          + io.meshplan.util.ShellQuote.quote(file.toString()) + "' for the nearest"
          + " configuration)");
    }
    return ((ExportResult.Exported) r).input();
  }

  private void emit(DeployTarget t, LaunchSpec ls, List<Artifact> files,
      Map<String, Path> inputs) {
    PrintWriter o = spec.commandLine().getOut();
    if (out == null) {
      for (Artifact a : files) {
        if (files.size() > 1) {
          o.println("# ===== " + a.fileName() + " =====");
        }
        o.print(a.text());
      }
      o.flush();
      return;
    }
    if (files.size() == 1) {
      ExportFiles.checkWritable(out, force, inputs);
      ExportFiles.write(out, files.get(0).text(), files.get(0).executable());
      return;
    }
    if (Files.exists(out, LinkOption.NOFOLLOW_LINKS)
        && !Files.isDirectory(out, LinkOption.NOFOLLOW_LINKS)
        && !Files.isSymbolicLink(out)) {
      throw new InputException("--out " + out + ": " + target + " writes " + files.size()
          + " files; --out must name a directory");
    }
    AtomicFiles.directoryProblem(out).ifPresent(why -> {
      throw new InputException("--out " + out + ": " + why);
    });
    for (Artifact a : files) {
      Path file = out.resolve(a.fileName());
      if (Files.isDirectory(out, LinkOption.NOFOLLOW_LINKS)) {
        ExportFiles.checkWritable(file, force, inputs);
      }
    }
    try {
      AtomicFiles.createDirectories(out);
    } catch (java.io.IOException e) {
      throw new InputException("--out " + out + ": cannot create the directory: "
          + InputFiles.describe(e));
    }
    for (Artifact a : files) {
      ExportFiles.write(out.resolve(a.fileName()), a.text(), a.executable());
    }
    // Shell comments, then the command to run: standard output stays a script one can paste.
    o.println("# wrote " + files.stream().map(a -> out.resolve(a.fileName()).toString())
        .reduce((x, y) -> x + ", " + y).orElse(""));
    if (t == DeployTarget.RUNAI) {
      o.println("# copy " + out.resolve(RunaiLaunch.nodeScriptFileName(ls)) + " to "
          + ls.nodeScriptPath() + " in every pod (shared storage or the image), then submit:");
      o.print(RunaiLaunch.submitCommand(ls));
    }
    o.flush();
  }
}
