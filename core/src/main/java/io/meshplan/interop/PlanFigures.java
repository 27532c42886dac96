package io.meshplan.interop;

import io.meshplan.interop.cost.LayerCost;
import io.meshplan.plan.AxisBytes;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.TensorSharding;
import io.meshplan.sim.CommVolume;
import io.meshplan.sim.SimulationResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The figures a pipeline plan carries from its simulation and its layers: the prediction, the
 * communication volume per mesh axis, and the layouts of a stage's largest weights.
 */
final class PlanFigures {
  private PlanFigures() {}

  /**
   * The plan's prediction from its simulation.
   *
   * @param sim the simulation
   * @return the prediction
   */
  static PipelinePlan.Prediction prediction(SimulationResult sim) {
    return new PipelinePlan.Prediction(sim.iterationSeconds(), sim.tokensPerSecond(),
        sim.tflopsPerGpu(), sim.mfu(), sim.peakMemoryBytesPerGpu(),
        Optional.of(axisBytes(sim.commBytes())));
  }

  /**
   * The simulator's communication volume in the plan's terms.
   *
   * @param v the volume
   * @return bytes per mesh axis
   */
  static AxisBytes axisBytes(CommVolume v) {
    return new AxisBytes(v.tensorParallelBytes(), v.dataParallelBytes(), v.pipelineBytes());
  }

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
