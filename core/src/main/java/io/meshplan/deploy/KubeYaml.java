package io.meshplan.deploy;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.fasterxml.jackson.dataformat.yaml.util.StringQuotingChecker;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Serializes typed Kubernetes objects (the fabric8 model, and this package's records for custom
 * resources) to YAML with Jackson: strings are quoted wherever YAML would read them as anything
 * else, so no value can change the document's structure or its type. Jackson quotes booleans,
 * nulls and plain decimals; {@link Quoting} adds what YAML 1.1 or 1.2 resolvers (SnakeYAML, Go's
 * yaml) also read as numbers or dates: exponents ({@code 1e9}, {@code 1e-4}), hexadecimal, octal
 * and binary integers, base-60 numbers ({@code 1:30}), infinities, NaN and timestamps. Left bare,
 * {@code --shm-size 1e9} or a training argument {@code 1e-4} reached Kubernetes as a number where
 * it reads a string.
 */
final class KubeYaml {
  private static final ObjectMapper YAML = YAMLMapper.builder(YAMLFactory.builder()
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
      .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .disable(YAMLGenerator.Feature.SPLIT_LINES)
      .stringQuotingChecker(new Quoting())
      .build())
      .defaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL,
          JsonInclude.Include.NON_NULL))
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .build();

  private KubeYaml() {}

  /** Jackson's quoting, and quotes for every other plain scalar YAML reads as a non-string. */
  static final class Quoting extends StringQuotingChecker.Default {
    private static final long serialVersionUID = 1L;
    private static final Pattern NOT_A_STRING = Pattern.compile(String.join("|",
        "[-+]?(\\.[0-9_]+|[0-9][0-9_]*(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?",
        "[-+]?0[xX][0-9a-fA-F_]+", "[-+]?0[oO][0-7_]+", "[-+]?0[bB][01_]+",
        "[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?",
        "[-+]?\\.(inf|Inf|INF)", "\\.(nan|NaN|NAN)",
        "[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?", "[yYnN~=]", "<<"));

    @Override
    public boolean needToQuoteValue(String value) {
      return super.needToQuoteValue(value) || NOT_A_STRING.matcher(value).matches();
    }
  }

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
