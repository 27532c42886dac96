package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ContextExchange;
import io.meshplan.planner.Pricing;
import org.junit.jupiter.api.Test;

/** One block under context parallelism: its activations, FLOPs and K/V exchange per GPU. */
class ContextParallelTest {
  /** h = 512, 8 heads of 64, 2 key/value heads, ffn 1024, sequence 8192. */
  private static final ModelSpec M = new ModelSpec("cp-small", ModelSpec.Family.LLAMA, 2, 512,
      8, 2, 1024, 1000, 8192, 8, DType.BF16, Architecture.llama());

  private static PlanRequest request(String cluster) {
    io.meshplan.cluster.ClusterSpec cs = io.meshplan.cluster.ClusterSpec.parse(cluster);
    return new PlanRequest(M, cs, 8, 0, cs.gpu().hbmBytes(), Pricing.catalog(), 2,
        io.meshplan.model.Overlaps.NONE, true, Attention.FLASH);
  }

  private static IlpLayerCostModel layers(PlanRequest req) {
    return new IlpLayerCostModel(M, req.cluster(), req.comm(), DType.BF16, Attention.FLASH,
        io.meshplan.intraop.SolverOptions.defaults(), io.meshplan.exec.LocalExecutor.perProcessor());
  }

  private static LayerCost block(int cp) {
    IlpLayerCostModel layers = layers(request("1x8:h100-80gb:ib-ndr400"));
    return layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(1, 1, Recompute.NONE, false, false).withContext(cp, ContextExchange.P2P));
  }

  /**
   * Every activation a block keeps is per token, and fused attention keeps nothing of size s x s,
   * so CP 4 keeps a quarter; the keys and values of a GPU's share are 2 tensors of 8192 / 4 =
   * 2048 tokens x 2 heads x 64 x 2 bytes = 524,288 bytes.
   */
  @Test
  void activationsFallByContextParallelismAndTheRingCarriesTheKeysAndValues() {
    LayerCost one = block(1);
    LayerCost four = block(4);
    assertThat(four.savedActivationBytes()).isCloseTo(one.savedActivationBytes() / 4,
        within(1e-6 * one.savedActivationBytes()));
    assertThat(four.ring().kvBytes()).isEqualTo(2.0 * 2048 * 2 * 64 * 2);
    assertThat(four.ring().contextParallel()).isEqualTo(4);
    assertThat(one.ring().split()).isFalse();
  }

  /**
   * The model FLOPs of one GPU are a quarter of the whole block's: the projections and MLP run on
   * a quarter of the tokens, and causal attention over 2048 queries against 8192 keys is
   * b a (s/4) s d = 1 x 8 x 2048 x 8192 x 64 per score-sized product, a quarter of b a s^2 d.
   */
  @Test
  void eachGpuDoesAQuarterOfTheWork() {
    assertThat(block(4).modelFlops()).isCloseTo(block(1).modelFlops() / 4,
        within(1e-9 * block(1).modelFlops()));
  }

  /**
   * One replica split over 4 context-parallel GPUs is a data-parallel group of 4 to the stage:
   * ZeRO-3 there shards the weights, gradients and optimizer state 4 ways, as it does for 4
   * replicas (the simulation of flags once priced a data-parallel size of 1 unsharded).
   */
  @Test
  void zeroShardsOverContextParallelGpus() {
    PlanRequest req = request("1x4:h100-80gb:ib-ndr400");
    IlpLayerCostModel layers = layers(req);
    io.meshplan.plan.ParallelConfig base = new io.meshplan.plan.ParallelConfig(1, 1, 1, 1, 1, 8,
        Recompute.NONE, false, 0, 0, 0, 1, 1, 4, false);
    var none = new PlanSimulator(layers).simulate(req, base).orElseThrow().simulation();
    var zero3 = new PlanSimulator(layers).simulate(req, base.withZeroStage(3)).orElseThrow()
        .simulation();
    var m0 = none.stages().get(0).memory();
    var m3 = zero3.stages().get(0).memory();
    assertThat(m3.optimizerStateBytes()).isCloseTo(m0.optimizerStateBytes() / 4,
        within(1e-6 * m0.optimizerStateBytes()));
    assertThat(m3.weightsBytes()).isLessThan(m0.weightsBytes() / 2);
  }
}
