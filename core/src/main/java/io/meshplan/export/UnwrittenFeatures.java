package io.meshplan.export;

import io.meshplan.util.Require;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * A framework writer that lacks features other writers have ({@link ExportFeature}, named by
 * {@link ExportTarget}), said before its own checks, in the features' order; its nearest input
 * goes without each unwritten feature the input uses.
 *
 * @param inner the framework's writer
 * @param label the framework's name, for messages
 * @param written the features the framework writes
 */
record UnwrittenFeatures(FrameworkWriter inner, String label, Set<ExportFeature> written)
    implements FrameworkWriter {
  /** Validates the fields. */
  UnwrittenFeatures {
    Require.nonNull(inner, "writer");
    Require.nonNull(label, "label");
    written = written.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(written));
  }

  @Override
  public Optional<String> missing(ExportInput input) {
    for (ExportFeature f : ExportFeature.values()) {
      if (!written.contains(f) && f.usedBy(input)) {
        return Optional.of(f.refusal(label, input));
      }
    }
    return inner.missing(input);
  }

  @Override
  public Optional<ExportInput> nearest(ExportInput input) {
    ExportInput plain = input;
    for (ExportFeature f : ExportFeature.values()) {
      if (!written.contains(f) && f.usedBy(plain)) {
        plain = f.without(plain);
      }
    }
    return inner.missing(plain).isEmpty() ? Optional.of(plain) : inner.nearest(plain);
  }

  @Override
  public String write(ExportInput input) {
    requireExpressible(input);
    return inner.write(input);
  }
}
