package io.meshplan.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.model.Architecture;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Numerics;
import io.meshplan.model.Presets;
import io.meshplan.model.RopeScaling;
import io.meshplan.util.InputException;
import io.meshplan.util.TreeReaders;

/**
 * The {@code model.architecture.numerics} object of a plan file ({@link PlanJson}): the rotary
 * base and scaling, norm epsilon, dropout, residual wiring and multipliers of the model ({@link
 * Numerics}), which {@code export --plan} writes into the framework's file. A plan written before
 * the object existed reads with the numbers of the preset it names, else its family's ({@link
 * Numerics#DEFAULT} for LLaMA-style models, Megatron-LM's GPT for GPT-style ones), which are what
 * meshplan priced and exported for it then.
 */
final class NumericsJson {
  /** The field's name in {@code model.architecture}. */
  static final String FIELD = "numerics";

  private NumericsJson() {}

  /**
   * Writes the numbers.
   *
   * @param arch the {@code architecture} object
   * @param n the numbers
   */
  static void write(ObjectNode arch, Numerics n) {
    ObjectNode o = arch.putObject(FIELD);
    o.put("ropeTheta", n.ropeTheta());
    o.put("rotaryFraction", n.rotaryFraction());
    RopeScaling s = n.ropeScaling();
    if (!(s instanceof RopeScaling.None)) {
      scaling(o.putObject("ropeScaling"), s);
    }
    o.put("normEps", n.normEps());
    o.put("attentionDropout", n.attentionDropout());
    o.put("hiddenDropout", n.hiddenDropout());
    o.put("parallelResidual", n.parallelResidual());
    Numerics.Multipliers m = n.multipliers();
    if (!m.equals(Numerics.Multipliers.NONE)) {
      ObjectNode x = o.putObject("multipliers");
      x.put("embedding", m.embedding());
      x.put("residual", m.residual());
      x.put("attention", m.attention());
      x.put("logits", m.logits());
    }
  }

  private static void scaling(ObjectNode o, RopeScaling s) {
    if (s instanceof RopeScaling.Llama3 l) {
      o.put("type", "llama3").put("factor", l.factor()).put("lowFreqFactor", l.lowFreq())
          .put("highFreqFactor", l.highFreq()).put("originalMaxPositions", l.originalMax());
    } else if (s instanceof RopeScaling.Yarn y) {
      o.put("type", "yarn").put("factor", y.factor()).put("originalMaxPositions",
          y.originalMax()).put("betaFast", y.betaFast()).put("betaSlow", y.betaSlow())
          .put("mscale", y.mscale()).put("mscaleAllDim", y.mscaleAllDim())
          .put("truncate", y.truncate());
    } else if (s instanceof RopeScaling.Linear l) {
      o.put("type", "linear").put("factor", l.factor());
    } else if (s instanceof RopeScaling.Other x) {
      o.put("type", "other").put("name", x.type());
    }
  }

  /**
   * Reads the numbers, or the default of a plan written without them.
   *
   * @param where the file and field, for messages
   * @param arch the {@code architecture} object
   * @param name the model's name
   * @param family the model's family
   * @return the numbers
   * @throws InputException naming the field that is missing or wrong
   */
  static Numerics read(String where, JsonNode arch, String name, ModelSpec.Family family) {
    JsonNode o = arch.get(FIELD);
    if (o == null || o.isNull()) {
      if (Presets.contains(name)) {
        return Presets.get(name).arch().numerics();
      }
      return family == ModelSpec.Family.GPT ? Architecture.megatronGpt(1).numerics()
          : Numerics.DEFAULT;
    }
    String at = where + ": " + FIELD;
    if (!o.isObject()) {
      throw new InputException(at + ": expected an object");
    }
    TreeReaders.requireKnownFields(at, o, java.util.Set.of("ropeTheta", "rotaryFraction",
        "ropeScaling", "normEps", "attentionDropout", "hiddenDropout", "parallelResidual",
        "multipliers"));
    try {
      JsonNode m = o.get("multipliers");
      if (m != null && m.isObject()) {
        TreeReaders.requireKnownFields(at + ".multipliers", m, java.util.Set.of("embedding",
            "residual", "attention", "logits"));
      }
      return new Numerics(number(at, o, "ropeTheta"), number(at, o, "rotaryFraction"),
          o.has("ropeScaling") && !o.get("ropeScaling").isNull()
              ? scaling(at + ".ropeScaling", o.get("ropeScaling")) : RopeScaling.NONE,
          number(at, o, "normEps"), number(at, o, "attentionDropout"),
          number(at, o, "hiddenDropout"), bool(at, o, "parallelResidual"),
          m == null || m.isNull() ? Numerics.Multipliers.NONE
              : new Numerics.Multipliers(number(at, m, "embedding"), number(at, m, "residual"),
                  number(at, m, "attention"), number(at, m, "logits")));
    } catch (IllegalArgumentException e) {
      throw new InputException(at + ": " + e.getMessage(), e);
    }
  }

  private static RopeScaling scaling(String at, JsonNode s) {
    if (!s.isObject()) {
      throw new InputException(at + ": expected an object");
    }
    JsonNode t = s.get("type");
    String type = t != null && t.isTextual() ? t.asText() : "";
    java.util.Set<String> known = switch (type) {
      case "llama3" -> java.util.Set.of("type", "factor", "lowFreqFactor", "highFreqFactor",
          "originalMaxPositions");
      case "yarn" -> java.util.Set.of("type", "factor", "originalMaxPositions", "betaFast",
          "betaSlow", "mscale", "mscaleAllDim", "truncate");
      case "linear" -> java.util.Set.of("type", "factor");
      case "other" -> java.util.Set.of("type", "name");
      default -> null;
    };
    if (known != null) {
      TreeReaders.requireKnownFields(at, s, known);
    }
    return switch (type) {
      case "llama3" -> new RopeScaling.Llama3(number(at, s, "factor"),
          number(at, s, "lowFreqFactor"), number(at, s, "highFreqFactor"),
          integer(at, s, "originalMaxPositions"));
      case "yarn" -> new RopeScaling.Yarn(number(at, s, "factor"),
          integer(at, s, "originalMaxPositions"), number(at, s, "betaFast"),
          number(at, s, "betaSlow"), number(at, s, "mscale"), number(at, s, "mscaleAllDim"),
          bool(at, s, "truncate"));
      case "linear" -> new RopeScaling.Linear(number(at, s, "factor"));
      case "other" -> {
        JsonNode n = s.get("name");
        if (n == null || !n.isTextual()) {
          throw new InputException(at + ": field 'name' must be a string");
        }
        yield new RopeScaling.Other(n.asText());
      }
      default -> throw new InputException(at + ": field 'type' is " + t + "; expected llama3,"
          + " yarn, linear or other");
    };
  }

  private static double number(String at, JsonNode o, String key) {
    JsonNode v = o.get(key);
    if (v == null || !v.isNumber() || !Double.isFinite(v.doubleValue())) {
      throw new InputException(at + ": field '" + key + "' must be a finite number, got " + v);
    }
    return v.doubleValue();
  }

  private static int integer(String at, JsonNode o, String key) {
    JsonNode v = o.get(key);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
      throw new InputException(at + ": field '" + key + "' must be a 32-bit integer, got " + v);
    }
    return v.intValue();
  }

  private static boolean bool(String at, JsonNode o, String key) {
    JsonNode v = o.get(key);
    if (v == null || !v.isBoolean()) {
      throw new InputException(at + ": field '" + key + "' must be true or false, got " + v);
    }
    return v.booleanValue();
  }
}
