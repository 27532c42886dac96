package io.meshplan.export;

import java.util.Optional;

/**
 * Writes one framework's configuration for a parallel configuration, and says what the framework
 * cannot express. Implementations are pure: no files, no printing. The writers are registered
 * with their targets in {@link ExportTarget}, the one list of them; the interface is open so that
 * a new target is its writer and that one line.
 */
public interface FrameworkWriter {
  /**
   * What the framework cannot express about an input.
   *
   * @param input the model, cluster and configuration
   * @return one sentence naming the missing feature, or empty when the framework expresses it all
   */
  Optional<String> missing(ExportInput input);

  /**
   * The nearest input the framework can express: the input with each feature it lacks replaced by
   * the closest one it has.
   *
   * @param input an input for which {@link #missing} is present
   * @return the nearest expressible input, or empty when the framework cannot train this model
   */
  Optional<ExportInput> nearest(ExportInput input);

  /**
   * Writes the configuration.
   *
   * @param input an input for which {@link #missing} is empty
   * @return the file's content, ending in a newline
   * @throws IllegalArgumentException if the framework cannot express the input
   */
  String write(ExportInput input);

  /**
   * Checks, once, that the framework expresses an input: the guard at the head of {@link #write}.
   *
   * @param input the model, cluster and configuration
   * @throws IllegalArgumentException naming the missing feature
   */
  default void requireExpressible(ExportInput input) {
    missing(input).ifPresent(why -> {
      throw new IllegalArgumentException(why);
    });
  }
}
