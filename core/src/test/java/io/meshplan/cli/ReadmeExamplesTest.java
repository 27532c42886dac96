package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every example in README.md and in the Markdown pages under docs/ runs as written and prints what
 * the page shows. An example is a fenced block whose first line starts with {@code $ ./meshplan};
 * the rest of the block is the expected standard output. The command runs in-process from the
 * repository root as on a fresh clone; new examples for any command, and new pages, are checked
 * without changing this test. A word in single quotes loses them, as the shell takes it.
 *
 * <p>Pages run one after another (README.md first, then docs/ in path order), each page's examples
 * in page order: a later example may read what an earlier one of the same page wrote. After each
 * page, the files and directories its examples created in the repository root are removed, so every
 * page starts from a clean checkout and no page depends on another or on the order of pages.
 *
 * <p>Comparison, line by line after trailing spaces are stripped: a line {@code ...} matches any
 * run of lines (also none); a line ending in {@code ...} matches any line that starts with the text
 * before it; on lines that report wall time only (starting with {@code time:}) every number matches
 * any number.
 */
class ReadmeExamplesTest {
  private static final Path ROOT = Path.of("").toAbsolutePath();
  private static Set<Path> before;

  /** One example of a page. */
  record Example(int line, String command, List<String> expected) {}

  /** The options that name an output file or directory ({@code docs/files-and-exit-codes.md}). */
  private static final Set<String> OUTPUTS = Set.of("--out", "--report", "--csv", "--jsonl",
      "--dump-ilp");
  /** Where {@link #setAside} keeps what a user left in the way of the examples, while they run. */
  private static Path aside;

  @BeforeAll
  static void snapshot() throws IOException {
    setAside();
    try (Stream<Path> s = Files.list(ROOT)) {
      before = new HashSet<>(s.toList());
    }
  }

  @AfterAll
  static void cleanUp() throws IOException {
    removeCreated();
    if (aside != null) {
      try (Stream<Path> s = Files.list(aside)) {
        for (Path p : s.toList()) {
          Files.move(p, ROOT.resolve(p.getFileName().toString()));
        }
      }
      Files.delete(aside);
    }
  }

  /**
   * Moves out of the repository root, for the run, each file or directory there that an example
   * writes by name ({@code --out plan.json}): the README's tour run by hand leaves them, and an
   * example refuses to replace an output without {@code --force}. {@link #cleanUp} puts them back
   * as they were.
   */
  private static void setAside() throws IOException {
    Set<String> named = new java.util.TreeSet<>();
    for (Path page : pages()) {
      for (Example e : examples(Files.readAllLines(ROOT.resolve(page)))) {
        String[] w = e.command().split("\\s+");
        for (int k = 1; k + 1 < w.length; k++) {
          Path out = Path.of(w[k + 1]);
          // Only a name in the root itself: never a tracked directory an output lies under.
          if (OUTPUTS.contains(w[k]) && !out.isAbsolute() && out.getNameCount() == 1
              && !w[k + 1].equals("-") && !w[k + 1].startsWith(".")) {
            named.add(w[k + 1]);
          }
        }
      }
    }
    for (String n : named) {
      Path p = ROOT.resolve(n);
      if (Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        if (aside == null) {
          // Under the build directory: the same file system, so a directory moves as one.
          Path target = Files.createDirectories(ROOT.resolve("core/target"));
          aside = Files.createTempDirectory(target, "examples-aside");
        }
        Files.move(p, aside.resolve(n));
      }
    }
  }

  /** Removes what the examples created in the repository root since {@link #snapshot}. */
  private static void removeCreated() throws IOException {
    List<Path> created;
    try (Stream<Path> s = Files.list(ROOT)) {
      created = s.filter(p -> !before.contains(p)).toList();
    }
    for (Path p : created) {
      try (Stream<Path> w = Files.walk(p)) {
        for (Path q : w.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(q);
        }
      }
    }
  }

