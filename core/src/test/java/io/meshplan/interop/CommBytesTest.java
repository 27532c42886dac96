package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.cost.StageCostBuilder;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.AxisBytes;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.sim.CommVolume;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCommBytes;
import io.meshplan.sim.StageCost;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Communication volume per mesh axis of stages and of simulated Megatron-LM configurations. */
class CommBytesTest {
  private static final double P = 1e6;

  /** One layer of P parameters per GPU whose tensor-parallel traffic is tp bytes. */
  private static LayerCost layer(double params, double tp, double tpForward, double gather) {
    return LayerCost.builder().forwardSeconds(0.001).backwardSeconds(0.002)
        .tensorCommSeconds(0.0001).forwardCommSeconds(0.00005)
        .parameters(params).gradientParameters(params)
        .savedActivationBytes(1e6).temporaryBytes(2e6).inputBytes(1e5).boundaryBytes(4e5)
        .modelFlops(1e12).hardwareFlops(1.2e12)
        .tensorCommBytes(tp).forwardCommBytes(tpForward).updateGatherBytes(gather).build();
  }

  private static StageCost stage(int d, int zero) {
    StageCostBuilder b = new StageCostBuilder(new AlphaBetaCommModel(LogicalMesh.of(d, 1),
        new double[] {0, 0}, new double[] {1e-9, 0}), 1e12, 2, false);
    return b.build(List.of(layer(P, 0, 0, 0)), d, 1, zero, false);
  }

  @Test
  void twoGpuDataParallelStageAllReducesItsFp32Gradients() {
    // P parameters, fp32 gradient accumulators of 4P bytes; ring all-reduce over 2 GPUs sends
    // 2*(2-1)/2 * 4P = 4P = 4e6 bytes per GPU per iteration, nothing per microbatch.
    StageCommBytes b = stage(2, 0).commBytes();
    assertThat(b.dataPerIteration()).isEqualTo(4 * P);
    assertThat(b.dataPerMicrobatch()).isZero();
    assertThat(b.tensorPerMicrobatch()).isZero();
  }

  @Test
  void zeroStagesMoveTheirCollectives() {
    // d = 4, gradients G = 4P bytes, bf16 weights W = 2P bytes.
    // ZeRO-1: reduce-scatter 3/4 * G + all-gather 3/4 * W = 3e6 + 1.5e6 per iteration.
    StageCommBytes one = stage(4, 1).commBytes();
    assertThat(one.dataPerIteration()).isCloseTo(4.5e6, within(1e-6));
    assertThat(one.dataPerMicrobatch()).isZero();
    // ZeRO-3: every microbatch gathers the weights twice and reduce-scatters the gradients:
    // 2 * 3/4 * W + 3/4 * G = 3e6 + 3e6.
    StageCommBytes three = stage(4, 3).commBytes();
    assertThat(three.dataPerMicrobatch()).isCloseTo(6e6, within(1e-6));
    assertThat(three.dataPerIteration()).isZero();
    // No data parallelism, no data-parallel bytes.
    assertThat(stage(1, 0).commBytes().dataPerIteration()).isZero();
  }

  @Test
  void stageAddsItsLayersTensorBytes() {
    StageCostBuilder b = new StageCostBuilder(new AlphaBetaCommModel(LogicalMesh.of(1, 2),
        new double[] {0, 0}, new double[] {0, 1e-9}), 1e12, 2, false);
    StageCost c = b.build(List.of(layer(P, 3e6, 1e6, 5e3), layer(P, 3e6, 1e6, 5e3)), 1, 2, 0,
        false);
    assertThat(c.commBytes().tensorPerMicrobatch()).isEqualTo(6e6);
    assertThat(c.commBytes().tensorPerIteration()).isEqualTo(1e4);
    // Full recomputation runs the forward again: its collectives are sent twice.
    assertThat(layer(P, 3e6, 1e6, 0).withFullRecompute().tensorCommBytes()).isEqualTo(4e6);
  }

  /** A small GPT: hidden 256, 8 heads, ffn 1024, sequence 128, vocabulary 1024, bf16. */
  private static ModelSpec gpt(int layers) {
    ModelSpec g = Presets.get("gpt");
    return new ModelSpec("gpt", g.family(), layers, 256, 8, 8, 1024, 1024, 128, 8, DType.BF16,
        g.arch());
  }

