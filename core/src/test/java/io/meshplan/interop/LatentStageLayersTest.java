package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.Mla;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Recompute;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The layers of a stage of a model with dense blocks among its expert blocks and a multi-token
 * prediction module, and the planner's choice on such a model against the exhaustive grid.
 */
class LatentStageLayersTest {
  /** h 256, 4 heads of latent attention, 4 blocks (block 0 dense), 8 experts, one module. */
  private static ModelSpec model(int layers, List<Integer> dense, int mtp) {
    Architecture arch = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false,
        AttentionShape.latent(new Mla(64, 32, 32, 16, 32)),
        new MoeShape(8, 2, 128, 128, false).withDenseLayers(dense, 512), mtp);
    return new ModelSpec("mla-moe", ModelSpec.Family.LLAMA, layers, 256, 4, 4, 128, 1024, 512, 8,
        DType.BF16, arch);
  }

  /**
   * One GPU, nothing sharded: each layer holds its whole weights. The stage of blocks 0..1 of a
   * 2-block model is embedding, dense block, expert block, head, and the module: its input, an
   * expert block and its head. The module's input holds its two norms and the projection, and on a
   * last stage that does not start the model its own copy of the token table (1024 * 256 =
   * 262,144); its head the final norm and not the LM head.
   */
  @Test
  void stageOfEveryKind() {
    ModelSpec m = model(2, List.of(0), 1);
    PlanRequest req = Requests.of(m, "1x1:h100-80gb", 8, false);
    IlpLayerCostModel layers = Requests.layers(req);
    StageAssembler asm = new StageAssembler(req, layers);
    LayerSetting ls = new LayerSetting(1, 1, Recompute.NONE, false, false);
    List<LayerCost> stage = asm.stageLayers(ls, 0, 1);
    LayerCost block = layers.cost(LayerCostModel.Kind.BLOCK, ls);
    assertThat(stage).containsExactly(layers.cost(LayerCostModel.Kind.EMBEDDING, ls),
        layers.cost(LayerCostModel.Kind.DENSE_BLOCK, ls), block,
        layers.cost(LayerCostModel.Kind.HEAD, ls),
        layers.cost(LayerCostModel.Kind.MTP_FIRST_STAGE, ls), block,
        layers.cost(LayerCostModel.Kind.MTP_HEAD, ls));
    assertThat(stage.get(1).parameters()).isEqualTo(m.blockParameterCount(0));
    assertThat(stage.get(2).parameters()).isEqualTo(m.blockParameterCount(1));
    // Input: norms 2 * 256 + projection 2 * 256 * 256 = 131,072; head: 256.
    assertThat(stage.get(4).parameters()).isEqualTo(512 + 131_072);
    assertThat(stage.get(6).parameters()).isEqualTo(256);
    assertThat(stage.get(4).parameters() + stage.get(5).parameters()
        + stage.get(6).parameters()).isEqualTo(m.mtpParameterCount());
    assertThat(stage.get(2).experts().routed()).isTrue();
    assertThat(stage.get(1).experts().routed()).isFalse();
    // The module's head runs the head's kernels.
    assertThat(stage.get(6).forwardSeconds()).isEqualTo(stage.get(3).forwardSeconds());
    // A stage of block 1 alone has no dense block, no embedding, and the module's own table.
    List<LayerCost> last = asm.stageLayers(ls, 1, 1);
    assertThat(last).hasSize(5);
    assertThat(last.get(2).parameters()).isEqualTo(262_144 + 512 + 131_072);
    // Blocks 0..0: no head.
    assertThat(asm.stageLayers(ls, 0, 0)).containsExactly(stage.get(0), stage.get(1));
    // One stage holds the model once: embedding + blocks + head + module parameters.
    double sum = stage.stream().mapToDouble(LayerCost::parameters).sum();
    assertThat(sum).isEqualTo(m.parameterCount());
  }

  /**
   * A seeded choice of the dense block on a 4-block model with a prediction module: the plan is
   * at most 2% slower than the best point of the exhaustive Megatron grid.
   */
  @Test
  void planAgainstTheGrid() {
    int first = new java.util.Random(61).nextInt(3);
    ModelSpec m = model(4, List.of(first), 1);
    PlanRequest req = Requests.of(m, "1x4:h100-80gb", 16, false);
    IlpLayerCostModel layers = Requests.layers(req);
    PlanResult r = new InterOpPlanner(layers, p -> { }).plan(req);
    assertThat(r).isInstanceOf(PlanResult.Planned.class);
    double plan = ((PlanResult.Planned) r).plan().prediction().iterationSeconds();
    MegatronGrid.Point best = new MegatronGrid(layers).best(req).orElseThrow();
    double grid = best.evaluated().simulation().iterationSeconds();
    assertThat(plan).as("dense block %d: plan %s s, grid %s (%s s)", first, plan, best.config(),
        grid).isLessThanOrEqualTo(grid * 1.02);
  }
}
