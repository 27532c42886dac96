package io.meshplan.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import io.meshplan.util.Units;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * How often a synchronous training job is interrupted: counts of interruptions by cause over an
 * exposure of GPU-days, as a fleet publishes them. Any interruption stops every GPU of the job,
 * so a job of {@code G} GPUs is interrupted at {@code G} times the rate per GPU, and its mean
 * time between interruptions is {@code 1 / (G * rate)} (failures independent across GPUs, a
 * Poisson process: the model of Young 1974 and Daly 2006). The default is Meta's record of
 * Llama 3 405B's pre-training ({@code failures.yaml} beside this class: Dubey et al. 2024,
 * section 3.3.4, Table 5).
 *
 * <p>A file may also name, under {@code nodeLoss}, the causes that take a node out of service
 * until it is repaired; spare nodes stand in for those ({@code plan --spare-nodes}).
 *
 * @param source where the counts come from, for output
 * @param causes interruptions by cause, each >= 0, sorted by name
 * @param gpuDays the exposure the counts were observed over, GPU-days, > 0
 * @param nodeLoss the causes that take a node out of service until repaired (a spare can stand
 *     in), each one of {@code causes}
 */
public record FailureRates(String source, SortedMap<String, Double> causes, double gpuDays,
    java.util.SortedSet<String> nodeLoss) {
  /** The most causes a file may list. */
  public static final int MAX_CAUSES = 256;
  /**
   * The range of a file's {@code gpus}: one GPU to 10^8, above any fleet (the largest clusters
   * hold a few hundred thousand GPUs; Llama 3's record, 16,384).
   */
  public static final double MIN_GPUS = 1;
  /** The most GPUs of a file's exposure ({@link #MIN_GPUS}). */
  public static final double MAX_GPUS = 1e8;
  /**
   * The range of a file's {@code days}: 0.01 (a quarter of an hour) to 36,525 (a century); Llama
   * 3's record covers 54.
   */
  public static final double MIN_DAYS = 0.01;
  /** The longest exposure, days ({@link #MIN_DAYS}). */
  public static final double MAX_DAYS = 36_525;
  /**
   * The most interruptions one cause may count: 10^6 (Llama 3's record counts 148 at most). With
   * the other bounds, the rate per GPU-day lies between 1 / (10^8 x 36,525), about 2.7e-13, and
   * 256 x 10^6 / 0.01, about 2.6e10, so that the mean time between interruptions of a job of up
   * to {@link io.meshplan.util.Checked#MAX_DEVICES} GPUs is finite and above 0: from 86,400 /
   * (2.6e10 x 2^20), about 3e-12 s, to 86,400 / 2.7e-13, about 3e17 s.
   */
  public static final double MAX_COUNT = 1e6;
  /** The largest file read: a list of causes is a few kilobytes. */
  public static final long MAX_BYTES = 1L << 20;
  private static final String RESOURCE = "failures.yaml";

  /** Validates and copies. */
  public FailureRates {
    io.meshplan.util.Require.nonNull(source, "source");
    causes = Collections.unmodifiableSortedMap(new TreeMap<>(causes));
    io.meshplan.util.Require.that(gpuDays > 0 && Double.isFinite(gpuDays),
        "exposure must be > 0 GPU-days");
    double total = 0;
    for (double c : causes.values()) {
      io.meshplan.util.Require.that(c >= 0 && Double.isFinite(c),
          "an interruption count must be >= 0");
      total += c;
    }
    io.meshplan.util.Require.that(total > 0, "failure rates must count at least one interruption");
    nodeLoss = Collections.unmodifiableSortedSet(new java.util.TreeSet<>(nodeLoss));
    for (String c : nodeLoss) {
      io.meshplan.util.Require.that(causes.containsKey(c), "nodeLoss names '" + c
          + "', which is not one of the causes");
    }
  }

  /**
   * The share of interruptions that take a node out of service.
   *
   * @return in [0, 1]
   */
  public double nodeLossFraction() {
    double total = 0;
    double lost = 0;
    for (Map.Entry<String, Double> e : causes.entrySet()) {
      total += e.getValue();
      lost += nodeLoss.contains(e.getKey()) ? e.getValue() : 0;
    }
    return lost / total;
  }

  /**
   * Meta's Llama 3 record (Dubey et al. 2024, Table 5): 466 interruptions over 54 days on
   * 16,384 GPUs.
   *
   * @return the rates
   */
  public static FailureRates llama3() {
    try (InputStream in = FailureRates.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + RESOURCE);
      }
      return parse(RESOURCE, new String(in.readNBytes((int) MAX_BYTES), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Reads a failure-rates file (YAML: {@code source}, {@code gpus}, {@code days}, {@code causes:
   * {name: count}}), the layout of {@code failures.yaml}.
   *
   * @param file the file
   * @return the rates
   * @throws InputException naming the file and the bad field
   */
  public static FailureRates read(Path file) {
    return parse(file.toString(), InputFiles.readString(file, MAX_BYTES, "failure-rates file"));
  }

  private static FailureRates parse(String where, String text) {
    JsonNode root;
    try {
      root = TreeReaders.yaml().readTree(text);
    } catch (IOException e) {
      throw new InputException(where + ": not a failure-rates file (" + JsonErrors.describe(e)
          + ")", e);
    }
    if (root == null || !root.isObject()) {
      throw new InputException(where + ": a failure-rates file is a mapping with gpus, days and "
          + "causes");
    }
    // A misspelled field ('nodeloss') would be ignored and its causes priced as restarts.
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!java.util.Set.of("source", "gpus", "days", "causes", "nodeLoss").contains(key)) {
        throw new InputException(where + ": unknown field '"
            + io.meshplan.util.TerminalText.escape(key) + "'; a failure-rates file has source, "
            + "gpus, days, causes and nodeLoss");
      }
    }
    double gpus = ranged(root, "gpus", MIN_GPUS, MAX_GPUS, "GPUs", where);
    double days = ranged(root, "days", MIN_DAYS, MAX_DAYS, "days", where);
    JsonNode causes = root.path("causes");
    if (!causes.isObject() || causes.size() == 0 || causes.size() > MAX_CAUSES) {
      throw new InputException(where + ": causes must map 1 to " + MAX_CAUSES + " cause names "
          + "to interruption counts");
    }
    TreeMap<String, Double> out = new TreeMap<>();
    for (Iterator<String> it = causes.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      JsonNode v = causes.get(name);
      // Interruptions are counted: a whole number, not a rate (1.5 interruptions never ran).
      if (!v.isNumber() || !(v.asDouble() >= 0) || v.asDouble() > MAX_COUNT
          || v.asDouble() != Math.rint(v.asDouble())) {
        throw new InputException(where + ": causes." + name + " must be a whole count >= 0, at "
            + "most " + Units.figure(MAX_COUNT) + ", got " + v);
      }
      out.put(name, v.asDouble());
    }
    double total = out.values().stream().mapToDouble(Double::doubleValue).sum();
    if (total < 1) {
      throw new InputException(where + ": causes must count at least 1 interruption in all, got "
          + total);
    }
    java.util.TreeSet<String> loss = new java.util.TreeSet<>();
    JsonNode nl = root.path("nodeLoss");
    if (!nl.isMissingNode()) {
      if (!nl.isArray() || nl.size() > MAX_CAUSES) {
        throw new InputException(where + ": nodeLoss must be a list of at most " + MAX_CAUSES
            + " cause names");
      }
      for (JsonNode n : nl) {
        if (!n.isTextual()) {
          throw new InputException(where + ": nodeLoss lists cause names, got " + n);
        }
        if (!loss.add(n.asText())) {
          throw new InputException(where + ": nodeLoss names '" + n.asText() + "' twice");
        }
      }
    }
    try {
      return new FailureRates(root.path("source").asText(where), out, gpus * days, loss);
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": " + e.getMessage(), e);
    }
  }

  private static double ranged(JsonNode root, String key, double min, double max, String unit,
      String where) {
    JsonNode n = root.get(key);
    if (n == null || !n.isNumber() || !(n.asDouble() >= min) || n.asDouble() > max) {
      throw new InputException(where + ": " + key + " must be " + Units.range(min, max, unit)
          + ", got " + n);
    }
    return n.asDouble();
  }

  /**
   * All interruptions per GPU-day.
   *
   * @return the rate
   */
  public double perGpuDay() {
    double total = 0;
    for (double c : causes.values()) {
      total += c;
    }
    return total / gpuDays;
  }

  /**
   * The mean time between interruptions of a job of some GPUs.
   *
   * @param gpus the job's GPUs, >= 1
   * @return seconds
   */
  public double jobMtbfSeconds(long gpus) {
    io.meshplan.util.Require.that(gpus >= 1, "gpus must be >= 1");
    return 86400.0 / (perGpuDay() * gpus);
  }
}
