package io.meshplan.interop.hlo;

import io.meshplan.graph.AliasPair;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.LayerKey;
import io.meshplan.graph.LayerScopes;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.model.Phase;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The pipeline layers and phases of a training step read from an XLA HLO module (Alpa, OSDI'22,
 * section 5.2 clusters a training step into layers before the stage DP; here the framework's
 * scopes name the layers, as {@link LayerScopes} reads them).
 *
 * <p><b>Phases.</b> An instruction is backward when its scope marks it so: JAX names the
 * vector-Jacobian product {@code transpose(jvp(...))}, and graphs built by meshplan use the scope
 * words {@code backward} and {@code recompute}. An unmarked instruction that depends on a backward
 * one is backward too when some backward instruction depends on it (it sits inside the backward
 * pass), and otherwise it is part of the optimizer update, which runs once per iteration (so is an
 * instruction scoped {@code optimizer}, and one whose values only the update reads, such as the
 * decay of a moment). Everything else is forward, the loss included.
 *
 * <p><b>Layers.</b> Scoped instructions take their scope's layer; layers are ordered by their
 * first forward instruction. An unscoped instruction takes the latest layer among its operands
 * (the loss joins the last block, an update joins its weight's layer); one without scoped
 * operands (a parameter, a constant) takes the first layer that uses it. When forward values
 * would flow from a later layer to an earlier one (or backward values the other way), the layers
 * in between are merged, so that every stage boundary cuts the step in pipeline order. A module
 * without layer scopes is one layer.
 *
 * <p><b>State.</b> Entry parameters aliased to outputs or read by the update are trained state;
 * those the forward pass reads are weights, the others optimizer state. Other parameters are the
 * batch.
 */
public final class HloLayering {
  /** The most layers a module may have: the stage DP is quadratic in them. */
  public static final int MAX_LAYERS = 4096;

  private final Graph graph;
  private final int[] layer;
  private final Phase[] phase;
  private final List<String> names;
  private final boolean[] state;
  private final boolean[] weight;
  private final boolean[] gradient;
  private final boolean[] gradientWork;
  private final boolean[] constantLike;
  private final int root;
  private final List<List<Integer>> users;
  private final int[][] members;

  private HloLayering(Graph graph, List<List<Integer>> users, int[] layer, Phase[] phase, List<String> names,
      boolean[] state, boolean[] weight, boolean[] gradient, boolean[] gradientWork,
      boolean[] constantLike) {
    this.gradientWork = gradientWork;
    this.graph = graph;
    this.layer = layer;
    this.phase = phase;
    this.names = List.copyOf(names);
    this.state = state;
    this.weight = weight;
    this.gradient = gradient;
    this.constantLike = constantLike;
    this.root = graph.size() - 1;
    this.users = users;
    int[] count = new int[names.size()];
    for (int i = 0; i < root; i++) {
      count[layer[i]]++;
    }
    this.members = new int[names.size()][];
    for (int l = 0; l < members.length; l++) {
      members[l] = new int[count[l]];
    }
    int[] next = new int[names.size()];
    for (int i = 0; i < root; i++) {
      members[layer[i]][next[layer[i]]++] = i;
    }
  }

  /**
   * Reads the layers and phases of a training step.
   *
   * @param graph the module's entry computation, calls inlined
   * @param what names the module in errors, e.g. {@code --hlo step.hlo}
   * @return the layering
   * @throws InputException when the module has no backward pass or no trained state
   */
  public static HloLayering of(Graph graph, String what) {
    int n = graph.size();
    List<List<Integer>> users = users(graph);
    Phase[] phase = phases(graph, users, what);
    boolean[] constantLike = constantLike(graph);
    LayerScopes scopes = new LayerScopes(graph);
    Map<LayerKey, Integer> order = layerOrder(graph, phase, scopes, what);
    int[] layer = layers(graph, users, scopes, order);
    List<String> keyNames = new ArrayList<>();
    for (LayerKey k : order.keySet()) {
      keyNames.add(k.toString());
    }
    if (keyNames.isEmpty()) {
      keyNames.add("the whole step");
    }
    List<String> names = merge(graph, phase, layer, keyNames);
    int root = n - 1;
    boolean[] state = new boolean[n];
    boolean[] weight = new boolean[n];
    trainedState(graph, users, phase, state, weight, what);
    boolean[] gradient = new boolean[n];
    boolean[] gradientWork = new boolean[n];
    for (int i = n - 1; i >= 0; i--) {
      if (phase[i] == Phase.BACKWARD) {
        gradient[i] = someUser(users, root, i, u -> phase[u] == Phase.OPTIMIZER);
        gradientWork[i] = onlyUsers(users, root, i, u -> phase[u] == Phase.OPTIMIZER
            || (gradientWork[u] && readsOnlyBackward(graph, phase, constantLike, u)));
      }
    }
    return new HloLayering(graph, users, layer, phase, names, state, weight, gradient,
        gradientWork, constantLike);
  }

  /** Which values depend on constants only (constants, iotas and what reads only them). */
  private static boolean[] constantLike(Graph graph) {
    boolean[] constantLike = new boolean[graph.size()];
    for (Instruction ins : graph.instructions()) {
      int id = ins.id();
      Opcode op = ins.opcode();
      constantLike[id] = op == Opcode.CONSTANT || op == Opcode.IOTA
          || (op != Opcode.PARAMETER && op != Opcode.RNG && !ins.operands().isEmpty()
              && ins.operands().stream().allMatch(o -> constantLike[o]));
    }
    return constantLike;
  }

  /**
   * The layer scopes in order of their first forward instruction (parameters aside), then of
   * their first instruction.
   *
   * @throws InputException when there are more than {@link #MAX_LAYERS}
   */
  private static Map<LayerKey, Integer> layerOrder(Graph graph, Phase[] phase,
      LayerScopes scopes, String what) {
    Map<LayerKey, Integer> order = new LinkedHashMap<>();
    for (boolean forwardOnly : new boolean[] {true, false}) {
      for (Instruction ins : graph.instructions()) {
        if (forwardOnly && (phase[ins.id()] != Phase.FORWARD
            || ins.opcode() == Opcode.PARAMETER)) {
          continue;
        }
        scopes.key(ins.id()).ifPresent(k -> order.putIfAbsent(k, order.size()));
      }
    }
    if (order.size() > MAX_LAYERS) {
      throw new InputException(what + " has " + order.size() + " layer scopes, more than the "
          + "limit of " + MAX_LAYERS);
    }
    return order;
  }

  /**
   * Each instruction's layer before merging: its scope's; else the latest among its operands';
   * else the first among its users'; else 0.
   */
  private static int[] layers(Graph graph, List<List<Integer>> users, LayerScopes scopes,
      Map<LayerKey, Integer> order) {
    int n = graph.size();
    int root = n - 1;
    int[] layer = new int[n];
    Arrays.fill(layer, -1);
    for (int i = 0; i < n; i++) {
      Integer k = scopes.key(i).map(order::get).orElse(null);
      if (k != null && i != root) {
        layer[i] = k;
      }
    }
    for (Instruction ins : graph.instructions()) {
      if (layer[ins.id()] < 0 && ins.id() != root) {
        for (int o : ins.operands()) {
          layer[ins.id()] = Math.max(layer[ins.id()], layer[o]);
        }
      }
    }
    for (int i = n - 1; i >= 0; i--) {
      if (layer[i] < 0 && i != root) {
        int min = Integer.MAX_VALUE;
        for (int u : users.get(i)) {
          if (u != root && layer[u] >= 0) {
            min = Math.min(min, layer[u]);
          }
        }
        layer[i] = min == Integer.MAX_VALUE ? -1 : min;
      }
    }
    for (int i = 0; i < n; i++) {
      layer[i] = Math.max(layer[i], 0);
    }
    return layer;
  }

  /**
   * Marks the entry parameters that are trained state (aliased to an output or read by the
   * update) and, of those, the weights (read by the forward pass).
   *
   * @throws InputException when no parameter is trained state
   */
  private static void trainedState(Graph graph, List<List<Integer>> users, Phase[] phase,
      boolean[] state, boolean[] weight, String what) {
    int root = graph.size() - 1;
    for (AliasPair a : graph.aliases()) {
      state[a.parameter()] = graph.get(a.parameter()).opcode() == Opcode.PARAMETER;
    }
    boolean anyState = false;
    for (Instruction ins : graph.instructions()) {
      if (ins.opcode() != Opcode.PARAMETER) {
        continue;
      }
      int id = ins.id();
      state[id] |= someUser(users, root, id, u -> phase[u] == Phase.OPTIMIZER);
      weight[id] = state[id] && someUser(users, root, id, u -> phase[u] == Phase.FORWARD);
      anyState |= state[id];
    }
    if (!anyState) {
      throw new InputException(what + " has no trained state: no entry parameter is aliased to "
          + "an output or read by an update; plan needs the whole training step");
    }
  }

  /**
   * Merges the layers between a value and a use that runs against the pipeline's direction, and
   * renumbers the layers densely.
   *
   * @return the names of the merged layers
   */
  private static List<String> merge(Graph graph, Phase[] phase, int[] layer,
      List<String> keyNames) {
    int count = keyNames.size();
    // reach[k]: the highest layer that must share a stage with layer k.
    int[] reach = new int[count];
    for (int k = 0; k < count; k++) {
      reach[k] = k;
    }
    int root = graph.size() - 1;
    for (Instruction ins : graph.instructions()) {
      int i = ins.id();
      if (i == root || phase[i] == Phase.OPTIMIZER) {
        continue;
      }
      for (int o : ins.operands()) {
        if (phase[o] == Phase.OPTIMIZER || graph.get(o).opcode() == Opcode.PARAMETER) {
          continue;
        }
        // Forward values flow to later layers, backward values to earlier ones.
        boolean against = phase[i] == phase[o] && (phase[i] == Phase.FORWARD
            ? layer[o] > layer[i] : layer[o] < layer[i]);
        if (against) {
          int lo = Math.min(layer[i], layer[o]);
          reach[lo] = Math.max(reach[lo], Math.max(layer[i], layer[o]));
        }
      }
    }
    int[] group = new int[count];
    List<String> names = new ArrayList<>();
    int k = 0;
    while (k < count) {
      int end = reach[k];
      int j = k;
      while (j <= end) {
        end = Math.max(end, reach[j]);
        j++;
      }
      for (int x = k; x <= end; x++) {
        group[x] = names.size();
      }
      names.add(end == k ? keyNames.get(k) : keyNames.get(k) + " .. " + keyNames.get(end));
      k = end + 1;
    }
    for (int i = 0; i < layer.length; i++) {
      layer[i] = group[layer[i]];
    }
    return names;
  }

  private static Phase[] phases(Graph graph, List<List<Integer>> users, String what) {
    int n = graph.size();
    boolean[] backward = new boolean[n];
    boolean[] optimizer = new boolean[n];
    boolean any = false;
    for (Instruction ins : graph.instructions()) {
      String scope = ins.opName().toLowerCase(Locale.ROOT);
      backward[ins.id()] = scope.contains("transpose(") || hasPart(scope, "backward")
          || hasPart(scope, "recompute");
      optimizer[ins.id()] = hasPart(scope, "optimizer");
      any |= backward[ins.id()];
    }
    if (!any) {
      throw new InputException(what + " has no backward pass (no transpose(jvp(...)) or "
          + "backward scopes in its op_name metadata); plan needs a training step, and 'shard "
          + "--hlo' plans a forward graph");
    }
    boolean[] after = new boolean[n];
    for (Instruction ins : graph.instructions()) {
      int i = ins.id();
      after[i] = backward[i];
      for (int o : ins.operands()) {
        after[i] |= after[o];
      }
    }
    boolean[] before = new boolean[n];
    for (int i = n - 1; i >= 0; i--) {
      before[i] |= backward[i];
      if (before[i]) {
        for (int o : graph.get(i).operands()) {
          before[o] = true;
        }
      }
    }
    Phase[] phase = new Phase[n];
    for (int i = 0; i < n; i++) {
      if (optimizer[i]) {
        phase[i] = Phase.OPTIMIZER;
      } else if (backward[i] || (after[i] && before[i])) {
        phase[i] = Phase.BACKWARD;
      } else {
        phase[i] = after[i] ? Phase.OPTIMIZER : Phase.FORWARD;
      }
    }
    // Work that feeds only the update (decaying a moment, say) is part of the update.
    int root = n - 1;
    for (int i = n - 2; i >= 0; i--) {
      if (phase[i] != Phase.FORWARD || graph.get(i).opcode() == Opcode.PARAMETER) {
        continue;
      }
      if (onlyUsers(users, root, i, u -> phase[u] == Phase.OPTIMIZER)) {
        phase[i] = Phase.OPTIMIZER;
      }
    }
    return phase;
  }

  /** Whether some instruction other than the root reads the value and passes the test. */
  private static boolean someUser(List<List<Integer>> users, int root, int id,
      java.util.function.IntPredicate test) {
    for (int u : users.get(id)) {
      if (u != root && test.test(u)) {
        return true;
      }
    }
    return false;
  }

  /** Whether instructions other than the root read the value and all of them pass the test. */
  private static boolean onlyUsers(List<List<Integer>> users, int root, int id,
      java.util.function.IntPredicate test) {
    boolean read = false;
    for (int u : users.get(id)) {
      if (u != root) {
        if (!test.test(u)) {
          return false;
        }
        read = true;
      }
    }
    return read;
  }

  /** Whether every operand is a backward value or a constant. */
  private static boolean readsOnlyBackward(Graph graph, Phase[] phase, boolean[] constantLike,
      int id) {
    for (int o : graph.get(id).operands()) {
      if (phase[o] != Phase.BACKWARD && !constantLike[o]) {
        return false;
      }
    }
    return true;
  }

  private static boolean hasPart(String scope, String word) {
    for (String part : scope.split("[/.]")) {
      if (part.equals(word)) {
        return true;
      }
    }
    return false;
  }

  private static List<List<Integer>> users(Graph graph) {
    List<List<Integer>> users = new ArrayList<>(graph.size());
    for (int i = 0; i < graph.size(); i++) {
      users.add(new ArrayList<>(2));
    }
    for (Instruction ins : graph.instructions()) {
      for (int o : ins.operands()) {
        List<Integer> u = users.get(o);
        if (u.isEmpty() || u.get(u.size() - 1) != ins.id()) {
          u.add(ins.id());
        }
      }
    }
    return users;
  }

  /**
   * The step.
   *
   * @return the graph
   */
  public Graph graph() {
    return graph;
  }

  /**
   * The number of layers.
   *
   * @return layers, at least 1
   */
  public int layers() {
    return names.size();
  }

  /**
   * The layers' names, from their scopes.
   *
   * @return one name per layer
   */
  public List<String> names() {
    return names;
  }

  /**
   * The layer of an instruction; the module's root tuple belongs to none and reads 0.
   *
   * @param id the instruction
   * @return its layer
   */
  public int layer(int id) {
    return layer[id];
  }

  /**
   * The phase of an instruction.
   *
   * @param id the instruction
   * @return its phase
   */
  public Phase phase(int id) {
    return phase[id];
  }

  /**
   * Whether an entry parameter is trained state (a weight or optimizer state).
   *
   * @param id the instruction
   * @return true for state
   */
  public boolean state(int id) {
    return state[id];
  }

  /**
   * Whether an entry parameter is a weight: trained state that the forward pass reads.
   *
   * @param id the instruction
   * @return true for a weight
   */
  public boolean weight(int id) {
    return weight[id];
  }

  /**
   * Whether a backward value is a gradient: the optimizer update reads it. Its reduction over the
   * data-parallel axis happens once per iteration, after the microbatches' gradients are summed.
   *
   * @param id the instruction
   * @return true for a gradient
   */
  public boolean gradient(int id) {
    return gradient[id];
  }

  /**
   * Whether a backward instruction computes only towards the update: the update reads its value,
   * or instructions that read nothing but backward values and constants and are such work
   * themselves (a weight gradient's dot, say, and the transposes and conversions after it; not
   * the gradient of an activation, which meets forward values again in the layer below). Frameworks run this work per microbatch on local gradients and
   * reduce the sum over the data-parallel axis once per iteration, so its communication is an
   * iteration's, not a microbatch's.
   *
   * @param id the instruction
   * @return true for gradient work
   */
  public boolean gradientWork(int id) {
    return gradientWork[id];
  }

  /**
   * Whether a value depends on constants only (it is copied into each layer that uses it).
   *
   * @param id the instruction
   * @return true for a constant-like value
   */
  public boolean constantLike(int id) {
    return constantLike[id];
  }

  /**
   * The instructions of a layer, in id order (the root tuple belongs to none).
   *
   * @param k the layer
   * @return their ids
   */
  public int[] members(int k) {
    return members[k].clone();
  }

  /**
   * The instructions that read a value, in id order.
   *
   * @param id the value
   * @return its users
   */
  public List<Integer> users(int id) {
    return java.util.Collections.unmodifiableList(users.get(id));
  }

  /**
   * Whether an instruction is the module's root.
   *
   * @param id the instruction
   * @return true for the root
   */
  public boolean root(int id) {
    return id == root;
  }

  /**
   * Bytes that cross each boundary between consecutive layers per microbatch, over the whole
   * (unsharded) tensors: forward values computed at or before the boundary and read after it, and
   * backward values computed after it and read at or before it. Parameters (each stage reads its
   * own), constants and the optimizer update (once per iteration) do not cross.
   *
   * @return for each boundary j (after layer j, j = 0 .. layers - 2), {forward bytes, backward
   *     bytes}
   */
  public double[][] boundaryBytes() {
    int l = layers();
    double[] fwd = new double[l + 1];
    double[] bwd = new double[l + 1];
    for (Instruction ins : graph.instructions()) {
      int v = ins.id();
      if (v == root || phase[v] == Phase.OPTIMIZER || constantLike[v]
          || ins.opcode() == Opcode.PARAMETER || !(ins.shape() instanceof TensorShape shape)) {
        continue;
      }
      int lo = layer[v];
      int hi = layer[v];
      for (int u : users.get(v)) {
        if (u == root || phase[u] == Phase.OPTIMIZER) {
          continue;
        }
        lo = Math.min(lo, layer[u]);
        hi = Math.max(hi, layer[u]);
      }
      double bytes = shape.byteSize();
      // Difference arrays: boundaries lo .. layer-1 carry the value backwards, layer .. hi-1
      // forwards.
      if (hi > layer[v]) {
        fwd[layer[v]] += bytes;
        fwd[hi] -= bytes;
      }
      if (lo < layer[v]) {
        bwd[lo] += bytes;
        bwd[layer[v]] -= bytes;
      }
    }
    double[][] out = new double[Math.max(0, l - 1)][2];
    double f = 0;
    double b = 0;
    for (int j = 0; j + 1 < l; j++) {
      f += fwd[j];
      b += bwd[j];
      out[j][0] = Math.max(0, f);
      out[j][1] = Math.max(0, b);
    }
    return out;
  }
}
