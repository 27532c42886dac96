package io.meshplan.export;

import io.meshplan.model.ExpertDispatcher;
import io.meshplan.util.Require;
import java.util.Optional;

/**
 * A framework writer that writes only the all-to-all token dispatcher: an input priced with
 * DeepEP or Hybrid-EP ({@link ExpertDispatcher#deduplicates}) is not expressible, and its nearest
 * input is the same configuration with the all-to-all dispatcher, as the writer would run it.
 * Only Megatron-LM's export writes the flex dispatcher's backends ({@link MegatronExpertArgs}).
 *
 * @param inner the framework's writer
 * @param label the framework's name, for messages
 */
record AllToAllDispatch(FrameworkWriter inner, String label) implements FrameworkWriter {
  /** Validates the fields. */
  AllToAllDispatch {
    Require.nonNull(inner, "writer");
    Require.nonNull(label, "label");
  }

  @Override
  public Optional<String> missing(ExportInput input) {
    ExpertDispatcher d = input.overlaps().dispatcher();
    if (d.deduplicates()) {
      return Optional.of(label + " export writes the all-to-all token dispatcher only, not "
          + d.word() + " (export --to megatron writes it)");
    }
    return inner.missing(input);
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    ExportInput plain = input.withOverlaps(input.overlaps()
        .withDispatcher(ExpertDispatcher.ALLTOALL));
    return inner.missing(plain).isEmpty() ? Optional.of(plain) : inner.nearest(plain);
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    return inner.write(input);
  }
}
