package io.meshplan.util;

/** Shared argument checks for the constructors of records and algorithms. */
public final class Require {
  private Require() {}

  /**
   * Checks that a value is positive.
   *
   * @param value the value
   * @param name what it is, for the message
   * @return the value
   * @throws IllegalArgumentException if it is not positive
   */
  public static long positive(long value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " must be positive, got " + value);
    }
    return value;
  }

  /**
   * Checks that a value is positive.
   *
   * @param value the value
   * @param name what it is, for the message
   * @return the value
   */
  public static int positive(int value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " must be positive, got " + value);
    }
    return value;
  }

  /**
   * Checks that a value is finite and not negative.
   *
   * @param value the value
   * @param name what it is, for the message
   * @return the value
   */
  public static double nonNegative(double value, String name) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + " must be finite and >= 0, got " + value);
    }
    return value;
  }

  /**
   * Checks that a value is not null.
   *
   * @param value the value
   * @param name what it is, for the message
   * @param <T> its type
   * @return the value
   */
  public static <T> T nonNull(T value, String name) {
    // The message is built only when the check fails: this runs in the plan search's hot paths.
    if (value == null) {
      throw new NullPointerException(name + " must not be null");
    }
    return value;
  }

  /**
   * Checks a condition about an argument.
   *
   * @param condition what must hold
   * @param message the message when it does not
   */
  public static void that(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }

  /**
   * Checks a condition, building the message only when it fails (for checks on hot paths).
   *
   * @param condition the condition
   * @param message makes the message naming the bad value
   * @throws IllegalArgumentException with the message when the condition is false
   */
  public static void that(boolean condition, java.util.function.Supplier<String> message) {
    if (!condition) {
      throw new IllegalArgumentException(message.get());
    }
  }
}
