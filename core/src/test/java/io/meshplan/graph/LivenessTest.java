package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Live ranges, with parameters resident or (Alpa's prototype) live from their position. */
class LivenessTest {
  @Test
  void rangesAndPeakCandidates() {
    GraphBuilder b = new GraphBuilder("g");
    int x = b.parameter(TensorShape.of(DType.F32, 4)); // 0
    int e = b.unary(Opcode.EXP, x); // 1
    int w = b.parameter(TensorShape.of(DType.F32, 4)); // 2, declared late as in a layer loop
    int y = b.binary(Opcode.ADD, e, w); // 3
    b.unary(Opcode.NEGATE, y); // 4 (root)
    Graph g = b.build();
    Liveness resident = new Liveness(g);
    // Parameters are held by the caller for the whole step: steps 0..4.
    assertThat(resident.start(w)).isZero();
    assertThat(resident.end(x)).isEqualTo(4);
    // exp.0 lives from its definition (1) to its last reader, add (3).
    assertThat(resident.start(e)).isEqualTo(1);
    assertThat(resident.end(e)).isEqualTo(3);
    Liveness alpa = new Liveness(g, false);
    assertThat(alpa.start(w)).isEqualTo(2);
    assertThat(alpa.end(x)).isEqualTo(1);
    // Values die at steps 3 (exp.0, and the add's operands in Alpa's view) and 4 (the root); a
    // step where nothing dies is dominated by the next one.
    assertThat(resident.peakCandidateSteps()).containsExactly(3, 4);
    assertThat(alpa.peakCandidateSteps()).containsExactly(1, 3, 4);
  }
}
