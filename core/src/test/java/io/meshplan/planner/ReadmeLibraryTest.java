package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The "Use meshplan as a library" snippet of docs/planning.md (the README's until the README was
 * split into guides), compiled and run as it stands there: at most 15 lines, and it prints what the
 * page shows.
 */
class ReadmeLibraryTest {
  private static final String SECTION = "## Use meshplan as a library";

  @Test
  void theReadmeSnippetCompilesRunsAndPrintsWhatTheReadmeShows(@TempDir Path dir)
      throws Exception {
    String readme = Files.readString(Path.of("docs/planning.md"));
    String section = readme.substring(readme.indexOf(SECTION));
    section = section.substring(0, section.indexOf("\n## ", SECTION.length()));
    String code = block(section, "```java\n");
    String shown = block(section.substring(section.indexOf("prints")), "```\n");
    assertThat(code.split("\n")).hasSizeLessThanOrEqualTo(15);

    Path src = dir.resolve("PlanLlama.java");
    Files.writeString(src, code);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    int rc = javac.run(null, diagnostics, diagnostics, "-classpath",
        System.getProperty("java.class.path"), "-d", dir.toString(), src.toString());
    assertThat(rc).as(diagnostics.toString(StandardCharsets.UTF_8)).isZero();

    PrintStream console = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
        getClass().getClassLoader())) {
      Method main = loader.loadClass("PlanLlama").getMethod("main", String[].class);
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      try {
        main.invoke(null, (Object) new String[0]);
      } finally {
        System.setOut(console);
      }
    }
    assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo(shown);
    // The library's plan is the main job's: 4 stages, as 'meshplan plan' prints it.
    assertThat(List.of(shown.split(" "))).first().isEqualTo("4");
  }

  /** The text of the first fenced block that opens with {@code fence}. */
  private static String block(String text, String fence) {
    int start = text.indexOf(fence) + fence.length();
    return text.substring(start, text.indexOf("```\n", start));
  }
}
