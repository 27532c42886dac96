package io.meshplan.interop.hlo;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.sim.SimulationJson;

/**
 * The JSON form of an HLO module's pipeline plan ({@code plan --hlo --json}). It keeps the plan
 * fields of the command-line contract ({@code stages[]} with {@code layers}, {@code submesh},
 * {@code logicalMesh}, {@code peakMemoryBytes}; {@code microbatches}, {@code iterationSeconds},
 * {@code tflopsPerGpu}, {@code mfu}); {@code tokensPerSecond} is null because a module does not
 * say which of its dimensions are tokens, and {@code microbatchesPerSecond} gives the throughput.
 */
public final class HloPlanJson {
  /** The value of the {@code format} field. */
  public static final String FORMAT = "meshplan-hlo-plan";

  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(SerializationFeature.INDENT_OUTPUT);

  private HloPlanJson() {}

  /**
   * Writes a plan.
   *
   * @param plan the plan
   * @return pretty-printed JSON text, ending in a newline
   */
  public static String write(HloPipelinePlan plan) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("format", FORMAT);
    root.put("version", 1);
    root.put("module", plan.module());
    root.put("cluster", plan.cluster());
    ArrayNode names = root.putArray("layerNames");
    plan.layerNames().forEach(names::add);
    root.put("microbatches", plan.microbatches());
    root.put("schedule", "1f1b");
    var sim = plan.simulation();
    root.put("iterationSeconds", sim.iterationSeconds());
    root.putNull("tokensPerSecond");
    root.put("microbatchesPerSecond", sim.tokensPerSecond());
    root.put("tflopsPerGpu", sim.tflopsPerGpu());
    root.put("mfu", sim.mfu());
    root.put("peakMemoryBytesPerGpu", sim.peakMemoryBytesPerGpu());
    ArrayNode stages = root.putArray("stages");
    for (int i = 0; i < plan.stages().size(); i++) {
      HloPipelinePlan.Stage s = plan.stages().get(i);
      ObjectNode o = stages.addObject();
      o.putArray("layers").add(s.firstLayer()).add(s.lastLayer());
      o.putArray("submesh").add(s.submesh().n()).add(s.submesh().m());
      o.put("firstDevice", s.firstDevice());
      o.putArray("logicalMesh").add(s.dataParallel()).add(s.tensorParallel());
      o.put("forwardSeconds", s.cost().forwardSeconds());
      o.put("backwardSeconds", s.cost().backwardSeconds());
      o.put("peakMemoryBytes", sim.stages().get(i).memory().totalBytes());
      io.meshplan.plan.PlanJson.putTensors(o, s.tensors());
    }
    ObjectNode search = root.putObject("search");
    search.put("distinctLayers", plan.stats().distinctLayers());
    search.put("logicalMeshes", plan.stats().meshes());
    search.put("layerSolves", plan.stats().layerSolves());
    search.put("latenciesTried", plan.stats().latenciesTried());
    root.set("simulation", SimulationJson.tree(sim, false));
    try {
      return MAPPER.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a plan", e);
    }
  }
}
