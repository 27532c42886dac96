package io.meshplan.graph;

import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;

/** The recursive-descent reader behind {@link HloParser}; one instance reads one text. */
final class HloReader {
  private static final Set<Opcode> DIMS_OPS = EnumSet.of(Opcode.BROADCAST, Opcode.TRANSPOSE,
      Opcode.REDUCE, Opcode.CONCATENATE, Opcode.REVERSE);
  private static final Set<String> CALL_KEYS = Set.of("to_apply", "calls", "condition", "body",
      "true_computation", "false_computation", "branch_computations", "select", "scatter");
  private static final Set<String> DIRECTIONS = Set.of("EQ", "NE", "LT", "LE", "GT", "GE");
  private static final int MAX_TUPLE_NESTING = 64;
  /**
   * The highest tensor rank read: 64, NumPy's limit (NPY_MAXDIMS in NumPy 2). The number of
   * layouts of a tensor grows as (rank + 1)^(mesh axes), so a rank of 10^6 would never finish.
   */
  static final int MAX_RANK = 64;
  private static final String ELIDED = "{...}";

  private final HloCursor c;
  private final int literalLimit;
  /** Shape text -> parsed shape, so that equal shapes share one object and one string. */
  private final Map<String, Shape> shapes = new HashMap<>();
  private final Map<String, String> shapeTexts = new HashMap<>();
  /** Unknown opcode -> first offset and count. */
  private final Map<String, int[]> unknownOpcodes = new LinkedHashMap<>();
  /** Referenced computation -> first offset. */
  private final Map<String, Integer> calledComputations = new LinkedHashMap<>();

  HloReader(HloCursor cursor, int literalLimit) {
    this.c = cursor;
    this.literalLimit = literalLimit;
  }

  /** One instruction as read, before names are resolved and ids assigned. */
  private static final class Pending {
    String name;
    int nameAt;
    int rootAt = -1;
    Shape shape;
    String shapeText;
    Opcode opcode;
    int opcodeAt;
    String[] operandNames;
    int[] operandAts;
    OpAttrs attrs = OpAttrs.NONE;
    String opName = "";
    Map<String, String> raw;
  }

  /** One computation as read. */
  private record PendingComputation(String name, int at, int entryAt, List<Pending> body,
      int root, String trailer) {}

  HloModule module() {
    c.skipSpace();
    if (!c.atKeyword("HloModule")) {
      throw c.error("'HloModule' at the start of an HLO module");
    }
    c.pos += "HloModule".length();
    String name = c.name("a module name");
    Map<String, String> header = new LinkedHashMap<>();
    int aliasAt = -1;
    while (c.accept(',')) {
      c.skipSpace();
      int keyAt = c.pos;
      String key = attributeName();
      c.expect('=');
      c.skipSpace();
      if (key.equals("input_output_alias")) {
        aliasAt = c.pos;
      }
      if (header.putIfAbsent(key, c.rawValue()) != null) {
        throw c.errorAt(keyAt, "each header attribute once");
      }
    }
    List<PendingComputation> pending = new ArrayList<>();
    c.skipSpace();
    if (c.atEnd()) {
      throw c.error("a computation");
    }
    while (!c.atEnd()) {
      if (!skipDebugSection()) {
        pending.add(computation());
      }
      c.skipSpace();
    }
    if (pending.isEmpty()) {
      throw c.error("a computation");
    }
    int entry = pending.size() - 1;
    int entries = 0;
    for (int i = 0; i < pending.size(); i++) {
      if (pending.get(i).entryAt() >= 0) {
        if (++entries > 1) {
          throw c.errorAt(pending.get(i).entryAt(), "one ENTRY computation per module");
        }
        entry = i;
      }
    }
    Map<String, Integer> names = new HashMap<>();
    for (int i = 0; i < pending.size(); i++) {
      PendingComputation pc = pending.get(i);
      if (names.putIfAbsent(pc.name(), i) != null) {
        throw c.errorAt(pc.at(), "a unique computation name", "'" + pc.name()
            + "' a second time");
      }
    }
    List<HloComputation> computations = new ArrayList<>();
    Map<Integer, String> aliasKinds = new LinkedHashMap<>();
    List<String> extraAliases = new ArrayList<>();
    for (int i = 0; i < pending.size(); i++) {
      PendingComputation pc = pending.get(i);
      List<Instruction> instructions = new ArrayList<>(pc.body().size());
      List<String> texts = new ArrayList<>(pc.body().size());
      resolve(pc, instructions, texts);
      List<AliasPair> aliases = i == entry && aliasAt >= 0
          ? aliases(aliasAt, instructions, aliasKinds, extraAliases) : List.of();
      computations.add(new HloComputation(new Graph(pc.name(), instructions, aliases), i == entry,
          texts, pc.trailer()));
    }
    return new HloModule(name, header, computations, aliasKinds, extraAliases,
        warnings(names.keySet()));
  }

