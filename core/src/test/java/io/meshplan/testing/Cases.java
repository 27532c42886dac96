package io.meshplan.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Seeded random cases for plain JUnit tests: a property is checked on a fixed list of edge cases
 * first (empty, zero, one, the extremes of each range), then on {@code tries} values drawn from
 * a {@link Gen} with a fixed seed, so every run checks the same cases and a failure names the case
 * that broke it.
 */
public final class Cases {
  private Cases() {
  }

  /**
   * Checks {@code property} on every edge case, then on {@code tries} random values.
   *
   * @param seed the seed of the random values; fixed per test so runs repeat
   * @param tries how many random values, besides the edge cases
   * @param edges values checked first, in order
   * @param gen draws one random value
   * @param property throws (an assertion error) when a value breaks it
   * @return how many cases were checked, edge cases included
   */
  public static <T> int check(long seed, int tries, List<T> edges, Function<Gen, T> gen,
      Consumer<T> property) {
    int checked = 0;
    for (T edge : edges) {
      run("edge case " + checked, edge, property);
      checked++;
    }
    Gen g = new Gen(new SplittableRandom(seed));
    for (int i = 0; i < tries; i++) {
      T value = gen.apply(g);
      run("case " + i + " of seed " + seed, value, property);
      checked++;
    }
    return checked;
  }

  /** {@link #check} without edge cases. */
  public static <T> int check(long seed, int tries, Function<Gen, T> gen, Consumer<T> property) {
    return check(seed, tries, List.of(), gen, property);
  }

  private static <T> void run(String name, T value, Consumer<T> property) {
    try {
      property.accept(value);
    } catch (AssertionError | RuntimeException e) {
      AssertionError wrapped = new AssertionError(name + " failed for " + show(value) + ": "
          + e.getMessage(), e);
      throw wrapped;
    }
  }

  private static String show(Object value) {
    String text = value instanceof byte[] b ? java.util.Arrays.toString(b)
        : value instanceof Object[] a ? java.util.Arrays.deepToString(a)
        : Objects.toString(value);
    return text.length() > 400 ? text.substring(0, 400) + "..." : text;
  }

  /** Random values with the edge bias of property-based generators. */
  public static final class Gen {
    private final SplittableRandom random;

    Gen(SplittableRandom random) {
      this.random = random;
    }

    /** The underlying random source. */
    public SplittableRandom random() {
      return random;
    }

    /** An int in [min, max], one time in eight an end of the range or zero/one when inside. */
    public int between(int min, int max) {
      if (random.nextInt(8) == 0) {
        List<Integer> edges = new ArrayList<>(List.of(min, max));
        if (min <= 0 && 0 <= max) {
          edges.add(0);
        }
        if (min <= 1 && 1 <= max) {
          edges.add(1);
        }
        return edges.get(random.nextInt(edges.size()));
      }
      return (int) random.nextLong(min, (long) max + 1);
    }

    /** Any long, one time in eight 0, 1, -1, or an extreme. */
    public long anyLong() {
      if (random.nextInt(8) == 0) {
        long[] edges = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE};
        return edges[random.nextInt(edges.length)];
      }
      return random.nextLong();
    }

    /** A double in [min, max], one time in eight an end of the range or zero when inside. */
    public double between(double min, double max) {
      if (random.nextInt(8) == 0) {
        List<Double> edges = new ArrayList<>(List.of(min, max));
        if (min <= 0 && 0 <= max) {
          edges.add(0.0);
        }
        return edges.get(random.nextInt(edges.size()));
      }
      return min + (max - min) * random.nextDouble();
    }

    /** A boolean. */
    public boolean bool() {
      return random.nextBoolean();
    }

    /** A byte, one time in eight 0, 1, -1 or an extreme. */
    public byte anyByte() {
      if (random.nextInt(8) == 0) {
        byte[] edges = {0, 1, -1, Byte.MIN_VALUE, Byte.MAX_VALUE};
        return edges[random.nextInt(edges.length)];
      }
      return (byte) random.nextInt(256);
    }

    /** {@code n} random bytes. */
    public byte[] bytes(int n) {
      byte[] out = new byte[n];
      for (int i = 0; i < n; i++) {
        out[i] = anyByte();
      }
      return out;
    }

    /** One of the given values. */
    @SafeVarargs
    public final <T> T oneOf(T... values) {
      return values[random.nextInt(values.length)];
    }

    /** One of the given values. */
    public <T> T oneOf(List<T> values) {
      return values.get(random.nextInt(values.size()));
    }

    /** A list of {@code minSize..maxSize} elements, short lists (and the empty one) favoured. */
    public <T> List<T> list(int minSize, int maxSize, Function<Gen, T> element) {
      int size = random.nextInt(4) == 0 ? between(minSize, Math.min(maxSize, minSize + 2))
          : between(minSize, maxSize);
      List<T> out = new ArrayList<>(size);
      for (int i = 0; i < size; i++) {
        out.add(element.apply(this));
      }
      return out;
    }

    /** A string of {@code 0..maxLength} characters drawn from {@code chars}. */
    public String string(String chars, int maxLength) {
      int length = between(0, maxLength);
      StringBuilder s = new StringBuilder(length);
      for (int i = 0; i < length; i++) {
        s.append(chars.charAt(random.nextInt(chars.length())));
      }
      return s.toString();
    }

    /**
     * Any string of {@code 0..maxLength} chars: ASCII (controls included), Latin-1, the BMP with
     * lone surrogates, and whole supplementary code points, as an unconstrained string generator
     * draws them.
     */
    public String anyString(int maxLength) {
      int length = between(0, maxLength);
      StringBuilder s = new StringBuilder(length);
      while (s.length() < length) {
        int kind = random.nextInt(10);
        if (kind < 4) {
          s.append((char) random.nextInt(0x80));
        } else if (kind < 6) {
          s.append((char) random.nextInt(0x80, 0x100));
        } else if (kind < 8) {
          s.append((char) random.nextInt(0x100, 0x10000));
        } else if (kind < 9) {
          s.appendCodePoint(random.nextInt(0x10000, 0x110000));
        } else {
          s.append(oneOf('\0', '\n', '\r', '\t', ' ', '"', '\'', '\\', '<', '&', '\uFFFF',
              '\uD800', '\uDFFF'));
        }
      }
      return s.toString();
    }
  }
}
