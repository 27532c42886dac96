package io.meshplan.util;

/**
 * Checked arithmetic for sizes, byte counts and device counts: every product or sum that could
 * exceed its type goes through here and ends in an {@link InputException} naming the value,
 * instead of wrapping around to a negative number that looks like an answer.
 */
public final class Checked {
  /** The most devices a mesh or cluster may have: 2^20 = 1,048,576, beyond any built cluster. */
  public static final int MAX_DEVICES = 1 << 20;
  /**
   * The largest tensor in bytes: 2^50 (1 PiB), beyond any device or cluster memory; below 2^53,
   * so every byte count of a tensor is exact as a double.
   */
  public static final long MAX_TENSOR_BYTES = 1L << 50;

  private Checked() {}

  /**
   * The product of factors as an int, capped.
   *
   * @param what what the product is, for the message (e.g. "--mesh 65536x65536 device count")
   * @param max the largest allowed value
   * @param factors the non-negative factors
   * @return the product
   * @throws InputException when it exceeds {@code max}, naming the exact value
   */
  public static int intProduct(String what, int max, int... factors) {
    java.math.BigInteger p = product(factors);
    if (p.compareTo(java.math.BigInteger.valueOf(max)) > 0) {
      throw new InputException(what + " is " + p + ", more than the limit of " + max);
    }
    return p.intValueExact();
  }

  /**
   * The exact product of factors, for sizes read from input that may multiply past a long (four
   * degrees of 2^31 - 1 each).
   *
   * @param factors the factors
   * @return the product
   */
  public static java.math.BigInteger product(int... factors) {
    java.math.BigInteger p = java.math.BigInteger.ONE;
    for (int f : factors) {
      p = p.multiply(java.math.BigInteger.valueOf(f));
    }
    return p;
  }
}
