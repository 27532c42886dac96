package io.meshplan.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.cost.LayerCost;
import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.TensorSharding;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Sequence parallelism priced as Megatron-LM runs it (Korthikanti et al., MLSys'23, section
 * 4.2.2): the all-reduce that finishes a row-parallel matrix becomes a reduce-scatter along the
 * sequence, the input of a column-parallel matrix is all-gathered, and the tensor axis moves the
 * same bytes as without sequence parallelism; no weight is gathered.
 */
class SequenceParallelTest {
  /** A GPT block: hidden 1024, 8 heads, ffn 4096, sequence 1024, vocabulary 1024, bf16. */
  private static ModelSpec gpt() {
    ModelSpec g = Presets.get("gpt");
    return new ModelSpec("gpt", g.family(), 2, 1024, 8, 8, 4096, 1024, 1024, 8, DType.BF16,
        g.arch());
  }

  private static LayerCost block(IlpLayerCostModel layers, int t, int b, boolean sp) {
    return layers.cost(LayerCostModel.Kind.BLOCK,
        new LayerSetting(t, b, Recompute.NONE, sp, true));
  }

  @ParameterizedTest(name = "t = {0}, b = {1}")
  @CsvSource({"8, 1", "4, 2"})
  void sequenceParallelMovesTheBytesOfTensorParallelism(int t, int b) {
    IlpLayerCostModel layers = Requests.layers(Requests.of(gpt(), "1x8:a100-80gb", 8, false));
    LayerCost tp = block(layers, t, b, false);
    LayerCost sp = block(layers, t, b, true);
    // The activation is S = b*s*h*2 bytes: 1*1024*1024*2 = 2,097,152 at t = 8 and 4,194,304 at
    // t = 4 (b = 2). One unit u = (t-1)/t * S is what an all-gather or a reduce-scatter of it
    // sends per GPU (nccl-tests bus bytes); an all-reduce sends 2u. u = 7/8 * 2,097,152 =
    // 1,835,008 at t = 8, 3/4 * 4,194,304 = 3,145,728 at t = 4.
    double s = b * 1024.0 * 1024 * 2;
    double u = (t - 1.0) / t * s;
    // Korthikanti's forward: without sequence parallelism 2 all-reduces (after attention and
    // after the MLP), 2 * 2u; with it 2 all-gathers and 2 reduce-scatters, 4 * u. Both 4u:
    // 7,340,032 bytes at t = 8, 12,582,912 at t = 4.
    // The backward mirrors the forward per Megatron-LM collective. meshplan's attention has
    // separate query, key and value matrices and its MLP separate first matrices, each with a
    // partial input gradient; Megatron-LM fuses them (linear_qkv, linear_fc1) and reduces their
    // sum once, and so does meshplan under Megatron-LM's layouts (their collectives count once:
    // IlpLayerCostModel.fusedGemms). With sequence parallelism the two fused input gradients are
    // reduce-scattered (2u) and the two output gradients of the row-parallel matrices
    // all-gathered (2u): 4u. Without it the two fused input gradients are all-reduced: 2 * 2u.
    // Layer total 8u: 14,680,064 bytes at t = 8, 25,165,824 at t = 4.
    // Besides, both all-reduce gradients of h-element vectors (layer norm scale and bias, the
    // row-parallel biases), as Megatron-LM does and Korthikanti's count leaves out: one is
    // 2 * (t-1)/t * 2048 bytes, at most 3,584. Sixteen vectors' worth, 16 * 2048 = 32,768 bytes
    // (0.18% of the t = 8 total), bounds them; a gathered weight is far above it: the
    // down-projection weight, 4096*1024*2 bytes, gathered over t GPUs sends 7,340,032 (t = 8).
    double tiny = 16 * 1024 * 2;
    assertThat(tp.forwardCommBytes()).isCloseTo(2 * (2 * u), within(tiny));
    assertThat(sp.forwardCommBytes()).isCloseTo(2 * u + 2 * u, within(tiny));
    assertThat(sp.forwardCommBytes()).isCloseTo(tp.forwardCommBytes(), within(tiny));
    assertThat(tp.tensorCommBytes()).isCloseTo(8 * u, within(tiny));
    assertThat(sp.tensorCommBytes()).isCloseTo(8 * u, within(tiny));
    assertThat(sp.tensorCommBytes()).isCloseTo(tp.tensorCommBytes(), within(tiny));
    double backwardTp = tp.tensorCommBytes() - tp.forwardCommBytes();
    double backwardSp = sp.tensorCommBytes() - sp.forwardCommBytes();
    assertThat(backwardSp).isCloseTo(backwardTp, within(tiny));
  }

