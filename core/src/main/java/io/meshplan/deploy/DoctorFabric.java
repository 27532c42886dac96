package io.meshplan.deploy;

import io.meshplan.util.TerminalText;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.doctor.FabricVariable;
import io.meshplan.doctor.SysfsNames;
import io.meshplan.util.InputException;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reads the output of {@code meshplan doctor --json} (see {@code doctor.DoctorJson}): the {@code env}
 * map becomes the launch environment, the {@code selected} ports of {@code devices[].ports[]} the
 * RDMA ports, RoCE when their {@code linkLayer} is {@code Ethernet}, and the up IPoIB interfaces
 * of {@code interfaces[]} with the ports' {@code netdev}s the interfaces rdmacm can use.
 *
 * <p>The report is an input that reaches every launch file, so it may carry only what the doctor
 * writes: the variables of {@link FabricVariable}, each with a value of its form and consistent
 * with the selected ports ({@link FabricVariable#inconsistency}). Anything else ({@code
 * LD_PRELOAD}, {@code NCCL_DEBUG}, a value with a shell metacharacter) is refused, naming the
 * variable; a variable of one's own is given for the launch, not in the report.
 */
public final class DoctorFabric {
  private static final ObjectMapper JSON = TreeReaders.json();
  /** The {@code type} of an IPoIB interface in {@code interfaces[]} (ARPHRD_INFINIBAND). */
  private static final int IPOIB = 32;

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
    TreeMap<String, String> env = environment(where, root.get("env"));
    List<String> ports = new ArrayList<>();
    TreeSet<String> rdmacm = new TreeSet<>();
    boolean roce = false;
    JsonNode devices = root.get("devices");
    for (int d = 0; d < devices.size(); d++) {
      JsonNode dev = devices.get(d);
      String name = dev.path("name").asText("");
      JsonNode ps = dev.path("ports");
      for (int p = 0; p < ps.size(); p++) {
        JsonNode port = ps.get(p);
        if (port.path("selected").asBoolean(false)) {
          String at = where + ": devices[" + d + "].ports[" + p + "]";
          if (!port.path("port").canConvertToInt() || !SysfsNames.device(name)) {
            throw new InputException(at + " needs a device name (letters, digits, '_', '.', '-')"
                + " and an integer 'port'");
          }
          ports.add(name + ":" + port.get("port").asInt());
          roce |= "Ethernet".equals(port.path("linkLayer").asText(""));
          netdev(at, port).ifPresent(rdmacm::add);
        }
      }
    }
    rdmacm.addAll(ipoibInterfaces(where, root.path("interfaces")));
    FabricVariable.inconsistency(env, ports, roce).ifPresent(why -> {
      throw new InputException(where + ": " + why + "; meshplan doctor writes no such report"
          + " (write it again with 'meshplan doctor --json')");
    });
    try {
      return new FabricEnv(env, ports, roce, new TreeSet<>(env.keySet()), rdmacm);
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": " + e.getMessage());
    }
  }

  /** The {@code env} object: only the doctor's variables, each of its form. */
  private static TreeMap<String, String> environment(String where, JsonNode node) {
    TreeMap<String, String> env = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : node.properties()) {
      String key = e.getKey();
      FabricVariable v = FabricVariable.named(key).orElseThrow(() -> new InputException(where
          + ": env." + TerminalText.escape(key) + " is not a variable meshplan doctor writes (it"
          + " writes " + FabricVariable.names() + "); set a variable of your own for the launch instead"));
      if (!e.getValue().isTextual()) {
        throw new InputException(where + ": env." + key + " must be a string");
      }
      String value = e.getValue().asText();
      if (!v.accepts(value)) {
        throw new InputException(where + ": env." + key + " is '" + TerminalText.escape(value)
            + "', not a value"
            + " meshplan doctor writes (" + v.form() + ")");
      }
      env.put(key, value);
    }
    return env;
  }

  private static Optional<String> netdev(String at, JsonNode port) {
    JsonNode n = port.path("netdev");
    if (n.isMissingNode() || n.isNull() || n.asText("").isEmpty()) {
      return Optional.empty();
    }
    if (!n.isTextual() || !SysfsNames.netInterface(n.asText())) {
      throw new InputException(at + ".netdev is not an interface name (1 to 15 letters, digits,"
          + " '_', '.' or '-')");
    }
    return Optional.of(n.asText());
  }

  /** The up interfaces of type IPoIB; older reports without {@code interfaces} have none. */
  private static List<String> ipoibInterfaces(String where, JsonNode interfaces) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < interfaces.size(); i++) {
      JsonNode n = interfaces.get(i);
      // The type as a long: 2^32 + 32 is not IPoIB's 32, which an int read would wrap it to.
      JsonNode type = n.path("type");
      if (type.isIntegralNumber() && type.canConvertToLong() && type.longValue() == IPOIB
          && "up".equals(n.path("operstate").asText(""))) {
        String name = n.path("name").asText("");
        if (!SysfsNames.netInterface(name)) {
          throw new InputException(where + ": interfaces[" + i + "].name is not an interface"
              + " name (1 to 15 letters, digits, '_', '.' or '-')");
        }
        out.add(name);
      }
    }
    return out;
  }
}
