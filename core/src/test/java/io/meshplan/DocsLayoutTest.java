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
 * and of docs/ reaches a file, and docs/README.md links every page under docs/.
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
        if (target.startsWith("http://") || target.startsWith("https://")
            || target.startsWith("#")) {
          continue;
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        if (!Files.exists(page.getParent() == null ? Path.of(file)
            : page.getParent().resolve(file))) {
          broken.add(page + ": " + target);
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

  private static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>(List.of(README));
    try (Stream<Path> s = Files.walk(Path.of("docs"))) {
      s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }
}
