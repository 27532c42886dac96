package io.meshplan.interop;

import io.meshplan.interop.cost.LayerCost;
import io.meshplan.plan.TensorSharding;
import java.util.ArrayList;
import java.util.List;

/**
 * The layouts of a stage's largest weights, as a pipeline plan lists them.
 */
final class PlanFigures {
  private PlanFigures() {}

  /**
   * The weights of the stage's transformer block (the layer with the most weight tensors), largest
   * first, at most six, named {@code block/...}: every block of a stage has the same layouts.
   *
   * @param layers the stage's layers
   * @return the weights with their layouts
   */
  static List<TensorSharding> largestTensors(List<LayerCost> layers) {
    LayerCost pick = layers.get(0);
    for (LayerCost l : layers) {
      if (l.tensors().size() > pick.tensors().size()) {
        pick = l;
      }
    }
    List<TensorSharding> out = new ArrayList<>();
    for (TensorSharding t : pick.tensors()) {
      if (out.size() == 6) {
        break;
      }
      out.add(new TensorSharding(t.name().replaceFirst("^layer_0/", "block/"),
          t.shape(), t.sharding(), t.words()));
    }
    return out;
  }
}
