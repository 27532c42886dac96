package io.meshplan.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine;

/**
 * The command reference in docs/reference/: one Markdown page per command and subcommand of
 * {@link Main#commandLine}'s tree, holding that command's picocli usage help, and an index page.
 * The help is rendered without ANSI styles at a fixed width of {@value #WIDTH} columns, whatever
 * the terminal or the {@code picocli.usage.width} property says, so the pages depend only on the
 * code. {@code CommandReferenceTest} compares the pages with docs/reference/ and, with
 * {@code -Dmeshplan.reference.write=true}, writes them there.
 */
final class CommandReference {
  /** The usage help width in columns. */
  static final int WIDTH = 100;

  /** The command that writes the pages again. */
  static final String REGENERATE =
      "mvn -q -B -pl core test -Dtest=CommandReferenceTest -Dmeshplan.reference.write=true";

  /** The directory of the pages, relative to the repository root. */
  static final Path DIR = Path.of("docs", "reference");

  private CommandReference() {}

  /**
   * Writes the reference into a directory, replacing the pages there.
   *
   * @param args the directory (default docs/reference, relative to the working directory)
   * @throws IOException when a page cannot be written
   */
  public static void main(String[] args) throws IOException {
    write(args.length > 0 ? Path.of(args[0]) : DIR);
  }

  /**
   * Writes every page into {@code dir}, deleting Markdown pages there that the tree no longer has.
   *
   * @param dir the directory
   * @throws IOException when a page cannot be written
   */
  static void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Map<String, String> pages = pages();
    try (var s = Files.list(dir)) {
      for (Path p : s.toList()) {
        if (p.toString().endsWith(".md") && !pages.containsKey(p.getFileName().toString())) {
          Files.delete(p);
        }
      }
    }
    for (Map.Entry<String, String> e : pages.entrySet()) {
      Files.writeString(dir.resolve(e.getKey()), e.getValue(), StandardCharsets.UTF_8);
    }
  }

  /**
   * Every page, by file name: {@code README.md} (the index) and {@code meshplan.md},
   * {@code meshplan-plan.md}, ... one per command.
   *
   * @return the pages in file-name order
   */
  static Map<String, String> pages() {
    String saved = System.getProperty("picocli.usage.width");
    System.clearProperty("picocli.usage.width");
    try {
      CommandLine root = Main.commandLine(false);
      root.setUsageHelpAutoWidth(false);
      root.setUsageHelpWidth(WIDTH);
      List<CommandLine> all = new ArrayList<>();
      collect(root, all);
      Map<String, String> pages = new TreeMap<>();
      StringBuilder index = new StringBuilder("# Command reference\n\n")
          .append(generatedNote())
          .append("| command | what it does |\n|---|---|\n");
      for (CommandLine c : all) {
        String name = c.getCommandSpec().qualifiedName(" ");
        String file = c.getCommandSpec().qualifiedName("-") + ".md";
        pages.put(file, "# " + name + "\n\n" + generatedNote() + "```\n"
            + c.getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing() + "\n```\n");
        index.append("| [").append(name).append("](").append(file).append(") | ")
            .append(firstSentence(c)).append(" |\n");
      }
      pages.put("README.md", index.toString());
      return pages;
    } finally {
      if (saved != null) {
        System.setProperty("picocli.usage.width", saved);
      }
    }
  }

  private static String generatedNote() {
    return "Generated from the picocli usage help of `io.meshplan.cli.Main` by\n"
        + "`core/src/test/java/io/meshplan/cli/CommandReference.java`; do not edit. Regenerate"
        + " with\n`" + REGENERATE + "`.\n\n";
  }

  private static void collect(CommandLine c, List<CommandLine> out) {
    out.add(c);
    // By name, so the order is the code's; an alias maps to the same CommandLine.
    new TreeMap<>(c.getSubcommands()).values().stream().distinct()
        .forEach(s -> collect(s, out));
  }

  private static String firstSentence(CommandLine c) {
    String[] d = c.getCommandSpec().usageMessage().description();
    // picocli writes %n for a line break in descriptions.
    String text = String.join(" ", d).replace("%n", " ").strip();
    int dot = text.indexOf(". ");
    String first = dot < 0 ? text : text.substring(0, dot + 1);
    return first.replace("|", "\\|").replace("\n", " ");
  }
}
