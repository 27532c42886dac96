package io.meshplan.util;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * The one place where meshplan's JSON and YAML readers get their parsers, so that every file a
 * user gives is read under the same limits, whatever it is (plan, cluster, model config, fabric,
 * grid, profile, NCCL log, ILP dump).
 *
 * <ul>
 *   <li>Nesting depth: at most {@link #MAX_DEPTH} levels of objects and arrays. The deepest real
 *       input, a plan file, nests 5 levels (plan, stages, stage, mesh, axis list); a Hugging Face
 *       config with a nested {@code rope_scaling} 3. A deeper file is hostile or broken, and
 *       refusing it early keeps every later tree walk shallow.</li>
 *   <li>One value per key: a key given twice in one mapping (JSON or YAML) is refused at its
 *       line, since the readers would otherwise keep the last one silently and a file could say
 *       two things at once.</li>
 *   <li>One document: text after the first JSON value (or a second YAML document) is refused;
 *       a file with something appended is not the file its writer made.</li>
 *   <li>Plain YAML: anchors, aliases and tags are refused ({@link PlainYamlFactory}), which also
 *       ends "billion laughs" documents at their first anchor. The SnakeYAML loader's alias limit
 *       ({@link #MAX_YAML_ALIASES}) is kept as a second guard.</li>
 *   <li>YAML size: at most {@link #MAX_YAML_CODE_POINTS} code points, above every byte cap in
 *       {@link InputFiles} so the byte caps stay the ones users meet.</li>
 * </ul>
 *
 * <p>A file past a limit fails with a {@link StreamConstraintsException} or a parse error at its
 * position; {@link JsonErrors} names the limit in its message, so each reader's usual "not a
 * valid ... file" line says which limit was met and where.
 */
public final class TreeReaders {
  /** The deepest nesting of objects and arrays a JSON or YAML input may have, in levels. */
  public static final int MAX_DEPTH = 100;
  /** The most aliases to collections a YAML input may have. */
  public static final int MAX_YAML_ALIASES = 50;
  /** The most code points a YAML input may have (128 Mi, the largest byte cap in InputFiles). */
  public static final int MAX_YAML_CODE_POINTS = 128 << 20;

  private static final StreamReadConstraints LIMITS =
      StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build();
  private static final ObjectMapper JSON = strict(new ObjectMapper(JsonFactory.builder()
      .streamReadConstraints(LIMITS).enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build()));
  private static final ObjectMapper YAML = strict(new ObjectMapper(yamlFactory()));

  private TreeReaders() {}

  /**
   * The shared JSON mapper, for reading (and writing) JSON under the limits above.
   *
   * @return a thread-safe mapper; callers must not reconfigure it
   */
  public static ObjectMapper json() {
    return JSON;
  }

  /**
   * The shared YAML mapper, for reading YAML under the limits above.
   *
   * @return a thread-safe mapper; callers must not reconfigure it
   */
  public static ObjectMapper yaml() {
    return YAML;
  }

  private static YAMLFactory yamlFactory() {
    LoaderOptions loader = new LoaderOptions();
    loader.setMaxAliasesForCollections(MAX_YAML_ALIASES);
    loader.setAllowRecursiveKeys(false);
    loader.setCodePointLimit(MAX_YAML_CODE_POINTS);
    loader.setNestingDepthLimit(MAX_DEPTH);
    loader.setAllowDuplicateKeys(false);
    return new PlainYamlFactory(YAMLFactory.builder().loaderOptions(loader)
        .streamReadConstraints(LIMITS).enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION));
  }

  private static ObjectMapper strict(ObjectMapper m) {
    return m.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  }

  /**
   * Refuses a field that an object of a file never holds, in one line that names the object, the
   * field (control characters escaped, clipped) and the fields it may hold, sorted: a misspelt
   * optional field would otherwise be dropped without a word.
   *
   * @param at the file and the object, for the message
   * @param object the object read
   * @param known every field the object may hold
   */
  public static void requireKnownFields(String at, com.fasterxml.jackson.databind.JsonNode object,
      java.util.Set<String> known) {
    for (java.util.Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!known.contains(k)) {
        throw new InputException(at + ": unknown field '"
            + TerminalText.escape(Words.clipped(k)) + "'; valid: "
            + String.join(", ", new java.util.TreeSet<>(known)));
      }
    }
  }
}
