package io.meshplan.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The backward rule of each opcode, on tiny graphs: gradient shapes (the pass itself refuses a
 * cotangent whose shape differs from its value's), FLOPs, and which forward values each rule
 * reads.
 */
class VjpRulesTest {
  private static final DType T = DType.BF16;

  private static Tape tape() {
    Tape t = new Tape("t");
    t.at(Phase.FORWARD, LayerRef.block(0), "");
    return t;
  }

  private static int weight(Tape t, int... dims) {
    return t.param(TensorShape.of(T, dims), ParamRole.WEIGHT);
  }

  /** Runs the backward pass from {@code out}; returns the gradient of each differentiated param. */
  private static Map<Integer, Integer> backprop(Tape t, int out, Integer... wrt) {
    Backprop bp = new Backprop(t, t.size(), Set.of(wrt));
    t.at(Phase.BACKWARD, LayerRef.block(0), "seed");
    int g = t.param(t.shape(out), ParamRole.OUTPUT_GRADIENT);
    bp.seed(out, g);
    Map<Integer, Integer> grads = new HashMap<>();
    bp.run(grads::put);
    return grads;
  }

  private static double dotFlops(Graph g, int from, int to) {
    double f = 0;
    for (int i = from; i < to; i++) {
      Instruction ins = g.get(i);
      if (ins.opcode() == Opcode.DOT) {
        f += OpCost.flops(g, ins);
      }
    }
    return f;
  }

  /**
   * Random general dots (seeded): ranks up to 4, each dimension batch, contracting or free. The
   * gradients have their operands' shapes and the backward dots cost exactly twice the forward.
   */
  @Test
  void dotRuleOnRandomDimensionNumbers() {
    Random rnd = new Random(7);
    for (int trial = 0; trial < 300; trial++) {
      int nb = rnd.nextInt(2);
      int nc = 1 + rnd.nextInt(2);
      int lfree = rnd.nextInt(2);
      int rfree = rnd.nextInt(2);
      // Shuffle the roles of each operand's dimensions.
      List<Integer> lRoles = roles(nb, nc, lfree, rnd);
      List<Integer> rRoles = roles(nb, nc, rfree, rnd);
      int[] size = {2, 3, 5, 7, 11, 13};
      int[] lDims = new int[lRoles.size()];
      int[] rDims = new int[rRoles.size()];
      int[] lb = new int[nb];
      int[] rb = new int[nb];
      int[] lc = new int[nc];
      int[] rc = new int[nc];
      fill(lRoles, lDims, lb, lc, size, 20);
      fill(rRoles, rDims, rb, rc, size, 30);
      Tape t = tape();
      int l = weight(t, lDims);
      int r = weight(t, rDims);
      int out = t.dot(l, r, lb, lc, rb, rc);
      int end = t.size();
      Map<Integer, Integer> g = backprop(t, out, l, r);
      assertThat(t.shape(g.get(l))).isEqualTo(t.shape(l));
      assertThat(t.shape(g.get(r))).isEqualTo(t.shape(r));
      Graph graph = t.b.build();
      assertThat(dotFlops(graph, end, graph.size())).as("trial " + trial)
          .isEqualTo(2 * dotFlops(graph, 0, end));
    }
  }

  /** Dimension roles: 0 = batch k, 100 + k = contracting k, 200 = free; shuffled. */
  private static List<Integer> roles(int nb, int nc, int free, Random rnd) {
    List<Integer> roles = new ArrayList<>();
    for (int i = 0; i < nb; i++) {
      roles.add(i);
    }
    for (int i = 0; i < nc; i++) {
      roles.add(100 + i);
    }
    for (int i = 0; i < free; i++) {
      roles.add(200 + i);
    }
    Collections.shuffle(roles, rnd);
    return roles;
  }

  private static void fill(List<Integer> roles, int[] dims, int[] batch, int[] contracting,
      int[] size, int freeSize) {
    for (int d = 0; d < roles.size(); d++) {
      int role = roles.get(d);
      if (role < 100) {
        batch[role] = d;
        dims[d] = size[role];
      } else if (role < 200) {
        contracting[role - 100] = d;
        dims[d] = size[2 + role - 100];
      } else {
        dims[d] = freeSize + role - 200;
      }
    }
  }

  /** A broadcast along new dimensions and with permuted operand dimensions sums back. */
  @Test
  void broadcastSumsAndPermutesBack() {
    Tape t = tape();
    int x = weight(t, 3, 4);
    int y = t.broadcast(x, new int[] {4, 5, 3}, 2, 0);
    Map<Integer, Integer> g = backprop(t, y, x);
    Instruction gx = t.ins(g.get(x));
    assertThat(gx.opcode()).isEqualTo(Opcode.TRANSPOSE);
    assertThat(t.ins(gx.operand(0)).opcode()).isEqualTo(Opcode.REDUCE);
    assertThat(t.shape(g.get(x))).isEqualTo(TensorShape.of(T, 3, 4));
  }

  /** Reduce broadcasts back; reshape and transpose invert. */
  @Test
  void reduceReshapeTranspose() {
    Tape t = tape();
    int x = weight(t, 2, 3, 4);
    int y = t.reduce(t.transpose(t.reshape(x, 6, 4), 1, 0), 1);
    Map<Integer, Integer> g = backprop(t, y, x);
    assertThat(t.shape(g.get(x))).isEqualTo(TensorShape.of(T, 2, 3, 4));
    assertThat(t.ins(g.get(x)).opcode()).isEqualTo(Opcode.RESHAPE);
  }

  /** A slice pads its cotangent with zeros; a concatenation slices it. */
  @Test
  void sliceAndConcatenate() {
    Tape t = tape();
    int x = weight(t, 6, 8);
    int a = t.slice(x, new int[] {1, 2}, new int[] {4, 8});
    int b = weight(t, 2, 6);
    int c = t.concatenate(0, a, b);
    Map<Integer, Integer> g = backprop(t, c, x, b);
    assertThat(t.shape(g.get(x))).isEqualTo(TensorShape.of(T, 6, 8));
    assertThat(t.ins(g.get(x)).opcode()).isEqualTo(Opcode.CONCATENATE);
    assertThat(t.shape(g.get(b))).isEqualTo(TensorShape.of(T, 2, 6));
    assertThat(t.ins(g.get(b)).opcode()).isEqualTo(Opcode.SLICE);
  }

  /** An embedding lookup's table gets a scatter-add of the rows; the indices get nothing. */
  @Test
  void gatherBecomesScatterAdd() {
    Tape t = tape();
    int table = weight(t, 50, 8);
    int ids = t.param(TensorShape.of(DType.S32, 2, 3), ParamRole.TOKENS);
    int y = t.gather(table, ids);
    assertThat(t.shape(y)).isEqualTo(TensorShape.of(T, 2, 3, 8));
    Map<Integer, Integer> g = backprop(t, y, table);
    Instruction s = t.ins(g.get(table));
    assertThat(s.opcode()).isEqualTo(Opcode.SCATTER);
    assertThat(s.operand(1)).isEqualTo(ids);
    assertThat(g).doesNotContainKey(ids);
  }

  /** Which forward value each one-operand rule reads: its output (y) or its input (x). */
  @ParameterizedTest
  @EnumSource(value = Opcode.class, names = {"EXP", "LOG", "RSQRT", "SQRT", "TANH", "LOGISTIC",
      "NEGATE", "CONVERT", "COPY"})
  void unaryRules(Opcode op) {
    Tape t = tape();
    int x = weight(t, 4, 5);
    t.keep(x);
    int y = op == Opcode.CONVERT ? t.convert(x, DType.F32) : t.unary(op, x);
    t.keep(y);
    int end = t.size();
    Map<Integer, Integer> g = backprop(t, y, x);
    assertThat(t.shape(g.get(x))).isEqualTo(t.shape(x));
    boolean readsX = false;
    boolean readsY = false;
    for (int i = end; i < t.size(); i++) {
      readsX |= t.ins(i).operands().contains(x);
      readsY |= t.ins(i).operands().contains(y);
    }
    assertThat(readsY).as("reads its output").isEqualTo(op == Opcode.EXP || op == Opcode.RSQRT
        || op == Opcode.SQRT || op == Opcode.TANH || op == Opcode.LOGISTIC);
    assertThat(readsX).as("reads its input").isEqualTo(op == Opcode.LOG);
  }

  /**
   * Binary rules: add passes the cotangent, subtract negates the second, multiply reads the other
   * operand, divide reads the divisor and the quotient, maximum routes by a comparison.
   */
  @Test
  void binaryRules() {
    for (Opcode op : new Opcode[] {Opcode.ADD, Opcode.SUBTRACT, Opcode.MULTIPLY, Opcode.DIVIDE,
        Opcode.MAXIMUM, Opcode.MINIMUM}) {
      Tape t = tape();
      int a = weight(t, 3, 3);
      int b = weight(t, 3, 3);
      t.keep(a);
      t.keep(b);
      int y = t.binary(op, a, b);
      t.keep(y);
      int end = t.size();
      Map<Integer, Integer> g = backprop(t, y, a, b);
      assertThat(g).as(op.name()).containsKeys(a, b);
      int seed = end;
      if (op == Opcode.ADD) {
        assertThat(g.get(a)).isEqualTo(seed);
        assertThat(g.get(b)).isEqualTo(seed);
      }
      if (op == Opcode.SUBTRACT) {
        assertThat(t.ins(g.get(b)).opcode()).isEqualTo(Opcode.NEGATE);
      }
      if (op == Opcode.MULTIPLY) {
        assertThat(t.ins(g.get(a)).operands()).containsExactly(seed, b);
        assertThat(t.ins(g.get(b)).operands()).containsExactly(seed, a);
      }
      if (op == Opcode.DIVIDE) {
        assertThat(t.ins(g.get(a)).operands()).containsExactly(seed, b);
        assertThat(t.ins(t.ins(g.get(b)).operand(0)).operands()).contains(y);
      }
      if (op == Opcode.MAXIMUM || op == Opcode.MINIMUM) {
        assertThat(t.ins(g.get(a)).opcode()).isEqualTo(Opcode.SELECT);
        assertThat(t.ins(t.ins(g.get(a)).operand(0)).opcode()).isEqualTo(Opcode.COMPARE);
      }
    }
  }

  /** Select routes the cotangent by the kept predicate; constants get no gradient work. */
  @Test
  void selectAndConstants() {
    Tape t = tape();
    int x = weight(t, 4);
    int bits = t.iota(TensorShape.of(DType.U8, 4), 0);
    int mask = t.keep(t.compare("LT", bits, t.fill(TensorShape.of(DType.U8, 4), 2)));
    int y = t.select(mask, t.mul(x, t.fill(TensorShape.of(T, 4), 2.0)),
        t.fill(TensorShape.of(T, 4), 0.0));
    int end = t.size();
    Map<Integer, Integer> g = backprop(t, y, x);
    assertThat(t.shape(g.get(x))).isEqualTo(TensorShape.of(T, 4));
    for (int i = end; i < t.size(); i++) {
      assertThat(t.ins(i).opcode()).isNotIn(Opcode.REDUCE, Opcode.IOTA);
      assertThat(t.ins(i).operands()).doesNotContain(bits);
    }
  }

  /**
   * A value that is neither kept nor a parameter is recomputed from kept values in the backward
   * pass, tagged RECOMPUTE; a kept one is read as it is.
   */
  @Test
  void unkeptValuesAreRecomputed() {
    Tape t = tape();
    int x = weight(t, 4, 4);
    t.keep(x);
    int e = t.unary(Opcode.EXP, t.unary(Opcode.TANH, x));
    int end = t.size();
    Map<Integer, Integer> g = backprop(t, e, x);
    assertThat(g).containsKey(x);
    long recomputed = 0;
    for (int i = end; i < t.size(); i++) {
      if (t.phaseOf(i) == Phase.RECOMPUTE) {
        recomputed++;
      }
      for (int op : t.ins(i).operands()) {
        assertThat(op < end && op != x).as("reads an unkept forward value").isFalse();
      }
    }
    // tanh and exp recomputed once each, though both rules read them.
    assertThat(recomputed).isEqualTo(2);
  }
}
