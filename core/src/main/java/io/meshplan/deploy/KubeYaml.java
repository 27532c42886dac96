package io.meshplan.deploy;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.util.List;

/**
 * Serializes typed Kubernetes objects (the fabric8 model, and this package's records for custom
 * resources) to YAML with Jackson: strings are quoted wherever YAML would read them as anything
 * else, so no value can change the document's structure.
 */
final class KubeYaml {
  private static final ObjectMapper YAML = YAMLMapper.builder(YAMLFactory.builder()
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
      .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .disable(YAMLGenerator.Feature.SPLIT_LINES)
      .build())
      .defaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL,
          JsonInclude.Include.NON_NULL))
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .build();

  private KubeYaml() {}

  /**
   * Writes objects as a multi-document YAML stream.
   *
   * @param objects the objects, in order
   * @return the documents, separated by {@code ---}
   */
  static String write(List<?> objects) {
    StringBuilder sb = new StringBuilder();
    for (Object o : objects) {
      if (sb.length() > 0) {
        sb.append("---\n");
      }
      try {
        sb.append(YAML.writeValueAsString(o));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("cannot write YAML", e);
      }
    }
    return sb.toString();
  }

  /**
   * Escapes text for a Kubernetes field that expands {@code $(VAR)} references (container
   * command, args and env values): each {@code $} becomes {@code $$}, which Kubernetes reads back
   * as one {@code $}.
   *
   * @param text the literal text
   * @return the text Kubernetes turns back into {@code text}
   */
  static String literal(String text) {
    return text.replace("$", "$$");
  }
}