  /** The source-location tables that XLA prints with debug information. */
  private static final java.util.Set<String> DEBUG_SECTIONS = java.util.Set.of("FileNames",
      "FunctionNames", "FileLocations", "StackFrames");

  /**
   * Skips a table of source locations (XLA writes them after the header when asked for debug
   * information: {@code FileNames}, {@code FunctionNames}, {@code FileLocations}, {@code
   * StackFrames}, each a title line and then numbered entries, one per line).
   *
   * @return whether a table was skipped
   */
  private boolean skipDebugSection() {
    int start = c.pos;
    String title = c.word();
    int eol = c.text.indexOf('\n', c.pos);
    boolean alone = eol < 0 ? c.text.substring(c.pos).isBlank()
        : c.text.substring(c.pos, eol).isBlank();
    if (!DEBUG_SECTIONS.contains(title) || !alone) {
      c.pos = start;
      return false;
    }
    c.pos = eol < 0 ? c.text.length() : eol + 1;
    while (!c.atEnd()) {
      int p = c.pos;
      while (p < c.text.length() && (c.text.charAt(p) == ' ' || c.text.charAt(p) == '\t')) {
        p++;
      }
      if (p >= c.text.length() || !Character.isDigit(c.text.charAt(p))) {
        break;
      }
      int next = c.text.indexOf('\n', p);
      c.pos = next < 0 ? c.text.length() : next + 1;
    }
    return true;
  }

  private String attributeName() {
    String key = c.word();
    if (key.isEmpty()) {
      throw c.error("an attribute name");
    }
    return key;
  }

  private PendingComputation computation() {
    c.skipSpace();
    int at = c.pos;
    int entryAt = -1;
    if (c.atKeyword("ENTRY")) {
      entryAt = c.pos;
      c.pos += "ENTRY".length();
    }
    String name = c.name("a computation name such as %main or ENTRY %main");
    c.skipSpace();
    if (c.peek() == '(') {
      c.pos++;
      if (!c.accept(')')) {
        do {
          c.name("a parameter name");
          c.expect(':');
          shape(0);
        } while (c.accept(','));
        c.expect(')');
      }
      c.skipSpace();
      if (!c.text.startsWith("->", c.pos)) {
        throw c.error("'->' and the result shape");
      }
      c.pos += 2;
      shape(0);
    }
    c.expect('{');
    List<Pending> body = new ArrayList<>();
    int root = -1;
    while (true) {
      c.skipSpace();
      if (c.peek() == '}') {
        if (body.isEmpty()) {
          throw c.error("an instruction");
        }
        c.pos++;
        break;
      }
      if (c.atEnd()) {
        throw c.error("an instruction or '}'");
      }
      Pending p = instruction();
      if (p.rootAt >= 0) {
        if (root >= 0) {
          throw c.errorAt(p.rootAt, "one ROOT per computation", "a second 'ROOT'");
        }
        root = body.size();
      }
      body.add(p);
    }
    String trailer = "";
    c.skipSpace();
    if (c.peek() == ',') {
      int start = c.pos;
      int end = start;
      while (c.accept(',')) {
        c.skipSpace();
        attributeName();
        c.expect('=');
        c.rawValue();
        end = c.pos;
      }
      trailer = c.text.substring(start, end);
    }
    return new PendingComputation(name, at, entryAt, body, root < 0 ? body.size() - 1 : root,
        trailer);
  }

