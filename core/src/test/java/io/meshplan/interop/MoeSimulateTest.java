package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.model.Architecture;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.sim.SimulationResult;
import org.junit.jupiter.api.Test;

/** Mixture-of-experts configurations simulated whole: memory by expert group, exchange time. */
class MoeSimulateTest {
  /** Mixtral 8x7B: h 4096, 32 layers, 32 heads, 8 kv heads, 8 experts top-2 of 14336. */
  static ModelSpec mixtral() {
    return new ModelSpec("mixtral-8x7b", ModelSpec.Family.LLAMA, 32, 4096, 32, 8, 14336, 32000,
        4096, 256, DType.BF16, Architecture.llama().withMoe(new MoeShape(8, 2, 14336, 0,
        false)));
  }

  private static SimulationResult run(ParallelConfig c) {
    PlanRequest req = Requests.of(mixtral(), "8x8:h100-80gb:ib-ndr400", 256, true);
    return new PlanSimulator(Requests.layers(req)).simulate(req, c).orElseThrow().simulation();
  }

  @Test
  void expertParallelismShrinksTheExpertState() {
    ParallelConfig base = new ParallelConfig(1, 4, 16, 1, 1, 256, Recompute.FULL, false, 1, 0, 0);
    SimulationResult ep1 = run(base);
    SimulationResult ep8 = run(base.withExperts(8, 1));
    System.out.println(ep1.iterationSeconds() + " " + ep1.peakMemoryBytesPerGpu() / 1e9 + " "
        + ep1.mfu());
    System.out.println(ep8.iterationSeconds() + " " + ep8.peakMemoryBytesPerGpu() / 1e9 + " "
        + ep8.mfu());
    assertThat(ep8.peakMemoryBytesPerGpu()).isLessThan(ep1.peakMemoryBytesPerGpu());
  }
}
