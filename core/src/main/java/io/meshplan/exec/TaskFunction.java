package io.meshplan.exec;

import java.io.Serializable;
import java.util.function.Function;

/**
 * The work applied to each task of a {@link TaskExecutor#map}: a function that can be shipped to
 * another process (Apache Spark serializes it with Java serialization), so it must capture only
 * serializable values and must return the same result for the same task wherever it runs.
 *
 * @param <T> the task type
 * @param <R> the result type
 */
@FunctionalInterface
public interface TaskFunction<T, R> extends Function<T, R>, Serializable {}
