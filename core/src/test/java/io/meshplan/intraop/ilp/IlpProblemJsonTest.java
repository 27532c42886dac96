package io.meshplan.intraop.ilp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.intraop.AutoSharding;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.intraop.solve.CpSatIlpSolver;
import io.meshplan.intraop.solve.IlpSolution;
import io.meshplan.model.AlpaMlpBuilder;
import io.meshplan.util.InputException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A dumped ILP reads back as the same problem and solves to the same objective. */
class IlpProblemJsonTest {
  @Test
  void dumpAndReplay() {
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(LogicalMesh.of(2, 2), new double[] {1, 1},
        new double[] {1, 0.01}), 1000.0 * (1 << 20), Optional.empty());
    ShardingPlan plan = new AutoSharding(env, SolverOptions.defaults())
        .plan(AlpaMlpBuilder.build(2, 1024, 128, DType.F32));
    IlpProblem p = plan.costGraph().problem();
    String text = IlpProblemJson.write(p);
    IlpProblem back = IlpProblemJson.read("dump.json", text);
    assertThat(IlpProblemJson.write(back)).isEqualTo(text);
    // The MLP step has alias edges with forbidden pairs, written as "inf".
    assertThat(text).contains("\"inf\"");
    IlpSolution s = new CpSatIlpSolver(10, 1, null).solve(back);
    assertThat(s.objective()).isEqualTo(plan.objective());
    assertThat(SolutionEvaluator.evaluate(back, plan.solution().choice()).objective())
        .isEqualTo(plan.objective());
  }

  @Test
  void badDumpsAreInputErrors() {
    assertThatThrownBy(() -> IlpProblemJson.read("x.json", "{\"version\": 2}"))
        .isInstanceOf(InputException.class).hasMessageContaining("x.json");
    assertThatThrownBy(() -> IlpProblemJson.read("x.json", "{oops"))
        .isInstanceOf(InputException.class).hasMessageContaining("not valid JSON");
    assertThatThrownBy(() -> IlpProblemJson.read("x.json",
        "{\"version\":1,\"nodeCosts\":[[1],[2]],\"edges\":[{\"u\":0,\"v\":1,\"costs\":[1,2]}]}"))
        .isInstanceOf(InputException.class).hasMessageContaining("inconsistent");
  }
}
