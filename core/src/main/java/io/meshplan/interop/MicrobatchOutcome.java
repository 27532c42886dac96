package io.meshplan.interop;

import io.meshplan.interop.cost.LayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.util.InputException;
import io.meshplan.util.Require;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;

/**
 * What one task of the whole-cluster search gave for one microbatch size: a plan, or the memory
 * the size would need, or the planner's refusal. In the process that planned it the outcome holds
 * the plan and its simulation; when it travels to another process (an engine's executor answering
 * its driver) the plan travels as its JSON contract ({@link PlanJson}) and the receiver simulates
 * it again with its own layer prices, which gives the same figures (see {@link #resolve}).
 */
public final class MicrobatchOutcome implements Serializable {
  private static final long serialVersionUID = 2L;

  private final int microbatchSequences;
  private final double iterationSeconds;
  private final int stages;
  private final double neededBytesPerGpu;
  private final String message;
  private final boolean refused;
  private final int simulations;
  /** The plan as JSON: written when the outcome leaves its process; empty without a plan. */
  private String planJson;
  /** The plan and its simulation, in the process that planned them. */
  private final transient PlanResult.Planned planned;

  private MicrobatchOutcome(int microbatchSequences, PlanResult.Planned planned,
      double neededBytesPerGpu, String message, boolean refused, int simulations) {
    this.microbatchSequences = microbatchSequences;
    this.planned = planned;
    this.planJson = "";
    this.iterationSeconds = planned == null ? Double.NaN
        : planned.plan().prediction().iterationSeconds();
    this.stages = planned == null ? 0 : planned.plan().pipelineStages();
    this.neededBytesPerGpu = neededBytesPerGpu;
    this.message = Require.nonNull(message, "message");
    this.refused = refused;
    this.simulations = simulations;
  }

  /**
   * A size that found a plan.
   *
   * @param microbatchSequences sequences per microbatch
   * @param planned the plan and its simulation
   * @param simulations schedule simulations the task ran
   * @return the outcome
   */
  static MicrobatchOutcome planned(int microbatchSequences, PlanResult.Planned planned,
      int simulations) {
    return new MicrobatchOutcome(microbatchSequences, Require.nonNull(planned, "plan"), 0, "",
        false, simulations);
  }

  /**
   * A size without a plan.
   *
   * @param microbatchSequences sequences per microbatch
   * @param neededBytesPerGpu the least memory per GPU any candidate needed, bytes (0 when unknown)
   * @param message the planner's sentence, or empty
   * @param refused whether the planner refused the question as bad input
   * @param simulations schedule simulations the task ran
   * @return the outcome
   */
  static MicrobatchOutcome without(int microbatchSequences, double neededBytesPerGpu,
      String message, boolean refused, int simulations) {
    return new MicrobatchOutcome(microbatchSequences, null, neededBytesPerGpu, message, refused,
        simulations);
  }

  private void writeObject(ObjectOutputStream out) throws IOException {
    if (planned != null && planJson.isEmpty()) {
      planJson = PlanJson.write(planned.plan());
    }
    out.defaultWriteObject();
  }

  /**
   * Sequences per microbatch.
   *
   * @return the size
   */
  public int microbatchSequences() {
    return microbatchSequences;
  }

  /**
   * Whether a plan was found.
   *
   * @return true with a plan
   */
  public boolean hasPlan() {
    return planned != null || !planJson.isEmpty();
  }

  /**
   * The plan's predicted iteration time.
   *
   * @return seconds, NaN without a plan
   */
  public double iterationSeconds() {
    return iterationSeconds;
  }

  /**
   * The plan's pipeline stages.
   *
   * @return stages, 0 without a plan
   */
  public int stages() {
    return stages;
  }

  /**
   * Without a plan: the least memory per GPU any candidate needed.
   *
   * @return bytes, 0 when unknown
   */
  public double neededBytesPerGpu() {
    return neededBytesPerGpu;
  }

  /**
   * Without a plan: the planner's sentence.
   *
   * @return the message, or empty
   */
  public String message() {
    return message;
  }

  /**
   * Whether the planner refused the question as bad input.
   *
   * @return true when refused
   */
  public boolean refused() {
    return refused;
  }

  /**
   * The schedule simulations the task ran.
   *
   * @return simulations
   */
  public int simulations() {
    return simulations;
  }

  /**
   * The plan and its simulation: the task's own in its process, else the plan read from its
   * JSON and simulated again with {@code layers} ({@link PlanSimulator}).
   *
   * @param req the request the plan answers
   * @param layers layer prices of this process
   * @return the plan
   * @throws InputException when the outcome has no plan
   */
  PlanResult.Planned resolve(PlanRequest req, LayerCostModel layers) {
    if (planned != null) {
      return planned;
    }
    if (planJson.isEmpty()) {
      throw new InputException(message);
    }
    PipelinePlan plan = PlanJson.read("the plan of a remote task", planJson);
    return new PlanResult.Planned(plan, new PlanSimulator(layers).simulate(req, plan),
        PlanResult.SearchStats.NONE);
  }
}
