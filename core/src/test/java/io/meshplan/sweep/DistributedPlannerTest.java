package io.meshplan.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.exec.LocalExecutor;
import io.meshplan.interop.InterOpPlanner;
import io.meshplan.interop.PlanResult;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import java.util.List;
import org.junit.jupiter.api.Test;

class DistributedPlannerTest {
  /**
   * One task per microbatch size, best kept on the caller: the one-process plan, byte for byte;
   * also for a plan the planner interleaves (GPT 1.7B on 4 x 8 A100s with 32 sequences: 2 stages
   * of 7 chunks) and for the same question restricted to 1F1B.
   */
  @Test
  void sameJsonAsTheOneProcessPlanner() {
    int interleaved = 0;
    for (SweepPoint p : List.of(
        new SweepPoint(0, "opt-125m", 512, 2, 2, "a100-40gb", "ib-hdr200", 32, 0, false),
        new SweepPoint(1, "gpt-1.7b", 2048, 4, 8, "a100-80gb", "ib-hdr200", 32, 0, false))) {
      for (boolean interleave : new boolean[] {true, false}) {
        var req = PointEvaluator.request(p).withInterleaving(interleave);
        PlanResult local = new InterOpPlanner(new LayerCostCache().layers(req.model(),
            req.cluster(), SolverOptions.defaults()), pct -> { }).plan(req);
        PlanQuestion q = new PlanQuestion(req.model(), req.cluster(), req.globalBatch(), 0,
            req.memoryPerGpu(), req.weightBytes(), false, interleave);
        int sizes = InterOpPlanner.microbatchSizes(req).size();
        assertThat(sizes).as("several microbatch sizes to spread").isGreaterThan(1);
        MicrobatchOutcome o = new DistributedPlanner(new LocalExecutor(2)).plan(q, n -> { });
        PipelinePlan plan = ((PlanResult.Planned) local).plan();
        assertThat(o.planJson()).isEqualTo(PlanJson.write(plan));
        if (plan.virtualStages() > 1) {
          interleaved++;
          assertThat(interleave).isTrue();
        }
      }
    }
    assertThat(interleaved).isEqualTo(1);
  }

  @Test
  void choiceFollowsThePlannersRule() {
    MicrobatchOutcome a = new MicrobatchOutcome(4, "{a}", 2.0, 3, 0, "", false);
    MicrobatchOutcome b = new MicrobatchOutcome(8, "{b}", 2.0 + 1e-13, 2, 0, "", false);
    MicrobatchOutcome c = new MicrobatchOutcome(16, "{c}", 1.5, 4, 0, "", false);
    MicrobatchOutcome none = new MicrobatchOutcome(32, "", Double.NaN, 0, 9e10, "no", false);
    MicrobatchOutcome less = new MicrobatchOutcome(64, "", Double.NaN, 0, 5e10, "less", false);
    MicrobatchOutcome unknown = new MicrobatchOutcome(2, "", Double.NaN, 0, 0, "?", false);
    // Within 1e-12 s the fewer stages win; a clearly faster one wins outright.
    assertThat(DistributedPlanner.best(List.of(a, b))).isEqualTo(b);
    assertThat(DistributedPlanner.best(List.of(a, b, c, none))).isEqualTo(c);
    // Nothing fits: the outcome that needed the least memory, an unknown need counting last.
    assertThat(DistributedPlanner.best(List.of(unknown, none, less))).isEqualTo(less);
    assertThat(DistributedPlanner.best(List.of(unknown))).isEqualTo(unknown);
  }
}
