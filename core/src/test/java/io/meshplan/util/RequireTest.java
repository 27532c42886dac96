package io.meshplan.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RequireTest {
  @Test
  void nonNullNamesTheValueOnlyWhenItIsMissing() {
    Object v = new Object();
    assertThat(Require.nonNull(v, "plan")).isSameAs(v);
    assertThatThrownBy(() -> Require.nonNull(null, "plan"))
        .isInstanceOf(NullPointerException.class).hasMessage("plan must not be null");
  }

  @Test
  void aCheckBuildsItsMessageOnlyWhenItFails() {
    AtomicInteger built = new AtomicInteger();
    Require.that(true, () -> "built " + built.incrementAndGet());
    assertThat(built).hasValue(0);
    assertThatThrownBy(() -> Require.that(false, () -> "built " + built.incrementAndGet()))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("built 1");
    assertThatThrownBy(() -> Require.that(false, "as given"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("as given");
  }

  /**
   * The planner's layers run their records' checks millions of times a plan (Qwen3-30B-A3B on 16
   * GPUs builds about 780,000 stage costs and the layer graphs of 480 settings): a message joined
   * from parts is passed as a supplier, so that it is built only when the check fails.
   */
  @Test
  void thePlannersChecksJoinNoMessageUnlessTheyFail() throws IOException {
    List<String> found = new ArrayList<>();
    for (String layer : List.of("graph", "intraop", "interop", "sim", "model", "sharding")) {
      try (var files = Files.walk(Path.of("core/src/main/java/io/meshplan", layer))) {
        for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
          String s = Files.readString(f);
          for (int at = s.indexOf("Require.that("); at >= 0;
              at = s.indexOf("Require.that(", at + 1)) {
            String message = secondArgument(s, at + "Require.that(".length());
            if (!message.strip().startsWith("() ->") && joinsAtTopLevel(message)) {
              int line = (int) s.substring(0, at).chars().filter(c -> c == '\n').count() + 1;
              found.add(f + ":" + line);
            }
          }
        }
      }
    }
    assertThat(found).isEmpty();
  }

  @Test
  void theSourceScanFindsAJoinedMessage() {
    String eager = "Require.that(a < b, \"a \" + a + \" (b)\");";
    String lazy = "Require.that(a < b, () -> \"a \" + a);";
    String plain = "Require.that(f(a, b), \"a + b, (c)\");";
    assertThat(joinsAtTopLevel(secondArgument(eager, 13))).isTrue();
    assertThat(secondArgument(lazy, 13).strip()).startsWith("() ->");
    assertThat(secondArgument(plain, 13).strip()).isEqualTo("\"a + b, (c)\"");
    assertThat(joinsAtTopLevel(secondArgument(plain, 13))).isFalse();
  }

  /** The text of a call's second argument, from just after the call's opening parenthesis. */
  private static String secondArgument(String s, int from) {
    int depth = 1;
    int comma = -1;
    char quote = 0;
    int i = from;
    for (; depth > 0; i++) {
      char c = s.charAt(i);
      if (quote != 0) {
        if (c == '\\') {
          i++;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '(' || c == '[' || c == '{') {
        depth++;
      } else if (c == ')' || c == ']' || c == '}') {
        depth--;
      } else if (c == ',' && depth == 1 && comma < 0) {
        comma = i;
      }
    }
    return comma < 0 ? "" : s.substring(comma + 1, i - 1);
  }

  /** Whether an expression has a {@code +} outside strings and brackets. */
  private static boolean joinsAtTopLevel(String e) {
    int depth = 0;
    boolean inString = false;
    for (int i = 0; i < e.length(); i++) {
      char c = e.charAt(i);
      if (inString) {
        if (c == '\\') {
          i++;
        } else if (c == '"') {
          inString = false;
        }
      } else if (c == '"') {
        inString = true;
      } else if (c == '(' || c == '[' || c == '{') {
        depth++;
      } else if (c == ')' || c == ']' || c == '}') {
        depth--;
      } else if (c == '+' && depth == 0) {
        return true;
      }
    }
    return false;
  }
}
