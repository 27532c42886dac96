package io.meshplan.graph;

/**
 * Live ranges of the values of a graph: a value is live from the step that defines it to the last
 * step that reads it; the root lives to the end. Parameters are owned by the caller and stay
 * resident for the whole computation, so they are live at every step (Alpa's prototype starts them
 * at their position instead, which under-counts weights declared inside a layer loop). Step {@code
 * t} is the execution of instruction {@code t}.
 *
 * <p>The live set of step {@code t} is a subset of that of {@code t+1} unless some value dies at
 * {@code t}, so a memory bound need only be checked at steps where a value dies ({@link
 * #peakCandidateSteps()}); the other steps are dominated.
 */
public final class Liveness {
  private final int[] start;
  private final int[] end;

  /**
   * Computes the live ranges.
   *
   * @param graph the graph
   */
  public Liveness(Graph graph) {
    this(graph, true);
  }

  /**
   * Computes the live ranges.
   *
   * @param graph the graph
   * @param residentParameters whether parameters live for the whole computation (true, the
   *     default) or, as in Alpa's prototype, from their position to their last use
   */
  public Liveness(Graph graph, boolean residentParameters) {
    int n = graph.size();
    start = new int[n];
    end = new int[n];
    for (int i = 0; i < n; i++) {
      start[i] = i;
      end[i] = i;
    }
    for (Instruction ins : graph.instructions()) {
      for (int op : ins.operands()) {
        end[op] = Math.max(end[op], ins.id());
      }
    }
    end[n - 1] = n - 1;
    for (Instruction ins : graph.instructions()) {
      if (residentParameters && ins.opcode() == Opcode.PARAMETER) {
        start[ins.id()] = 0;
        end[ins.id()] = n - 1;
      }
    }
  }

  /**
   * The step that defines a value.
   *
   * @param id the instruction id
   * @return the first live step
   */
  public int start(int id) {
    return start[id];
  }

  /**
   * The last step that reads a value.
   *
   * @param id the instruction id
   * @return the last live step
   */
  public int end(int id) {
    return end[id];
  }

  /**
   * Whether a value is live at a step.
   *
   * @param id the instruction id
   * @param step the step
   * @return true when live
   */
  public boolean liveAt(int id, int step) {
    return start[id] <= step && step <= end[id];
  }

  /**
   * The steps whose live sets are not contained in a later step's live set, ascending.
   *
   * @return the steps to check a memory bound at
   */
  public int[] peakCandidateSteps() {
    int n = start.length;
    boolean[] dies = new boolean[n];
    for (int i = 0; i < n; i++) {
      dies[end[i]] = true;
    }
    dies[n - 1] = true;
    int count = 0;
    for (boolean d : dies) {
      if (d) {
        count++;
      }
    }
    int[] steps = new int[count];
    int k = 0;
    for (int t = 0; t < n; t++) {
      if (dies[t]) {
        steps[k++] = t;
      }
    }
    return steps;
  }
}
