package io.meshplan.export;

import io.meshplan.util.Require;
import java.util.Optional;

/** What {@link Exporter} returns: the configuration text, or why the target cannot express it. */
public sealed interface ExportResult {
  /**
   * The target expresses the configuration exactly.
   *
   * @param input what was exported
   * @param text the configuration file's content
   */
  record Exported(ExportInput input, String text) implements ExportResult {
    /** Validates the fields. */
    public Exported {
      Require.nonNull(input, "input");
      Require.nonNull(text, "text");
    }
  }

  /**
   * The target runs a plan exactly as it was planned, stage by stage, where no one configuration
   * stands for it (Alpa's own submesh and setting per stage).
   *
   * @param text the file's content
   */
  record PlanExported(String text) implements ExportResult {
    /** Validates the fields. */
    public PlanExported {
      Require.nonNull(text, "text");
    }
  }

  /**
   * The target cannot express the configuration.
   *
   * @param missing one sentence naming what the target lacks
   * @param nearest the nearest configuration the target can express, when there is one
   */
  record NotExpressible(String missing, Optional<ExportInput> nearest) implements ExportResult {
    /** Validates the fields. */
    public NotExpressible {
      Require.nonNull(missing, "missing");
      Require.nonNull(nearest, "nearest");
    }
  }
}
