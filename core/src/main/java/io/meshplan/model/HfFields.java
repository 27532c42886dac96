package io.meshplan.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import java.util.Map;

/**
 * Typed access to a {@code config.json}'s fields, with messages naming the file and the field, and
 * the defaults of the family's transformers configuration class for fields a config leaves out.
 *
 * @param root the config object (or its {@code text_config})
 * @param where the file name for messages
 * @param defaults field to default value (numbers and booleans); a field without one is required
 */
record HfFields(JsonNode root, String where, Map<String, Object> defaults) {
  /** Without defaults. */
  HfFields(JsonNode root, String where) {
    this(root, where, Map.of());
  }

  /** Whether the config gives the field a non-null value. */
  boolean given(String key) {
    return root.has(key) && !root.get(key).isNull();
  }

  String string(String key) {
    JsonNode n = root.get(key);
    if (n == null || n.isNull()) {
      throw new InputException(where + ": missing field '" + key + "'");
    }
    if (!n.isTextual()) {
      throw new InputException(where + ": field '" + key + "' must be a string, got " + n);
    }
    return n.asText();
  }

  int positive(String key) {
    JsonNode n = root.get(key);
    if ((n == null || n.isNull()) && defaults.get(key) instanceof Integer d) {
      return d;
    }
    if (n == null || n.isNull()) {
      throw new InputException(where + ": missing field '" + key + "'");
    }
    if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() <= 0) {
      throw new InputException(where + ": field '" + key
          + "' must be a positive integer below 2^31, got " + n);
    }
    return n.asInt();
  }

  /** A positive integer, or {@code dflt} when absent or null. */
  int positive(String key, int dflt) {
    return given(key) || defaults.containsKey(key) ? positive(key) : dflt;
  }

  /** A positive number, or 0 when absent or null (an off switch such as a soft cap). */
  double positiveOrOff(String key) {
    JsonNode n = root.get(key);
    if (n == null || n.isNull()) {
      return defaults.get(key) instanceof Double d ? d : 0;
    }
    if (!n.isNumber() || !(n.asDouble() > 0) || !Double.isFinite(n.asDouble())) {
      throw new InputException(where + ": field '" + key + "' must be a positive number or "
          + "null, got " + n);
    }
    return n.asDouble();
  }

  boolean bool(String key, boolean dflt) {
    JsonNode n = root.get(key);
    if (n == null || n.isNull()) {
      return defaults.get(key) instanceof Boolean d ? d : dflt;
    }
    if (!n.isBoolean()) {
      throw new InputException(where + ": field '" + key + "' must be true or false, got " + n);
    }
    return n.asBoolean();
  }
}
