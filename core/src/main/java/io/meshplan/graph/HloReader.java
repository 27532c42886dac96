package io.meshplan.graph;

import io.meshplan.util.AsciiDigits;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The recursive-descent reader behind {@link HloParser}; one instance reads one text. It reads the
 * module header and the computations itself, and leaves shapes to {@link HloShapeReader},
 * instruction attributes to {@link HloAttributeReader}, name resolution and ordering to {@link
 * HloResolver} and the entry's aliases to {@link HloAliasReader}.
 */
final class HloReader {
  private static final String ELIDED = "{...}";
  /** The source-location tables that XLA prints with debug information. */
  private static final Set<String> DEBUG_SECTIONS = Set.of("FileNames", "FunctionNames",
      "FileLocations", "StackFrames");

  private final HloCursor c;
  private final int literalLimit;
  private final HloShapeReader shapeReader;
  private final HloAttributeReader attributeReader;
  /** Shape text -> parsed shape, so that equal shapes share one object and one string. */
  private final Map<String, Shape> shapes = new HashMap<>();
  private final Map<String, String> shapeTexts = new HashMap<>();
  /** Unknown opcode -> first offset and count. */
  private final Map<String, int[]> unknownOpcodes = new LinkedHashMap<>();

  HloReader(HloCursor cursor, int literalLimit) {
    this.c = cursor;
    this.literalLimit = literalLimit;
    this.shapeReader = new HloShapeReader(cursor);
    this.attributeReader = new HloAttributeReader(cursor);
  }

  HloModule module() {
    c.skipSpace();
    if (!c.atKeyword("HloModule")) {
      throw c.error("'HloModule' at the start of an HLO module");
    }
    c.pos += "HloModule".length();
    String name = c.name("a module name");
    Map<String, String> header = new LinkedHashMap<>();
    int aliasAt = header(header);
    List<PendingComputation> pending = computations();
    int entry = entryIndex(pending);
    Set<String> names = uniqueNames(pending);
    HloResolver resolver = new HloResolver(c);
    List<HloComputation> computations = new ArrayList<>();
    Map<Integer, String> aliasKinds = new LinkedHashMap<>();
    List<String> extraAliases = new ArrayList<>();
    for (int i = 0; i < pending.size(); i++) {
      PendingComputation pc = pending.get(i);
      List<Instruction> instructions = new ArrayList<>(pc.body().size());
      List<String> texts = new ArrayList<>(pc.body().size());
      resolver.resolve(pc, instructions, texts);
      List<AliasPair> aliases = i == entry && aliasAt >= 0
          ? new HloAliasReader(c).read(aliasAt, instructions, aliasKinds, extraAliases)
          : List.of();
      computations.add(new HloComputation(new Graph(pc.name(), instructions, aliases), i == entry,
          texts, pc.trailer()));
    }
    refuseRecursion(pending, computations);
    return new HloModule(name, header, computations, aliasKinds, extraAliases, warnings(names));
  }

  /** The attributes through which an instruction calls a computation, in a fixed order. */
  private static final List<String> CALLS = List.copyOf(
      new java.util.TreeSet<>(HloAttributeReader.CALL_KEYS));

