package io.meshplan.intraop.ilp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.TreeReaders;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Dumps an {@link IlpProblem} as JSON and reads it back, so that a solve can be replayed and
 * compared outside the planner (as XLA's auto-sharding dumps its solver request). {@code +Infinity}
 * (a forbidden choice) is written as the string {@code "inf"}. Format version 1:
 * {@code {"version":1,"nodeCosts":[[...]],"edges":[{"u":0,"v":1,"costs":[...]}],"memory":{"budget":
 * b,"steps":[...],"itemNode":[...],"itemStart":[...],"itemEnd":[...],"itemBytes":[[...]]}}}.
 */
public final class IlpProblemJson {
  private static final ObjectMapper MAPPER = TreeReaders.json();

  private IlpProblemJson() {}

  /**
   * Writes a problem.
   *
   * @param p the problem
   * @return its JSON text
   */
  public static String write(IlpProblem p) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("version", 1);
    ArrayNode nodes = root.putArray("nodeCosts");
    for (double[] c : p.nodeCosts()) {
      nodes.add(numbers(c));
    }
    ArrayNode edges = root.putArray("edges");
    for (IlpEdge e : p.edges()) {
      ObjectNode en = edges.addObject();
      en.put("u", e.u());
      en.put("v", e.v());
      en.set("costs", numbers(e.raw()));
    }
    MemoryConstraint m = p.memory();
    if (m != null) {
      ObjectNode mn = root.putObject("memory");
      mn.put("budget", m.budget());
      mn.set("steps", ints(m.steps()));
      mn.set("itemNode", ints(m.itemNode()));
      mn.set("itemStart", ints(m.itemStart()));
      mn.set("itemEnd", ints(m.itemEnd()));
      ArrayNode bytes = mn.putArray("itemBytes");
      for (double[] b : m.itemBytes()) {
        bytes.add(numbers(b));
      }
    }
    return root.toString();
  }

  /**
   * Reads a problem written by {@link #write}.
   *
   * @param file the file, for messages
   * @param text the JSON text
   * @return the problem
   * @throws InputException naming the file when the text is not such a problem
   */
  public static IlpProblem read(String file, String text) {
    try {
      JsonNode root = MAPPER.readTree(text);
      if (root == null || root.path("version").asInt() != 1) {
        throw new InputException(file + ": not an ILP dump of version 1");
      }
      JsonNode nc = root.path("nodeCosts");
      double[][] costs = new double[nc.size()][];
      for (int v = 0; v < costs.length; v++) {
        costs[v] = doubles(nc.get(v));
      }
      List<IlpEdge> edges = new ArrayList<>();
      for (JsonNode e : root.path("edges")) {
        edges.add(new IlpEdge(e.path("u").asInt(), e.path("v").asInt(), doubles(e.path("costs"))));
      }
      MemoryConstraint m = null;
      JsonNode mn = root.get("memory");
      if (mn != null) {
        JsonNode ib = mn.path("itemBytes");
        double[][] bytes = new double[ib.size()][];
        for (int i = 0; i < bytes.length; i++) {
          bytes[i] = doubles(ib.get(i));
        }
        m = new MemoryConstraint(mn.path("budget").asDouble(), intArray(mn.path("steps")),
            intArray(mn.path("itemNode")), intArray(mn.path("itemStart")),
            intArray(mn.path("itemEnd")), bytes);
      }
      return new IlpProblem(costs, edges, m);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new InputException(file + ": not valid JSON (" + e.getOriginalMessage() + ")");
    } catch (IllegalArgumentException e) {
      throw new InputException(file + ": inconsistent ILP dump: " + e.getMessage());
    }
  }

  /**
   * Reads a dump from a file.
   *
   * @param file the file
   * @return the problem
   */
  public static IlpProblem read(Path file) {
    return read(file.toString(),
        InputFiles.readString(file, InputFiles.PROFILE_MAX_BYTES, "ILP dump"));
  }

  private static ArrayNode numbers(double[] a) {
    ArrayNode n = MAPPER.createArrayNode();
    for (double x : a) {
      if (x == Double.POSITIVE_INFINITY) {
        n.add("inf");
      } else {
        n.add(x);
      }
    }
    return n;
  }

  private static ArrayNode ints(int[] a) {
    ArrayNode n = MAPPER.createArrayNode();
    for (int x : a) {
      n.add(x);
    }
    return n;
  }

  private static double[] doubles(JsonNode n) {
    double[] a = new double[n.size()];
    for (int i = 0; i < a.length; i++) {
      JsonNode x = n.get(i);
      a[i] = x.isTextual() && x.asText().equals("inf") ? Double.POSITIVE_INFINITY : x.asDouble();
    }
    return a;
  }

  private static int[] intArray(JsonNode n) {
    int[] a = new int[n.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = n.get(i).asInt();
    }
    return a;
  }
}
