package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloModule;
import io.meshplan.graph.HloParser;
import io.meshplan.graph.HloPrinter;
import org.junit.jupiter.api.Test;

/** Training graphs print as HLO text that reads back instruction for instruction. */
class TrainingGraphHloTest {
  @Test
  void blockPrintsAndParsesBack() {
    ModelSpec gpt = new ModelSpec("gpt-small", ModelSpec.Family.GPT, 2, 64, 4, 4, 256, 100, 16,
        2, DType.BF16);
    roundTrip(TrainingGraphBuilder.build(gpt, TrainingOptions.oneBlock(gpt, 2, 16)).graph());
  }

  /** With embedding (gather, scatter-add) and head: the whole 2-block model. */
  @Test
  void wholeModelPrintsAndParsesBack() {
    ModelSpec llama = new ModelSpec("llama-small", ModelSpec.Family.LLAMA, 2, 64, 4, 2, 128, 100,
        16, 2, DType.BF16);
    roundTrip(TrainingGraphBuilder.build(llama, TrainingOptions.of(llama)).graph());
  }

  /** Fused attention prints as XLA's cuDNN call and reads back as fused attention. */
  @Test
  void flashAttentionPrintsAndParsesBack() {
    ModelSpec llama = new ModelSpec("llama-small", ModelSpec.Family.LLAMA, 2, 64, 4, 2, 128, 100,
        16, 2, DType.BF16);
    Graph g = TrainingGraphBuilder.build(llama, TrainingOptions.of(llama)
        .withAttention(Attention.FLASH)).graph();
    String text = new HloPrinter().print(g);
    assertThat(text).contains("custom_call_target=\"__cudnn$fmhaSoftmax\"")
        .contains("custom_call_target=\"__cudnn$fmhaSoftmaxBackward\", output_index=2");
    roundTrip(g);
  }

  private static void roundTrip(Graph g) {
    String text = new HloPrinter().print(g);
    HloModule m = new HloParser().parse(text, "block.hlo");
    Graph back = m.entry();
    assertThat(back.size()).isEqualTo(g.size());
    for (int i = 0; i < g.size(); i++) {
      assertThat(back.get(i).opcode()).isEqualTo(g.get(i).opcode());
      assertThat(back.get(i).shape()).isEqualTo(g.get(i).shape());
      assertThat(back.get(i).opName()).isEqualTo(g.get(i).opName());
    }
    assertThat(back.aliases()).hasSize(g.aliases().size());
  }
}
