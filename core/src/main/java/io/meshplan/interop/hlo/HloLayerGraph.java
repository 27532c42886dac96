package io.meshplan.interop.hlo;

import io.meshplan.graph.AliasPair;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpAttrs;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.Shape;
import io.meshplan.graph.TupleShape;
import io.meshplan.model.Phase;
import io.meshplan.util.Require;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * One layer of an HLO training step as a graph of its own, for the intra-operator solve of that
 * layer: the layer's instructions of every phase, values from other layers as parameters,
 * constants copied in, and the values other layers (or the step's outputs) read gathered in the
 * root tuple.
 *
 * @param graph the layer's graph
 * @param global for each instruction of {@code graph}, its id in the step (the root tuple: -1)
 * @param inputs for each instruction of {@code graph}, what kind of input it is
 * @param outgoing ids in {@code graph} of the values read outside the layer
 * @param phases for each instruction of {@code graph}, its phase in the step (parameters and the
 *     root tuple: forward and optimizer, which cost nothing)
 * @param gradients for each instruction of {@code graph}, whether it is a gradient the update
 *     reads ({@link HloLayering#gradient})
 * @param gradientWork for each instruction of {@code graph}, whether it computes only towards
 *     the update ({@link HloLayering#gradientWork})
 * @param constants for each instruction of {@code graph}, whether it depends on constants only
 * @param fingerprint the layer's structure without names and scopes: layers with equal
 *     fingerprints cost the same on every mesh, so each is solved once
 */
public record HloLayerGraph(Graph graph, int[] global, Input[] inputs, int[] outgoing,
    Phase[] phases, boolean[] gradients, boolean[] gradientWork, boolean[] constants,
    String fingerprint) {

  /** What an instruction of a layer graph is, as an input. */
  public enum Input {
    /** Computed in this layer (or a constant copied in). */
    NONE,
    /** A trained weight (read by the forward pass). */
    WEIGHT,
    /** Other trained state: optimizer moments, step counters. */
    STATE,
    /** A batch input of the step (tokens, labels, images). */
    BATCH,
    /** A value computed by another layer. */
    ACTIVATION
  }

  /** Checks the sizes. */
  public HloLayerGraph {
    Require.nonNull(graph, "graph");
    Require.that(global.length == graph.size() && inputs.length == graph.size()
        && phases.length == graph.size() && gradients.length == graph.size()
        && gradientWork.length == graph.size()
        && constants.length == graph.size(), "one entry per instruction");
    Require.nonNull(fingerprint, "fingerprint");
  }

  /**
   * Cuts one layer out of a step.
   *
   * @param lay the step's layering
   * @param k the layer
   * @return the layer's graph
   */
  public static HloLayerGraph of(HloLayering lay, int k) {
    Cut cut = new Cut(lay, k);
    cut.copyInstructions();
    int[] outIds = cut.addOutputs();
    Graph lg = new Graph(lay.graph().name() + ".layer" + k, cut.out, cut.aliases());
    int[] globalIds = cut.globals.stream().mapToInt(Integer::intValue).toArray();
    Input[] in = cut.inputs.toArray(new Input[0]);
    Phase[] phases = new Phase[globalIds.length];
    boolean[] gradients = new boolean[globalIds.length];
    boolean[] constants = new boolean[globalIds.length];
    boolean[] work = new boolean[globalIds.length];
    for (int i = 0; i < globalIds.length; i++) {
      int gid = globalIds[i];
      phases[i] = gid < 0 ? Phase.OPTIMIZER : lay.phase(gid);
      gradients[i] = gid >= 0 && lay.gradient(gid);
      work[i] = gid >= 0 && lay.gradientWork(gid);
      constants[i] = gid >= 0 && lay.constantLike(gid);
    }
    return new HloLayerGraph(lg, globalIds, in, outIds, phases, gradients, work, constants,
        fingerprint(lg, in, outIds, phases, gradients, work));
  }

  /** One layer being cut out of a step: what it takes from the step, and its new graph. */
  private static final class Cut {
    /** The layer's own instructions. */
    private static final byte OWN = 1;
    /** Another layer's value, read as a parameter. */
    private static final byte READ = 2;
    /** A constant copied in. */
    private static final byte COPIED = 3;

    private final HloLayering lay;
    private final int k;
    private final Graph g;
    /** Only the layer and what it reads are visited, so cutting every layer is linear. */
    private final Map<Integer, Byte> kind = new java.util.HashMap<>();
    /** Step ids to ids in the layer graph. */
    private final Map<Integer, Integer> local = new java.util.HashMap<>();
    private final List<Instruction> out = new ArrayList<>();
    private final List<Integer> globals = new ArrayList<>();
    private final List<Input> inputs = new ArrayList<>();

    /** Finds the layer's instructions, the values it reads and the constants it copies in. */
    Cut(HloLayering lay, int k) {
      this.lay = lay;
      this.k = k;
      this.g = lay.graph();
      for (int i : lay.members(k)) {
        kind.put(i, OWN);
      }
      Deque<Integer> copies = new ArrayDeque<>();
      for (int i : lay.members(k)) {
        for (int o : g.get(i).operands()) {
          if (!kind.containsKey(o)) {
            if (lay.constantLike(o)) {
              kind.put(o, COPIED);
              copies.push(o);
            } else {
              kind.put(o, READ);
            }
          }
        }
      }
      while (!copies.isEmpty()) {
        for (int o : g.get(copies.pop()).operands()) {
          Byte was = kind.get(o);
          if (was == null || was == READ) {
            kind.put(o, COPIED);
            copies.push(o);
          }
        }
      }
    }

    /** Copies the instructions in id order; values of other layers become parameters. */
    void copyInstructions() {
      int[] ids = kind.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
      int params = 0;
      for (int i : ids) {
        Instruction ins = g.get(i);
        int id = out.size();
        local.put(i, id);
        globals.add(i);
        boolean param = kind.get(i) == READ || ins.opcode() == Opcode.PARAMETER;
        if (param) {
          out.add(new Instruction(id, ins.name(), Opcode.PARAMETER, ins.shape(), List.of(),
              new OpAttrs.Index(params++), ins.opName(), Map.of()));
          inputs.add(ins.opcode() != Opcode.PARAMETER ? Input.ACTIVATION
              : lay.weight(i) ? Input.WEIGHT : lay.state(i) ? Input.STATE : Input.BATCH);
        } else {
          List<Integer> ops = new ArrayList<>(ins.operands().size());
          for (int o : ins.operands()) {
            ops.add(local.get(o));
          }
          out.add(new Instruction(id, ins.name(), ins.opcode(), ins.shape(), ops, ins.attrs(),
              ins.opName(), ins.rawAttributes()));
          inputs.add(Input.NONE);
        }
      }
    }

    /**
     * Gathers the values read outside the layer (or, with none, its last instruction) in a root
     * tuple.
     *
     * @return their ids in the layer graph
     */
    int[] addOutputs() {
      List<Integer> outgoing = new ArrayList<>();
      for (int i : lay.members(k)) {
        for (int u : lay.users(i)) {
          if (kind.getOrDefault(u, (byte) 0) != OWN) {
            outgoing.add(local.get(i));
            break;
          }
        }
      }
      if (outgoing.isEmpty()) {
        outgoing.add(out.size() - 1);
      }
      List<Shape> shapes = new ArrayList<>();
      for (int o : outgoing) {
        shapes.add(out.get(o).shape());
      }
      out.add(new Instruction(out.size(), "layer" + k + ".outputs", Opcode.TUPLE,
          new TupleShape(shapes), outgoing, OpAttrs.NONE, "", Map.of()));
      globals.add(-1);
      inputs.add(Input.NONE);
      return outgoing.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The step's aliases between a parameter and an output that are both the layer's own. */
    List<AliasPair> aliases() {
      List<AliasPair> aliases = new ArrayList<>();
      for (AliasPair a : g.aliases()) {
        if (kind.getOrDefault(a.parameter(), (byte) 0) == OWN
            && kind.getOrDefault(a.output(), (byte) 0) == OWN) {
          aliases.add(new AliasPair(local.get(a.parameter()), local.get(a.output())));
        }
      }
      return aliases;
    }
  }

  /**
   * Attributes a layer's cost does not depend on: scopes, layouts already chosen, and the names
   * of called computations (JAX gives each layer's reductions their own copy of the same adder).
   */
  private static final java.util.Set<String> IGNORED = java.util.Set.of("metadata", "sharding",
      "to_apply", "calls", "called_computations");

  /** Structure, shapes, attributes, phases and input kinds; no names or scopes. */
  private static String fingerprint(Graph lg, Input[] inputs, int[] outgoing, Phase[] phases,
      boolean[] gradients, boolean[] work) {
    StringBuilder sb = new StringBuilder();
    for (Instruction ins : lg.instructions()) {
      int id = ins.id();
      sb.append(ins.opcode().name()).append(' ').append(ins.shape().toHlo()).append(' ')
          .append(ins.operands()).append(' ').append(ins.attrs()).append(' ')
          .append(inputs[id]).append(' ').append(phases[id]).append(gradients[id] ? " grad" : "")
          .append(work[id] ? " work" : "");
      for (Map.Entry<String, String> e : ins.rawAttributes().entrySet()) {
        if (!IGNORED.contains(e.getKey())) {
          sb.append(' ').append(e.getKey()).append('=').append(e.getValue());
        }
      }
      sb.append('\n');
    }
    sb.append("out ").append(Arrays.toString(outgoing)).append(" alias ")
        .append(lg.aliases());
    return sb.toString();
  }
}
