package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.meshplan.testing.Cases;
import io.meshplan.testing.Cases.Gen;
import io.meshplan.util.InputException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

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

  /** A corpus module and the mutations applied to it in turn. */
  record Damage(int file, List<Mutation> mutations) {
  }

  /** One to four mutations of any kind, anywhere, of 1..24 characters, with any token. */
  static List<Mutation> mutations(Gen gen) {
    return gen.list(1, 4, g -> new Mutation(g.oneOf(Kind.values()), g.between(0.0, 1.0),
        g.between(1, 24), g.oneOf(TOKENS)));
  }

  /**
   * Single mutations of every kind at both ends of the first and the last module (the shortest
   * and the longest change, the first and the last token), and four at once.
   */
  static List<Damage> edges() {
    int lastFile = HloCorpus.NAMES.size() - 1;
    List<Damage> out = new ArrayList<>();
    for (int file : new int[] {0, lastFile}) {
      for (Kind kind : Kind.values()) {
        out.add(new Damage(file, List.of(new Mutation(kind, 0, 1, TOKENS.get(0)))));
        out.add(new Damage(file,
            List.of(new Mutation(kind, 1, 24, TOKENS.get(TOKENS.size() - 1)))));
      }
    }
    out.add(new Damage(lastFile, List.of(new Mutation(Kind.DELETE_LINE, 0, 1, "{"),
        new Mutation(Kind.DUPLICATE_LINE, 1, 24, "}"), new Mutation(Kind.REPLACE, 0.5, 24, "(("),
        new Mutation(Kind.INSERT, 0.5, 1, "\n"))));
    return out;
  }

  @Test
  void damagedModulesParseOrFailWithAPositionedMessage() {
    Cases.check(21, 3000, edges(),
        gen -> new Damage(gen.between(0, HloCorpus.NAMES.size() - 1), mutations(gen)), damage -> {
          String name = HloCorpus.NAMES.get(damage.file());
          String text = HloCorpus.text(name);
          for (Mutation m : damage.mutations()) {
            text = m.apply(text);
          }
          String damaged = text;
          assertTimeoutPreemptively(Duration.ofSeconds(10), () -> check(name, damaged));
        });
  }

  /** Parses, and prints and parses again what was accepted. */
  private static void check(String name, String text) {
    HloModule module;
    try {
      module = new HloParser().parse(text, name);
    } catch (InputException e) {
      assertThat(e.getMessage()).matches(POSITIONED);
      return;
    }
    String printed = new HloPrinter().print(module);
    HloModule again = new HloParser().parse(printed, "printed-" + name);
    assertThat(again.computations()).isEqualTo(module.computations());
  }
}
