package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** A graph made with {@link GraphBuilder}, printed as HLO and read back, is the same graph. */
class HloBuilderRoundTripTest {
  /** A 2-layer MLP training step with an SGD update of both weights, as in Alpa's tests. */
  static Graph mlp() {
    GraphBuilder b = new GraphBuilder("mlp_2layer");
    int x = b.scope("input").parameter(TensorShape.of(DType.F32, 8, 16));
    int y = b.parameter(TensorShape.of(DType.F32, 8, 4));
    int w1 = b.scope("params/layers_0").parameter(TensorShape.of(DType.F32, 16, 32));
    int w2 = b.scope("params/layers_1").parameter(TensorShape.of(DType.F32, 32, 4));
    int h = b.scope("layers_0/mlp").dot(x, w1);
    int out = b.scope("layers_1/mlp").dot(h, w2);
    int diff = b.scope("loss").binary(Opcode.SUBTRACT, out, y);
    int two = b.constant(DType.F32, 2);
    int twoB = b.broadcast(two, new int[] {8, 4});
    int grad = b.binary(Opcode.MULTIPLY, diff, twoB);
    int gw2 = b.scope("layers_1/grad").dot(h, grad, new int[0], new int[] {0}, new int[0],
        new int[] {0});
    int gh = b.dot(grad, w2, new int[0], new int[] {1}, new int[0], new int[] {1});
    int gw1 = b.scope("layers_0/grad").dot(x, gh, new int[0], new int[] {0}, new int[0],
        new int[] {0});
    int lr = b.scope("sgd").constant(DType.F32, 0.01);
    int lr1 = b.broadcast(lr, new int[] {16, 32});
    int lr2 = b.broadcast(lr, new int[] {32, 4});
    int w1n = b.binary(Opcode.SUBTRACT, w1, b.binary(Opcode.MULTIPLY, lr1, gw1));
    int w2n = b.binary(Opcode.SUBTRACT, w2, b.binary(Opcode.MULTIPLY, lr2, gw2));
    int rep = b.forceReplicated(out);
    b.scope("").tuple(w1n, w2n, rep);
    b.alias(w1, w1n).alias(w2, w2n);
    return b.build();
  }

  @Test
  void builtGraphPrintsAndParsesBackUnchanged() {
    Graph built = mlp();
    String text = new HloPrinter().print(built);
    HloModule module = new HloParser().parse(text, "mlp.hlo");
    Graph back = module.entry();

    assertThat(back.name()).isEqualTo(built.name());
    assertThat(back.size()).isEqualTo(built.size());
    for (int i = 0; i < built.size(); i++) {
      Instruction a = built.get(i);
      Instruction b = back.get(i);
      assertThat(b.name()).as("name of %d", i).isEqualTo(a.name());
      assertThat(b.opcode()).as("opcode of %s", a.name()).isEqualTo(a.opcode());
      assertThat(b.shape()).as("shape of %s", a.name()).isEqualTo(a.shape());
      assertThat(b.operands()).as("operands of %s", a.name()).isEqualTo(a.operands());
      assertThat(b.attrs()).as("attrs of %s", a.name()).isEqualTo(a.attrs());
      assertThat(b.opName()).as("op_name of %s", a.name()).isEqualTo(a.opName());
    }
    assertThat(back.aliases()).isEqualTo(built.aliases()).hasSize(2);
    // w1 is parameter 2 and its update is element 0 of the root tuple
    assertThat(text).contains("input_output_alias={ {0}: (2, {}, may-alias), {1}: (3, {}, "
        + "may-alias) }");
    assertThat(text).contains("%force-replicated.0 = f32[8,4] custom-call(%dot.1), "
        + "custom_call_target=\"Sharding\", sharding={replicated}, metadata={op_name=\"sgd\"}");
    assertThat(text).contains("%constant.1 = f32[] constant(0.01), metadata={op_name=\"sgd\"}");
    assertThat(new HloPrinter().print(back)).isEqualTo(text);
  }

  @Test
  void shardingsGoOnBuiltGraphsToo() {
    Graph built = mlp();
    String text = HloPrinter.withShardings(Map.of(2, "{devices=[1,2]0,1}")).print(built);
    assertThat(text).contains("%parameter.2 = f32[16,32] parameter(2), sharding={devices=[1,2]0,1},"
        + " metadata={op_name=\"params/layers_0\"}");
  }

  @Test
  void aliasThatHloCannotExpressIsRejected() {
    GraphBuilder b = new GraphBuilder("g");
    int p = b.parameter(TensorShape.of(DType.F32, 2));
    int n = b.unary(Opcode.NEGATE, p);
    b.unary(Opcode.EXP, n);
    Graph g = b.alias(p, n).build();
    assertThatThrownBy(() -> new HloPrinter().print(g))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("neither the root nor an element of a root tuple");
  }
}
