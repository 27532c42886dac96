package io.meshplan;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md's package table and package map say what the code and LayeringTest say.
 *
 * <ul>
 *   <li>The package table (header {@code | package | responsibility |}) names every package of
 *       core's main code, and no other.
 *   <li>Each map table (header {@code | layer | may import | imports today |}) has one row per layer
 *       of one {@code layeredArchitecture()} rule of LayeringTest, read from its source: the layers
 *       (by their {@code definedBy} packages) and their {@code mayOnlyBeAccessedByLayers} rules.
 *       "may import" is exactly what that rule allows (a layer without a rule may be imported by
 *       every other layer of its table), and "imports today" exactly the layers of the same table
 *       that the layer's classes depend on now (ArchUnit, main code only).
 * </ul>
 *
 * A failure prints the rows as they should read.
 */
class ArchitectureDocTest {
  private static final Path DOC = Path.of("docs/ARCHITECTURE.md");
  private static final Path LAYERING = Path.of("core/src/test/java/io/meshplan/LayeringTest.java");
  private static final Path MAIN = Path.of("core/src/main/java/io/meshplan");
  private static final JavaClasses CLASSES = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("io.meshplan");

  /** One layered rule of LayeringTest: layer name to package pattern, and accessed-by rules. */
  record Rule(Map<String, String> packages, Map<String, Set<String>> accessedBy) {}

  /** One row of a map table. */
  record Row(Set<String> mayImport, Set<String> importsToday) {}

  @Test
  void thePackageTableNamesEveryPackageOfTheCode() throws IOException {
    Set<String> code;
    try (Stream<Path> s = Files.walk(MAIN)) {
      code = s.filter(p -> p.toString().endsWith(".java"))
          .map(p -> MAIN.relativize(p.getParent()).toString().replace('/', '.').replace('\\', '.'))
          .collect(Collectors.toCollection(TreeSet::new));
    }
    Set<String> doc = new TreeSet<>();
    for (List<String> row : table(Files.readAllLines(DOC), "| package | responsibility |")) {
      doc.addAll(names(row.get(0)));
    }
    assertThat(doc).as("packages in docs/ARCHITECTURE.md's package table").isEqualTo(code);
  }

  @Test
  void theMapIsLayeringTestsRulesAndTheImportsOfToday() throws IOException {
    List<Rule> rules = rules(Files.readString(LAYERING));
    assertThat(rules).hasSizeGreaterThanOrEqualTo(3);
    List<Map<String, Row>> tables = new ArrayList<>();
    for (List<List<String>> t : tables(Files.readAllLines(DOC),
        "| layer | may import | imports today |")) {
      Map<String, Row> rows = new TreeMap<>();
      for (List<String> r : t) {
        rows.put(single(r.get(0)), new Row(new TreeSet<>(names(r.get(1))),
            new TreeSet<>(names(r.get(2)))));
      }
      tables.add(rows);
    }
    List<Map<String, Row>> expected = rules.stream().map(ArchitectureDocTest::expected).toList();
    assertThat(tables).as("the map tables of docs/ARCHITECTURE.md should read:%n%s",
        render(expected)).isEqualTo(expected);
  }

  @Test
  void theRuleReaderReadsWhatLayeringTestWrites() {
    List<Rule> r = rules("""
        layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("a").definedBy("io.meshplan.a..")
            .layer("b").definedBy("io.meshplan.b")
            .layer("c").definedBy("io.meshplan.c..")
            .whereLayer("a").mayNotBeAccessedByAnyLayer()
            .whereLayer("b").mayOnlyBeAccessedByLayers("a",
                "c")
            .check(CLASSES);
        """);
    assertThat(r).containsExactly(new Rule(
        new LinkedHashMap<>(Map.of("a", "a..", "b", "b", "c", "c..")),
        Map.of("a", Set.of(), "b", Set.of("a", "c"))));
    // c has no rule: a and b may import it; nobody may import a; b lets a and c import it.
    assertThat(expected(r.get(0)).get("a..").mayImport()).containsExactly("b", "c..");
    assertThat(expected(r.get(0)).get("b").mayImport()).containsExactly("c..");
    assertThat(expected(r.get(0)).get("c..").mayImport()).containsExactly("b");
  }

  /** The rows a rule implies: what each layer may import, and what it imports now. */
  static Map<String, Row> expected(Rule rule) {
    Map<String, Row> rows = new TreeMap<>();
    for (Map.Entry<String, String> layer : rule.packages().entrySet()) {
      Set<String> may = new TreeSet<>();
      Set<String> today = new TreeSet<>();
      for (Map.Entry<String, String> other : rule.packages().entrySet()) {
        if (other.getKey().equals(layer.getKey())) {
          continue;
        }
        Set<String> by = rule.accessedBy().get(other.getKey());
        if (by == null || by.contains(layer.getKey())) {
          may.add(other.getValue());
        }
        if (depends(layer.getValue(), other.getValue())) {
          today.add(other.getValue());
        }
      }
      rows.put(layer.getValue(), new Row(may, today));
    }
    return rows;
  }

