package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.plan.StagePlan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code meshplan export} and {@code meshplan deploy} on the command line, good and bad input. */
class ExportDeployCliTest {
  @TempDir Path dir;

  private static final String[] FLAGS = {"--model", "llama2-70b", "--dtype", "bf16", "--seq",
      "4096", "--cluster", "128x8:h100-80gb:ib-ndr400", "--tp", "8", "--pp", "4", "--dp", "32",
      "--micro-batch", "1", "--global-batch", "1024", "--recompute", "full",
      "--sequence-parallel", "--distributed-optimizer"};

  private static String[] args(String[] head, String... tail) {
    List<String> a = new ArrayList<>(List.of(head));
    a.addAll(List.of(FLAGS));
    a.addAll(List.of(tail));
    return a.toArray(String[]::new);
  }

  /** Four stages with layer counts {@code counts}, each on 32 nodes as a 32 x 8 mesh. */
  private Path planFile(int... counts) throws Exception {
    return planFile(Recompute.FULL, counts);
  }

  /** A plan whose stage 1 recomputes as {@code second} says, the others fully. */
  private Path planFile(Recompute second, int... counts) throws Exception {
    ModelSpec m = new ModelSpec("llama2-70b", ModelSpec.Family.LLAMA, 80, 8192, 64, 8, 28672,
        32000, 4096, 1, DType.BF16);
    List<StagePlan> stages = new ArrayList<>();
    int first = 0;
    for (int i = 0; i < counts.length; i++) {
      stages.add(new StagePlan(first, first + counts[i] - 1, 32, 8, i * 256, 32, 8,
          i == 1 ? second : Recompute.FULL, true, 1, true, 0.1, 0.2, 1e9, List.of()));
      first += counts[i];
    }
    // Planned on H100s, so with fused attention, as the flags default to there.
    PipelinePlan p = new PipelinePlan(new io.meshplan.plan.PlanSource.Preset(m,
        io.meshplan.model.Attention.FLASH), "128x8:h100-80gb:ib-ndr400", 1024, 32, 32, 1, stages,
        new PipelinePlan.Prediction(10, 1000, 100, 0.3, 5e10));
    Path f = dir.resolve("plan.json");
    Files.writeString(f, PlanJson.write(p));
    return f;
  }

  @Test
  void exportFromFlagsAndFromAPlanGiveTheSameFile() throws Exception {
    CliRun flags = CliRun.of(args(new String[] {"export", "--to", "megatron"}));
    assertThat(flags.code()).as(flags.err()).isZero();
    assertThat(flags.out()).contains("--tensor-model-parallel-size 8\n",
        "--pipeline-model-parallel-size 4\n", "--global-batch-size 1024\n");
    Path plan = planFile(20, 20, 20, 20);
    Path out = dir.resolve("megatron.sh");
    CliRun fromPlan = CliRun.of("export", "--to", "megatron", "--plan", plan.toString(), "--out",
        out.toString());
    assertThat(fromPlan.code()).as(fromPlan.err()).isZero();
    assertThat(Files.readString(out)).isEqualTo(flags.out());
  }

  @Test
  void aPlanWithUnevenFirstAndLastStagesExportsMegatronCoresFlags() throws Exception {
    // 19, 21, 21, 19: the middle stages hold (80 - 19 - 19) / 2 = 21.
    CliRun r = CliRun.of("export", "--to", "megatron", "--plan",
        planFile(19, 21, 21, 19).toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("--decoder-first-pipeline-num-layers 19",
        "--decoder-last-pipeline-num-layers 19");
  }

  @Test
  void aPlanOfUnequalStagesExportsMegatronCoresLayout() throws Exception {
    // 20, 22, 18, 20: no even or first/last split, so the layout states each chunk.
    CliRun r = CliRun.of("export", "--to", "megatron", "--plan",
        planFile(20, 22, 18, 20).toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("--pipeline-model-parallel-layout 'E" + "t".repeat(20) + "|");
  }

  @Test
  void aNonUniformPlanExitsThreeNamingWhatIsMissingAndTheNearestConfiguration()
      throws Exception {
    Path plan = planFile(Recompute.SELECTIVE, 20, 20, 20, 20);
    CliRun r = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err()).startsWith("meshplan: infeasible: megatron cannot express this"
        + " configuration: stages use different recomputation");
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.out()).contains("nearest configuration megatron can express:",
        "--tp 8 --pp 4 --dp 32 --micro-batch 1 --global-batch 1024 --recompute full"
            + " --sequence-parallel --distributed-optimizer");
    // The nearest configuration is simulated with the planner's prices.
    assertThat(r.out()).containsPattern("predicted cost: [0-9.]+ s per iteration, [0-9]+ tokens/s,"
        + " [0-9.]+ TFLOP/s per GPU, MFU [0-9.]+%, peak memory [0-9.]+GiB per GPU");
    // And it says which prices: the plan's H100s at the shipped Hopper factor.
    assertThat(r.out()).contains("prices: hopper compute x0.811");
  }