  /**
   * Refuses a module whose computations call one another in a cycle: XLA's computations form a
   * call graph without cycles (HLO has no recursion), and inlining one that had them would
   * expand it to {@code CallInliner.MAX_DEPTH} levels and cut it there. Depth-first search over
   * the calls, each computation visited once: linear in the calls.
   */
  private void refuseRecursion(List<PendingComputation> pending,
      List<HloComputation> computations) {
    Map<String, Integer> index = new java.util.HashMap<>();
    for (int i = 0; i < computations.size(); i++) {
      index.put(computations.get(i).name(), i);
    }
    List<List<Integer>> callees = new ArrayList<>();
    for (HloComputation hc : computations) {
      java.util.LinkedHashSet<Integer> out = new java.util.LinkedHashSet<>();
      for (Instruction ins : hc.graph().instructions()) {
        for (String key : CALLS) {
          String v = ins.rawAttributes().get(key);
          if (v == null) {
            continue;
          }
          for (String word : v.split("[\\s,{}]+")) {
            Integer j = index.get(word.startsWith("%") ? word.substring(1) : word);
            if (j != null) {
              out.add(j);
            }
          }
        }
      }
      callees.add(new ArrayList<>(out));
    }
    int[] state = new int[computations.size()]; // 0 new, 1 on the path, 2 done
    for (int start = 0; start < computations.size(); start++) {
      if (state[start] != 0) {
        continue;
      }
      java.util.ArrayDeque<int[]> stack = new java.util.ArrayDeque<>();
      stack.push(new int[] {start, 0});
      state[start] = 1;
      while (!stack.isEmpty()) {
        int[] top = stack.peek();
        List<Integer> next = callees.get(top[0]);
        if (top[1] == next.size()) {
          state[top[0]] = 2;
          stack.pop();
          continue;
        }
        int j = next.get(top[1]++);
        if (state[j] == 1) {
          String callee = computations.get(j).name();
          String caller = computations.get(top[0]).name();
          throw c.errorAt(pending.get(j).at(), "computations that do not call themselves",
              "%" + callee + " called back by %" + caller + " (HLO computations do not recurse)");
        }
        if (state[j] == 0) {
          state[j] = 1;
          stack.push(new int[] {j, 0});
        }
      }
    }
  }

  /**
   * Reads the header attributes after the module name as text.
   *
   * @param header receives attribute name -> value as written
   * @return the offset of the {@code input_output_alias} value, or -1 when there is none
   */
  private int header(Map<String, String> header) {
    int aliasAt = -1;
    while (c.accept(',')) {
      c.skipSpace();
      int keyAt = c.pos;
      String key = c.attributeName();
      c.expect('=');
      c.skipSpace();
      if (key.equals("input_output_alias")) {
        aliasAt = c.pos;
      }
      if (header.putIfAbsent(key, c.rawValue()) != null) {
        throw c.errorAt(keyAt, "each header attribute once");
      }
    }
    return aliasAt;
  }

  /** Reads the computations up to the end of the text, skipping debug tables; at least one. */
  private List<PendingComputation> computations() {
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
    return pending;
  }

  /** The index of the one computation marked {@code ENTRY}, else of the last one. */
  private int entryIndex(List<PendingComputation> pending) {
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
    return entry;
  }