  @ParameterizedTest(name = "t = {0}, b = {1}")
  @CsvSource({"8, 1", "4, 2"})
  void sequenceParallelKeepsTheDownProjectionRowParallelAndCostsNoMoreTime(int t, int b) {
    IlpLayerCostModel layers = Requests.layers(Requests.of(gpt(), "1x8:a100-80gb", 8, false));
    LayerCost tp = block(layers, t, b, false);
    LayerCost sp = block(layers, t, b, true);
    TensorSharding w2 = sp.tensors().stream()
        .filter(w -> w.name().endsWith("feed_forward/w2")).findFirst().orElseThrow();
    assertThat(w2.words()).isEqualTo("row-parallel over " + t + " GPUs");
    // Nor gathered at a reader: a gather sends (t-1)/t * 4096*1024*2 bytes, 7,340,032 at t = 8
    // (6,291,456 at t = 4), on top of Korthikanti's forward 4u (7,340,032 at t = 8, 12,582,912
    // at t = 4).
    double u = (t - 1.0) / t * b * 1024.0 * 1024 * 2;
    double gather = (t - 1.0) / t * 4096 * 1024 * 2;
    assertThat(sp.forwardCommBytes()).isLessThan(4 * u + gather);
    // The same bytes, and the elementwise work between the matrices split t ways: the layer is
    // not slower with sequence parallelism. 3% allowed: it runs twice as many forward
    // collectives, each paying its latency.
    assertThat(sp.latencySeconds()).isLessThanOrEqualTo(tp.latencySeconds() * 1.03);
  }

  /**
   * Activation memory (Korthikanti et al., MLSys'23, section 4.2.3 and Table 2): a GPT layer keeps
   * {@code sbh (10 + 24/t + 5as/(ht))} bytes with tensor parallelism alone, where the LayerNorm
   * inputs, the dropout masks and the residual stream are whole on every GPU, and {@code
   * sbh (34 + 5as/h) / t} with sequence parallelism, which keeps them split by sequence. Here
   * s = 1024, h = 1024, a = 8, unfused attention: 5as/h = 40; sbh = b * 1,048,576.
   */
  @ParameterizedTest(name = "t = {0}, b = {1}")
  @CsvSource({"8, 1", "4, 2"})
  void sequenceParallelKeepsATensorParallelShardOfEveryActivation(int t, int b) {
    IlpLayerCostModel layers = Requests.layers(Requests.of(gpt(), "1x8:a100-80gb", 8, false));
    double sbh = b * 1024.0 * 1024;
    // t = 8, b = 1: TP alone 18 sbh = 18,874,368 bytes; SP 74/8 sbh = 9,699,328.
    // t = 4, b = 2: TP alone 26 sbh = 54,525,952 bytes; SP 74/4 sbh = 38,797,312.
    assertThat(block(layers, t, b, false).savedActivationBytes())
        .isCloseTo(sbh * (10 + 24.0 / t + 40.0 / t), within(0.02 * sbh));
    assertThat(block(layers, t, b, true).savedActivationBytes())
        .isCloseTo(sbh * (34 + 40.0) / t, within(0.02 * sbh));
  }
}
