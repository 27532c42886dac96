package io.meshplan.calibrate;

import io.meshplan.util.Require;
import java.util.Optional;

/**
 * One training run read from a log: what ran and how long an iteration took. Plain numbers and
 * words, so that the layer that builds and simulates the job ({@code cli}) turns them into a
 * meshplan model and parallel configuration.
 *
 * @param source the log file, for messages
 * @param framework {@code megatron} or {@code torchtitan}
 * @param model the model that ran
 * @param parallel how it was split
 * @param gpu the GPU named in the log (e.g. {@code h100}), empty when the log names none
 * @param iterationSeconds the measured time of one iteration (one optimizer step), seconds
 * @param iterationLines the log lines the time is the median of
 */
public record TrainingRun(String source, String framework, RunModel model, RunParallel parallel,
    Optional<String> gpu, double iterationSeconds, int iterationLines) {
  /** Validates the fields. */
  public TrainingRun {
    Require.nonNull(source, "source");
    Require.nonNull(framework, "framework");
    Require.nonNull(model, "model");
    Require.nonNull(parallel, "parallel");
    Require.nonNull(gpu, "gpu");
    Require.that(iterationSeconds > 0 && Double.isFinite(iterationSeconds),
        "iteration time must be > 0, got " + iterationSeconds);
    Require.positive(iterationLines, "iteration lines");
  }

  /**
   * The same run read from another file.
   *
   * @param other the other file's name
   * @return this run with that source
   */
  public TrainingRun withSource(String other) {
    return new TrainingRun(other, framework, model, parallel, gpu, iterationSeconds,
        iterationLines);
  }
}
