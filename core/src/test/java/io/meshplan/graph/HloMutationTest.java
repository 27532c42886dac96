package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.meshplan.util.InputException;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

/**
 * Randomly damaged corpus modules: the parser must return a module or throw an {@link
 * InputException} with a one-line positioned message, and never hang. A module it returns must
 * survive a print/parse round trip.
 */
class HloMutationTest {
  /**
   * One line at a file position: a syntax error ("expected X but found Y") or a check of the
   * instruction there (for example dimension numbers out of an operand's rank).
   */
  private static final Pattern POSITIONED =
      Pattern.compile("[^\\n]+\\.hlo:\\d+:\\d+: [^\\n]+");
  private static final List<String> TOKENS = List.of("{", "}", "(", ")", "[", "]", ",", "=", "%",
      "\"", ":", "->", "<=", "/*", "*/", "//", "\n", " ", "ROOT ", "ENTRY ", "%x", "f32[", "f33[2]",
      "-1", "99999999999", "parameter(0)", "dimensions={}", "index=7", "}}}}", "((((", "\\",
      "metadata={op_name=\"a\\\"b\"}", "sharding={replicated}", "slice={[0:1:2]}", "HloModule",
      "direction=XX", "(f32[], s32[])", "\u00e9", "\t", "constant({...})");

  enum Kind { DELETE, INSERT, REPLACE, TRUNCATE, DUPLICATE_LINE, DELETE_LINE }

  record Mutation(Kind kind, double where, int length, String token) {
    String apply(String s) {
      int at = (int) (where * s.length());
      int end = Math.min(s.length(), at + length);
      return switch (kind) {
        case DELETE -> s.substring(0, at) + s.substring(end);
        case INSERT -> s.substring(0, at) + token + s.substring(at);
        case REPLACE -> s.substring(0, at) + token + s.substring(end);
        case TRUNCATE -> s.substring(0, at);
        case DUPLICATE_LINE, DELETE_LINE -> {
          int start = s.lastIndexOf('\n', Math.max(0, at - 1)) + 1;
          int stop = s.indexOf('\n', at);
          stop = stop < 0 ? s.length() : stop + 1;
          String line = s.substring(start, stop);
          yield kind == Kind.DELETE_LINE ? s.substring(0, start) + s.substring(stop)
              : s.substring(0, stop) + line + s.substring(stop);
        }
      };
    }
  }

  @Provide
  Arbitrary<List<Mutation>> mutations() {
    return Combinators.combine(Arbitraries.of(Kind.class), Arbitraries.doubles().between(0, 1),
        Arbitraries.integers().between(1, 24), Arbitraries.of(TOKENS))
        .as(Mutation::new).list().ofMinSize(1).ofMaxSize(4);
  }

  @Property(tries = 3000)
  void damagedModulesParseOrFailWithAPositionedMessage(
      @ForAll("corpusIndex") int file, @ForAll("mutations") List<Mutation> mutations) {
    String name = HloCorpus.NAMES.get(file);
    String text = HloCorpus.text(name);
    for (Mutation m : mutations) {
      text = m.apply(text);
    }
    String damaged = text;
    String outcome = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> check(name, damaged));
    Statistics.collect(outcome);
  }

  @Provide
  Arbitrary<Integer> corpusIndex() {
    return Arbitraries.integers().between(0, HloCorpus.NAMES.size() - 1);
  }

  /** Parses, and prints and parses again what was accepted; says which it was. */
  private static String check(String name, String text) {
    HloModule module;
    try {
      module = new HloParser().parse(text, name);
    } catch (InputException e) {
      assertThat(e.getMessage()).matches(POSITIONED);
      return "rejected";
    }
    String printed = new HloPrinter().print(module);
    HloModule again = new HloParser().parse(printed, "printed-" + name);
    assertThat(again.computations()).isEqualTo(module.computations());
    return "accepted";
  }
}
