package io.meshplan.calibrate;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.cluster.Collective;
import io.meshplan.util.InputException;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Reads the JSON file that nccl-tests writes with {@code -J FILE.json} (format version 3, {@code
 * src/util.cu} of {@code NVIDIA/nccl-tests}): {@code args} (the command line, whose first element
 * names the binary), {@code config.devices[]} (one object per rank with {@code hostname}), and
 * {@code results[]} with {@code size} (bytes) and {@code out_of_place} / {@code in_place} objects
 * holding {@code time} (microseconds), {@code alg_bw} and {@code bus_bw} (GB/s).
 *
 * <p>nccl-tests writes the whole document on one line, so positions are line:column of each result
 * object in the file; the line is what {@link MeasuredPoint#line()} keeps.
 */
public final class NcclTestsJsonParser implements LogParser {
  private static final ObjectMapper MAPPER = TreeReaders.json();

  /** Creates the parser. */
  public NcclTestsJsonParser() {}

  @Override
  public boolean accepts(List<String> lines) {
    for (String l : lines) {
      String s = l.strip();
      if (!s.isEmpty()) {
        return s.startsWith("{") && String.join("\n", lines).contains("\"results\"");
      }
    }
    return false;
  }

  /** The ranks of a run and the nodes they span. */
  private record Group(int ranks, int nodes) {}

  @Override
  public ParseResult parse(String file, List<String> lines, int gpusPerNode) {
    List<MeasuredPoint> points = new ArrayList<>();
    List<ParseWarning> warnings = new ArrayList<>();
    String text = String.join("\n", lines);
    JsonNode root;
    List<Integer> resultLines = new ArrayList<>();
    try {
      root = MAPPER.readTree(text);
      resultLines = resultLines(text);
    } catch (IOException e) {
      if (JsonErrors.isAmbiguous(e)) {
        throw new InputException(file + ": not valid nccl-tests JSON (" + JsonErrors.describe(e)
            + ")", e);
      }
      warnings.add(invalidJson(file, e));
      return new ParseResult(points, warnings);
    }
    if (root == null || !root.isObject() || !root.path("results").isArray()) {
      warnings.add(new ParseWarning(file, 1, "JSON without a 'results' list; not nccl-tests -J"
          + " output"));
      return new ParseResult(points, warnings);
    }
    Optional<Collective> c = collective(root, file);
    if (c.isEmpty()) {
      warnings.add(new ParseWarning(file, 1, "cannot tell which collective: 'args' names no"
          + " *_perf binary and neither does the file name; no rows read"));
      return new ParseResult(points, warnings);
    }
    Group group = group(file, root.path("config"), gpusPerNode, warnings);
    if (group == null) {
      return new ParseResult(points, warnings);
    }
    JsonNode results = root.get("results");
    for (int i = 0; i < results.size(); i++) {
      int line = i < resultLines.size() ? resultLines.get(i) : 1;
      MeasuredPoint p = point(file, line, i, results.get(i), c.get(), group, warnings);
      if (p != null) {
        points.add(p);
      }
    }
    return new ParseResult(points, warnings);
  }

  private static ParseWarning invalidJson(String file, IOException e) {
    int line = 1;
    String msg = e.getMessage();
    boolean cut = false;
    if (e instanceof com.fasterxml.jackson.core.JsonProcessingException jpe) {
      msg = jpe.getOriginalMessage();
      cut = msg != null && msg.startsWith("Unexpected end-of-input");
      if (jpe.getLocation() != null) {
        line = Math.max(1, jpe.getLocation().getLineNr());
      }
    }
    // The phrase without its position, which the warning's line gives.
    String what = io.meshplan.util.JsonErrors.describe(e).replaceFirst(
        "^line [0-9]+, column [0-9]+: ", "");
    return new ParseWarning(file, line, "not valid JSON" + (cut ? " (truncated?)" : "") + ": "
        + firstLine(what) + "; no rows read");
  }

  /** The collective of the first {@code *_perf} binary in {@code args}, else of the file name. */
  private static Optional<Collective> collective(JsonNode root, String file) {
    Optional<Collective> c = Optional.empty();
    for (JsonNode a : root.path("args")) {
      c = CollectiveNames.fromPerfBinary(a.asText());
      if (c.isPresent()) {
        break;
      }
    }
    if (c.isEmpty()) {
      c = CollectiveNames.fromPerfBinary(file).or(() -> CollectiveNames.fromLooseName(file));
    }
    return c;
  }

  /**
   * The ranks and nodes from {@code config.devices} (one per rank, with its host name), else from
   * {@code config.nthreads * config.ngpus} with a warning.
   *
   * @return the group, or null (with a warning) when the GPU count is unknown
   */
  private static Group group(String file, JsonNode config, int gpusPerNode,
      List<ParseWarning> warnings) {
    JsonNode devices = config.path("devices");
    if (devices.isArray() && devices.size() > 0) {
      // One object per rank, each rank once: anything else is not nccl-tests' list, and counting
      // its entries as GPUs would write a group that was never measured.
      Set<String> hosts = new LinkedHashSet<>();
      Set<Long> ranks = new java.util.HashSet<>();
      for (int i = 0; i < devices.size(); i++) {
        JsonNode d = devices.get(i);
        JsonNode rank = d.path("rank");
        boolean ok = d.isObject() && devices.size() <= MeasurementBounds.MAX_GPUS
            && rank.isIntegralNumber() && rank.canConvertToLong() && rank.longValue() >= 0
            && rank.longValue() < devices.size() && ranks.add(rank.longValue());
        if (!ok) {
          warnings.add(new ParseWarning(file, 1, "config.devices[" + i + "] is not a device"
              + " with a rank of its own from 0 to " + (Math.min(devices.size(),
                  MeasurementBounds.MAX_GPUS) - 1) + ": the GPU count is unknown; no rows read"));
          return null;
        }
        hosts.add(d.path("hostname").asText(""));
      }
      return new Group(devices.size(), Math.max(1, hosts.size()));
    }
    if (config.path("ngpus").isMissingNode() || config.path("ngpus").isNull()) {
      warnings.add(new ParseWarning(file, 1, "no config.devices and no config.ngpus: the GPU"
          + " count is unknown; no rows read"));
      return null;
    }
    JsonNode threads = config.path("nthreads");
    OptionalInt gpus = MeasurementBounds.gpus(
        threads.isMissingNode() ? OptionalInt.of(1) : count(threads),
        count(config.path("ngpus")));
    if (gpus.isEmpty()) {
      warnings.add(new ParseWarning(file, 1, "config.nthreads " + threads.asText("1")
          + " x config.ngpus " + config.path("ngpus").asText() + " is not 1 to "
          + MeasurementBounds.MAX_GPUS + " GPUs: the GPU count is unknown; no rows read"));
      return null;
    }
    int ranks = gpus.getAsInt();
    warnings.add(new ParseWarning(file, 1, "no config.devices: assumed " + ranks + " GPUs"));
    return new Group(ranks, (ranks + gpusPerNode - 1) / gpusPerNode);
  }

  /** A count of the config: a whole number from 1 to {@link MeasurementBounds#MAX_GPUS}. */
  private static OptionalInt count(JsonNode n) {
    return n.isIntegralNumber() ? MeasurementBounds.count(n.asText(), 1,
        MeasurementBounds.MAX_GPUS) : OptionalInt.empty();
  }

  /**
   * The point of result {@code i}: its out-of-place numbers, else its in-place ones.
   *
   * @return the point, or null (with a warning) when a number is missing or out of range
   */
  private static MeasuredPoint point(String file, int line, int i, JsonNode r, Collective c,
      Group group, List<ParseWarning> warnings) {
    JsonNode oop = r.path("out_of_place");
    if (oop.isNull() || oop.isMissingNode()) {
      oop = r.path("in_place");
    }
    JsonNode size = r.path("size");
    long bytes = size.isIntegralNumber() && size.canConvertToLong() ? size.asLong() : -1;
    double us = num(oop.path("time"));
    if (Double.isNaN(us)) {
      us = num(oop.path("cpu_time"));
    }
    double alg = num(oop.path("alg_bw"));
    double bus = num(oop.path("bus_bw"));
    if (bytes < 0 || !(us > 0) || !(alg >= 0) || !(bus >= 0)) {
      warnings.add(new ParseWarning(file, line, String.format(Locale.ROOT,
          "result %d has an unusable size/time/alg_bw/bus_bw (%s, %s, %s, %s); skipped", i,
          r.path("size").asText("?"), oop.path("time").asText("?"),
          oop.path("alg_bw").asText("?"), oop.path("bus_bw").asText("?"))));
      return null;
    }
    String implausible = MeasurementBounds.implausible(bytes, us * 1e-6, alg * 1e9, bus * 1e9);
    if (implausible != null) {
      warnings.add(new ParseWarning(file, line, "result " + i + " is an implausible measurement"
          + " with " + implausible + "; skipped"));
      return null;
    }
    return new MeasuredPoint(file, line, c, group.ranks(), 1, group.nodes(), bytes, us * 1e-6,
        alg * 1e9, bus * 1e9);
  }

  private static double num(JsonNode n) {
    if (n.isNumber()) {
      return n.asDouble();
    }
    return Double.NaN;
  }

  /** The line of each object in the top-level "results" array, by streaming through the text. */
  private static List<Integer> resultLines(String text) throws IOException {
    List<Integer> out = new ArrayList<>();
    try (JsonParser p = MAPPER.getFactory().createParser(text)) {
      int depth = 0;
      boolean inResults = false;
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
          if (inResults && depth == 2 && t == JsonToken.START_OBJECT) {
            JsonLocation loc = p.currentTokenLocation();
            out.add(Math.max(1, loc.getLineNr()));
          }
          depth++;
        } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
          depth--;
          if (depth == 1) {
            inResults = false;
          }
        } else if (t == JsonToken.FIELD_NAME && depth == 1 && "results".equals(p.currentName())) {
          inResults = true;
        }
      }
    }
    return out;
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int i = s.indexOf('\n');
    return i < 0 ? s : s.substring(0, i);
  }
}
