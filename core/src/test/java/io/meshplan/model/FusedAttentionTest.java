package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.CatalogCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.Strategy;
import io.meshplan.intraop.StrategyGenerator;
import io.meshplan.intraop.StrategySet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Fused attention in the training graph: its FLOPs, and the layouts it may take. */
class FusedAttentionTest {
  /** LLaMA-like: h = 64, 4 query heads of 16, 2 key/value heads, s = 32, b = 2. */
  private static final ModelSpec LLAMA = new ModelSpec("llama-small", ModelSpec.Family.LLAMA, 1,
      64, 4, 2, 128, 100, 32, 2, DType.BF16);

  private static Graph block(Attention a) {
    return TrainingGraphBuilder.build(LLAMA, TrainingOptions.oneBlock(LLAMA, 2, 32)
        .withAttention(a)).graph();
  }

  /**
   * G = b a s^2 d = 2 * 4 * 32 * 32 * 16 = 131,072, one causal score-sized product. Forward 2G =
   * 262,144; backward dQ 3G (S again, dP, dQ) = 393,216, dK and dV G each: 5G = 655,360 in all,
   * 2.5 times the forward. Model FLOPs leave out the recomputed S: dQ counts 2G.
   */
  @Test
  void flopsAreTheKernelsMatrixProductsWithTheCausalHalf() {
    Graph g = block(Attention.FLASH);
    double forward = 0;
    double backward = 0;
    double model = 0;
    double again = 0;
    int fused = 0;
    for (Instruction ins : g.instructions()) {
      if (ins.opcode() == Opcode.FUSED_ATTENTION) {
        forward += OpCost.flops(g, ins);
        fused++;
      } else if (ins.opcode() == Opcode.FUSED_ATTENTION_GRAD) {
        backward += OpCost.flops(g, ins);
        fused++;
      } else {
        continue;
      }
      model += OpCost.modelFlops(g, ins);
      again += OpCost.recomputedFlops(g, ins);
    }
    assertThat(fused).isEqualTo(4);
    assertThat(forward).isEqualTo(262_144.0);
    assertThat(backward).isEqualTo(655_360.0);
    assertThat(again).isEqualTo(131_072.0);
    assertThat(model).isEqualTo(262_144.0 + 655_360.0 - 131_072.0);
    // The unfused block has no fused op and builds the [b, a, s, s] scores instead.
    assertThat(block(Attention.UNFUSED).instructions()).noneMatch(i ->
        i.opcode() == Opcode.FUSED_ATTENTION || i.opcode() == Opcode.FUSED_ATTENTION_GRAD);
  }

  /**
   * On a 2 x 4 mesh, fused attention splits only batch (dim 0) and heads (dim 2), and only as far
   * as the 2 key/value heads allow: heads split 2 ways at most, so a split of dim 2 over the
   * 4-wide axis 1 (or both axes) is not offered.
   */
  @Test
  void layoutsSplitBatchAndWholeHeadsOnly() {
    Graph g = block(Attention.FLASH);
    LogicalMesh mesh = LogicalMesh.of(2, 4);
    ClusterSpec cs = ClusterSpec.parse("1x8:a100-80gb");
    MeshEnv env = MeshEnv.onCluster(cs.gpu(), new CatalogCommModel(cs, mesh), 1e18, 2);
    List<StrategySet> sets = new StrategyGenerator(g, env).generate();
    int checked = 0;
    for (Instruction ins : g.instructions()) {
      if (ins.opcode().kind() != io.meshplan.graph.OpKind.FUSED_ATTENTION) {
        continue;
      }
      StrategySet set = sets.get(ins.id());
      assertThat(set.opaque()).isFalse();
      boolean headsOverTwo = false;
      for (Strategy st : set.strategies()) {
        assertThat(st.output().axes(1)).isZero();
        assertThat(st.output().axes(3)).isZero();
        assertThat(st.output().tiles(2, mesh)).isLessThanOrEqualTo(2);
        headsOverTwo |= st.output().tiles(2, mesh) == 2;
        assertThat(st.commCost()).isZero();
      }
      assertThat(headsOverTwo).isTrue();
      checked++;
    }
    assertThat(checked).isEqualTo(4);
  }
}
