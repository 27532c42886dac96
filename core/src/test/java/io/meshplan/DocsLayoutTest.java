package io.meshplan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation a newcomer reads holds together: the README fits on a screen's worth of
 * reading (at most 25 KB), its two commands are the ones CI runs, every relative link of the README
 * and of docs/ reaches a file (and a heading of it, when the link names one), and docs/README.md
 * links every page under docs/.
 */
class DocsLayoutTest {
  private static final Path README = Path.of("README.md");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  @Test
  void theReadmeIsAtMost25Kilobytes() throws IOException {
    // 25 KB = 25 x 1024 = 25,600 bytes.
    assertThat(Files.size(README)).isLessThanOrEqualTo(25 * 1024);
  }

  @Test
  void theReadmesTestCommandIsWhatCiRuns() throws IOException {
    List<String> readme = Files.readAllLines(README);
    int section = readme.indexOf("## The two commands");
    assertThat(section).isNotNegative();
    List<String> blocks = new ArrayList<>();
    for (int i = section + 1; i < readme.size() && !readme.get(i).startsWith("## "); i++) {
      if (readme.get(i).equals("```")) {
        blocks.add(readme.get(i + 1));
        i += 2;
      }
    }
    assertThat(blocks).hasSize(2);
    assertThat(blocks.get(0)).isEqualTo("mvn -q -B -DskipTests package && ./meshplan plan"
        + " --model llama2-13b --cluster 50x4:v100-32gb");
    List<String> ci = Files.readAllLines(Path.of(".ci/run"));
    assertThat(ci.get(ci.size() - 1).strip()).isEqualTo(blocks.get(1));
  }

  @Test
  void everyRelativeLinkReachesAFile() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path page : pages()) {
      Matcher m = LINK.matcher(Files.readString(page));
      while (m.find()) {
        String target = m.group(1);
        if (target.startsWith("http://") || target.startsWith("https://")) {
          continue;
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path to = file.isEmpty() ? page
            : page.getParent() == null ? Path.of(file) : page.getParent().resolve(file);
        if (!Files.exists(to)) {
          broken.add(page + ": " + target);
        } else if (hash >= 0 && to.toString().endsWith(".md")
            && !anchors(to).contains(target.substring(hash + 1))) {
          broken.add(page + ": " + target + " (no such heading)");
        }
      }
    }
    assertThat(broken).isEmpty();
  }

  @Test
  void theDocsIndexLinksEveryPage() throws IOException {
    String index = Files.readString(Path.of("docs/README.md"));
    List<String> missing = new ArrayList<>();
    try (Stream<Path> s = Files.list(Path.of("docs"))) {
      for (Path p : s.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
        String name = p.getFileName().toString();
        if (!name.equals("README.md") && !index.contains("](" + name)) {
          missing.add(name);
        }
      }
    }
    assertThat(missing).isEmpty();
    assertThat(index).contains("](reference/README.md)", "](recipes/README.md)",
        "](ARCHITECTURE.md)");
  }

  /**
   * The anchors GitHub gives a page's headings: the heading in lower case, without what is
   * neither a letter, a digit, a space, {@code -} nor {@code _}, spaces made {@code -}.
   */
  static java.util.Set<String> anchors(Path page) throws IOException {
    java.util.Set<String> out = new java.util.HashSet<>();
    boolean fence = false;
    for (String line : Files.readAllLines(page)) {
      if (line.strip().startsWith("```")) {
        fence = !fence;
      } else if (!fence && line.matches("#{1,6} .*")) {
        out.add(line.replaceFirst("^#+ ", "").strip().toLowerCase(java.util.Locale.ROOT)
            .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
      }
    }
    return out;
  }

  @Test
  void anchorsAreGitHubs() throws IOException {
    Path p = Files.createTempFile("anchors", ".md");
    try {
      Files.writeString(p, "# A\n## From the plan to a launch: `plan --for` and `export --to alpa`\n"
          + "```\n# not a heading\n```\n### Export: the framework's configuration\n");
      assertThat(anchors(p)).containsExactlyInAnyOrder("a",
          "from-the-plan-to-a-launch-plan---for-and-export---to-alpa",
          "export-the-frameworks-configuration");
    } finally {
      Files.delete(p);
    }
  }

  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>(List.of(README));
    try (Stream<Path> s = Files.walk(Path.of("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }
}
