package io.meshplan.interop.hlo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.SendRecvModel;
import io.meshplan.exec.LocalExecutor;
import io.meshplan.graph.CallInliner;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloParser;
import io.meshplan.graph.HloPrinter;
import io.meshplan.graph.Instruction;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Phase;
import io.meshplan.model.Presets;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.model.TrainingOptions;
import io.meshplan.sim.StageCost;
import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Pipeline plans of HLO training steps: layers, phases, costs and the planner's arithmetic. */
class HloPipelineTest {
  private static Graph resource(String name) throws IOException {
    try (InputStream in = HloPipelineTest.class.getResourceAsStream("/hlo/" + name)) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return CallInliner.inline(new HloParser().parse(text, name)).graph();
    }
  }

  private static Graph text(String hlo) {
    return CallInliner.inline(new HloParser().parse(hlo, "test.hlo")).graph();
  }

  private static int id(Graph g, String name) {
    for (Instruction ins : g.instructions()) {
      if (ins.name().equals(name)) {
        return ins.id();
      }
    }
    throw new AssertionError("no instruction " + name);
  }

  private static HloPipelinePlanner planner(String cluster, HloLayerPricer pricer,
      LocalExecutor pool) {
    ClusterSpec cs = ClusterSpec.parse(cluster);
    return new HloPipelinePlanner(cs, pricer, cs.gpu().hbmBytes(), SendRecvModel.catalog(cs), 4,
        true, pool, p -> { });
  }

  private static HloLayerPricer pricer(String cluster, int elementBytes) {
    ClusterSpec cs = ClusterSpec.parse(cluster);
    return new HloLayerPricer(cs, mesh -> ClusterCommModels.catalog(cs, mesh), elementBytes,
        HloLayerPricer.SOLVER);
  }

  @Test
  void layersPhasesAndStateOfJaxMlpStep() throws IOException {
    Graph g = resource("mlp_train_step.hlo");
    HloLayering lay = HloLayering.of(g, "mlp");
    assertThat(lay.names()).containsExactly("train_step/MLP/layers[0]",
        "train_step/MLP/layers[1]");
    // Forward and backward dots of each layer, by their transpose(jvp(..)) scopes.
    assertThat(lay.phase(id(g, "dot.7"))).isEqualTo(Phase.FORWARD);
    assertThat(lay.layer(id(g, "dot.7"))).isZero();
    assertThat(lay.phase(id(g, "dot.32"))).isEqualTo(Phase.BACKWARD);
    assertThat(lay.layer(id(g, "dot.32"))).isEqualTo(1);
    assertThat(lay.phase(id(g, "dot.48"))).isEqualTo(Phase.BACKWARD);
    assertThat(lay.layer(id(g, "dot.48"))).isZero();
    // The unscoped loss joins the last layer; the unscoped SGD update its weight's layer.
    assertThat(lay.phase(id(g, "multiply.27"))).isEqualTo(Phase.FORWARD);
    assertThat(lay.layer(id(g, "multiply.27"))).isEqualTo(1);
    assertThat(lay.phase(id(g, "subtract.54"))).isEqualTo(Phase.OPTIMIZER);
    assertThat(lay.layer(id(g, "subtract.54"))).isZero();
    assertThat(lay.layer(id(g, "subtract.60"))).isEqualTo(1);
    // x feeds layer 0, the labels y the loss in layer 1; both are batch, not state.
    assertThat(lay.layer(id(g, "Arg_4.5"))).isZero();
    assertThat(lay.layer(id(g, "Arg_5.6"))).isEqualTo(1);
    assertThat(lay.state(id(g, "Arg_4.5"))).isFalse();
    assertThat(lay.weight(id(g, "Arg_0.1"))).isTrue();
    // dot.48 is layer 0's weight gradient (the update reads it); multiply.30, the loss
    // gradient, meets forward values again and is not gradient work.
    assertThat(lay.gradient(id(g, "dot.48"))).isTrue();
    assertThat(lay.gradientWork(id(g, "dot.48"))).isTrue();
    assertThat(lay.gradient(id(g, "multiply.30"))).isFalse();
    assertThat(lay.gradientWork(id(g, "multiply.30"))).isFalse();
    assertThat(lay.gradientWork(id(g, "dot.45"))).isFalse();
  }

  @Test
  void boundaryBytesOfJaxMlpStep() throws IOException {
    HloLayering lay = HloLayering.of(resource("mlp_train_step.hlo"), "mlp");
    double[][] cut = lay.boundaryBytes();
    assertThat(cut).hasDimensions(1, 2);
    // Forward: maximum.12, f32[32,256] = 32 * 256 * 4 = 32,768 bytes, read by layer 1's dot.13
    // and dot.32 (add.9 stays in layer 0: its compare is layer 0's backward).
    assertThat(cut[0][0]).isEqualTo(32_768.0);
    // Backward: dot.45, the f32[32,256] gradient of maximum.12, read by layer 0's select.47.
    assertThat(cut[0][1]).isEqualTo(32_768.0);
  }

  @Test
  void forwardValuesFlowingBackMergeTheirLayers() {
    Graph g = text("""
        HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }
        ENTRY e {
          w = f32[4,4] parameter(0), metadata={op_name="params['w']"}
          x = f32[4,4] parameter(1)
          a = f32[4,4] add(x, w), metadata={op_name="jit(f)/jvp(layers_0)/add"}
          b = f32[4,4] multiply(a, a), metadata={op_name="jit(f)/jvp(layers_1)/mul"}
          c = f32[4,4] add(b, x), metadata={op_name="jit(f)/jvp(layers_0)/add"}
          d = f32[4,4] multiply(c, c), metadata={op_name="jit(f)/jvp(layers_2)/mul"}
          g = f32[4,4] multiply(d, c), metadata={op_name="jit(f)/transpose(jvp(layers_2))/mul"}
          u = f32[4,4] subtract(w, g), metadata={op_name="jit(f)/sub"}
          ROOT t = (f32[4,4]) tuple(u)
        }
        """);
    HloLayering lay = HloLayering.of(g, "m");
    // c (layers_0) reads b (layers_1) in the forward pass: layers 0 and 1 share every stage.
    assertThat(lay.names()).containsExactly("f/layers[0] .. f/layers[1]", "f/layers[2]");
    assertThat(lay.layer(id(g, "a"))).isZero();
    assertThat(lay.layer(id(g, "b"))).isZero();
    assertThat(lay.layer(id(g, "d"))).isEqualTo(1);
    assertThat(lay.phase(id(g, "g"))).isEqualTo(Phase.BACKWARD);
    assertThat(lay.phase(id(g, "u"))).isEqualTo(Phase.OPTIMIZER);
  }

  @Test
  void modulesThatAreNotTrainingStepsAreRefused() throws IOException {
    assertThatThrownBy(() -> HloLayering.of(resource("attention_forward.hlo"), "--hlo a.hlo"))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith("--hlo a.hlo has no backward pass");
    Graph gradOnly = text("""
        HloModule m
        ENTRY e {
          w = f32[4,4] parameter(0)
          x = f32[4,4] parameter(1)
          a = f32[4,4] multiply(x, w), metadata={op_name="jit(f)/jvp(layers_0)/mul"}
          g = f32[4,4] multiply(a, x), metadata={op_name="jit(f)/transpose(jvp(layers_0))/mul"}
          ROOT t = (f32[4,4]) tuple(g)
        }
        """);
    assertThatThrownBy(() -> HloLayering.of(gradOnly, "--hlo g.hlo"))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith("--hlo g.hlo has no trained state");
  }

  @Test
  void oneStageOfTheMlpAddsUpItsLayersAndFlops() throws IOException {
    HloLayering lay = HloLayering.of(resource("mlp_train_step.hlo"), "mlp");
    HloLayerPricer pricer = pricer("1x1:a100-80gb", 4);
    try (LocalExecutor pool = new LocalExecutor(1)) {
      HloPlanResult plan = planner("1x1:a100-80gb", pricer, pool).plan(lay, module(lay), 4);
      assertThat(plan.plan().stages()).hasSize(1);
      StageCost s = plan.stageCosts().get(0);
      // Dot FLOPs of one microbatch: forward dot.7 and dot.13, backward dot.32, dot.45 and
      // dot.48 (no input gradient: x is data), each 2 * 32 * 128 * 256 = 2,097,152:
      // 5 * 2,097,152 = 10,485,760; four microbatches make 41,943,040.
      assertThat(s.modelFlopsPerMicrobatch()).isEqualTo(10_485_760.0);
      assertThat(plan.simulation().modelFlopsPerIteration()).isEqualTo(41_943_040.0);
      // The stage is the sum of its two layers as priced on the 1 x 1 mesh.
      HloLayerCost l0 = pricer.cost(HloLayerGraph.of(lay, 0), 1, 1);
      HloLayerCost l1 = pricer.cost(HloLayerGraph.of(lay, 1), 1, 1);
      assertThat(s.forwardSeconds()).isCloseTo(l0.forwardSeconds() + l1.forwardSeconds(),
          within(1e-15));
      assertThat(s.backwardSeconds()).isCloseTo(l0.backwardSeconds() + l1.backwardSeconds(),
          within(1e-15));
      // One GPU sends nothing: no collectives, no gradient reduction.
      assertThat(s.gradSyncSeconds()).isZero();
      assertThat(s.tensorCommSeconds()).isZero();
      // 1F1B on one stage: four forward-backward pairs back to back, then the update.
      assertThat(plan.simulation().iterationSeconds()).isCloseTo(
          4 * (s.forwardSeconds() + s.backwardSeconds()) + s.optimizerSeconds(),
          within(1e-12));
      // Weights: 128 * 256 + 256 + 256 * 128 + 128 = 65,920 f32 = 263,680 bytes.
      assertThat(s.memory().weightsBytes()).isEqualTo(263_680.0);
    }
  }

  @Test
  void identicalBlocksAreSolvedOncePerMesh() {
    ModelSpec base = Presets.get("llama2-7b");
    ModelSpec m = new ModelSpec(base.name(), base.family(), 4, 256, 4, 4, 688, 1000, 64, 2,
        DType.BF16, base.arch().forSequence(64));
    Graph built = TrainingGraphBuilder.build(m, TrainingOptions.of(m)
        .withComputeDtype(DType.BF16).withWorkload(2, 64)).graph();
    // Through HLO text and back, as a user would hand the step over.
    Graph g = text(new HloPrinter().print(built));
    HloLayering lay = HloLayering.of(g, "llama");
    assertThat(lay.layers()).isEqualTo(4);
    Set<String> prints = new HashSet<>();
    for (int k = 0; k < 4; k++) {
      prints.add(HloLayerGraph.of(lay, k).fingerprint());
    }
    // The embedding joins block 0 and the head block 3; blocks 1 and 2 are one.
    assertThat(prints).hasSize(3);
    assertThat(HloLayerGraph.of(lay, 1).fingerprint())
        .isEqualTo(HloLayerGraph.of(lay, 2).fingerprint());
    HloLayerPricer pricer = pricer("1x2:a100-80gb", 2);
    try (LocalExecutor pool = new LocalExecutor(2)) {
      HloPlanResult plan = planner("1x2:a100-80gb", pricer, pool).plan(lay, module(lay), 2);
      // Meshes 1x1, 1x2 and 2x1; 3 distinct layers each.
      assertThat(plan.stats().meshes()).isEqualTo(3);
      assertThat(plan.stats().layerSolves()).isEqualTo(9);
      assertThat(plan.stats().distinctLayers()).isEqualTo(3);
      // Layer 2's listed weights carry layer 2's names, though its cost is layer 1's.
      for (io.meshplan.plan.StagePlan s : plan.plan().stages()) {
        if (s.firstLayer() <= 2 && s.lastLayer() >= 2 && s.firstLayer() == 2) {
          assertThat(s.tensors()).allMatch(t -> !t.name().contains("layer_1"));
        }
      }
    }
  }

  /**
   * On 131,072 x 8 GPUs Alpa's shapes would be 4,096 whole-node shapes of 32-node granules (4
   * layers: 16 x 4,096^2 cells stay under the DP's 1e9), 16,384 logical meshes and 49,152 solves
   * of the 3 distinct layers; past 256 solves the search takes the power-of-two granule counts 1,
   * 2, 4, ..., 4,096: 13 shapes, 4 meshes each (TP 1, 2, 4, 8), 52 meshes, 156 solves.
   */
  @Test
  void aHugeClusterTakesPowerOfTwoSubmeshes() {
    ModelSpec base = Presets.get("llama2-7b");
    ModelSpec m = new ModelSpec(base.name(), base.family(), 4, 256, 4, 4, 688, 1000, 64, 2,
        DType.BF16, base.arch().forSequence(64));
    Graph g = text(new HloPrinter().print(TrainingGraphBuilder.build(m, TrainingOptions.of(m)
        .withComputeDtype(DType.BF16).withWorkload(2, 64)).graph()));
    HloLayering lay = HloLayering.of(g, "llama");
    String cluster = "131072x8:h100-80gb";
    try (LocalExecutor pool = new LocalExecutor(2)) {
      HloPlanResult plan = planner(cluster, pricer(cluster, 2), pool).plan(lay, module(lay), 2);
      assertThat(plan.stats().meshes()).isEqualTo(52);
      assertThat(plan.stats().layerSolves()).isEqualTo(156);
      for (io.meshplan.plan.StagePlan s : plan.plan().stages()) {
        assertThat(Integer.bitCount(s.submeshNodes() / 32)).isEqualTo(1);
        assertThat(s.firstDevice() % 8).isZero();
      }
    }
  }

  @Test
  void nothingFitsSaysTheMemoryNeeded() throws IOException {
    HloLayering lay = HloLayering.of(resource("mlp_train_step.hlo"), "mlp");
    ClusterSpec cs = ClusterSpec.parse("1x2:a100-80gb");
    HloLayerPricer pricer = pricer("1x2:a100-80gb", 4);
    try (LocalExecutor pool = new LocalExecutor(1)) {
      HloPipelinePlanner tiny = new HloPipelinePlanner(cs, pricer, 1000, SendRecvModel.catalog(cs),
          4, true, pool, p -> { });
      // Layer 1 alone keeps its weights, gradients and activations, more than 1000 bytes; the
      // DP's least capacity with which some pipeline fits is what the message gives. Spread
      // over more 2-GPU nodes at 90% of 1000 bytes each: ceil(610 KiB * 2 / (0.9 * 1000 * 2)),
      // about 625,000 / 900 = 694.4, so at least 695 nodes.
      assertThatThrownBy(() -> tiny.plan(lay, module(lay), 4)).isInstanceOf(InfeasibleException.class)
          .hasMessage("no pipeline of main.80 with 4 microbatches fits in 1000B per GPU; it "
              + "needs 610KiB per GPU; try at least 695x2:a100-80gb:ib-hdr200");
    }
  }

  @Test
  void layoutsInWordsNameTheMeshAxis() {
    io.meshplan.cluster.LogicalMesh mesh = io.meshplan.cluster.LogicalMesh.of(4, 2);
    io.meshplan.graph.TensorShape w = io.meshplan.graph.TensorShape.of(DType.BF16, 1024, 4096);
    // Axis 0 alone: each data-parallel replica holds a quarter, as ZeRO-3 does.
    assertThat(HloLayerPricer.words(io.meshplan.sharding.ShardingSpec.split(2, 1, 0), w, mesh,
        "w1")).isEqualTo("split dim 1 over the data-parallel axis (4 GPUs)");
    // Axis 1 alone: Megatron-LM's terms over the 2 tensor-parallel GPUs.
    assertThat(HloLayerPricer.words(io.meshplan.sharding.ShardingSpec.split(2, 1, 1), w, mesh,
        "w1")).isEqualTo("column-parallel over 2 GPUs");
    // Both: rows over one axis, columns over the other, 8 tiles.
    assertThat(HloLayerPricer.words(io.meshplan.sharding.ShardingSpec.of(1, 2), w, mesh, "w1"))
        .isEqualTo("split dim 0 dim 1 over 8 GPUs, both axes");
    assertThat(HloLayerPricer.words(io.meshplan.sharding.ShardingSpec.replicated(2), w, mesh,
        "w1")).isEqualTo("replicated");
  }

  /** The module's source as a plan records it; the hash stands for a file's. */
  static io.meshplan.plan.PlanSource.HloModule module(HloLayering lay) {
    return new io.meshplan.plan.PlanSource.HloModule(lay.graph().name(), "step.hlo",
        "0".repeat(64), lay.names());
  }
}