  /** Whether a class of the {@code from} pattern depends on one of the {@code to} pattern. */
  private static boolean depends(String from, String to) {
    for (JavaClass c : CLASSES) {
      if (!in(c.getPackageName(), from)) {
        continue;
      }
      for (Dependency d : c.getDirectDependenciesFromSelf()) {
        if (in(d.getTargetClass().getPackageName(), to)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Whether a package is in a pattern: {@code x..} is x and below, {@code x} is x alone. */
  private static boolean in(String pkg, String pattern) {
    String p = "io.meshplan." + pattern;
    if (p.endsWith("..")) {
      String base = p.substring(0, p.length() - 2);
      return pkg.equals(base) || pkg.startsWith(base + ".");
    }
    return pkg.equals(p);
  }

  private static final Pattern CHAIN = Pattern.compile(
      "layeredArchitecture\\(\\)(.*?)\\.check\\(", Pattern.DOTALL);
  private static final Pattern LAYER = Pattern.compile(
      "\\.layer\\(\"([^\"]+)\"\\)\\s*\\.definedBy\\(\"io\\.meshplan\\.([^\"]+)\"\\)");
  private static final Pattern WHERE = Pattern.compile(
      "\\.whereLayer\\(\"([^\"]+)\"\\)\\s*\\.(mayNotBeAccessedByAnyLayer\\(\\)"
          + "|mayOnlyBeAccessedByLayers\\(([^)]*)\\))");

  /** The layered rules of LayeringTest's source, in source order. */
  static List<Rule> rules(String source) {
    List<Rule> out = new ArrayList<>();
    Matcher chain = CHAIN.matcher(source);
    while (chain.find()) {
      Map<String, String> packages = new LinkedHashMap<>();
      Matcher l = LAYER.matcher(chain.group(1));
      while (l.find()) {
        packages.put(l.group(1), l.group(2));
      }
      Map<String, Set<String>> by = new TreeMap<>();
      Matcher w = WHERE.matcher(chain.group(1));
      while (w.find()) {
        Set<String> names = new TreeSet<>();
        if (w.group(3) != null) {
          Matcher q = Pattern.compile("\"([^\"]+)\"").matcher(w.group(3));
          while (q.find()) {
            names.add(q.group(1));
          }
        }
        by.put(w.group(1), names);
      }
      out.add(new Rule(packages, by));
    }
    return out;
  }

  /** The rows of the first table whose header line is {@code header}. */
  private static List<List<String>> table(List<String> doc, String header) {
    List<List<List<String>>> all = tables(doc, header);
    assertThat(all).as("a table headed %s in %s", header, DOC).isNotEmpty();
    return all.get(0);
  }

  /** The rows of every table whose header line is {@code header}, cells trimmed. */
  private static List<List<List<String>>> tables(List<String> doc, String header) {
    List<List<List<String>>> out = new ArrayList<>();
    for (int i = 0; i < doc.size(); i++) {
      if (!doc.get(i).strip().equals(header)) {
        continue;
      }
      List<List<String>> rows = new ArrayList<>();
      for (int j = i + 2; j < doc.size() && doc.get(j).startsWith("|"); j++) {
        String line = doc.get(j).strip();
        List<String> cells = new ArrayList<>();
        for (String c : line.substring(1, line.length() - 1).split("\\|", -1)) {
          cells.add(c.strip());
        }
        rows.add(cells);
      }
      out.add(rows);
    }
    return out;
  }

  /** The names in backquotes of a cell: {@code `export`, `deploy`} gives export and deploy. */
  private static List<String> names(String cell) {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile("`([^`]+)`").matcher(cell);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  private static String single(String cell) {
    List<String> n = names(cell);
    assertThat(n).as("the layer cell %s", cell).hasSize(1);
    return n.get(0);
  }

  private static String render(List<Map<String, Row>> tables) {
    StringBuilder b = new StringBuilder();
    for (Map<String, Row> t : tables) {
      b.append("| layer | may import | imports today |\n|---|---|---|\n");
      t.forEach((layer, row) -> b.append("| `").append(layer).append("` | ")
          .append(cells(row.mayImport())).append(" | ").append(cells(row.importsToday()))
          .append(" |\n"));
      b.append('\n');
    }
    return b.toString();
  }

  private static String cells(Set<String> names) {
    return names.isEmpty() ? "nothing"
        : names.stream().map(n -> "`" + n + "`").collect(Collectors.joining(", "));
  }
}
