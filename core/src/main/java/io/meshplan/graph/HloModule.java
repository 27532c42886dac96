package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An XLA HLO module read from text (or made from a {@link Graph}): its computations, the entry
 * computation whose graph the planner uses, and the header attributes. Non-entry computations
 * (reducers named by {@code to_apply=}, fused computations named by {@code calls=}, loop bodies)
 * are kept so that {@link HloPrinter} writes them back.
 *
 * <p>The entry graph's {@link Graph#aliases() aliases} come from the header's {@code
 * input_output_alias}: output {@code {k}} is operand {@code k} of the root tuple (or the root itself
 * for {@code {}}), and the parameter is the one with that parameter number.
 *
 * @param name the module name
 * @param headerAttributes header attributes as written ({@code is_scheduled}, {@code
 *     entry_computation_layout}, ...), in order; the value of {@code input_output_alias} is rebuilt
 *     from the entry graph's aliases when printing
 * @param computations the computations in file order
 * @param aliasKinds per aliased parameter number, the alias kind as written ({@code may-alias},
 *     {@code must-alias}) or empty when none was written
 * @param extraAliasEntries {@code input_output_alias} entries that are not a parameter/output pair
 *     of the IR (for example into a tuple-shaped parameter), as written; printed back unchanged
 * @param warnings things the reader accepted but could not model, e.g. unknown opcodes; one line
 *     each, in file order
 */
public record HloModule(
    String name,
    Map<String, String> headerAttributes,
    List<HloComputation> computations,
    Map<Integer, String> aliasKinds,
    List<String> extraAliasEntries,
    List<String> warnings) {

  /**
   * The raw-attribute key under which an instruction of {@link Opcode#UNKNOWN} keeps its opcode as
   * written. It is not a valid HLO attribute name, so it cannot clash with one.
   */
  public static final String OPCODE_KEY = "$opcode";

  /** Validates that there is exactly one entry computation and copies the collections. */
  public HloModule {
    Require.nonNull(name, "name");
    headerAttributes = Collections.unmodifiableMap(new LinkedHashMap<>(headerAttributes));
    computations = List.copyOf(computations);
    aliasKinds = Collections.unmodifiableMap(new LinkedHashMap<>(aliasKinds));
    extraAliasEntries = List.copyOf(extraAliasEntries);
    warnings = List.copyOf(warnings);
    long entries = computations.stream().filter(HloComputation::entry).count();
    Require.that(entries == 1,
        () -> "a module needs exactly one entry computation, got " + entries);
  }

  /**
   * A module with one entry computation and no layouts, e.g. to print a built graph.
   *
   * @param graph the entry graph; its name becomes the module name
   * @return the module
   */
  public static HloModule of(Graph graph) {
    return new HloModule(graph.name(), Map.of(), List.of(HloComputation.of(graph, true)),
        Map.of(), List.of(), List.of());
  }

  /**
   * The entry computation.
   *
   * @return the computation marked {@code ENTRY}
   */
  public HloComputation entryComputation() {
    for (HloComputation c : computations) {
      if (c.entry()) {
        return c;
      }
    }
    throw new IllegalStateException("no entry computation");
  }

  /**
   * The entry graph: what the planner plans.
   *
   * @return the entry computation's graph
   */
  public Graph entry() {
    return entryComputation().graph();
  }

  /**
   * A computation by name.
   *
   * @param computationName the name without {@code %}
   * @return the computation, or {@code null} when there is none of that name
   */
  public HloComputation computation(String computationName) {
    for (HloComputation c : computations) {
      if (c.name().equals(computationName)) {
        return c;
      }
    }
    return null;
  }

  /**
   * The same module with another entry graph, e.g. after a pass that changed instructions. An
   * instruction keeps its shape as written (with layout) when the old entry had an instruction of
   * the same id and shape; otherwise its shape prints without layout.
   *
   * @param graph the new entry graph
   * @return the new module
   */
  public HloModule withEntry(Graph graph) {
    List<HloComputation> cs = new java.util.ArrayList<>();
    for (HloComputation c : computations) {
      if (c.entry()) {
        List<String> texts = new java.util.ArrayList<>();
        for (Instruction ins : graph.instructions()) {
          boolean same = ins.id() < c.graph().size()
              && c.graph().get(ins.id()).shape().equals(ins.shape());
          texts.add(same ? c.shapeTexts().get(ins.id()) : null);
        }
        cs.add(new HloComputation(graph, true, texts, c.trailer()));
      } else {
        cs.add(c);
      }
    }
    return new HloModule(name, headerAttributes, cs, aliasKinds, extraAliasEntries, warnings);
  }
}
