package io.meshplan.graph;

import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Turns one computation as read into instructions: resolves operand names, sorts topologically
 * with the root last, checks dimension numbers ({@link HloDimensionCheck}) and assigns ids in that
 * order.
 */
final class HloResolver {
  private final HloCursor c;

  HloResolver(HloCursor cursor) {
    this.c = cursor;
  }

  /**
   * Resolves a computation.
   *
   * @param pc the computation as read
   * @param out receives the instructions, in id order
   * @param texts receives each instruction's shape as written, in id order
   */
  void resolve(PendingComputation pc, List<Instruction> out, List<String> texts) {
    List<PendingInstruction> body = pc.body();
    int n = body.size();
    int[][] operands = operandIndices(pc, indexByName(pc));
    boolean sorted = pc.root() == n - 1;
    for (int i = 0; i < n && sorted; i++) {
      for (int j : operands[i]) {
        sorted &= j < i;
      }
    }
    int[] order = sorted ? null : topologicalOrder(pc, operands);
    int[] newId = new int[n];
    for (int k = 0; k < n; k++) {
      newId[order == null ? k : order[k]] = k;
    }
    for (int k = 0; k < n; k++) {
      int old = order == null ? k : order[k];
      PendingInstruction p = body.get(old);
      List<Integer> ops = new ArrayList<>(operands[old].length);
      List<Shape> opShapes = new ArrayList<>(operands[old].length);
      for (int o : operands[old]) {
        ops.add(newId[o]);
        opShapes.add(body.get(o).shape);
      }
      String bad = HloDimensionCheck.problem(p, opShapes);
      if (bad != null) {
        throw new InputException(c.location(p.opcodeAt) + ": " + p.opcode.hloName() + " '"
            + p.name + "': " + bad);
      }
      out.add(new Instruction(k, p.name, p.opcode, p.shape, ops, p.attrs, p.opName, p.raw));
      texts.add(p.shapeText);
    }
  }

  /** Instruction name -> index in the body; a name may be used once. */
  private Map<String, Integer> indexByName(PendingComputation pc) {
    List<PendingInstruction> body = pc.body();
    Map<String, Integer> byName = new HashMap<>(body.size() * 2);
    for (int i = 0; i < body.size(); i++) {
      PendingInstruction p = body.get(i);
      Integer before = byName.putIfAbsent(p.name, i);
      if (before != null) {
        throw c.errorAt(p.nameAt, "a name not used before in computation '" + pc.name()
            + "' (line " + c.lineOf(body.get(before).nameAt) + ")", "'" + p.name + "'");
      }
    }
    return byName;
  }

  /** Each instruction's operands as body indices. */
  private int[][] operandIndices(PendingComputation pc, Map<String, Integer> byName) {
    List<PendingInstruction> body = pc.body();
    int[][] operands = new int[body.size()][];
    for (int i = 0; i < body.size(); i++) {
      PendingInstruction p = body.get(i);
      int[] ops = new int[p.operandNames.length];
      for (int k = 0; k < ops.length; k++) {
        Integer j = byName.get(p.operandNames[k]);
        if (j == null) {
          throw c.errorAt(p.operandAts[k], "the name of an instruction in computation '"
              + pc.name() + "'");
        }
        ops[k] = j;
      }
      operands[i] = ops;
    }
    return operands;
  }

  /** A stable (lowest text position first) topological order with the root last. */
  private int[] topologicalOrder(PendingComputation pc, int[][] operands) {
    int n = operands.length;
    int root = pc.root();
    int[] indegree = new int[n];
    for (int i = 0; i < n; i++) {
      indegree[i] = operands[i].length;
    }
    int[] userStart = new int[n + 1];
    int[] users = users(operands, userStart);
    PriorityQueue<Integer> ready = new PriorityQueue<>();
    for (int i = 0; i < n; i++) {
      if (indegree[i] == 0 && i != root) {
        ready.add(i);
      }
    }
    int[] order = new int[n];
    int count = 0;
    while (!ready.isEmpty()) {
      int i = ready.poll();
      order[count++] = i;
      for (int u = userStart[i]; u < userStart[i + 1]; u++) {
        int user = users[u];
        if (--indegree[user] == 0 && user != root) {
          ready.add(user);
        }
      }
    }
    if (count == n - 1 && indegree[root] == 0) {
      order[count] = root;
      return order;
    }
    throw unsortable(pc, operands, indegree);
  }

  /**
   * The users of every instruction, in compressed form: the users of {@code i} are {@code
   * users[userStart[i]]} up to {@code users[userStart[i + 1]]}, in body order.
   *
   * @param userStart filled with the offsets, length n + 1
   */
  private static int[] users(int[][] operands, int[] userStart) {
    int n = operands.length;
    for (int[] ops : operands) {
      for (int o : ops) {
        userStart[o + 1]++;
      }
    }
    for (int i = 0; i < n; i++) {
      userStart[i + 1] += userStart[i];
    }
    int[] users = new int[userStart[n]];
    int[] fill = Arrays.copyOf(userStart, n);
    for (int i = 0; i < n; i++) {
      for (int o : operands[i]) {
        users[fill[o]++] = i;
      }
    }
    return users;
  }

  /**
   * Why a computation has no topological order with the root last: an instruction uses the root,
   * or the instructions left with operands to wait for form a cycle.
   */
  private InputException unsortable(PendingComputation pc, int[][] operands, int[] indegree) {
    List<PendingInstruction> body = pc.body();
    int root = pc.root();
    for (int i = 0; i < operands.length; i++) {
      for (int k = 0; k < operands[i].length; k++) {
        if (operands[i][k] == root && i != root) {
          return c.errorAt(body.get(i).operandAts[k], "no use of the ROOT instruction '"
              + body.get(root).name + "' (the root must come last)");
        }
      }
    }
    for (int i = 0; i < operands.length; i++) {
      if (indegree[i] > 0) {
        return c.errorAt(body.get(i).nameAt, "operands without a cycle",
            "'" + body.get(i).name + "' depending on itself");
      }
    }
    throw new IllegalStateException("topological sort failed without a cycle");
  }
}
