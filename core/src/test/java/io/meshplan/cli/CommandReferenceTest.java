package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/reference/ is the picocli usage help of every command as the code states it now: the test
 * renders the pages in memory ({@link CommandReference}) and fails, naming the command that
 * regenerates them, when a page differs, is missing or is left over. With
 * {@code -Dmeshplan.reference.write=true} it writes the pages instead.
 */
class CommandReferenceTest {
  @Test
  void theReferenceIsTheHelpOfEveryCommand() throws IOException {
    Map<String, String> pages = CommandReference.pages();
    if (Boolean.getBoolean("meshplan.reference.write")) {
      CommandReference.write(CommandReference.DIR);
    }
    Map<String, String> onDisk = new TreeMap<>();
    if (Files.isDirectory(CommandReference.DIR)) {
      try (Stream<Path> s = Files.list(CommandReference.DIR)) {
        for (Path p : s.filter(p -> p.toString().endsWith(".md")).toList()) {
          onDisk.put(p.getFileName().toString(), Files.readString(p, StandardCharsets.UTF_8));
        }
      }
    }
    assertThat(onDisk)
        .as("docs/reference/ is stale; regenerate it with: %s", CommandReference.REGENERATE)
        .isEqualTo(pages);
  }

  /** Every command has its page, and the pages are the same whatever the terminal's width. */
  @Test
  void everyCommandHasAPageAtAFixedWidth() {
    String saved = System.getProperty("picocli.usage.width");
    Map<String, String> pages = CommandReference.pages();
    try {
      System.setProperty("picocli.usage.width", "60");
      assertThat(CommandReference.pages()).isEqualTo(pages);
    } finally {
      if (saved == null) {
        System.clearProperty("picocli.usage.width");
      } else {
        System.setProperty("picocli.usage.width", saved);
      }
    }
    assertThat(pages).containsKeys("README.md", "meshplan.md", "meshplan-plan.md",
        "meshplan-simulate.md", "meshplan-sweep.md", "meshplan-shard.md",
        "meshplan-calibrate.md", "meshplan-bench.md", "meshplan-doctor.md",
        "meshplan-export.md", "meshplan-deploy.md", "meshplan-help.md");
    // No line of a usage block is wider than the fixed width.
    pages.forEach((file, text) -> {
      if (!file.equals("README.md")) {
        String usage = text.substring(text.indexOf("```\n") + 4, text.lastIndexOf("```"));
        assertThat(usage.lines()).as(file)
            .allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(CommandReference.WIDTH));
      }
    });
  }
}