  /** The computation names, each of which may be used once. */
  private Set<String> uniqueNames(List<PendingComputation> pending) {
    Map<String, Integer> names = new HashMap<>();
    for (int i = 0; i < pending.size(); i++) {
      PendingComputation pc = pending.get(i);
      if (names.putIfAbsent(pc.name(), i) != null) {
        throw c.errorAt(pc.at(), "a unique computation name", "'" + pc.name()
            + "' a second time");
      }
    }
    return names.keySet();
  }

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
      if (p >= c.text.length() || !AsciiDigits.isDigit(c.text.charAt(p))) {
        break;
      }
      int next = c.text.indexOf('\n', p);
      c.pos = next < 0 ? c.text.length() : next + 1;
    }
    return true;
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
      skipSignature();
    }
    c.expect('{');
    List<PendingInstruction> body = new ArrayList<>();
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
      PendingInstruction p = instruction();
      if (p.rootAt >= 0) {
        if (root >= 0) {
          throw c.errorAt(p.rootAt, "one ROOT per computation", "a second 'ROOT'");
        }
        root = body.size();
      }
      body.add(p);
    }
    return new PendingComputation(name, at, entryAt, body, root < 0 ? body.size() - 1 : root,
        trailer());
  }

  /**
   * Skips a computation's signature {@code (p0: f32[8], ...) -> f32[8]}, checking its syntax;
   * the parameter instructions carry the shapes that count.
   */
  private void skipSignature() {
    c.pos++;
    if (!c.accept(')')) {
      do {
        c.name("a parameter name");
        c.expect(':');
        shapeReader.shape();
      } while (c.accept(','));
      c.expect(')');
    }
    c.skipSpace();
    if (!c.text.startsWith("->", c.pos)) {
      throw c.error("'->' and the result shape");
    }
    c.pos += 2;
    shapeReader.shape();
  }

  /** The {@code , key=value} attributes after a computation's closing brace as text, or "". */
  private String trailer() {
    c.skipSpace();
    if (c.peek() != ',') {
      return "";
    }
    int start = c.pos;
    int end = start;
    while (c.accept(',')) {
      c.skipSpace();
      c.attributeName();
      c.expect('=');
      c.rawValue();
      end = c.pos;
    }
    return c.text.substring(start, end);
  }

  private PendingInstruction instruction() {
    PendingInstruction p = new PendingInstruction();
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
    sharedShape(p);
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
    p.opcode = opcode(op, p);
    if (p.opcode == Opcode.PARAMETER) {
      c.pos++;
      p.attrs = new OpAttrs.Index(c.integer("a parameter number"));
      c.expect(')');
      p.operandNames = new String[0];
      p.operandAts = new int[0];
    } else if (p.opcode == Opcode.CONSTANT) {
      p.attrs = new OpAttrs.Literal(literal());
      p.operandNames = new String[0];
      p.operandAts = new int[0];
    } else {
      operands(p);
    }
    attributeReader.read(p);
    return p;
  }

  /**
   * Reads an instruction's shape into {@code p.shape} and {@code p.shapeText}, sharing the
   * objects with earlier equal shapes.
   */
  private void sharedShape(PendingInstruction p) {
    int shapeAt = c.pos;
    Shape shape = shapeReader.shape();
    String text = c.text.substring(shapeAt, c.pos);
    String known = shapeTexts.putIfAbsent(text, text);
    p.shapeText = known != null ? known : text;
    Shape sharedShape = shapes.putIfAbsent(p.shapeText, shape);
    p.shape = sharedShape != null ? sharedShape : shape;
  }

  /**
   * The opcode an HLO name stands for; an unknown one is {@link Opcode#UNKNOWN}, noted for a
   * warning, with its name kept in {@code p.raw}.
   */
  private Opcode opcode(String op, PendingInstruction p) {
    Opcode code = Opcode.fromHlo(op);
    if (code != null) {
      return code;
    }
    p.raw.put(HloModule.OPCODE_KEY, op);
    int[] seen = unknownOpcodes.computeIfAbsent(op, k -> new int[] {p.opcodeAt, 0});
    seen[1]++;
    return Opcode.UNKNOWN;
  }

  /** A constant's literal in parentheses, stripped, or {@code {...}} when over the limit. */
  private String literal() {
    int open = c.pos;
    c.skipGroup();
    String literal = c.text.substring(open + 1, c.pos - 1).strip();
    if (literal.isEmpty()) {
      throw c.errorAt(open + 1, "a literal");
    }
    return literal.length() > literalLimit ? ELIDED : literal;
  }

  private void operands(PendingInstruction p) {
    c.pos++;
    List<String> names = new ArrayList<>(3);
    int[] ats = new int[4];
    if (!c.accept(')')) {
      do {
        c.skipSpace();
        if (c.peek() == '(') {
          shapeReader.shape();
        } else if (c.peek() != '%') {
          int save = c.pos;
          c.word();
          boolean shaped = c.peek() == '[';
          c.pos = save;
          if (shaped) {
            shapeReader.shape();
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

  private List<String> warnings(Set<String> computationNames) {
    TreeMap<Integer, String> byOffset = new TreeMap<>();
    for (Map.Entry<String, int[]> e : unknownOpcodes.entrySet()) {
      int[] v = e.getValue();
      byOffset.put(v[0], "unknown opcode '" + e.getKey() + "' read as an opaque instruction ("
          + v[1] + (v[1] == 1 ? " use)" : " uses)"));
    }
    for (Map.Entry<String, Integer> e : attributeReader.calledComputations().entrySet()) {
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