  private Pending instruction() {
    Pending p = new Pending();
    c.skipSpace();
    if (c.atKeyword("ROOT")) {
      p.rootAt = c.pos;
      c.pos += "ROOT".length();
    }
    c.skipSpace();
    p.nameAt = c.pos;
    p.name = c.name("an instruction name");
    c.expect('=');
    c.skipSpace();
    int shapeAt = c.pos;
    Shape shape = shape(0);
    String text = c.text.substring(shapeAt, c.pos);
    String known = shapeTexts.putIfAbsent(text, text);
    p.shapeText = known != null ? known : text;
    Shape sharedShape = shapes.putIfAbsent(p.shapeText, shape);
    p.shape = sharedShape != null ? sharedShape : shape;
    c.skipSpace();
    p.opcodeAt = c.pos;
    String op = c.word();
    if (op.isEmpty()) {
      throw c.error("an opcode such as add or dot");
    }
    c.skipSpace();
    if (c.peek() != '(') {
      throw c.error("'(' after the opcode");
    }
    p.raw = new LinkedHashMap<>();
    Opcode code = Opcode.fromHlo(op);
    if (code == null) {
      code = Opcode.UNKNOWN;
      p.raw.put(HloModule.OPCODE_KEY, op);
      int[] seen = unknownOpcodes.computeIfAbsent(op, k -> new int[] {p.opcodeAt, 0});
      seen[1]++;
    }
    p.opcode = code;
    if (code == Opcode.PARAMETER) {
      c.pos++;
      p.attrs = new OpAttrs.Index(c.integer("a parameter number"));
      c.expect(')');
      p.operandNames = new String[0];
      p.operandAts = new int[0];
    } else if (code == Opcode.CONSTANT) {
      int open = c.pos;
      c.skipGroup();
      String literal = c.text.substring(open + 1, c.pos - 1).strip();
      if (literal.isEmpty()) {
        throw c.errorAt(open + 1, "a literal");
      }
      p.attrs = new OpAttrs.Literal(literal.length() > literalLimit ? ELIDED : literal);
      p.operandNames = new String[0];
      p.operandAts = new int[0];
    } else {
      operands(p);
    }
    attributes(p);
    return p;
  }

  private void operands(Pending p) {
    c.pos++;
    List<String> names = new ArrayList<>(3);
    int[] ats = new int[4];
    if (!c.accept(')')) {
      do {
        c.skipSpace();
        if (c.peek() == '(') {
          shape(0);
        } else if (c.peek() != '%') {
          int save = c.pos;
          c.word();
          boolean shaped = c.peek() == '[';
          c.pos = save;
          if (shaped) {
            shape(0);
          }
        }
        c.skipSpace();
        if (names.size() == ats.length) {
          ats = Arrays.copyOf(ats, ats.length * 2);
        }
        ats[names.size()] = c.pos;
        names.add(c.name("an operand name"));
      } while (c.accept(','));
      c.expect(')');
    }
    p.operandNames = names.toArray(new String[0]);
    p.operandAts = Arrays.copyOf(ats, names.size());
  }

