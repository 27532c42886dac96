package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LayerScopesTest {
  private static String key(String opName) {
    LayerKey k = LayerScopes.keyOf(opName);
    return k == null ? null : k.toString();
  }

  @Test
  void flaxAndHaikuStyleIndexedScopes() {
    assertThat(key("jit(train_step)/jit(main)/jvp(MLP)/layers_3/dot_general"))
        .isEqualTo("train_step/MLP/layers[3]");
    assertThat(key("jit(f)/transformer/layer_12/attn/einsum")).isEqualTo("f/transformer/layer[12]");
    assertThat(key("jit(f)/DecoderLayer_0/mlp")).isEqualTo("f/DecoderLayer[0]");
    assertThat(key("jit(f)/TransformerBlock7/ln")).isEqualTo("f/TransformerBlock[7]");
  }

  @Test
  void separatedIndices() {
    assertThat(key("jit(layer_norm)/h.0/ln_1/add")).isEqualTo("layer_norm/h[0]");
    assertThat(key("jit(cnn)/blocks/3/Conv_0")).isEqualTo("cnn/blocks[3]");
    assertThat(key("model.layers.11/aten__addmm")).isEqualTo("model/layers[11]");
  }

  @Test
  void forwardAndBackwardOfOneLayerAgree() {
    assertThat(LayerScopes.keyOf("jit(train_step)/jit(main)/jvp(MLP)/layers_1/dot_general"))
        .isEqualTo(LayerScopes.keyOf(
            "jit(train_step)/jit(main)/transpose(jvp(MLP))/layers_1/dot_general"));
  }

  @Test
  void outermostLayerWinsAndStacksStayApart() {
    assertThat(key("encoder/layers_2/sublayer_0/add")).isEqualTo("encoder/layers[2]");
    assertThat(LayerScopes.keyOf("encoder/layers_2/x"))
        .isNotEqualTo(LayerScopes.keyOf("decoder/layers_2/x"));
  }

  @Test
  void scopesWithoutLayers() {
    assertThat(key("")).isNull();
    assertThat(key(null)).isNull();
    assertThat(key("jit(f)/layer_norm/add")).isNull();
    assertThat(key("jit(f)/layer_norm_3/add")).isNull();
    assertThat(key("jit(f)/Dense_0/dot_general")).isNull();
    assertThat(key("params['layers_0']['kernel']")).isNull();
    assertThat(key("jit(f)/layers/mlp")).isNull();
  }

  @Test
  void corpusModuleHasTwoLayersCoveringForwardAndBackward() {
    Graph g = HloCorpus.parse("mlp_train_step.hlo").entry();
    LayerScopes scopes = new LayerScopes(g);
    assertThat(scopes.layers()).extracting(LayerKey::toString)
        .containsExactly("train_step/MLP/layers[0]", "train_step/MLP/layers[1]");
    // dot.7 is forward, dot.48 backward of layers_0; sub is the loss, outside any layer
    assertThat(scopes.key(HloCorpus.named(g, "dot.48").id()))
        .isEqualTo(scopes.key(HloCorpus.named(g, "dot.7").id()));
    assertThat(scopes.key(HloCorpus.named(g, "subtract.16").id())).isEmpty();
    assertThat(scopes.key(HloCorpus.named(g, "dot.32").id()).orElseThrow().index()).isEqualTo(1);
  }
}