  @Test
  void theNearestConfigurationsPredictionComesFromThePredictor() throws Exception {
    Path plan = planFile(20, 22, 18, 20);
    var out = new java.io.StringWriter();
    var err = new java.io.StringWriter();
    var cl = new picocli.CommandLine(new ExportCommand(in -> java.util.Optional.of(
        new PipelinePlan.Prediction(12.5, 335544, 150, 0.4, 60e9))));
    cl.setOut(new java.io.PrintWriter(out));
    cl.setErr(new java.io.PrintWriter(err));
    int code = cl.execute("--to", "deepspeed", "--plan", plan.toString());
    assertThat(code).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(out.toString()).contains("predicted cost: 12.500 s per iteration, 335544 tokens/s,"
        + " 150.0 TFLOP/s per GPU, MFU 40.0%");
  }

  @Test
  void withoutAPredictorTheSimulatorPredictsTheNearestConfiguration() {
    // DeepSpeed has no interleaved schedule: the nearest configuration drops --vpp 2, and the
    // schedule simulator prices it (1F1B, tp 8 x pp 4 x dp 32, no sequence parallelism).
    CliRun r = CliRun.of("export", "--to", "deepspeed", "--model", "llama2-70b", "--dtype",
        "bf16", "--seq", "4096", "--cluster", "128x8:h100-80gb:ib-ndr400", "--tp", "8", "--pp",
        "4", "--dp", "32", "--vpp", "2", "--micro-batch", "1", "--global-batch", "1024",
        "--recompute", "selective", "--distributed-optimizer");
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err()).contains("no interleaved schedule");
    assertThat(r.out()).contains("--pp 4 --dp 32 --micro-batch 1", "predicted cost: ")
        .contains(" s per iteration, ", " TFLOP/s per GPU, MFU ")
        .doesNotContain("--vpp", "unavailable");
  }

  @Test
  void badPlansExitTwoWithOneLine() throws Exception {
    CliRun missing = CliRun.of("export", "--to", "megatron", "--plan",
        dir.resolve("nope.json").toString());
    assertThat(missing.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(missing.err()).contains("no such file").doesNotContain("Exception");

    Path malformed = dir.resolve("bad.json");
    Files.writeString(malformed, "{\"format\": \"meshplan-plan\", ");
    CliRun bad = CliRun.of("export", "--to", "torchtitan", "--plan", malformed.toString());
    assertThat(bad.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(bad.err()).contains("bad.json: not a JSON plan file").doesNotContain("\tat ");
    assertThat(bad.err().lines()).hasSize(1);

    Path plan = planFile(20, 20, 20, 20);
    Files.writeString(plan, Files.readString(plan).replace("\"version\" : 1",
        "\"version\" : 99"));
    CliRun version = CliRun.of("deploy", "--target", "slurm", "--plan", plan.toString(),
        "--", "train.py");
    assertThat(version.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(version.err()).contains("plan format version 99 is not supported");

    CliRun both = CliRun.of(args(new String[] {"export", "--to", "megatron", "--plan",
        plan.toString()}));
    assertThat(both.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(both.err()).contains("not both");
    // The flags given with a plan are named, whichever they are (the refusal used to name the
    // sizes whatever was given).
    Path good = planFile(20, 20, 20, 20);
    CliRun.of("simulate", "--plan", good.toString(), "--recompute", "full", "--zero-stage", "3")
        .refusedInOneLine(ExitCodes.BAD_INPUT,
            "--plan carries the model and the parallel sizes; drop --recompute, --zero-stage");
    CliRun.of("export", "--to", "megatron", "--plan", good.toString(), "--seq", "2048",
        "--schedule", "gpipe").refusedInOneLine(ExitCodes.BAD_INPUT,
            "give --plan or the model and parallel flags, not both (--seq, --schedule)");
  }

  @Test
  void anExistingOutputIsKeptWithoutForceAndReplacedAtomicallyWithIt() throws Exception {
    Path out = dir.resolve("ds.json");
    Files.writeString(out, "precious");
    CliRun r = CliRun.of(args(new String[] {"export", "--to", "deepspeed"}, "--out",
        out.toString()));
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).contains("exists; add --force");
    assertThat(Files.readString(out)).isEqualTo("precious");
    CliRun forced = CliRun.of(args(new String[] {"export", "--to", "deepspeed"}, "--out",
        out.toString(), "--force"));
    assertThat(forced.code()).as(forced.err()).isZero();
    assertThat(Files.readString(out)).contains("\"train_batch_size\" : 1024");
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactly("ds.json");
    }
    CliRun notRegular = CliRun.of(args(new String[] {"export", "--to", "deepspeed"}, "--out",
        dir.toString(), "--force"));
    assertThat(notRegular.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(notRegular.err()).contains("not a regular file");
  }

  @Test
  void anOutputNamingAnInputIsRefused() throws Exception {
    Path plan = planFile(20, 20, 20, 20);
    String before = Files.readString(plan);
    CliRun r = CliRun.of("export", "--to", "megatron", "--plan", plan.toString(), "--out",
        plan.toString(), "--force");
    assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(r.err()).contains("--out " + plan + " is also an input: --plan " + plan
        + "; choose another file, meshplan never overwrites its inputs");
    Path fabric = dir.resolve("doctor.json");
    Files.writeString(fabric, "{\"devices\": [], \"env\": {\"NCCL_IB_DISABLE\": \"1\"}}");
    CliRun d = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb",
        "--fabric", fabric.toString(), "--out",
        dir.resolve(".").resolve("doctor.json").toString(), "--force", "--", "train.py");
    assertThat(d.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(d.err()).contains("is also an input: --fabric " + fabric);
    assertThat(Files.readString(plan)).isEqualTo(before);
  }

  @Test
  void deployWithMegatronArgumentsSetsTheConnectionsMegatronAsserts() throws Exception {
    // tp 8 on H100 (before Blackwell), no FSDP: Megatron-LM's validate_args asserts
    // CUDA_DEVICE_MAX_CONNECTIONS=1 (megatron/training/arguments.py:1453-1479, main d98e8a6).
    String plan = planFile(20, 20, 20, 20).toString();
    CliRun r = CliRun.of("deploy", "--target", "slurm", "--plan", plan, "--megatron-args",
        "--env", "NCCL_IB_HCA=mlx5", "--", "pretrain_gpt.py");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("CUDA_DEVICE_MAX_CONNECTIONS=1");
    CliRun against = CliRun.of("deploy", "--target", "slurm", "--plan", plan, "--megatron-args",
        "--env", "CUDA_DEVICE_MAX_CONNECTIONS=8", "--", "pretrain_gpt.py");
    assertThat(against.code()).isEqualTo(2);
    assertThat(against.err()).contains("Megatron-LM asserts CUDA_DEVICE_MAX_CONNECTIONS=1");
    // A native Ray driver runs once; Megatron-LM's arguments need torchrun's ranks.
    CliRun nativeRay = CliRun.of("deploy", "--target", "kuberay", "--plan", plan,
        "--megatron-args", "--image", "img", "--ray-mode", "native", "--", "pretrain_gpt.py");
    assertThat(nativeRay.code()).isEqualTo(2);
    assertThat(nativeRay.err()).isEqualTo("meshplan: error: --megatron-args needs torchrun's"
        + " ranks; use --ray-mode torchrun (native runs your own Ray driver once)\n");
  }

  @Test
  void deployWritesRunaiScriptsIntoADirectoryAndAppendsThePlansMegatronArguments()
      throws Exception {
    Path plan = planFile(20, 20, 20, 20);
    Path out = dir.resolve("launch");
    CliRun r = CliRun.of("deploy", "--target", "runai", "--plan", plan.toString(),
        "--fabric", "core/src/test/resources/doctor-golden/roce-bond-gid9.json", "--image",
        "nvcr.io/nvidia/pytorch:24.05-py3", "--namespace", "llm", "--name", "llama70b",
        "--rdma-resource", "rdma/rdma", "--pod-network", "multus:kube-system/roce",
        "--megatron-args",
        "--out", out.toString(), "--", "pretrain_gpt.py", "--data-path", "/data/my corpus");
    assertThat(r.code()).as(r.err()).isZero();
    String node = Files.readString(out.resolve("llama70b-node.sh"));
    // The pod finds its own ports and GID index when it starts, not the node's mlx5_bond_0 / 9.
    assertThat(node).contains("  meshplan_fabric || exit 1\n",
        "pretrain_gpt.py --data-path '/data/my corpus' --tensor-model-parallel-size 8"
            + " --pipeline-model-parallel-size 4 --micro-batch-size 1 --global-batch-size 1024");
    assertThat(Files.isExecutable(out.resolve("llama70b-node.sh"))).isTrue();
    assertThat(r.err()).isEmpty();
    // Standard output: what was written, then the command the submit script runs.
    assertThat(r.out()).isEqualTo("# wrote " + out.resolve("llama70b-submit.sh") + ", "
        + out.resolve("llama70b-node.sh") + "\n# copy " + out.resolve("llama70b-node.sh")
        + " to /workspace/llama70b-node.sh in every pod (shared storage or the image), then"
        + " submit:\n" + """
        runai submit-dist pytorch \\
          --name llama70b \\
          --project llm \\
          --image nvcr.io/nvidia/pytorch:24.05-py3 \\
          --workers 127 \\
          --gpu 8 \\
          --extended-resource 'rdma/rdma=1' \\
          --add-capability IPC_LOCK \\
          --large-shm \\
          --annotation 'k8s.v1.cni.cncf.io/networks=kube-system/roce@net1' \\
          -- bash /workspace/llama70b-node.sh
        """);
    assertThat(Files.readString(out.resolve("llama70b-submit.sh")))
        .contains("--workers 127", "--gpu 8", "--extended-resource 'rdma/rdma=1'");
    CliRun again = CliRun.of("deploy", "--target", "runai", "--cluster", "128x8:h100-80gb",
        "--image", "img", "--name", "llama70b", "--out", out.toString(), "--", "x.py");
    assertThat(again.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(again.err()).contains("exists; add --force");
  }

  @Test
  void deployRefusesBadNamesFabricsAndEnvOnOneLine() throws Exception {
    CliRun name = CliRun.of("deploy", "--target", "pytorchjob", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--name", "My Job$(reboot)", "--", "train.py");
    assertThat(name.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(name.err()).contains("must be a DNS-1123 label");
    assertThat(name.err().lines()).hasSize(1);
    Path fabric = dir.resolve("doctor.json");
    Files.writeString(fabric, "[1, 2");
    CliRun f = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb",
        "--fabric", fabric.toString(), "--", "train.py");
    assertThat(f.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(f.err()).contains("doctor.json: not doctor JSON");
    CliRun env = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb",
        "--env", "1BAD=x", "--", "train.py");
    assertThat(env.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(env.err()).contains("is not a shell identifier");
    CliRun noCmd = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb");
    assertThat(noCmd.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(noCmd.err()).contains("training command is missing");
    // An empty or blank program runs nothing: refused, not written as torchrun ''.
    for (String blank : new String[] {"", "  "}) {
      CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb", "--", blank,
          "--flag").refusedInOneLine(ExitCodes.BAD_INPUT, "the training command's program is "
              + "empty");
    }
    CliRun noFabric = CliRun.of("deploy", "--target", "slurm", "--cluster", "2x8:h100-80gb",
        "--", "train.py");
    assertThat(noFabric.code()).isZero();
    assertThat(noFabric.err()).contains("warning: no NCCL variables are set");
    CliRun noImage = CliRun.of("deploy", "--target", "kuberay", "--cluster", "2x8:h100-80gb",
        "--", "train.py");
    assertThat(noImage.code()).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(noImage.err()).contains("--image is required for --target kuberay");
  }

  @Test
  void deployRefusesTheOldNetworkFlagAndABadPodNetwork() {
    CliRun old = CliRun.of("deploy", "--target", "runai", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--network", "kube-system/roce", "--", "train.py");
    assertThat(old.code()).isEqualTo(2);
    assertThat(old.err()).isEqualTo("meshplan: error: --network was replaced by --pod-network"
        + " multus:NS/NAME[@IFACE]\n");
    CliRun bad = CliRun.of("deploy", "--target", "pytorchjob", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--pod-network", "multus:a/b@$(id)", "--", "train.py");
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.out()).isEmpty();
    CliRun host = CliRun.of("deploy", "--target", "runai", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--pod-network", "host", "--", "train.py");
    assertThat(host.code()).isEqualTo(2);
    assertThat(host.err()).contains("--pod-network host");
  }

  @Test
  void deployTakesRayModeTorchrunOrNative() {
    CliRun ok = CliRun.of("deploy", "--target", "kuberay", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--ray-mode", "torchrun", "--env", "NCCL_IB_HCA=mlx5", "--",
        "train.py");
    assertThat(ok.code()).as(ok.err()).isZero();
    assertThat(ok.out()).contains("kind: RayJob", "entrypoint: python /meshplan/ray_torchrun.py"
        + " --nodes 2 --gpus-per-node 8 --master-port 29500 --command-file /meshplan/command.json",
        "command.json: |\n    [\"train.py\"]");
    CliRun dflt = CliRun.of("deploy", "--target", "kuberay", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--env", "NCCL_IB_HCA=mlx5", "--", "train.py");
    assertThat(dflt.out()).isEqualTo(ok.out());
    CliRun alpa = CliRun.of("deploy", "--target", "ray-k8s", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--ray-mode", "native", "--env", "NCCL_IB_HCA=mlx5", "--",
        "python", "train_alpa.py", "--batch", "$(id)");
    assertThat(alpa.code()).as(alpa.err()).isZero();
    assertThat(alpa.out()).contains("-- python /meshplan/ray_native.py --nodes 2"
        + " --gpus-per-node 8 --command-file /meshplan/command.json",
        "[\"python\",\"train_alpa.py\",\"--batch\",\"$(id)\"]").doesNotContain("ray_torchrun");
    CliRun bad = CliRun.of("deploy", "--target", "kuberay", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--ray-mode", "jax", "--", "train.py");
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.out()).isEmpty();
    assertThat(bad.err()).isEqualTo("meshplan: error: --ray-mode: Ray mode 'jax' is unknown; use"
        + " torchrun (a driver starts torchrun on every node) or native (your own Ray driver,"
        + " e.g. Alpa)\n");
    CliRun notRay = CliRun.of("deploy", "--target", "pytorchjob", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--ray-mode", "native", "--", "train.py");
    assertThat(notRay.code()).isEqualTo(2);
    assertThat(notRay.err()).isEqualTo("meshplan: error: --ray-mode native is for --target"
        + " kuberay or ray-k8s, not pytorchjob\n");
    CliRun digit = CliRun.of("deploy", "--target", "kuberay", "--cluster", "2x8:h100-80gb",
        "--image", "img", "--name", "7b", "--", "train.py");
    assertThat(digit.code()).isEqualTo(2);
    assertThat(digit.err()).startsWith("meshplan: error: job name '7b' must start with a letter");
  }

}