  private void attributes(Pending p) {
    Opcode op = p.opcode;
    List<Integer> dims = null;
    List<Integer> lhsBatch = null;
    List<Integer> lhsContracting = null;
    List<Integer> rhsBatch = null;
    List<Integer> rhsContracting = null;
    OpAttrs.Slice slice = null;
    String direction = null;
    Integer index = null;
    int end = c.pos;
    while (c.accept(',')) {
      c.skipSpace();
      int keyAt = c.pos;
      String key = attributeName();
      c.expect('=');
      c.skipSpace();
      boolean twice = p.raw.containsKey(key);
      if (DIMS_OPS.contains(op) && key.equals("dimensions")) {
        twice = dims != null;
        dims = intList("a dimension number");
      } else if (op == Opcode.DOT && key.equals("lhs_batch_dims")) {
        twice = lhsBatch != null;
        lhsBatch = intList("a dimension number");
      } else if (op == Opcode.DOT && key.equals("lhs_contracting_dims")) {
        twice = lhsContracting != null;
        lhsContracting = intList("a dimension number");
      } else if (op == Opcode.DOT && key.equals("rhs_batch_dims")) {
        twice = rhsBatch != null;
        rhsBatch = intList("a dimension number");
      } else if (op == Opcode.DOT && key.equals("rhs_contracting_dims")) {
        twice = rhsContracting != null;
        rhsContracting = intList("a dimension number");
      } else if (op == Opcode.SLICE && key.equals("slice")) {
        twice = slice != null;
        slice = slice();
      } else if (op == Opcode.COMPARE && key.equals("direction")) {
        twice = direction != null;
        int at = c.pos;
        direction = c.word();
        if (!DIRECTIONS.contains(direction)) {
          throw c.errorAt(at, "a comparison direction (EQ, NE, LT, LE, GT or GE)");
        }
      } else if (op == Opcode.GET_TUPLE_ELEMENT && key.equals("index")) {
        twice = index != null;
        index = c.integer("a tuple index");
      } else if (!twice) {
        int at = c.pos;
        String value = c.rawValue();
        p.raw.put(key, value);
        if (key.equals("metadata")) {
          p.opName = HloText.opName(value);
        } else if (CALL_KEYS.contains(key)) {
          noteCalls(value, at);
        }
      }
      if (twice) {
        throw c.errorAt(keyAt, "each attribute once", "'" + key + "' a second time");
      }
      end = c.pos;
    }
    if (DIMS_OPS.contains(op)) {
      p.attrs = new OpAttrs.Dims(dims == null ? List.of() : dims);
    } else if (op == Opcode.DOT) {
      lhsBatch = lhsBatch == null ? List.of() : lhsBatch;
      rhsBatch = rhsBatch == null ? List.of() : rhsBatch;
      lhsContracting = lhsContracting == null ? List.of() : lhsContracting;
      rhsContracting = rhsContracting == null ? List.of() : rhsContracting;
      if (lhsBatch.size() != rhsBatch.size()
          || lhsContracting.size() != rhsContracting.size()) {
        throw c.errorAt(p.opcodeAt, "as many rhs as lhs batch and contracting dimensions",
            "lhs " + lhsBatch + "/" + lhsContracting + " and rhs " + rhsBatch + "/"
                + rhsContracting);
      }
      p.attrs = new OpAttrs.Dot(lhsBatch, lhsContracting, rhsBatch, rhsContracting);
    } else if (op == Opcode.SLICE) {
      p.attrs = slice == null ? new OpAttrs.Slice(List.of(), List.of(), List.of()) : slice;
    } else if (op == Opcode.COMPARE) {
      p.attrs = new OpAttrs.Compare(direction == null ? "" : direction);
    } else if (op == Opcode.GET_TUPLE_ELEMENT) {
      if (index == null) {
        throw c.errorAt(end, "', index=N' on get-tuple-element");
      }
      p.attrs = new OpAttrs.Index(index);
    } else if (op == Opcode.CUSTOM_CALL && "\"Sharding\"".equals(p.raw.get("custom_call_target"))
        && isReplicated(p.raw.get("sharding"))) {
      p.opcode = Opcode.FORCE_REPLICATED;
    }
  }

  private static boolean isReplicated(String sharding) {
    return sharding != null && sharding.replaceAll("\\s", "").equals("{replicated}");
  }

  private void noteCalls(String value, int at) {
    for (String part : value.replace("{", "").replace("}", "").split(",")) {
      String n = part.strip();
      if (n.startsWith("%")) {
        n = n.substring(1);
      }
      if (!n.isEmpty()) {
        calledComputations.putIfAbsent(n, at);
      }
    }
  }

  private List<Integer> intList(String what) {
    c.expect('{');
    List<Integer> out = new ArrayList<>(4);
    if (c.accept('}')) {
      return out;
    }
    do {
      out.add(c.integer(what));
    } while (c.accept(','));
    c.expect('}');
    return out;
  }

  private OpAttrs.Slice slice() {
    c.expect('{');
    List<Integer> starts = new ArrayList<>();
    List<Integer> limits = new ArrayList<>();
    List<Integer> strides = new ArrayList<>();
    if (!c.accept('}')) {
      do {
        c.expect('[');
        starts.add(c.integer("a slice start"));
        c.expect(':');
        limits.add(c.integer("a slice limit"));
        strides.add(c.accept(':') ? c.integer("a slice stride") : 1);
        c.expect(']');
      } while (c.accept(','));
      c.expect('}');
    }
    return new OpAttrs.Slice(starts, limits, strides);
  }

