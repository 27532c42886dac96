package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloParser;
import io.meshplan.graph.HloPrinter;
import io.meshplan.model.AlpaMlpBuilder;
import io.meshplan.model.LlamaForwardBuilder;
import io.meshplan.model.ModelSpec;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Built graphs exported to HLO text and read back plan exactly like the originals. */
class HloEquivalenceTest {
  private static ShardingPlan plan(Graph g) {
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(LogicalMesh.of(2, 4), new double[] {1, 1},
        new double[] {1, 0.01}), 1L << 33, Optional.empty());
    return new AutoSharding(env, SolverOptions.defaults()).plan(g);
  }

  private static void assertSamePlan(Graph built) {
    Graph back = new HloParser().parse(new HloPrinter().print(built), "export.hlo").entry();
    ShardingPlan a = plan(built);
    ShardingPlan b = plan(back);
    assertThat(back.size()).isEqualTo(built.size());
    assertThat(b.objective()).isEqualTo(a.objective());
    for (int i = 0; i < built.size(); i++) {
      assertThat(b.hloSharding(i)).as(built.get(i).name()).isEqualTo(a.hloSharding(i));
    }
  }

  @Test
  void alpaMlpTrainingStep() {
    assertSamePlan(AlpaMlpBuilder.build(4, 1024, 128, DType.F32));
  }

  @Test
  void llamaForward() {
    ModelSpec s = new ModelSpec("llama-mini", ModelSpec.Family.LLAMA, 2, 256, 8, 4, 512, 1000,
        64, 4, DType.F32);
    assertSamePlan(LlamaForwardBuilder.build(s, true));
  }
}
