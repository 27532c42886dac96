package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One computation of an HLO module: its graph plus what the text carried that the IR does not
 * model, so that it prints back as it came.
 *
 * @param graph the instructions, renumbered into topological order with the root last
 * @param entry whether this is the module's {@code ENTRY} computation
 * @param shapeTexts per instruction id, the result shape as written (with layout, e.g. {@code
 *     f32[8,16]{1,0}}), or {@code null} to print {@link Shape#toHlo()}
 * @param trailer text after the closing brace, e.g. {@code , execution_thread="host"}, or empty
 */
public record HloComputation(Graph graph, boolean entry, List<String> shapeTexts, String trailer) {
  /** Validates that there is one shape text slot per instruction. */
  public HloComputation {
    Require.nonNull(graph, "graph");
    shapeTexts = shapeTexts == null
        ? Collections.nCopies(graph.size(), null)
        : Collections.unmodifiableList(new ArrayList<>(shapeTexts));
    int texts = shapeTexts.size();
    Require.that(texts == graph.size(), () -> "one shape text per instruction is needed, got "
        + texts + " for " + graph.size());
    trailer = trailer == null ? "" : trailer;
  }

  /**
   * A computation without layouts, e.g. for a graph made with {@link GraphBuilder}.
   *
   * @param graph the graph
   * @param entry whether it is the entry computation
   * @return the computation
   */
  public static HloComputation of(Graph graph, boolean entry) {
    return new HloComputation(graph, entry, null, "");
  }

  /**
   * The computation name.
   *
   * @return the name of its graph
   */
  public String name() {
    return graph.name();
  }

  /**
   * The shape of an instruction as it should be printed: as written if known, else without layout.
   *
   * @param id the instruction id
   * @return HLO shape text
   */
  public String shapeText(int id) {
    String s = shapeTexts.get(id);
    return s != null ? s : graph.get(id).shape().toHlo();
  }
}
