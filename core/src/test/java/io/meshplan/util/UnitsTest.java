package io.meshplan.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class UnitsTest {
  @Test
  void bytesPrintWithABinaryPrefixAndThreeDigits() {
    assertThat(Units.formatBytes(0)).isEqualTo("0B");
    assertThat(Units.formatBytes(32 * 1024)).isEqualTo("32KiB");
    // 1.5 x 2^30 bytes.
    assertThat(Units.formatBytes(1.5 * (1L << 30))).isEqualTo("1.50GiB");
    // 1000 MiB is 1,048,576,000 bytes, below 2^30: a whole number of MiB, not 1.00e+03MiB.
    assertThat(Units.formatBytes(1000.0 * (1 << 20))).isEqualTo("1000MiB");
    // 1023.7 KiB rounds to the whole 1024 KiB, still below the next prefix.
    assertThat(Units.formatBytes(1023.7 * 1024)).isEqualTo("1024KiB");
    // 999.4 GiB keeps three digits.
    assertThat(Units.formatBytes(999.4 * (1L << 30))).isEqualTo("999GiB");
    // 2,350 TiB = 2.29 PiB (2350 / 1024 = 2.2949).
    assertThat(Units.formatBytes(2350.0 * (1L << 40))).isEqualTo("2.29PiB");
    // 2^62 bytes = 4 EiB.
    assertThat(Units.formatBytes(Math.pow(2, 62))).isEqualTo("4EiB");
  }

  @Test
  void noSizePrintsAnExponent() {
    Random r = new Random(20261201);
    for (int i = 0; i < 10_000; i++) {
      double bytes = Math.pow(2, 63 * r.nextDouble());
      assertThat(Units.formatBytes(bytes)).as("%s bytes", bytes).doesNotContain("e")
          .matches("[0-9.]+(B|KiB|MiB|GiB|TiB|PiB|EiB)");
    }
  }

  @Test
  void bandwidthsReadPetabytes() {
    // A cluster file's limit is stated as 1 PB/s: the unit the refusal names is read.
    assertThat(Units.parseBandwidth("1PB/s")).hasValue(1e15);
    assertThat(Units.parseBandwidth("0.5PB/s")).hasValue(5e14);
    assertThat(Units.parseBandwidth("1000TB/s")).hasValue(1e15);
    assertThat(Units.parseBandwidth("8Pbps")).hasValue(1e15);
    // A size is not a rate: '360GB' was read as 360 GB/s.
    assertThat(Units.parseBandwidth("360GB")).isEmpty();
    assertThat(Units.parseBandwidth("400 Gbit")).isEmpty();
    assertThat(Units.parseBandwidth("360GB/s")).hasValue(3.6e11);
    assertThat(Units.parseBandwidth("92.66")).hasValue(92.66);
  }

  /**
   * Spaces and tabs around a figure and its unit are read past; a form feed, vertical tab,
   * carriage return, line break or other control character is not, where the regular
   * expressions' whitespace class read past the first four.
   */
  @Test
  void onlySpacesAndTabsStandAroundAFigure() {
    assertThat(Units.parseBandwidth(" 450 GB/s\t")).hasValue(4.5e11);
    assertThat(Units.parseBytes("\t32 KiB ")).hasValue(32 * 1024.0);
    for (String c : new String[] {"\f", "\u000b", "\r", "\n", "\u001c", "\u0007"}) {
      assertThat(Units.parseBandwidth("450GB/s" + c)).as("%04x", (int) c.charAt(0)).isEmpty();
      assertThat(Units.parseBandwidth("450" + c + "GB/s")).isEmpty();
      assertThat(Units.parseBytes(c + "32KiB")).isEmpty();
    }
  }

  /**
   * Rounding to significant digits gives the value {@code %.4g} and {@code %.6g} print, on
   * seeded random doubles of every magnitude and on halves, where the rounding direction shows.
   */
  @Test
  void roundSignificantIsWhatFormatPrints() {
    java.util.SplittableRandom r = new java.util.SplittableRandom(7717);
    for (int i = 0; i < 20000; i++) {
      double v = i % 2 == 0 ? Double.longBitsToDouble(r.nextLong())
          : (r.nextInt(2000001) - 1000000) / 1e3 + 0.0005;
      if (!Double.isFinite(v)) {
        continue;
      }
      for (int digits : new int[] {4, 6}) {
        double printed = Double.parseDouble(String.format(java.util.Locale.ROOT, "%." + digits
            + "g", v));
        assertThat(Units.roundSignificant(v, digits)).as("%s to %d digits", v, digits)
            .isEqualTo(printed);
      }
    }
    assertThat(Units.roundSignificant(Double.NaN, 4)).isNaN();
    assertThat(Units.roundSignificant(Double.NEGATIVE_INFINITY, 6)).isInfinite();
  }
}