  /**
   * The pages whose examples run: README.md, then every Markdown file under docs/ in path order.
   *
   * @return the pages, relative to the repository root
   * @throws IOException when docs/ cannot be listed
   */
  static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(Path.of("README.md"));
    try (Stream<Path> s = Files.walk(ROOT.resolve("docs"))) {
      s.filter(p -> p.toString().endsWith(".md") && Files.isRegularFile(p))
          .map(p -> ROOT.relativize(p))
          .sorted(Comparator.comparing(p -> p.toString().replace('\\', '/')))
          .forEach(pages::add);
    }
    return pages;
  }

  static List<Example> examples(List<String> readme) {
    List<Example> out = new ArrayList<>();
    for (int i = 0; i < readme.size(); i++) {
      // Fences may be indented (inside a list item); the block's lines lose that indent.
      int indent = readme.get(i).indexOf("```");
      if (indent < 0 || !readme.get(i).strip().startsWith("```")) {
        continue;
      }
      int start = i + 1;
      int end = start;
      while (end < readme.size() && !readme.get(end).strip().startsWith("```")) {
        end++;
      }
      List<String> block = new ArrayList<>();
      for (String l : readme.subList(start, end)) {
        block.add(l.substring(Math.min(indent, l.length() - l.stripLeading().length())));
      }
      if (!block.isEmpty() && block.get(0).startsWith("$ ./meshplan")) {
        out.add(new Example(start + 1, block.get(0).substring(2).strip(),
            block.subList(1, block.size())));
      }
      i = end;
    }
    return out;
  }

  @TestFactory
  Stream<DynamicNode> everyExampleRunsAsShown() throws IOException {
    List<DynamicNode> nodes = new ArrayList<>();
    int total = 0;
    for (Path page : pages()) {
      String name = page.toString().replace('\\', '/');
      List<Example> examples = examples(Files.readAllLines(ROOT.resolve(page)));
      total += examples.size();
      if (examples.isEmpty()) {
        continue;
      }
      List<DynamicTest> tests = new ArrayList<>();
      for (Example e : examples) {
        tests.add(DynamicTest.dynamicTest(name + ":" + e.line() + ": " + e.command(),
            () -> runs(name, e)));
      }
      // Dynamic tests of one container run in order; this one leaves a clean checkout behind.
      tests.add(DynamicTest.dynamicTest(name + ": remove what its examples wrote",
          ReadmeExamplesTest::removeCreated));
      nodes.add(DynamicContainer.dynamicContainer(name, tests));
    }
    // The one-page README had 51 examples; the pages hold all of them and the README's tour.
    assertThat(total).isGreaterThanOrEqualTo(54);
    assertThat(examples(Files.readAllLines(ROOT.resolve("README.md"))))
        .hasSizeGreaterThanOrEqualTo(3);
    return nodes.stream();
  }

  private static void runs(String page, Example e) {
    String[] words = e.command().split("\\s+");
    assertThat(words[0]).isEqualTo("./meshplan");
    // A word in single quotes is the shell's: the quotes keep '|' and '*' from it.
    String[] args = java.util.Arrays.stream(words, 1, words.length)
        .map(w -> w.length() >= 2 && w.startsWith("'") && w.endsWith("'")
            ? w.substring(1, w.length() - 1) : w)
        .toArray(String[]::new);
    CliRun r = CliRun.of(args);
    assertThat(r.code()).as("exit code of %s; stderr: %s", e.command(), r.err()).isZero();
    List<String> actual = r.out().lines().map(String::stripTrailing).toList();
    List<String> expected = e.expected().stream().map(String::stripTrailing).toList();
    assertThat(matches(expected, 0, actual, 0))
        .as("%s:%d output of %s%n--- page ---%n%s%n--- actual ---%n%s", page, e.line(),
            e.command(), String.join("\n", expected), r.out())
        .isTrue();
  }

  /** Whether expected[i..] matches actual[j..] (see the class comment). */
  static boolean matches(List<String> expected, int i, List<String> actual, int j) {
    if (i == expected.size()) {
      return j == actual.size();
    }
    String e = expected.get(i);
    if (e.equals("...")) {
      for (int k = j; k <= actual.size(); k++) {
        if (matches(expected, i + 1, actual, k)) {
          return true;
        }
      }
      return false;
    }
    return j < actual.size() && lineMatches(e, actual.get(j))
        && matches(expected, i + 1, actual, j + 1);
  }

  static boolean lineMatches(String expected, String actual) {
    if (expected.endsWith("...")) {
      return actual.startsWith(expected.substring(0, expected.length() - 3));
    }
    if (expected.startsWith("time:") && actual.startsWith("time:")) {
      return mask(expected).equals(mask(actual));
    }
    return expected.equals(actual);
  }

  private static String mask(String line) {
    return line.replaceAll("[0-9]+(\\.[0-9]+)?", "#");
  }

  @Test
  void everyMarkdownPageUnderDocsIsRunAfterTheReadme() throws IOException {
    List<String> pages = pages().stream().map(p -> p.toString().replace('\\', '/')).toList();
    assertThat(pages.get(0)).isEqualTo("README.md");
    assertThat(pages).contains("docs/planning.md", "docs/exporting-and-launching.md",
        "docs/recipes/add-a-gpu.md", "docs/reference/meshplan-plan.md");
    assertThat(pages.subList(1, pages.size())).isSorted().allMatch(p -> p.startsWith("docs/"));
  }

  @Test
  void theMatcherIsStrictWhereItShouldBe() {
    List<String> actual = List.of("a", "b", "c", "time: total 1.234 s");
    assertThat(matches(List.of("a", "...", "time: total 9.9 s"), 0, actual, 0)).isTrue();
    assertThat(matches(List.of("a", "...", "c"), 0, actual, 0)).isFalse();
    assertThat(matches(List.of("a", "b"), 0, actual, 0)).isFalse();
    assertThat(matches(List.of("...", "b", "c", "time: total 1 s"), 0, actual, 0)).isTrue();
    assertThat(matches(List.of("a", "x", "..."), 0, actual, 0)).isFalse();
    assertThat(lineMatches("objective 1.5", "objective 1.6")).isFalse();
    assertThat(lineMatches("status OPT...", "status OPTIMAL")).isTrue();
    assertThat(lineMatches("time: ...", "time: total 2.5 s")).isTrue();
    List<Example> ex = examples(List.of("text", "```", "$ ./meshplan doctor", "out", "```",
        "```", "mvn verify", "```", "1. step", "   ```", "   $ ./meshplan bench", "   x", "   ```"));
    assertThat(ex).containsExactly(new Example(3, "./meshplan doctor", List.of("out")),
        new Example(11, "./meshplan bench", List.of("x")));
  }
}
