package io.meshplan.graph;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** The hand-written HLO modules under {@code src/test/resources/hlo/}. */
final class HloCorpus {
  static final List<String> NAMES = List.of(
      "mlp_train_step.hlo",
      "attention_forward.hlo",
      "layer_norm.hlo",
      "softmax_fused.hlo",
      "while_loop.hlo",
      "big_constant.hlo",
      "custom_calls.hlo",
      "spmd_collectives.hlo",
      "conv_pool.hlo",
      "control_flow.hlo",
      "torch_xla_linear.hlo");

  private HloCorpus() {}

  static String text(String name) {
    try (InputStream in = HloCorpus.class.getResourceAsStream("/hlo/" + name)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource hlo/" + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static HloModule parse(String name) {
    return new HloParser().parse(text(name), name);
  }

  static Instruction named(Graph g, String name) {
    for (Instruction ins : g.instructions()) {
      if (ins.name().equals(name)) {
        return ins;
      }
    }
    throw new AssertionError("no instruction " + name + " in " + g.name());
  }
}
