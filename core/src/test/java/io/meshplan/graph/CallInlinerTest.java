package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Fusions and calls of an optimized dump are inlined so that the planner sees inside them. */
class CallInlinerTest {
  @Test
  void fusionsBecomeTheirComputations() {
    HloModule m = new HloParser().parse(Path.of("core/src/test/resources/hlo/softmax_fused.hlo"));
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
    HloModule m = new HloParser().parse(Path.of("core/src/test/resources/hlo/layer_norm.hlo"));
    assertThat(CallInliner.hasCalls(m)).isFalse();
  }

  @Test
  void aScanLoopBodyIsInlinedOnceWithItsCarriedValuesPaired() {
    HloModule m = new HloParser().parse(Path.of("core/src/test/resources/hlo/while_loop.hlo"));
    CallInliner.Result r = CallInliner.inline(m);
    Graph g = r.graph();
    assertThat(g.instructions()).noneMatch(i -> i.opcode() == Opcode.WHILE);
    Instruction loop = m.entry().instructions().stream()
        .filter(i -> i.opcode() == Opcode.WHILE).findFirst().orElseThrow();
    // The loop's value is the body's result tuple, named under the loop.
    Instruction result = g.get(r.map(loop.id()));
    assertThat(result.opcode()).isEqualTo(Opcode.TUPLE);
    assertThat(result.name()).isEqualTo(loop.name() + "/tuple.21");
    // The state is (s32[] i, f32[16,256] x, f32[4,256,256] w): x and w are carried and paired
    // with their next values (tanh.18, and w read back through get-tuple-element.13); the scalar
    // counter is a tensor too and is paired with add.20.
    Instruction init = g.instructions().stream().filter(i -> i.name().equals("tuple.4"))
        .findFirst().orElseThrow();
    assertThat(g.aliases()).containsExactly(
        new AliasPair(init.operand(0), result.operand(0)),
        new AliasPair(init.operand(1), result.operand(1)),
        new AliasPair(init.operand(2), result.operand(2)));
    assertThat(g.get(result.operand(1)).name()).isEqualTo("while.27/tanh.18");
    assertThat(g.get(result.operand(2)).name()).isEqualTo("while.27/get-tuple-element.13");
  }

  @Test
  void loopBodyInstructionsCarryTheKnownTripCount() {
    // while_loop.hlo's loop says backend_config={"known_trip_count":{"n":"4"}, ...}.
    HloModule m = new HloParser().parse(Path.of("core/src/test/resources/hlo/while_loop.hlo"));
    Graph g = CallInliner.inline(m).graph();
    for (Instruction ins : g.instructions()) {
      long expected = ins.name().startsWith("while.27/") ? 4 : 1;
      assertThat(CallInliner.repeat(ins)).as(ins.name()).isEqualTo(expected);
    }
  }

  /**
   * A trip count that is not a whole number from 0 to 2^20, or stated twice, is refused naming
   * the loop; before, a count past a long was an internal error (exit 1), a negative one was
   * dropped and 2^63-1 priced the body 2^63-1 times.
   */
  @Test
  void aTripCountOutOfRangeOrStatedTwiceIsRefusedNamingTheLoop() throws Exception {
    String text = java.nio.file.Files.readString(
        Path.of("core/src/test/resources/hlo/while_loop.hlo"));
    String four = "\"known_trip_count\":{\"n\":\"4\"}";
    assertThat(text).contains(four);
    for (String n : new String[] {"99999999999999999999", "-4", "+4", "1048577",
        "9223372036854775807", "4x", "\\uff14"}) {
      HloModule m = new HloParser().parse(text.replace(four,
          "\"known_trip_count\":{\"n\":\"" + n + "\"}"), "w.hlo");
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> CallInliner.inline(m))
          .as(n).isInstanceOf(io.meshplan.util.InputException.class)
          .hasMessageStartingWith("while while.27: known_trip_count '")
          .hasMessageEndingWith("' is not a whole number from 0 to 1,048,576");
    }
    HloModule twice = new HloParser().parse(text.replace(four, four + "," + four), "w.hlo");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> CallInliner.inline(twice))
        .hasMessage("while while.27: its backend_config states known_trip_count twice");
    // 2^20 itself is a count: every body instruction runs 1,048,576 times.
    HloModule most = new HloParser().parse(text.replace(four,
        "\"known_trip_count\":{\"n\":\"1048576\"}"), "w.hlo");
    assertThat(CallInliner.inline(most).graph().instructions()).anyMatch(
        i -> CallInliner.repeat(i) == 1L << 20);
  }

  /**
   * A call nested past 8 levels stays one instruction, and the result says so for a warning;
   * before, its computation was left out without a word but 'planned conservatively'.
   */
  @Test
  void callsPastTheDepthLimitAreCounted() {
    StringBuilder hlo = new StringBuilder("HloModule m\n\n");
    hlo.append("%c9 (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n"
        + "  ROOT %t = f32[8]{0} tanh(%p)\n}\n\n");
    for (int k = 8; k >= 0; k--) {
      hlo.append("%c").append(k).append(" (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} "
          + "parameter(0)\n  ROOT %c = f32[8]{0} call(%p), to_apply=%c").append(k + 1)
          .append("\n}\n\n");
    }
    hlo.append("ENTRY %main (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n"
        + "  ROOT %c = f32[8]{0} call(%p), to_apply=%c0\n}\n");
    CallInliner.Result r = CallInliner.inline(new HloParser().parse(hlo.toString(), "deep.hlo"));
    // Entry -> c0 at depth 0, ..., c7 -> c8 at depth 8: that call is the one cut.
    assertThat(r.cut()).isEqualTo(1);
    assertThat(r.depthWarning()).hasValue("1 call nested more than 8 levels deep stays one "
        + "instruction: the computation it calls is not costed");
    assertThat(r.graph().instructions()).noneMatch(i -> i.opcode() == Opcode.TANH);
    HloModule shallow = new HloParser().parse(Path.of("core/src/test/resources/hlo/while_loop.hlo"));
    assertThat(CallInliner.inline(shallow).depthWarning()).isEmpty();
  }
}
