package io.meshplan.model;

import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.Opcode;
import java.util.BitSet;

/**
 * The activation memory a layer's backward pass needs kept from the forward pass, measured on a
 * {@link TrainingGraph}: the bytes of the distinct values that instructions of the layer in phase
 * {@link Phase#BACKWARD} or {@link Phase#RECOMPUTE} read and that were made in phase {@link
 * Phase#FORWARD} (any layer; a block's input is its predecessor's output), plus an {@link
 * ParamRole#INPUT_ACTIVATION} parameter read there. Weights and constant inputs are not
 * activations and are not counted. Compare with the closed forms in {@link
 * KorthikantiActivations}.
 */
public final class ActivationMemory {
  private ActivationMemory() {}

  /**
   * Bytes kept for one layer's backward pass, on one device holding whole tensors.
   *
   * @param tg the training graph
   * @param layer the layer
   * @return bytes
   */
  public static long savedBytes(TrainingGraph tg, LayerRef layer) {
    Graph g = tg.graph();
    BitSet counted = new BitSet();
    long bytes = 0;
    for (Instruction ins : g.instructions()) {
      Phase p = tg.phase(ins.id());
      if (!tg.layer(ins.id()).equals(layer) || (p != Phase.BACKWARD && p != Phase.RECOMPUTE)) {
        continue;
      }
      for (int op : ins.operands()) {
        if (counted.get(op)) {
          continue;
        }
        boolean activation = tg.phase(op) == Phase.FORWARD
            ? g.get(op).opcode() != Opcode.PARAMETER
            : false;
        activation |= tg.role(op).orElse(null) == ParamRole.INPUT_ACTIVATION;
        if (activation) {
          counted.set(op);
          bytes = Math.addExact(bytes, tg.keptBytes(op));
        }
      }
    }
    return bytes;
  }
}
