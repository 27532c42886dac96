package io.meshplan.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Consumer;

/**
 * Adds fields to the JSON a command prints or saves (a plan or a simulation, written by its own
 * layer): parsed, changed, and written back pretty-printed with a final newline, the memory
 * verdict {@code fits} kept last where there is one. The one place commands extend their JSON.
 */
final class JsonEdit {
  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(SerializationFeature.INDENT_OUTPUT);

  private JsonEdit() {}

  /**
   * Changes a JSON object.
   *
   * @param json the text of a JSON object meshplan wrote
   * @param change what to add or replace
   * @return the text, ending in a newline
   */
  static String edit(String json, Consumer<ObjectNode> change) {
    try {
      ObjectNode root = (ObjectNode) MAPPER.readTree(json);
      change.accept(root);
      JsonNode fits = root.remove("fits");
      if (fits != null) {
        root.set("fits", fits);
      }
      return write(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot extend meshplan's own JSON", e);
    }
  }

  /**
   * Reads JSON meshplan wrote, to nest it in another object.
   *
   * @param json the text
   * @return the tree
   */
  static JsonNode tree(String json) {
    try {
      return MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot read meshplan's own JSON", e);
    }
  }

  /**
   * Writes a tree pretty-printed.
   *
   * @param node the tree
   * @return the text, ending in a newline
   */
  static String write(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON", e);
    }
  }
}