  private Shape shape(int depth) {
    c.skipSpace();
    if (c.peek() == '(') {
      if (depth >= MAX_TUPLE_NESTING) {
        throw c.error("at most " + MAX_TUPLE_NESTING + " nested tuple shapes");
      }
      c.pos++;
      List<Shape> elements = new ArrayList<>();
      if (!c.accept(')')) {
        do {
          elements.add(shape(depth + 1));
        } while (c.accept(','));
        c.expect(')');
      }
      return new TupleShape(elements);
    }
    int start = c.pos;
    String word = c.word();
    if (word.isEmpty()) {
      throw c.error("a shape such as f32[8,16]{1,0} or (f32[], s32[])");
    }
    DType dtype = DType.fromHlo(word);
    if (dtype == null) {
      throw c.errorAt(start, "an element type (pred, s8, s16, s32, s64, u8, u16, u32, u64, f16, "
          + "bf16, f32, f64, f8e4m3fn, f8e5m2 or token)");
    }
    if (c.peek() != '[') {
      throw c.error("'[' after the element type");
    }
    c.pos++;
    int[] dims = new int[4];
    int rank = 0;
    if (!c.accept(']')) {
      while (true) {
        c.skipSpace();
        if (c.text.startsWith("<=", c.pos)) {
          c.pos += 2;
        }
        if (rank == MAX_RANK) {
          throw c.error("at most " + MAX_RANK + " dimensions in a shape");
        }
        if (rank == dims.length) {
          dims = Arrays.copyOf(dims, rank * 2);
        }
        dims[rank++] = c.integer("a dimension size");
        if (c.accept(']')) {
          break;
        }
        if (!c.accept(',')) {
          throw c.error("',' or ']' in the dimension list");
        }
      }
    }
    if (c.peek() == '{') {
      c.skipGroup();
    }
    try {
      return new TensorShape(dtype, Arrays.copyOf(dims, rank));
    } catch (InputException e) {
      throw new InputException(c.location(start) + ": " + e.getMessage(), e);
    }
  }

  /** Resolves operand names, sorts topologically with the root last, and builds instructions. */
  private void resolve(PendingComputation pc, List<Instruction> out, List<String> texts) {
    List<Pending> body = pc.body();
    int n = body.size();
    Map<String, Integer> byName = new HashMap<>(n * 2);
    for (int i = 0; i < n; i++) {
      Pending p = body.get(i);
      Integer before = byName.putIfAbsent(p.name, i);
      if (before != null) {
        throw c.errorAt(p.nameAt, "a name not used before in computation '" + pc.name()
            + "' (line " + c.lineOf(body.get(before).nameAt) + ")", "'" + p.name + "'");
      }
    }
    int[][] operands = new int[n][];
    boolean sorted = pc.root() == n - 1;
    for (int i = 0; i < n; i++) {
      Pending p = body.get(i);
      int[] ops = new int[p.operandNames.length];
      for (int k = 0; k < ops.length; k++) {
        Integer j = byName.get(p.operandNames[k]);
        if (j == null) {
          throw c.errorAt(p.operandAts[k], "the name of an instruction in computation '"
              + pc.name() + "'");
        }
        ops[k] = j;
        sorted &= j < i;
      }
      operands[i] = ops;
    }
    int[] order = sorted ? null : topologicalOrder(pc, operands);
    int[] newId = new int[n];
    for (int k = 0; k < n; k++) {
      newId[order == null ? k : order[k]] = k;
    }
    for (int k = 0; k < n; k++) {
      int old = order == null ? k : order[k];
      Pending p = body.get(old);
      List<Integer> ops = new ArrayList<>(operands[old].length);
      for (int o : operands[old]) {
        ops.add(newId[o]);
      }
      List<Shape> opShapes = new ArrayList<>(ops.size());
      for (int o : operands[old]) {
        opShapes.add(body.get(o).shape);
      }
      checkDimensions(p, opShapes);
      out.add(new Instruction(k, p.name, p.opcode, p.shape, ops, p.attrs, p.opName, p.raw));
      texts.add(p.shapeText);
    }
  }

