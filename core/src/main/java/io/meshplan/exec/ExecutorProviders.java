package io.meshplan.exec;

import java.util.Optional;
import java.util.ServiceLoader;

/** Finds {@link ExecutorProvider}s on the class path. */
public final class ExecutorProviders {
  private ExecutorProviders() {}

  /**
   * The provider of an engine, if its module is on the class path.
   *
   * @param name the engine, e.g. "spark"
   * @return the first provider of that name in class-path order, or empty
   */
  public static Optional<ExecutorProvider> find(String name) {
    for (ExecutorProvider p : ServiceLoader.load(ExecutorProvider.class,
        ExecutorProviders.class.getClassLoader())) {
      if (p.name().equals(name)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
