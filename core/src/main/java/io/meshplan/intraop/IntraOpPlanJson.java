package io.meshplan.intraop;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes an {@link IntraOpPlan} as the JSON of {@code meshplan shard --json}. The fields of
 * docs/ARCHITECTURE.md are a contract: {@code objective}, {@code status}, {@code solveSeconds}, {@code bound}
 * and {@code instructions[]} with {@code name}, {@code op}, {@code shape}, {@code strategy} and
 * {@code sharding}. Besides them: {@code model}, {@code mesh}, {@code costUnit} (words), {@code
 * unit} ({@code SECONDS} or {@code ALPA_UNITS}), {@code costs} (totals of {@code compute}, {@code
 * communication}, {@code resharding}), {@code communicationBytesPerAxis} (bytes one GPU sends per
 * mesh axis, nccl-tests bus bytes), {@code communicationCost} and {@code reshardingCost} (the
 * evaluator's node and edge parts of the objective), {@code peakMemoryBytes}, {@code
 * memoryPerDeviceBytes}, {@code strategySeconds}, {@code totalSeconds}, {@code decisionNodes},
 * {@code coreNodes} and {@code warnings}; per instruction also {@code id}, {@code cost} (compute
 * plus communication of one execution), {@code memoryBytes}, {@code compute}, {@code
 * communication}, {@code resharding} (every execution, in {@code unit}) and {@code
 * communicationBytesPerAxis}.
 */
public final class IntraOpPlanJson {
  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private IntraOpPlanJson() {}

  /**
   * Renders a plan.
   *
   * @param model the model or module name
   * @param plan the plan
   * @param totalSeconds wall time of the whole command, seconds
   * @param warnings warnings to include
   * @return pretty-printed JSON, without a trailing newline
   */
  public static String write(String model, IntraOpPlan plan, double totalSeconds,
      List<String> warnings) {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("model", model);
    root.put("mesh", plan.mesh());
    root.put("status", plan.status().name());
    root.put("costUnit", plan.unit().label());
    root.put("unit", plan.unit().name());
    root.put("objective", plan.objective());
    root.put("bound", plan.bound());
    Map<String, Object> costs = new LinkedHashMap<>();
    costs.put("compute", plan.computeCost());
    costs.put("communication", plan.communicationCost());
    costs.put("resharding", plan.reshardingCost());
    root.put("costs", costs);
    root.put("communicationBytesPerAxis", plan.commBytesPerAxis());
    root.put("communicationCost", plan.nodeCost());
    root.put("reshardingCost", plan.edgeCost());
    root.put("peakMemoryBytes", plan.peakMemoryBytes());
    root.put("memoryPerDeviceBytes", plan.memoryPerDeviceBytes());
    root.put("strategySeconds", plan.strategySeconds());
    root.put("solveSeconds", plan.solveSeconds());
    root.put("totalSeconds", totalSeconds);
    root.put("decisionNodes", plan.decisionNodes());
    root.put("coreNodes", plan.coreNodes());
    root.put("warnings", List.copyOf(warnings));
    List<Map<String, Object>> list = new ArrayList<>(plan.instructions().size());
    for (InstructionCost c : plan.instructions()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", c.id());
      m.put("name", c.name());
      m.put("op", c.op());
      m.put("shape", c.shape());
      m.put("strategy", c.strategy());
      m.put("sharding", c.sharding());
      m.put("cost", c.computePerExecution() + c.communicationPerExecution());
      m.put("memoryBytes", c.memoryBytes());
      m.put("compute", c.compute());
      m.put("communication", c.communication());
      m.put("resharding", c.resharding());
      m.put("communicationBytesPerAxis", c.commBytesPerAxis());
      list.add(m);
    }
    root.put("instructions", list);
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a plan", e);
    }
  }
}
