package io.meshplan.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * One captured run of the command line.
 *
 * @param code the exit code
 * @param out standard output
 * @param err standard error
 */
record CliRun(int code, String out, String err) {
  /**
   * Runs meshplan in-process.
   *
   * @param args the command line
   * @return what it printed and returned
   */
  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
    return new CliRun(code, out.toString(), err.toString());
  }

  /**
   * Runs meshplan in-process on a base command line with more words after it.
   *
   * @param base the command line's first words
   * @param more the words after them
   * @return what it printed and returned
   */
  static CliRun of(java.util.List<String> base, String... more) {
    java.util.List<String> a = new java.util.ArrayList<>(base);
    a.addAll(java.util.List.of(more));
    return of(a.toArray(String[]::new));
  }

  /**
   * The command line of the nearest configuration an export that cannot express its input
   * prints: its first line that starts {@code "  meshplan export"}.
   *
   * @return the line
   * @throws java.util.NoSuchElementException when the run printed none
   */
  String nearestExport() {
    return out().lines().filter(l -> l.startsWith("  meshplan export")).findFirst()
        .orElseThrow();
  }

  /**
   * Checks a refusal: the exit code, one line on standard error containing a text, nothing on
   * standard output.
   *
   * @param code the exit code
   * @param contains a text of the line
   */
  void refusedInOneLine(int code, String contains) {
    org.assertj.core.api.Assertions.assertThat(code()).as(err()).isEqualTo(code);
    org.assertj.core.api.Assertions.assertThat(err().lines()).as(err()).hasSize(1);
    org.assertj.core.api.Assertions.assertThat(err()).contains(contains);
    org.assertj.core.api.Assertions.assertThat(out()).isEmpty();
  }
}
