package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Opcode;
import org.junit.jupiter.api.Test;

/** The training graph under the hybrid FP8 recipe: its GEMMs' types and its kept activations. */
class Fp8TrainingGraphTest {
  /** A small Megatron GPT: h = 256, a = 8, s = 128, b = 2 (dropout, biases, GeLU MLP 4h). */
  private static final ModelSpec GPT = new ModelSpec("gpt-small", ModelSpec.Family.GPT, 4, 256,
      8, 8, 1024, 1000, 128, 2, DType.BF16);

  private static TrainingGraph block(DType t, Recompute r, Attention a) {
    return TrainingGraphBuilder.build(GPT, TrainingOptions.oneBlock(GPT, 2, 128)
        .withComputeDtype(t).withRecompute(r).withAttention(a));
  }

  private static long saved(DType t, Recompute r, Attention a) {
    return ActivationMemory.savedBytes(block(t, r, a), LayerRef.block(0));
  }

  /**
   * sbh = 128 * 2 * 256 = 65,536 and as^2b = 262,144. Under bf16 a block keeps sbh(34 +
   * 5as/h) = 3,538,944 bytes (ActivationMemoryTest). Under FP8 the four GEMM inputs are kept as
   * their 1-byte E4M3 casts instead of 2-byte values: the QKV input (2sbh -> sbh), the projection
   * input (2sbh -> sbh), the MLP input (2sbh -> sbh) and the GeLU output, the second MLP GEMM's
   * input (8sbh -> 4sbh); the GeLU input stays bf16 (its derivative reads it, as TE's
   * LayerNormMLP keeps fc1's output). 34 - 1 - 1 - 1 - 4 = 27: 27 * 65,536 + 5 * 262,144 =
   * 1,769,472 + 1,310,720 = 3,080,192.
   */
  @Test
  void unfusedBlockKeepsItsGemmInputsInOneByte() {
    assertThat(saved(DType.BF16, Recompute.NONE, Attention.UNFUSED)).isEqualTo(3_538_944L);
    assertThat(saved(Fp8Training.RECIPE, Recompute.NONE, Attention.UNFUSED))
        .isEqualTo(3_080_192L);
  }

  /**
   * With fused attention the bf16 block keeps 34 sbh = 2,228,224. The projection input is the
   * attention output, which the fused backward still reads in bf16 (2sbh), so FP8 adds its 1-byte
   * cast (+sbh) while the QKV input, the MLP input and the GeLU output shrink as above (-1, -1,
   * -4): 34 + 1 - 6 = 29 sbh = 1,900,544. Full recomputation keeps only the block input, 2sbh =
   * 131,072, in either precision.
   */
  @Test
  void flashBlockKeepsTheAttentionOutputAndItsCast() {
    assertThat(saved(Fp8Training.RECIPE, Recompute.NONE, Attention.FLASH)).isEqualTo(1_900_544L);
    assertThat(saved(Fp8Training.RECIPE, Recompute.FULL, Attention.FLASH)).isEqualTo(131_072L);
  }

  /**
   * A GPT block has six linear layers (wq, wk, wv, wo, w1, w2): six forward GEMMs on two E4M3
   * operands and twelve backward GEMMs (data and weight gradient) each reading one E5M2
   * gradient, all writing bf16; the attention core's two score GEMMs stay bf16 (and their four
   * backward ones). Casts: four activations (the QKV input shared by wq, wk and wv; the
   * projection input; the MLP input; the GeLU output), six weights in the forward pass and again
   * in the backward pass, and six output gradients.
   */
  @Test
  void linearGemmsReadFp8AndWriteBf16() {
    TrainingGraph tg = block(Fp8Training.RECIPE, Recompute.NONE, Attention.UNFUSED);
    int forward = 0;
    int backward = 0;
    int bf16 = 0;
    int toE4m3 = 0;
    int toE5m2 = 0;
    for (Instruction ins : tg.graph().instructions()) {
      DType out = ins.shape() instanceof io.meshplan.graph.TensorShape t ? t.dtype() : null;
      if (ins.opcode() == Opcode.CONVERT) {
        toE4m3 += out == DType.F8E4M3FN ? 1 : 0;
        toE5m2 += out == DType.F8E5M2 ? 1 : 0;
      }
      if (ins.opcode() != Opcode.DOT) {
        continue;
      }
      assertThat(out).as(ins.name()).isEqualTo(DType.BF16);
      DType l = tg.graph().get(ins.operand(0)).tensorShape().dtype();
      DType r = tg.graph().get(ins.operand(1)).tensorShape().dtype();
      if (l == DType.F8E4M3FN && r == DType.F8E4M3FN) {
        forward++;
      } else if (l == DType.F8E5M2 || r == DType.F8E5M2) {
        backward++;
      } else {
        assertThat(l).as(ins.name()).isEqualTo(DType.BF16);
        bf16++;
      }
    }
    assertThat(forward).isEqualTo(6);
    assertThat(backward).isEqualTo(12);
    assertThat(bf16).isEqualTo(6);
    assertThat(toE4m3).isEqualTo(4 + 6 + 6);
    assertThat(toE5m2).isEqualTo(6);
  }

  @Test
  void fp8StoresWeightsInBf16() {
    TrainingGraph tg = block(Fp8Training.RECIPE, Recompute.NONE, Attention.UNFUSED);
    for (int w : tg.parameters(ParamRole.WEIGHT)) {
      assertThat(tg.graph().get(w).tensorShape().dtype()).isEqualTo(DType.BF16);
    }
    assertThat(tg.parameters(ParamRole.MASTER_WEIGHT)).isNotEmpty();
  }
}