  /**
   * Checks that the dimension numbers of an instruction name dimensions its operands and result
   * have: a dot's batch and contracting dimensions (distinct, paired sizes equal), the dimensions
   * of broadcast, transpose, reduce, concatenate and reverse, and the bounds of a slice. Later
   * stages index shapes by these numbers.
   */
  private void checkDimensions(Pending p, List<Shape> ops) {
    String bad = null;
    if (p.attrs instanceof OpAttrs.Dot d && ops.size() >= 2
        && ops.get(0) instanceof TensorShape l && ops.get(1) instanceof TensorShape r) {
      bad = dimsIn("lhs_batch_dims", d.lhsBatch(), l.rank(), null);
      bad = bad != null ? bad : dimsIn("lhs_contracting_dims", d.lhsContracting(), l.rank(),
          d.lhsBatch());
      bad = bad != null ? bad : dimsIn("rhs_batch_dims", d.rhsBatch(), r.rank(), null);
      bad = bad != null ? bad : dimsIn("rhs_contracting_dims", d.rhsContracting(), r.rank(),
          d.rhsBatch());
      for (int i = 0; bad == null && i < d.lhsContracting().size(); i++) {
        if (l.dim(d.lhsContracting().get(i)) != r.dim(d.rhsContracting().get(i))) {
          bad = "contracting dimensions of different sizes: lhs " + l.toHlo() + " dimension "
              + d.lhsContracting().get(i) + " and rhs " + r.toHlo() + " dimension "
              + d.rhsContracting().get(i);
        }
      }
      for (int i = 0; bad == null && i < d.lhsBatch().size(); i++) {
        if (l.dim(d.lhsBatch().get(i)) != r.dim(d.rhsBatch().get(i))) {
          bad = "batch dimensions of different sizes: lhs " + l.toHlo() + " and rhs " + r.toHlo();
        }
      }
    } else if (p.attrs instanceof OpAttrs.Dims d && p.shape instanceof TensorShape out) {
      int in = !ops.isEmpty() && ops.get(0) instanceof TensorShape t ? t.rank() : -1;
      bad = switch (p.opcode) {
        case BROADCAST -> dimsIn("dimensions", d.dims(), out.rank(), null);
        case TRANSPOSE -> d.dims().size() != out.rank() ? "dimensions=" + d.dims()
            + " is not a permutation of the " + out.rank() + " result dimensions"
            : dimsIn("dimensions", d.dims(), out.rank(), null);
        default -> in < 0 ? null : dimsIn("dimensions", d.dims(), in, null);
      };
    } else if (p.attrs instanceof OpAttrs.Slice s && !s.starts().isEmpty() && !ops.isEmpty()
        && ops.get(0) instanceof TensorShape t) {
      if (s.starts().size() != t.rank()) {
        bad = "slice bounds for " + s.starts().size() + " dimensions on a rank-" + t.rank()
            + " operand";
      }
      for (int i = 0; bad == null && i < t.rank(); i++) {
        if (s.starts().get(i) < 0 || s.limits().get(i) > t.dim(i)
            || s.starts().get(i) > s.limits().get(i)) {
          bad = "slice bounds [" + s.starts().get(i) + ":" + s.limits().get(i) + "] outside"
              + " dimension " + i + " of " + t.toHlo();
        }
      }
    }
    if (bad != null) {
      throw new InputException(c.location(p.opcodeAt) + ": " + p.opcode.hloName() + " '"
          + p.name + "': " + bad);
    }
  }

  /** Null when every index is in [0, rank) and none repeats or is in {@code taken}. */
  private static String dimsIn(String attr, List<Integer> dims, int rank, List<Integer> taken) {
    java.util.Set<Integer> seen = new java.util.HashSet<>();
    for (int d : dims) {
      if (d < 0 || d >= rank) {
        return attr + "={" + join(dims) + "} names dimension " + d + " of a rank-" + rank
            + " operand";
      }
      if (!seen.add(d) || (taken != null && taken.contains(d))) {
        return attr + "={" + join(dims) + "} repeats dimension " + d;
      }
    }
    return null;
  }

