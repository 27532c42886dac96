package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.cluster.KernelTimeModel;
import io.meshplan.graph.AliasPair;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Recompute;
import io.meshplan.model.TrainingGraph;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.model.TrainingOptions;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The intra-op ILP on one transformer block of a training step (forward, backward, Adam), priced
 * in seconds on two A100s, as data parallelism (2 x 1) and as tensor parallelism (1 x 2).
 */
class TrainingBlockShardingTest {
  /** LLaMA-style: h = 64, 4 heads, 2 key/value heads, ffn 128. */
  private static final ModelSpec SPEC = new ModelSpec("llama-tiny", ModelSpec.Family.LLAMA, 2,
      64, 4, 2, 128, 100, 32, 4, DType.BF16);

  private static ShardingPlan plan(TrainingGraph tg, int m0, int m1, double memory) {
    ClusterSpec cs = ClusterSpec.parse(m0 + "x" + m1 + ":a100-80gb");
    LogicalMesh mesh = LogicalMesh.of(m0, m1);
    MeshEnv env = new MeshEnv(ClusterCommModels.catalog(cs, mesh), memory,
        Optional.of(KernelTimeModel.of(cs.gpu(), 2)));
    return new AutoSharding(env, SolverOptions.defaults()).plan(tg.graph());
  }

  /**
   * Plans with and without selective recomputation; every updated state keeps its parameter's
   * layout. (Full recomputation doubles the forward and the solver's reductions leave a core
   * that CP-SAT does not close within its time limit; it returns a feasible plan after the limit,
   * too slow for a unit test.)
   */
  @ParameterizedTest
  @CsvSource({"2, 1, NONE", "2, 1, SELECTIVE", "1, 2, NONE", "1, 2, SELECTIVE"})
  void oneBlockPlans(int m0, int m1, Recompute r) {
    TrainingGraph tg = TrainingGraphBuilder.build(SPEC,
        TrainingOptions.oneBlock(SPEC, 4, 32).withRecompute(r));
    ShardingPlan p = plan(tg, m0, m1, 80e9);
    assertThat(p.solution().hasSolution()).isTrue();
    assertThat(p.evaluation().feasible()).isTrue();
    assertThat(p.objective()).isPositive().isFinite();
    for (AliasPair a : tg.graph().aliases()) {
      assertThat(p.spec(a.output())).isEqualTo(p.spec(a.parameter()));
    }
  }

  /**
   * ZeRO is in the search space: with the fp32 master, m, v and accumulator of every matrix
   * fixed split over the data-parallel axis 0 and the bf16 weights fixed replicated (ZeRO stage
   * 2), a plan exists and honours every fixed layout; it costs more than the free plan (the
   * updated weights are all-gathered), and the free plan is never worse.
   */
  @Test
  void zeroShardingOfOptimizerStateIsAChoice() {
    TrainingGraph tg = TrainingGraphBuilder.build(SPEC, TrainingOptions.oneBlock(SPEC, 4, 32));
    java.util.Map<Integer, io.meshplan.sharding.ShardingSpec> fixed = new java.util.TreeMap<>();
    for (var w : tg.weights()) {
      if (tg.graph().get(w.weight()).tensorShape().rank() == 2) {
        for (int id : new int[] {w.master(), w.adamM(), w.adamV(), w.accumulator()}) {
          fixed.put(id, io.meshplan.sharding.ShardingSpec.of(1, 0));
        }
        fixed.put(w.weight(), io.meshplan.sharding.ShardingSpec.replicated(2));
      }
    }
    ClusterSpec cs = ClusterSpec.parse("2x1:a100-80gb");
    LogicalMesh mesh = LogicalMesh.of(2, 1);
    MeshEnv env = new MeshEnv(ClusterCommModels.catalog(cs, mesh), 80e9,
        Optional.of(KernelTimeModel.of(cs.gpu(), 2)));
    AutoSharding planner = new AutoSharding(env, SolverOptions.defaults());
    ShardingPlan zero = planner.plan(tg.graph(), fixed);
    assertThat(zero.notKept()).isEmpty();
    for (var e : fixed.entrySet()) {
      assertThat(zero.spec(e.getKey())).isEqualTo(e.getValue());
    }
    assertThat(zero.evaluation().feasible()).isTrue();
    ShardingPlan free = planner.plan(tg.graph());
    assertThat(free.objective()).isLessThanOrEqualTo(zero.objective());
  }
}
