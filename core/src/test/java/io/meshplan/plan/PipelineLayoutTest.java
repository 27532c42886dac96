package io.meshplan.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Megatron-Core's {@code --pipeline-model-parallel-layout} ({@code PipelineParallelLayerLayout},
 * {@code megatron/core/transformer/pipeline_parallel_layer_layout.py} at d98e8a6): its parser's
 * documented example and its validation rules, restated.
 */
class PipelineLayoutTest {
  private static void refused(String layout, int pp, String message) {
    assertThatThrownBy(() -> PipelineLayout.parse(layout, pp))
        .isInstanceOf(InputException.class).hasMessageContaining(message);
  }

  private static void invalid(String layout, int pp, int vpp, int layers, String message) {
    PipelineLayout l = PipelineLayout.parse(layout, pp);
    assertThatThrownBy(() -> l.check(layers, pp, vpp, false))
        .isInstanceOf(InputException.class).hasMessageContaining(message);
  }

  @Test
  void parsesMegatronsDocumentedExample() {
    // parse_str_to_list's docstring: "Ettt|(tt|)*29,m|L" is
    // [["E","t","t","t"]] + [["t","t"]] * 29 + [["m"], ["L"]]: 32 chunks.
    PipelineLayout l = PipelineLayout.parse("Ettt|(tt|)*29,m|L", 8);
    List<String> want = new ArrayList<>(List.of("Ettt"));
    want.addAll(Collections.nCopies(29, "tt"));
    want.addAll(List.of("m", "L"));
    assertThat(l.chunks()).isEqualTo(want);
    assertThat(l.virtualStages(8)).isEqualTo(4);
    assertThat(l.mtpLayers()).isEqualTo(1);
  }

  @Test
  void deepSeekV3sH100LayoutLeavesTheLastChunkToTheModuleAndTheLoss() {
    // "Et|(tt|)*30mL": 1 + 30 x 2 = 61 layers in 32 chunks; the last holds none.
    PipelineLayout l = PipelineLayout.parse("Et|(tt|)*30mL", 8);
    l.check(61, 8, 4, false);
    l.checkMtp(1);
    int[] c = l.chunkLayers(61, 8, 4);
    assertThat(c).hasSize(32);
    assertThat(c[0]).isEqualTo(1);
    assertThat(c[31]).isZero();
    assertThat(java.util.Arrays.stream(c, 1, 31)).allMatch(n -> n == 2);
    assertThat(l.megatronArgs())
        .containsExactly(List.of("--pipeline-model-parallel-layout", "Et|(tt|)*30mL"));
  }

  @Test
  void letterRepeatsExpandAfterGroups() {
    // "(t*2|)*2" -> "t*2|t*2|" -> "tt|tt|": the group first, then the letters; as in
    // Megatron's second pattern, "x*n" repeats any character, the separator too.
    assertThat(PipelineLayout.parse("Et*3|(t*2|)*2L", 2).chunks())
        .containsExactly("Ettt", "tt", "tt", "L");
    assertThat(PipelineLayout.parse("Et|*3tL", 2).chunks()).containsExactly("Et", "", "", "tL");
  }

  @Test
  void badTextIsRefusedInOneLine() {
    refused("Et|tX|L", 1, "has 'X', which is not a layer");
    refused("E(t(t)*2)*2|L", 1, "nests parentheses");
    refused("E(tt|L", 1, "without its ')'");
    refused("Et)|L", 1, "without its '('");
    refused("E*|tL", 1, "'E'* without a count");
    refused("*3Et|L", 1, "a '*' that follows no letter");
    refused("Et|t*99999999999999L", 1, "more than");
    refused("(t|)*600000(t|)*600000L", 1, "expands to more than");
    refused("Et|tt|L", 2, "has 3 chunks, not a multiple of --pp 2");
    refused("Et|L", 0, "--pp must be at least 1");
    refused("E".repeat(PipelineLayout.MAX_TEXT + 1), 1, "characters long");
  }

  @Test
  void megatronsValidationRules() {
    invalid("tE|tL", 2, 1, 2, "must start with the embedding E, once");
    invalid("Et|tLt", 2, 1, 3, "must end with the loss L, once");
    invalid("Et|EtL", 2, 1, 2, "must start with the embedding E, once");
    invalid("Et|ttL", 2, 1, 4, "places 3 transformer layers, but the model has 4");
    invalid("Etm|tL", 2, 1, 2, "after a prediction module");
    invalid("Et|tL", 2, 2, 2, "has 2 chunks, but --pp 2 x --vpp 2 = 4");
    // meshplan's own limits: every chunk holds a layer; the modules ride with the loss.
    invalid("Et||tL", 3, 1, 2, "empty chunk 1");
    invalid("Et|tm|L", 3, 1, 2, "outside the last chunk");
    PipelineLayout l = PipelineLayout.parse("Et|tmL", 2);
    assertThatThrownBy(() -> l.checkMtp(2)).isInstanceOf(InputException.class)
        .hasMessageContaining("places 1 prediction modules m, but the model trains 2");
    assertThatThrownBy(() -> l.check(2, 2, 1, true)).isInstanceOf(InputException.class)
        .hasMessageContaining("cannot be given with --first-stage-layers");
  }
}