  private static String join(List<Integer> dims) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < dims.size(); i++) {
      sb.append(i == 0 ? "" : ",").append(dims.get(i));
    }
    return sb.toString();
  }

  /** A stable (lowest text position first) topological order with the root last. */
  private int[] topologicalOrder(PendingComputation pc, int[][] operands) {
    int n = operands.length;
    int root = pc.root();
    int[] indegree = new int[n];
    int[] userCount = new int[n + 1];
    for (int i = 0; i < n; i++) {
      indegree[i] = operands[i].length;
      for (int o : operands[i]) {
        userCount[o + 1]++;
      }
    }
    for (int i = 0; i < n; i++) {
      userCount[i + 1] += userCount[i];
    }
    int[] users = new int[userCount[n]];
    int[] fill = Arrays.copyOf(userCount, n);
    for (int i = 0; i < n; i++) {
      for (int o : operands[i]) {
        users[fill[o]++] = i;
      }
    }
    PriorityQueue<Integer> ready = new PriorityQueue<>();
    for (int i = 0; i < n; i++) {
      if (indegree[i] == 0 && i != root) {
        ready.add(i);
      }
    }
    int[] order = new int[n];
    int count = 0;
    while (!ready.isEmpty()) {
      int i = ready.poll();
      order[count++] = i;
      for (int u = userCount[i]; u < userCount[i + 1]; u++) {
        int user = users[u];
        if (--indegree[user] == 0 && user != root) {
          ready.add(user);
        }
      }
    }
    if (count == n - 1 && indegree[root] == 0) {
      order[count] = root;
      return order;
    }
    List<Pending> body = pc.body();
    for (int i = 0; i < n; i++) {
      for (int k = 0; k < operands[i].length; k++) {
        if (operands[i][k] == root && i != root) {
          throw c.errorAt(body.get(i).operandAts[k], "no use of the ROOT instruction '"
              + body.get(root).name + "' (the root must come last)");
        }
      }
    }
    for (int i = 0; i < n; i++) {
      if (indegree[i] > 0) {
        throw c.errorAt(body.get(i).nameAt, "operands without a cycle",
            "'" + body.get(i).name + "' depending on itself");
      }
    }
    throw new IllegalStateException("topological sort failed without a cycle");
  }

  /** Reads {@code input_output_alias={ {0}: (1, {}, may-alias), ... }} into alias pairs. */
  private List<AliasPair> aliases(int at, List<Instruction> entry, Map<Integer, String> kinds,
      List<String> extras) {
    Map<Integer, Integer> parameters = new HashMap<>();
    for (Instruction ins : entry) {
      if (ins.opcode() == Opcode.PARAMETER) {
        parameters.putIfAbsent(((OpAttrs.Index) ins.attrs()).index(), ins.id());
      }
    }
    Instruction root = entry.get(entry.size() - 1);
    List<AliasPair> out = new ArrayList<>();
    c.pos = at;
    c.expect('{');
    if (c.accept('}')) {
      return out;
    }
    do {
      c.skipSpace();
      int entryStart = c.pos;
      List<Integer> outputIndex = intList("an output tuple index");
      c.expect(':');
      c.expect('(');
      c.skipSpace();
      int paramAt = c.pos;
      int param = c.integer("a parameter number");
      c.expect(',');
      List<Integer> paramIndex = intList("a parameter tuple index");
      String kind = "";
      if (c.accept(',')) {
        c.skipSpace();
        int kindAt = c.pos;
        kind = c.word();
        if (!kind.equals("may-alias") && !kind.equals("must-alias")) {
          throw c.errorAt(kindAt, "an alias kind (may-alias or must-alias)");
        }
      }
      c.expect(')');
      String text = c.text.substring(entryStart, c.pos);
      Integer paramId = parameters.get(param);
      if (paramId == null) {
        throw c.errorAt(paramAt, "the number of a parameter of the entry computation");
      }
      int output = -1;
      if (outputIndex.isEmpty()) {
        output = root.id();
      } else if (outputIndex.size() == 1 && root.opcode() == Opcode.TUPLE
          && outputIndex.get(0) < root.operands().size()) {
        output = root.operand(outputIndex.get(0));
      }
      if (output < 0 || !paramIndex.isEmpty()) {
        extras.add(text);
        continue;
      }
      Shape want = entry.get(paramId).shape();
      Shape got = entry.get(output).shape();
      if (!want.equals(got)) {
        throw c.errorAt(entryStart, "output " + outputIndex + " to have the shape of parameter "
            + param + ", " + want.toHlo(), got.toHlo());
      }
      out.add(new AliasPair(paramId, output));
      kinds.put(param, kind);
    } while (c.accept(','));
    c.expect('}');
    return out;
  }

  private List<String> warnings(Set<String> computationNames) {
    TreeMap<Integer, String> byOffset = new TreeMap<>();
    for (Map.Entry<String, int[]> e : unknownOpcodes.entrySet()) {
      int[] v = e.getValue();
      byOffset.put(v[0], "unknown opcode '" + e.getKey() + "' read as an opaque instruction ("
          + v[1] + (v[1] == 1 ? " use)" : " uses)"));
    }
    for (Map.Entry<String, Integer> e : calledComputations.entrySet()) {
      if (!computationNames.contains(e.getKey())) {
        byOffset.merge(e.getValue(), "computation '" + e.getKey() + "' is not defined in the module",
            (a, b) -> a + "; " + b);
      }
    }
    int[] offsets = byOffset.keySet().stream().mapToInt(Integer::intValue).toArray();
    String[] where = c.locations(offsets);
    List<String> out = new ArrayList<>();
    int k = 0;
    for (String message : byOffset.values()) {
      out.add(where[k++] + ": " + message);
    }
    return out;
  }
}
