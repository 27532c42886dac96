package io.meshplan.plan;

import io.meshplan.model.Attention;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Recompute;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * A runtime's launch check whose space holds one recomputation mode, the one the user fixed
 * ({@link LaunchCheck#withRecompute}); its verdicts are the runtime's own.
 *
 * @param inner the runtime's check
 * @param mode the mode, one the runtime runs
 */
record FixedRecomputeCheck(LaunchCheck inner, Recompute mode) implements LaunchCheck {
  /** Validates the fields. */
  FixedRecomputeCheck {
    Require.nonNull(inner, "runtime");
    Require.nonNull(mode, "recompute");
  }

  @Override
  public String label() {
    return inner.label();
  }

  @Override
  public RuntimeSpace space() {
    return inner.space().withRecompute(mode);
  }

  @Override
  public Optional<String> missing(ModelSpec model, Attention attention, Overlaps overlaps) {
    return inner.missing(model, attention, overlaps);
  }

  @Override
  public Optional<String> missing(ModelSpec model, ParallelConfig config, Attention attention,
      Overlaps overlaps) {
    return inner.missing(model, config, attention, overlaps);
  }

  @Override
  public Optional<String> missing(PipelinePlan plan) {
    return inner.missing(plan);
  }
}
