package io.meshplan.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.model.ModelSpec;
import io.meshplan.model.Numerics;
import io.meshplan.model.Presets;
import io.meshplan.model.RopeScaling;
import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/**
 * The model's numbers in a plan file ({@link NumericsJson}): what {@code export --plan} writes
 * into the framework's file round-trips, and a file from before the field reads with its preset's
 * numbers, else its family's, which is what meshplan priced and exported for it then.
 */
class PlanNumericsJsonTest {
  /** The two-stage plan of {@link PlanJsonTest} with another model's numbers. */
  private static PipelinePlan with(Numerics n) {
    PipelinePlan p = PlanJsonTest.twoStages();
    ModelSpec m = p.model();
    ModelSpec other = new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffn(), m.vocab(), m.seq(), m.batch(), m.dtype(),
        m.arch().withNumerics(n));
    return new PipelinePlan(other, p.cluster(), p.globalBatchSize(), p.microbatchSequences(),
        p.microbatches(), p.virtualStages(), p.stages(), p.prediction());
  }

  @Test
  void everyFormRoundTrips() {
    for (Numerics n : new Numerics[] {Presets.get("llama3.1-8b").arch().numerics(),
        Presets.get("deepseek-v3").arch().numerics(), Presets.get("gpt-oss-20b").arch()
            .numerics(), Numerics.rotary(10_000, 1e-6).withScaling(new RopeScaling.Linear(8)),
        Numerics.rotary(10_000, 1e-5).withScaling(new RopeScaling.Other("longrope"))
            .withDropout(0.1, 0.05).withRotary(0.25, true).withMultipliers(
                new Numerics.Multipliers(12, 0.22, 0.0078125, 16))}) {
      String text = PlanJson.write(with(n));
      assertThat(PlanJson.read("p.json", text).model().arch().numerics()).isEqualTo(n);
    }
    assertThat(PlanJson.write(with(Presets.get("llama3.1-8b").arch().numerics()))).contains(
        "\"numerics\" : {\n        \"ropeTheta\" : 500000.0", "\"type\" : \"llama3\"");
  }

  @Test
  void aFileWithoutNumbersReadsWithItsPresetsOrItsFamilys() {
    String text = PlanJson.write(with(Presets.get("llama3.1-8b").arch().numerics()));
    String old = text.replaceAll("(?s),\\s*\"numerics\" : \\{.*?\\n      \\}", "");
    assertThat(old).doesNotContain("numerics");
    // The plan's model is the llama2-7b preset: LLaMA 2's base 10,000 and epsilon 1e-5.
    assertThat(PlanJsonTest.twoStages().model().name()).isEqualTo("llama2-7b");
    assertThat(PlanJson.read("old.json", old).model().arch().numerics())
        .isEqualTo(Presets.get("llama2-7b").arch().numerics());
    String renamed = old.replace("\"name\" : \"llama2-7b\"", "\"name\" : \"my-llama\"");
    assertThat(PlanJson.read("old.json", renamed).model().arch().numerics())
        .isEqualTo(Numerics.DEFAULT);
    assertThatThrownBy(() -> PlanJson.read("bad.json", text.replace("\"normEps\" : 1.0E-5",
        "\"normEps\" : \"tiny\""))).isInstanceOf(InputException.class)
        .hasMessageContaining("numerics: field 'normEps' must be a finite number");
  }
}
