package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.graph.GraphBuilder;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import java.util.ArrayList;
import java.util.List;

/**
 * The training step of an n-layer MLP, as in the solver tests of Alpa's prototype: n dot layers
 * without activations, loss {@code (out - y)} with the MSE gradient factor {@code 2/(batch*out)}, a
 * hand-written backward pass, an SGD update {@code w - grad}, and an alias from every weight to its
 * update. All layers have width {@code hidden}.
 */
public final class AlpaMlpBuilder {
  private AlpaMlpBuilder() {}

  /**
   * Builds the graph.
   *
   * @param layers number of dot layers, at least 1
   * @param batch batch size
   * @param hidden width of input, hidden and output layers
   * @param dtype element type
   * @return the training-step graph
   */
  public static Graph build(int layers, int batch, int hidden, DType dtype) {
    GraphBuilder b = new GraphBuilder("mlp_" + layers + "_layer");
    int x = b.parameter(TensorShape.of(dtype, batch, hidden));
    int y = b.parameter(TensorShape.of(dtype, batch, hidden));
    List<Integer> w = new ArrayList<>();
    for (int i = 0; i < layers; i++) {
      w.add(b.parameter(TensorShape.of(dtype, hidden, hidden)));
    }
    // Forward: acts.get(i) is the input of layer i; acts.get(layers) is the output.
    List<Integer> acts = new ArrayList<>();
    acts.add(x);
    for (int i = 0; i < layers; i++) {
      b.scope("layer_" + i + "/forward");
      acts.add(b.dot(acts.get(i), w.get(i)));
    }
    b.scope("loss");
    int loss = b.binary(Opcode.SUBTRACT, acts.get(layers), y);
    int coef = b.constant(dtype, 2.0 / batch / hidden);
    int coefB = b.broadcast(coef, new int[] {batch, hidden});
    int grad = b.binary(Opcode.MULTIPLY, loss, coefB);
    int[] newW = new int[layers];
    for (int i = layers - 1; i >= 0; i--) {
      b.scope("layer_" + i + "/backward");
      int gradW = b.dot(acts.get(i), grad, new int[0], new int[] {0}, new int[0], new int[] {0});
      newW[i] = b.binary(Opcode.SUBTRACT, w.get(i), gradW);
      if (i > 0) {
        grad = b.dot(grad, w.get(i), new int[0], new int[] {1}, new int[0], new int[] {1});
      }
    }
    b.scope("");
    b.tuple(newW);
    for (int i = 0; i < layers; i++) {
      b.alias(w.get(i), newW[i]);
    }
    return b.build();
  }
}
