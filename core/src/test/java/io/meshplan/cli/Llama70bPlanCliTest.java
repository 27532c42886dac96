package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.plan.StagePlan;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The acceptance case: the planner's LLaMA2-70B plan on 128x8:h100-80gb:ib-ndr400 through
 * {@code export} and {@code deploy}. The fixture was written by {@code ./meshplan plan --model
 * llama2-70b --cluster 128x8:h100-80gb:ib-ndr400 --out FILE} (main at 417c822): 17 stages (15 of
 * 5 layers on 8x8 meshes, one of 3 and one of 2 layers on 4x8 meshes), ILP layouts, no ZeRO
 * sharding, 64 microbatches of 16 sequences. No framework expresses that exactly, so export exits
 * 3 with the nearest configuration, whose sizes and batches this test checks against the plan;
 * deploy keeps the plan's cluster and the doctor's NCCL environment.
 */
class Llama70bPlanCliTest {
  private static final String PLAN =
      "core/src/test/resources/plans/llama2-70b-128x8-h100-80gb-ib-ndr400.json";
  private static final String FABRIC = "examples/doctor-ib.json";

  /**
   * The nearest uniform configuration. Tensor size 8: the mesh of every stage. Pipeline size:
   * the divisors p of 80 layers with 1024 % (8 p) == 0 are 1, 2, 4, 8 and 16, and 16 is nearest
   * to the plan's 17 stages. Data-parallel size 1024 / (8 x 16) = 8, the plan's 8x8 stages'. A
   * microbatch of 16 sequences over 8 replicas is 2 per replica; 1024 / (2 x 8) = 64
   * microbatches, the plan's.
   */
  private static final String NEAREST = "--tp 8 --pp 16 --dp 8 --micro-batch 2"
      + " --global-batch 1024 --recompute none --sequence-parallel";

  private static PipelinePlan plan() throws Exception {
    return PlanJson.read(PLAN, Files.readString(Path.of(PLAN)));
  }

  @Test
  void theFixtureIsThePlannersPlan() throws Exception {
    PipelinePlan p = plan();
    assertThat(p.cluster()).isEqualTo("128x8:h100-80gb:ib-ndr400");
    assertThat(p.gpus()).isEqualTo(1024);
    assertThat(p.stages()).hasSize(17);
    assertThat(p.globalBatchSize()).isEqualTo(1024);
    assertThat(p.microbatchSequences()).isEqualTo(16);
    assertThat(p.microbatches()).isEqualTo(64);
    assertThat(p.stages()).allSatisfy(s -> {
      assertThat(s.tensorParallel()).isEqualTo(8);
      assertThat(s.zeroStage()).isZero();
    });
    assertThat(p.stages().stream().mapToInt(StagePlan::dataParallel).distinct().sorted())
        .containsExactly(4, 8);
    assertThat(p.microBatchSize(p.stages().get(0))).isEqualTo(2);
  }