  @Test
  void megatronBlockForwardMatchesKorthikanti() {
    // Korthikanti et al. 2022, without sequence parallelism: the forward of a GPT block under
    // Megatron-LM's layouts all-reduces its b*s*h activation twice (after attention and after
    // the MLP). b = 2, s = 128, h = 256, bf16: S = 2*128*256*2 = 131072 bytes; on t = 4 GPUs a
    // ring all-reduce sends 2*(4-1)/4 * S = 196608 bytes per GPU, so the forward sends 393216.
    // The backward all-reduces the input gradient of each column-parallel matrix: the first MLP
    // matrix's and attention's. meshplan's attention has separate query, key and value matrices
    // where Megatron-LM fuses them into one (linear_qkv); their partial input gradients are
    // reduced once, as the fused matrix's (IlpLayerCostModel.fusedGemms): 2 * 196608 = 393216,
    // as the forward. The layer sends 4 all-reduces, 786432 bytes.
    IlpLayerCostModel layers = Requests.layers(Requests.of(gpt(2), "1x8:a100-80gb", 8, false));
    LayerCost c = layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(4, 2, Recompute.NONE, false, true));
    double s = 2.0 * 128 * 256 * 2;
    double ar = 2.0 * 3 / 4 * s;
    assertThat(c.forwardCommBytes()).isEqualTo(2 * ar);
    assertThat(c.tensorCommBytes()).isEqualTo(4 * ar);
    // One GPU replica has nothing to send.
    LayerCost one = layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(1, 2, Recompute.NONE, false, true));
    assertThat(one.tensorCommBytes()).isZero();
  }

  @Test
  void simulatedMegatronConfigurationAddsUpPerAxis() {
    // tp 2, pp 2, dp 2 on 8 GPUs, 4 blocks, micro-batch 1, global batch 8: 4 microbatches.
    ModelSpec m = gpt(4);
    PlanRequest req = Requests.of(m, "1x8:a100-80gb", 8, false);
    IlpLayerCostModel layers = Requests.layers(req);
    ParallelConfig c = new ParallelConfig(2, 2, 2, 1, 1, 8, Recompute.NONE, false, false);
    PlanSimulator.Evaluated e = new PlanSimulator(layers).simulate(req, c).orElseThrow();
    SimulationResult sim = e.simulation();
    LayerSetting ls = new LayerSetting(2, 1, Recompute.NONE, false, true);
    LayerCost block = layers.cost(LayerCostModel.Kind.BLOCK, ls);
    LayerCost emb = layers.cost(LayerCostModel.Kind.EMBEDDING, ls);
    LayerCost head = layers.cost(LayerCostModel.Kind.HEAD, ls);
    // Stage 0 (embedding + 2 blocks), 4 microbatches: tp = 4 * (emb + 2 block) + gathers.
    CommVolume s0 = sim.stages().get(0).commBytesPerGpu();
    assertThat(s0.tensorParallelBytes()).isCloseTo(4 * (emb.tensorCommBytes()
        + 2 * block.tensorCommBytes()) + emb.updateGatherBytes() + 2 * block.updateGatherBytes(),
        within(1e-6 * s0.tensorParallelBytes()));
    // Data parallel (2 GPUs, ZeRO 0): all-reduce of fp32 gradients, 2*(2-1)/2 * 4 * params.
    double params0 = emb.gradientParameters() + 2 * block.gradientParameters();
    assertThat(s0.dataParallelBytes()).isCloseTo(4 * params0, within(1e-6 * 4 * params0));
    // Pipeline: stage 0 sends each microbatch's activation and stage 1 its gradient back, the
    // block's boundary bytes b*s*h*2/t = 1*128*256*2/2 = 32768 per GPU (Megatron's scatter).
    assertThat(block.boundaryBytes()).isEqualTo(32768.0);
    assertThat(s0.pipelineBytes()).isEqualTo(4 * 32768.0);
    assertThat(sim.stages().get(1).commBytesPerGpu().pipelineBytes()).isEqualTo(4 * 32768.0);
    CommVolume s1 = sim.stages().get(1).commBytesPerGpu();
    assertThat(s1.tensorParallelBytes()).isCloseTo(4 * (head.tensorCommBytes()
        + 2 * block.tensorCommBytes()) + head.updateGatherBytes() + 2 * block.updateGatherBytes(),
        within(1e-6 * s1.tensorParallelBytes()));
    // Totals: 4 GPUs per stage; the plan carries the same numbers.
    CommVolume total = sim.commBytes();
    assertThat(total.pipelineBytes()).isEqualTo(8 * 4 * 32768.0);
    assertThat(total.tensorParallelBytes()).isCloseTo(4 * (s0.tensorParallelBytes()
        + s1.tensorParallelBytes()), within(1e-6 * total.tensorParallelBytes()));
    PipelinePlan plan = e.plan();
    AxisBytes pb = plan.prediction().commBytes().orElseThrow();
    assertThat(pb.tensorParallel()).isEqualTo(total.tensorParallelBytes());
    assertThat(pb.dataParallel()).isEqualTo(total.dataParallelBytes());
    assertThat(pb.pipeline()).isEqualTo(total.pipelineBytes());
    assertThat(plan.stages().get(1).commBytesPerGpu().orElseThrow().tensorParallel())
        .isEqualTo(s1.tensorParallelBytes());
    assertThat(plan.commBytesPerGpu().orElseThrow().pipeline()).isEqualTo(4 * 32768.0);
  }
}
