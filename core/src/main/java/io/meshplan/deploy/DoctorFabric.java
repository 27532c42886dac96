package io.meshplan.deploy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.util.InputException;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads the output of {@code meshplan doctor --json} (see {@code doctor.DoctorJson}): the {@code env}
 * map becomes the launch environment, and the {@code selected} ports of {@code devices[].ports[]}
 * the RDMA ports, RoCE when their {@code linkLayer} is {@code Ethernet}.
 */
public final class DoctorFabric {
  private static final ObjectMapper JSON = TreeReaders.json();

  private DoctorFabric() {}

  /**
   * Parses doctor JSON.
   *
   * @param where the file name, for messages
   * @param text the JSON text
   * @return the fabric
   * @throws InputException naming the file and the field that is wrong
   */
  public static FabricEnv read(String where, String text) {
    JsonNode root;
    try {
      root = JSON.readTree(text);
    } catch (JsonProcessingException e) {
      throw new InputException(where + ": not doctor JSON (" + JsonErrors.describe(e)
          + "); write it with 'meshplan doctor --json'");
    }
    if (root == null || !root.isObject() || !root.path("env").isObject()
        || !root.path("devices").isArray()) {
      throw new InputException(where + ": not doctor JSON (expected an object with 'devices' and"
          + " 'env'); write it with 'meshplan doctor --json'");
    }
    TreeMap<String, String> env = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : root.get("env").properties()) {
      if (!e.getValue().isTextual()) {
        throw new InputException(where + ": env." + e.getKey() + " must be a string");
      }
      env.put(e.getKey(), e.getValue().asText());
    }
    List<String> ports = new ArrayList<>();
    boolean roce = false;
    JsonNode devices = root.get("devices");
    for (int d = 0; d < devices.size(); d++) {
      JsonNode dev = devices.get(d);
      String name = dev.path("name").asText("");
      JsonNode ps = dev.path("ports");
      for (int p = 0; p < ps.size(); p++) {
        JsonNode port = ps.get(p);
        if (port.path("selected").asBoolean(false)) {
          if (!port.path("port").canConvertToInt() || name.isEmpty()) {
            throw new InputException(where + ": devices[" + d + "].ports[" + p
                + "] needs a device name and an integer 'port'");
          }
          ports.add(name + ":" + port.get("port").asInt());
          roce |= "Ethernet".equals(port.path("linkLayer").asText(""));
        }
      }
    }
    try {
      return new FabricEnv(env, ports, roce);
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": " + e.getMessage());
    }
  }
}
