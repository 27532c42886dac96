package io.meshplan.doctor;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Writes a {@link DoctorReport} as the JSON contract of {@code meshplan doctor --json}: {@code
 * devices[]} with {@code name} and {@code ports[]} ({@code port}, {@code state}, {@code physState},
 * {@code linkLayer}, {@code rateGbps} in Gb/s, {@code gidIndex}, {@code gidKind}, {@code gid}, {@code
 * gidNote}, {@code netdev}, {@code selected}), {@code env} (sorted by name), {@code interfaces[]} and
 * {@code warnings[]}. Field order is fixed, so the same report gives the same bytes.
 */
public final class DoctorJson {
  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private DoctorJson() {}

  /**
   * Renders the report.
   *
   * @param report the report
   * @return pretty-printed JSON, without a trailing newline
   */
  public static String write(DoctorReport report) {
    ObjectNode top = MAPPER.createObjectNode();
    ArrayNode devices = top.putArray("devices");
    for (DeviceReport d : report.devices()) {
      ObjectNode dn = devices.addObject();
      dn.put("name", d.name());
      ArrayNode ports = dn.putArray("ports");
      for (PortReport p : d.ports()) {
        ports.add(port(p));
      }
    }
    ObjectNode env = top.putObject("env");
    report.env().forEach(env::put);
    ArrayNode ifaces = top.putArray("interfaces");
    for (NetInterface i : report.interfaces()) {
      ObjectNode n = ifaces.addObject();
      n.put("name", i.name());
      n.put("operstate", i.operstate());
      // An attribute sysfs did not give as a number is unknown: null, as a port's rate is.
      known(n, "type", i.type());
      known(n, "mtu", i.mtu());
      n.put("address", i.address());
      ArrayNode rdma = n.putArray("rdmaDevices");
      i.rdmaDevices().forEach(rdma::add);
    }
    ArrayNode warnings = top.putArray("warnings");
    report.warnings().forEach(warnings::add);
    try {
      return MAPPER.writeValueAsString(top);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a JSON tree", e);
    }
  }

  private static ObjectNode port(PortReport p) {
    PortInfo info = p.info();
    ObjectNode n = MAPPER.createObjectNode();
    n.put("port", info.port());
    n.put("state", info.state());
    n.put("physState", info.physState());
    n.put("linkLayer", info.linkLayer());
    if (info.rateGbps().isPresent()) {
      double r = info.rateGbps().getAsDouble();
      if (r == Math.rint(r)) {
        n.put("rateGbps", (long) r);
      } else {
        n.put("rateGbps", r);
      }
    } else {
      n.putNull("rateGbps");
    }
    if (p.gid().isPresent()) {
      n.put("gidIndex", p.gid().get().index());
      n.put("gidKind", p.gid().get().kind().name());
      n.put("gid", p.gid().get().address());
    } else {
      n.putNull("gidIndex");
      n.putNull("gidKind");
      n.putNull("gid");
    }
    n.put("gidNote", p.gidNote());
    if (p.netdev().isEmpty()) {
      n.putNull("netdev");
    } else {
      n.put("netdev", p.netdev());
    }
    n.put("selected", p.selected());
    return n;
  }

  /** A sysfs number, or null where it was unknown (-1 in {@link NetInterface}). */
  private static void known(ObjectNode n, String field, int value) {
    if (value >= 0) {
      n.put(field, value);
    } else {
      n.putNull(field);
    }
  }
}
