package io.meshplan.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimulationRenderersTest {
  /**
   * Two stages, 1F1B, m = 2, f = 1, b = 2: T = (2 + 1) * 3 = 9 s; 1024 tokens / 9 s = 113.78
   * tokens/s. Memory per stage: 1 GiB weights, 2 GiB gradients, 4 GiB optimizer state, 0.5 GiB
   * activations per microbatch, 0.25 GiB temporaries; stage 0 holds 2 microbatches: 8.25 GiB.
   */
  private static SimulationResult sample() {
    double gib = 1024.0 * 1024 * 1024;
    StageCost s = Stages.builder(1, 2).memory(new MemoryBreakdown(gib, 2 * gib, 4 * gib,
        0.5 * gib, 0.25 * gib)).build();
    return Stages.run(List.of(s, s), new Schedule.OneFOneB(), 2, P2pCost.free());
  }

  @Test
  void jsonHasTheContractFields() throws Exception {
    JsonNode n = new ObjectMapper().readTree(SimulationJson.write(sample(), false));
    assertThat(n.get("iterationSeconds").asDouble()).isEqualTo(9.0);
    assertThat(n.get("tokensPerSecond").asDouble()).isEqualTo(1024.0 / 9);
    assertThat(n.has("tflopsPerGpu")).isTrue();
    assertThat(n.has("mfu")).isTrue();
    assertThat(n.get("peakMemoryBytesPerGpu").asLong()).isEqualTo(8858370048L);
    assertThat(n.get("breakdown").get("compute").asDouble()).isEqualTo(6.0);
    assertThat(n.get("breakdown").get("bubble").asDouble()).isEqualTo(3.0);
    JsonNode m = n.get("memory");
    assertThat(m.get("weights").asLong() + m.get("gradients").asLong()
        + m.get("optimizerState").asLong() + m.get("activations").asLong()
        + m.get("temporaries").asLong()).isEqualTo(8858370048L);
    assertThat(n.get("stages")).hasSize(2);
    assertThat(n.get("stages").get(1).get("peakInFlightMicrobatches").asInt()).isEqualTo(1);
    assertThat(n.has("events")).isFalse();
    JsonNode withEvents = new ObjectMapper().readTree(SimulationJson.write(sample(), true));
    // 2 stages * 2 microbatches * (forward + backward); transfers are free, so no SEND events.
    assertThat(withEvents.get("events")).hasSize(8);
    assertThat(withEvents.get("events").get(0).get("kind").asText()).isEqualTo("FORWARD");
  }

  @Test
  void textIsStable() {
    String text = SimulationText.write(sample());
    assertThat(text).isEqualTo(SimulationText.write(sample()));
    assertThat(text).contains("schedule 1f1b, 2 microbatches, 2 stages")
        .contains("iteration 9.0000 s, 114 tokens/s")
        .contains("bubble 3.0000 s (33.3%)")
        .contains("peak memory per GPU (stage 0): 8.25 GiB = weights 1.00 + gradients 2.00"
            + " + optimizer state 4.00\n  + activations 1.00 + temporaries 0.25 GiB");
  }
}
