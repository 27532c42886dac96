package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Fusions and calls of an optimized dump are inlined so that the planner sees inside them. */
class CallInlinerTest {
  @Test
  void fusionsBecomeTheirComputations() {
    HloModule m = new HloParser().parse(Path.of("src/test/resources/hlo/softmax_fused.hlo"));
    assertThat(CallInliner.hasCalls(m)).isTrue();
    CallInliner.Result r = CallInliner.inline(m);
    Graph g = r.graph();
    assertThat(g.instructions()).noneMatch(i -> i.opcode() == Opcode.FUSION);
    // Each fusion of the entry now stands for its computation's root, named <fusion>/<root>.
    Graph entry = m.entry();
    for (Instruction ins : entry.instructions()) {
      Instruction now = g.get(r.map(ins.id()));
      if (ins.opcode() == Opcode.FUSION) {
        assertThat(now.name()).startsWith(ins.name() + "/");
        assertThat(now.shape()).isEqualTo(ins.shape());
      } else {
        assertThat(now.name()).isEqualTo(ins.name());
      }
    }
    // The entry root stays last.
    assertThat(r.map(entry.root().id())).isEqualTo(g.size() - 1);
    // Operands point at earlier instructions (the Graph constructor checks it) and the
    // multi-output fusion's tuple is what the get-tuple-elements read.
    Instruction gte = g.instructions().stream()
        .filter(i -> i.name().equals("get-tuple-element.1")).findFirst().orElseThrow();
    assertThat(g.get(gte.operand(0)).opcode()).isEqualTo(Opcode.TUPLE);
  }

  @Test
  void modulesWithoutCallsAreLeftAlone() {
    HloModule m = new HloParser().parse(Path.of("src/test/resources/hlo/layer_norm.hlo"));
    assertThat(CallInliner.hasCalls(m)).isFalse();
  }
}
