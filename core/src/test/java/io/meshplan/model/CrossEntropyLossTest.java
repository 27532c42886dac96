package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.graph.FusedTraffic;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import org.junit.jupiter.api.Test;

/**
 * The cross-entropy loss in fp32 (the frameworks' default) and as one fused kernel over the bf16
 * logits: the bytes each moves per logit and what each keeps for the backward pass.
 */
class CrossEntropyLossTest {
  /** b = 2 sequences of s = 128 tokens: 256 rows of logits. */
  private static final int ROWS = 2 * 128;

  private static TrainingGraph head(int vocab, boolean fused) {
    ModelSpec m = new ModelSpec("gpt-small", ModelSpec.Family.GPT, 4, 256, 8, 8, 1024, vocab, 128,
        2, DType.BF16);
    return TrainingGraphBuilder.build(m, TrainingOptions.of(m).withBlocks(0, 0)
        .withEmbedding(false).withHead(true).withOptimizer(false).withWorkload(2, 128)
        .withFusedLoss(fused));
  }

  /** Bytes the loss part moves (forward, backward and recomputation). */
  private static double lossBytes(int vocab, boolean fused) {
    Graph g = head(vocab, fused).graph();
    double[] bytes = FusedTraffic.bytes(g);
    double sum = 0;
    for (Instruction ins : g.instructions()) {
      if (ins.opName().endsWith("/loss")) {
        sum += bytes[ins.id()];
      }
    }
    return sum;
  }

  /**
   * Doubling the vocabulary from 1,000 to 2,000 adds 256,000 logits. In fp32 each costs 40 bytes:
   * the conversion reads 2 and writes 4; the row maximum reads 4; the shifted exponentials read
   * the logits (4) and write their values (4), whose sum reads them (4); the target's selection
   * reads the logits and writes its masked copy (4 + 4), whose sum reads it (4); the backward
   * reads the logits (4) and writes the bf16 gradient (2). 6 + 4 + 8 + 4 + 8 + 4 + 6 = 40, so
   * 10,240,000 bytes. Fused, every pass touches 2-byte values: 2 + 4 + 2 + 4 + 2 + 4 = 18, so
   * 4,608,000 bytes.
   */
  @Test
  void theFp32LossMovesFortyBytesPerLogitAndTheFusedKernelEighteen() {
    assertThat(lossBytes(2000, false) - lossBytes(1000, false)).isEqualTo(40.0 * ROWS * 1000);
    assertThat(lossBytes(2000, true) - lossBytes(1000, true)).isEqualTo(18.0 * ROWS * 1000);
  }

  /**
   * The fp32 loss keeps its fp32 logits for the backward (Megatron keeps the fp32 softmax) and
   * its fp32 log-sum-exp per row; the fused kernel keeps bf16 ones: 1,000 x 256 x (4 - 2) +
   * 256 x (4 - 2) = 512,000 + 512 = 512,512 bytes more.
   */
  @Test
  void theFp32LossKeepsFourByteLogits() {
    long fp32 = ActivationMemory.savedBytes(head(1000, false), LayerRef.head());
    long fused = ActivationMemory.savedBytes(head(1000, true), LayerRef.head());
    assertThat(fp32 - fused).isEqualTo(512_512L);
  }

  /** The loss stays the scalar of the compute type either way, and fp32 is the default. */
  @Test
  void theLossIsABf16ScalarAndFp32IsTheDefault() {
    assertThat(TrainingOptions.of(head(1000, true).spec()).fusedLoss()).isFalse();
    for (boolean fused : new boolean[] {false, true}) {
      TrainingGraph tg = head(1000, fused);
      assertThat(tg.graph().get(tg.output()).tensorShape().dtype()).isEqualTo(DType.BF16);
      assertThat(tg.graph().get(tg.output()).tensorShape().rank()).isZero();
    }
  }
}
