package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.graph.DType;
import io.meshplan.graph.FusedTraffic;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Opcode;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * QLoRA's 4-bit base ({@link Nf4}, {@link Lora#quantized}): its bytes, which weights it holds,
 * and the dequantization the forward and backward passes run before each base GEMM.
 */
class QloraTest {
  private static final ModelSpec LLAMA31_8B = Presets.get("llama3.1-8b");

  /**
   * bitsandbytes' bytes of an n-element NF4 weight with double quantization: ceil(n/2) codes,
   * ceil(n/64) 8-bit block constants, 4 ceil(ceil(n/64)/256) bytes of fp32 group constants.
   * Llama 3.1 8B's q projection, 4096 x 4096 = 16,777,216: 8,388,608 + 262,144 + 4 x 1,024 =
   * 8,654,848 bytes, 4.127 bits a weight (8,654,848 x 8 / 16,777,216 = 4.12695...). Partial
   * blocks and groups round up: 1 element is 1 + 1 + 4 = 6 bytes; 65 are 33 + 2 + 4 = 39;
   * 16,385 are 8,193 + 257 + 4 x 2 = 8,458.
   */
  @Test
  void bytesAreBitsandbytesStorage() {
    assertThat(Nf4.bytes(16_777_216L)).isEqualTo(8_654_848L);
    assertThat(Nf4.bytes(16_777_216L) * 8 / 16_777_216.0).isCloseTo(4.127, within(5e-4));
    assertThat(Nf4.bytes(1)).isEqualTo(6);
    assertThat(Nf4.bytes(65)).isEqualTo(39);
    assertThat(Nf4.bytes(16_385)).isEqualTo(8_458);
    assertThat(Nf4.groups(16_384)).isEqualTo(1);
    assertThat(Nf4.groups(16_385)).isEqualTo(2);
    assertThatThrownBy(() -> Nf4.bytes(0)).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * One block of Llama 3.1 8B under QLoRA, rank 16 on attention and MLP: the base holds its seven
   * projections in NF4, q and o 8,654,848 bytes each, k and v (4096 x 1024 = 4,194,304:
   * 2,097,152 + 65,536 + 4 x 256) 2,163,712 each, gate, up and down (4096 x 14336 = 58,720,256:
   * 29,360,128 + 917,504 + 4 x 3,584) 30,291,968 each: 112,513,024 bytes a block, x 32 =
   * 3,600,416,768 bytes for the model (every element count a multiple of 16,384, so the graph's
   * whole groups are exact); the norms stay bf16 and the adapters (1,310,720 a block) train.
   */
  @Test
  void aBlockHoldsItsProjectionsInNf4() {
    ModelSpec m = LLAMA31_8B.withLora(Lora.of(16, 32, "attention,mlp", true)
        .withQuantizedBase());
    TrainingGraph tg = TrainingGraphBuilder.build(m, oneBlock(m, Recompute.NONE));
    Graph g = tg.graph();
    long nf4 = 0;
    long other = 0;
    long trained = 0;
    for (WeightTensors w : tg.weights()) {
      var shape = g.get(w.weight()).tensorShape();
      if (w.trained()) {
        assertThat(w.name()).contains("_lora_");
        trained += shape.elementCount();
      } else if (shape.dtype() == DType.U8 || shape.dtype() == DType.F32) {
        nf4 += shape.byteSize();
      } else {
        assertThat(shape.dtype()).isEqualTo(DType.BF16);
        other += shape.elementCount();
      }
    }
    assertThat(nf4).isEqualTo(112_513_024L);
    assertThat(nf4 * 32).isEqualTo(3_600_416_768L);
    assertThat(2 * Nf4.bytes(4096L * 4096) + 2 * Nf4.bytes(4096L * 1024)
        + 3 * Nf4.bytes(4096L * 14336)).isEqualTo(nf4);
    assertThat(other).isEqualTo(2 * 4096); // the block's two RMSNorm gains
    assertThat(trained * 32).isEqualTo(41_943_040L);
  }

  /**
   * Each base GEMM reads a weight dequantized just before it (bitsandbytes' MatMul4Bit, 60a0d8a5):
   * seven dequantizations in the forward pass and seven again in the backward pass, for the
   * inputs' gradients; the dequantized weight is not kept between them. Under full
   * recomputation the recomputed forward dequantizes a third time. Each dequantization is one
   * memory-bound kernel once fused: it reads the 4.127-bit storage and writes 2 bytes an element,
   * 112,513,024 + 2 x 218,103,808 = 548,720,640 bytes for the block's seven.
   */
  @Test
  void everyPassDequantizesTheBaseBeforeItsGemms() {
    ModelSpec m = LLAMA31_8B.withLora(Lora.of(16, 32, "q_proj,v_proj", true)
        .withQuantizedBase());
    Map<Phase, Integer> none = dequantizations(TrainingGraphBuilder.build(m,
        oneBlock(m, Recompute.NONE)), null);
    Map<Phase, Integer> full = dequantizations(TrainingGraphBuilder.build(m,
        oneBlock(m, Recompute.FULL)), null);
    assertThat(none).isEqualTo(Map.of(Phase.FORWARD, 7, Phase.BACKWARD, 7));
    assertThat(full).isEqualTo(Map.of(Phase.FORWARD, 7, Phase.RECOMPUTE, 7, Phase.BACKWARD, 7));
    double[] bytes = new double[1];
    dequantizations(TrainingGraphBuilder.build(m, oneBlock(m, Recompute.NONE)), bytes);
    assertThat(bytes[0]).isEqualTo(112_513_024.0 + 2.0 * 218_103_808L);
  }

  /** Seeded small models: the graph's quantized bytes are {@link Nf4#bytes} rounded to groups. */
  @Test
  void theGraphHoldsWholeGroups() {
    Random rnd = new Random(40_2305L);
    for (int c = 0; c < 8; c++) {
      int h = 64 * (1 + rnd.nextInt(4));
      int f = 32 * (1 + rnd.nextInt(9));
      ModelSpec base = new ModelSpec("m" + c, ModelSpec.Family.LLAMA, 1, h, 4, 2, f, 200, 32, 1,
          DType.BF16);
      ModelSpec m = base.withLora(Lora.of(2, 4, "q_proj", true).withQuantizedBase());
      TrainingGraph tg = TrainingGraphBuilder.build(m, TrainingOptions.of(m));
      long graph = 0;
      for (WeightTensors w : tg.weights()) {
        var shape = tg.graph().get(w.weight()).tensorShape();
        if (shape.dtype() != DType.BF16) {
          graph += shape.byteSize();
        }
      }
      long exact = 0;
      long whole = 0;
      int hd = h / 4;
      long[] sizes = {(long) h * h, (long) h * 2 * hd, (long) h * 2 * hd, (long) h * h,
          (long) h * f, (long) h * f, (long) f * h};
      for (long n : sizes) {
        exact += Nf4.bytes(n);
        whole += Nf4.groups(n) * (Nf4.GROUP_ELEMENTS / 2L + Nf4.GROUP + 4);
      }
      assertThat(graph).as(m.toString()).isEqualTo(whole).isGreaterThanOrEqualTo(exact)
          .isLessThanOrEqualTo(exact + 7 * 8_446L);
    }
  }

  @Test
  void qloraTrainsInBf16OnADecoder() {
    Lora q = Lora.of(16, 32, "all-linear", true).withQuantizedBase();
    assertThatThrownBy(() -> LLAMA31_8B.withTraining(LLAMA31_8B.batch(), DType.F32).withLora(q))
        .hasMessageContaining("QLoRA trains in bf16").hasMessageContaining("f32");
    assertThat(LLAMA31_8B.withLora(q).quantizedLayoutProblem(2)).get().asString()
        .contains("tensor parallelism of 2");
    assertThat(LLAMA31_8B.withLora(q).quantizedLayoutProblem(1)).isEmpty();
    assertThat(LLAMA31_8B.withLora(Lora.of(16, 32, "all-linear", true))
        .quantizedLayoutProblem(8)).isEmpty();
    assertThatThrownBy(() -> new Lora(0, 0, java.util.List.of(), Lora.Base.NF4))
        .hasMessageContaining("needs LoRA adapters");
    assertThat(q.words()).startsWith("QLoRA (NF4 base) rank 16, alpha 32");
  }

  private static TrainingOptions oneBlock(ModelSpec m, Recompute r) {
    return TrainingOptions.of(m).withWorkload(1, 128).withBlocks(0, 1).withEmbedding(false)
        .withHead(false).withRecompute(r);
  }

  /**
   * Dequantizations by phase: conversions of a u8 code tensor (one per dequantized weight); with
   * {@code bytes}, the fused traffic of the forward pass's dequantizing ops, from the codes and
   * constants to the weight its GEMM reads.
   */
  private static Map<Phase, Integer> dequantizations(TrainingGraph tg, double[] bytes) {
    Graph g = tg.graph();
    Map<Phase, Integer> out = new EnumMap<>(Phase.class);
    BitSet chain = new BitSet();
    for (WeightTensors w : tg.weights()) {
      if (g.get(w.weight()).tensorShape().dtype() != DType.BF16) {
        chain.set(w.weight());
      }
    }
    double[] traffic = bytes == null ? null : FusedTraffic.bytes(g);
    for (Instruction ins : g.instructions()) {
      boolean fed = false;
      for (int op : ins.operands()) {
        fed |= chain.get(op);
      }
      if (!fed || ins.opcode() == Opcode.DOT) {
        continue;
      }
      chain.set(ins.id());
      if (ins.opcode() == Opcode.CONVERT && g.get(ins.operands().get(0)).tensorShape().rank()
          == 3) {
        out.merge(tg.phase(ins.id()), 1, Integer::sum);
      }
      if (traffic != null && tg.phase(ins.id()) == Phase.FORWARD) {
        bytes[0] += traffic[ins.id()];
      }
    }
    return out;
  }

  private static org.assertj.core.data.Offset<Double> within(double d) {
    return org.assertj.core.data.Offset.offset(d);
  }
}
