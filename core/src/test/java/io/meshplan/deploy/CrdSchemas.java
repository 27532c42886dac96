package io.meshplan.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The OpenAPI v3 schemas of the KubeRay, Kubeflow and NVIDIA DRA driver CRDs (test resources
 * under {@code crd/}), turned into JSON Schema draft 4, which OpenAPI v3's schema object is a
 * dialect of:
 * {@code nullable} becomes a null type, {@code x-kubernetes-int-or-string} an integer-or-string,
 * other {@code x-kubernetes-*} keys are dropped, and an object with {@code properties} rejects
 * fields it does not list (what {@code kubectl apply --validate=strict} does), unless it preserves
 * unknown fields.
 */
final class CrdSchemas {
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Map<String, JsonSchema> CACHE = new ConcurrentHashMap<>();

  private CrdSchemas() {}

  /**
   * Validates an object against a CRD version's schema.
   *
   * @param resource the CRD file under {@code crd/}
   * @param version the version name, e.g. {@code v1}
   * @param object the object (parsed YAML)
   * @return the violations, sorted; empty when valid
   */
  static Set<String> violations(String resource, String version, JsonNode object) {
    JsonSchema schema = CACHE.computeIfAbsent(resource + "@" + version,
        k -> JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V4)
            .getSchema(toJsonSchema(openApiSchema(resource, version))));
    Set<String> out = new TreeSet<>();
    for (ValidationMessage m : schema.validate(object)) {
      out.add(m.getMessage());
    }
    return out;
  }

  static JsonNode openApiSchema(String resource, String version) {
    try (InputStream in = CrdSchemas.class.getResourceAsStream("/crd/" + resource)) {
      JsonNode crd = YAML.readTree(in);
      for (JsonNode v : crd.path("spec").path("versions")) {
        if (v.path("name").asText().equals(version)) {
          return v.path("schema").path("openAPIV3Schema").deepCopy();
        }
      }
      throw new IllegalArgumentException(resource + " has no version " + version);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Converts an OpenAPI v3 schema node in place, recursively, and returns it. */
  static JsonNode toJsonSchema(JsonNode node) {
    if (node instanceof ArrayNode a) {
      a.forEach(CrdSchemas::toJsonSchema);
      return a;
    }
    if (!(node instanceof ObjectNode o)) {
      return node;
    }
    boolean intOrString = o.path("x-kubernetes-int-or-string").asBoolean(false);
    boolean preserve = o.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
    boolean nullable = o.path("nullable").asBoolean(false);
    List<String> drop = new ArrayList<>();
    for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (k.startsWith("x-kubernetes-") || k.equals("nullable")) {
        drop.add(k);
      }
    }
    drop.forEach(o::remove);
    // Recurse into subschemas only: 'properties' maps names to schemas; 'default' and 'enum' are
    // values.
    if (o.has("properties")) {
      o.get("properties").forEach(CrdSchemas::toJsonSchema);
      if (!preserve && !o.has("additionalProperties")) {
        o.put("additionalProperties", false);
      }
    }
    for (String k : List.of("items", "additionalProperties", "not")) {
      if (o.has(k) && o.get(k).isObject()) {
        toJsonSchema(o.get(k));
      }
    }
    for (String k : List.of("allOf", "anyOf", "oneOf")) {
      if (o.has(k)) {
        toJsonSchema(o.get(k));
      }
    }
    if (intOrString) {
      o.remove("type");
      ArrayNode any = o.putArray("anyOf");
      any.addObject().put("type", "integer");
      any.addObject().put("type", "string");
    }
    if (nullable && o.has("type") && o.get("type").isTextual()) {
      String t = o.get("type").asText();
      o.putArray("type").add(t).add("null");
    }
    return o;
  }
}
