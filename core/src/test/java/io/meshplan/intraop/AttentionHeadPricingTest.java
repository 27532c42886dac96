package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.CatalogCommModel;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.OpKind;
import io.meshplan.graph.Opcode;
import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.model.TrainingOptions;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fused attention kernels of a block are priced at the fraction of their head dimension. */
class AttentionHeadPricingTest {
  /**
   * Hidden 512, sequence 4096, one sequence, on one H100: 8 heads of 64 or 4 heads of 128 do the
   * same attention FLOPs (b a s^2 d with a d = 512), far above their traffic (four 4096 x 512 bf16
   * tensors, 16.8 MB, 6.3 µs at 0.8 of 3.35 TB/s, against 8.6 GFLOPs, tens of µs), so each kernel
   * takes its FLOPs over 989.5e12 times its fraction: 0.34 forward and 0.29 backward at head
   * dimension 64, 0.60 and 0.50 at 128.
   */
  @Test
  void narrowHeadsTakeTheirOwnFractionOfThePeak() {
    for (int heads : new int[] {8, 4}) {
      ModelSpec m = new ModelSpec("attn-" + heads, ModelSpec.Family.LLAMA, 1, 512, heads, heads,
          1024, 100, 4096, 1, DType.BF16);
      Graph g = TrainingGraphBuilder.build(m, TrainingOptions.oneBlock(m, 1, 4096)
          .withAttention(Attention.FLASH)).graph();
      ClusterSpec cs = ClusterSpec.parse("1x1:h100-80gb");
      LogicalMesh mesh = LogicalMesh.of(1, 1);
      MeshEnv env = MeshEnv.onCluster(cs.gpu(), new CatalogCommModel(cs, mesh), 1e18, 2);
      List<StrategySet> sets = new StrategyGenerator(g, env).generate();
      boolean narrow = heads == 8;
      int priced = 0;
      for (Instruction ins : g.instructions()) {
        if (ins.opcode().kind() != OpKind.FUSED_ATTENTION) {
          continue;
        }
        boolean backward = ins.opcode() == Opcode.FUSED_ATTENTION_GRAD;
        double eff = narrow ? (backward ? 0.29 : 0.34) : (backward ? 0.50 : 0.60);
        double expected = OpCost.flops(g, ins) / (989.5e12 * eff);
        for (Strategy st : sets.get(ins.id()).strategies()) {
          assertThat(st.computeCost()).as("%s with %d heads", ins.name(), heads)
              .isCloseTo(expected, within(expected * 1e-12));
        }
        priced++;
      }
      assertThat(priced).isEqualTo(4);
    }
  }
}