  @Test
  void everyTargetNamesWhatIsMissingAndTheNearestConfigurationWithThePlansBatches() {
    for (String to : new String[] {"megatron", "torchtitan", "deepspeed"}) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      // A fixed prediction keeps the test fast; the simulator's own is tested elsewhere.
      var cl = new picocli.CommandLine(new ExportCommand(in -> Optional.of(
          new PipelinePlan.Prediction(2.0, 524288, 215, 0.22, 26e9))));
      cl.setOut(new PrintWriter(out));
      cl.setErr(new PrintWriter(err));
      assertThat(cl.execute("--to", to, "--plan", PLAN)).isEqualTo(ExitCodes.INFEASIBLE);
      assertThat(err.toString().lines()).hasSize(1);
      if (to.equals("torchtitan")) {
        // LLaMA2-70B's vocabulary (32,000) is no llama3 flavor's (128,256): torchtitan has no
        // model for it, whatever the layout, so that is said first and nothing is near (and no
        // plan --for torchtitan would help).
        assertThat(err.toString()).startsWith("meshplan: infeasible: torchtitan cannot express"
            + " this configuration: torchtitan has no flavor for llama2-70b");
        assertThat(out.toString()).isEqualTo("no configuration torchtitan can express is near"
            + " it\n");
        continue;
      }
      assertThat(err.toString()).startsWith("meshplan: infeasible: " + to + " cannot express this"
          + " configuration: stage layouts were chosen by the ILP");
      assertThat(out.toString()).contains("nearest configuration " + to + " can express:",
          "--seq 1024 --dtype bf16 --cluster 128x8:h100-80gb:ib-ndr400 " + NEAREST
              // The plan file predates the attention and overlaps fields, so it was planned
              // unfused, with nothing overlapped or fused (the FSDP prefetch, which ZeRO-0 does
              // not have, is not named).
              + " --attention unfused --no-gradient-accumulation-fusion\n",
          "predicted cost: 2.000 s per iteration");
    }
  }

  @Test
  void theNearestConfigurationsFilesCarryThePlansSizesAndBatches() throws Exception {
    String[] flags = ("--model llama2-70b --seq 1024 --dtype bf16 --cluster"
        + " 128x8:h100-80gb:ib-ndr400 " + NEAREST).split(" ");
    CliRun megatron = CliRun.of(concat(new String[] {"export", "--to", "megatron"}, flags));
    assertThat(megatron.code()).as(megatron.err()).isZero();
    assertThat(megatron.out()).contains("tensor 8 x pipeline 16 x data 8 = 1024 GPUs,\n"
        + "# 64 microbatches of 2 per pipeline per iteration",
        "  --tensor-model-parallel-size 8\n  --pipeline-model-parallel-size 16\n"
            + "  --micro-batch-size 2\n  --global-batch-size 1024\n  --sequence-parallel\n");
    CliRun ds = CliRun.of(concat(new String[] {"export", "--to", "deepspeed"}, flags));
    assertThat(ds.code()).as(ds.err()).isZero();
    JsonNode j = io.meshplan.export.DeepSpeedLaunchFiles.json(ds.out());
    // 1024 = micro 2 x gradient accumulation 64 x data-parallel 8.
    assertThat(j.path("train_micro_batch_size_per_gpu").asInt()).isEqualTo(2);
    assertThat(j.path("gradient_accumulation_steps").asInt()).isEqualTo(64);
    assertThat(j.path("train_batch_size").asInt()).isEqualTo(1024);
    assertThat(j.at("/zero_optimization/stage").asInt()).isZero();
  }

  @Test
  void deployKeepsThePlansClusterAndTheDoctorsNcclEnvironment() throws Exception {
    CliRun r = CliRun.of("deploy", "--plan", PLAN, "--target", "pytorchjob", "--fabric", FABRIC,
        "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--name", "llama2-70b", "--",
        "pretrain_gpt.py");
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode job = new ObjectMapper(new YAMLFactory()).readTree(r.out());
    // The plan's 128 nodes x 8 GPUs: 1 master + 127 workers, 8 processes each.
    assertThat(job.at("/spec/nprocPerNode").asText()).isEqualTo("8");
    assertThat(job.at("/spec/pytorchReplicaSpecs/Master/replicas").asInt()).isEqualTo(1);
    assertThat(job.at("/spec/pytorchReplicaSpecs/Worker/replicas").asInt()).isEqualTo(127);
    JsonNode doctor = new ObjectMapper().readTree(Files.readString(Path.of(FABRIC)));
    Map<String, String> expected = new TreeMap<>();
    doctor.path("env").properties().forEach(e -> expected.put(e.getKey(),
        e.getValue().asText()));
    assertThat(expected).containsKey("NCCL_IB_HCA");
    // Under the default pod network NCCL's socket interface is the pod's own, eth0, not the
    // host's (NCCL treats a set NCCL_SOCKET_IFNAME as find-or-fail); the node's RDMA ports are
    // not the pod's either: the pod finds its own when it starts (/meshplan/fabric.sh).
    expected.put("NCCL_SOCKET_IFNAME", "eth0");
    expected.keySet().removeAll(java.util.List.of("NCCL_IB_HCA", "UCX_NET_DEVICES"));
    for (String role : new String[] {"Master", "Worker"}) {
      JsonNode c = job.at("/spec/pytorchReplicaSpecs/" + role + "/template/spec/containers/0");
      Map<String, String> env = new TreeMap<>();
      c.path("env").forEach(e -> env.put(e.path("name").asText(), e.path("value").asText()));
      assertThat(env).as(role).isEqualTo(expected);
      assertThat(c.path("command").toString()).contains("\"/meshplan/fabric.sh\"",
          "\"--nnodes=128\"",
          "\"--nproc-per-node=8\"");
    }
    // Megatron-LM cannot take the plan's own layout, so appending its arguments is refused.
    CliRun args = CliRun.of("deploy", "--plan", PLAN, "--target", "slurm", "--fabric", FABRIC,
        "--megatron-args", "--", "pretrain_gpt.py");
    assertThat(args.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(args.err()).contains("Megatron-LM cannot express the plan: stage layouts were"
        + " chosen by the ILP");
  }

  private static String[] concat(String[] a, String[] b) {
    String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }
}
