package io.meshplan.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Decimals as the formats meshplan reads write them: {@link AsciiDigits#parseDecimal} reads what
 * {@link Double#parseDouble} reads for a plain decimal, and refuses what the JDK also takes.
 */
class AsciiDigitsTest {
  @Test
  void plainDecimalsReadAsTheJdkReadsThem() {
    for (String s : List.of("8", "-0.5", "+.25", "1e-3", "1E+5", "5.", "007", "1.0E-5")) {
      assertThat(AsciiDigits.parseDecimal(s)).as(s).isEqualTo(Double.parseDouble(s));
    }
    // Past the double range the value is infinite, as the JDK's; each caller's range check
    // refuses it in its own words.
    assertThat(AsciiDigits.parseDecimal("1e400")).isInfinite();
    SplittableRandom r = new SplittableRandom(5150);
    for (int i = 0; i < 5000; i++) {
      double v = Double.longBitsToDouble(r.nextLong());
      if (!Double.isFinite(v)) {
        continue;
      }
      for (String s : List.of(Double.toString(v), String.format(Locale.ROOT, "%.6g", v),
          String.format(Locale.ROOT, "%.3f", v))) {
        assertThat(AsciiDigits.parseDecimal(s)).as(s).isEqualTo(Double.parseDouble(s));
      }
    }
  }

  /**
   * What the JDK's parser takes and no decimal in these formats is: hexadecimal (0x1p3 is 8 to
   * the JDK), a type suffix, NaN and Infinity, blanks or control characters around the number
   * (the JDK trims every character up to U+0020), digits of other scripts, and the incomplete.
   */
  @Test
  void whatTheJdkAlsoTakesIsRefused() {
    for (String s : List.of("0x1p3", "5d", "2f", "1.5D", "NaN", "Infinity", "-Infinity", " 1",
        "1 ", "1\u0007", "\u001b1", "\t2", "\u0668", "\uff18", "", "+", "-", ".", "e5", "1e",
        "1e+", "1,5", "1_000")) {
      assertThatThrownBy(() -> AsciiDigits.parseDecimal(s)).as("'%s'", s)
          .isInstanceOf(NumberFormatException.class);
    }
    assertThatThrownBy(() -> AsciiDigits.parseDecimal(null))
        .isInstanceOf(NumberFormatException.class);
    // The JDK takes these, which is why meshplan does not call it on input.
    assertThat(Double.parseDouble("0x1p3")).isEqualTo(8);
    assertThat(Double.parseDouble("1\u0007")).isEqualTo(1);
  }
}
