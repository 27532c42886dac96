package io.meshplan.graph;

import io.meshplan.util.AsciiDigits;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the {@code , key=value} attributes after an instruction's operands. The attributes later
 * stages index by (dimension numbers, slice bounds, comparison direction, tuple index) become an
 * {@link OpAttrs}; every other attribute stays text, and the computations it calls are noted.
 */
final class HloAttributeReader {
  private static final Set<Opcode> DIMS_OPS = EnumSet.of(Opcode.BROADCAST, Opcode.TRANSPOSE,
      Opcode.REDUCE, Opcode.CONCATENATE, Opcode.REVERSE);
  /** The attributes through which an instruction calls a computation. */
  static final Set<String> CALL_KEYS = Set.of("to_apply", "calls", "condition", "body",
      "true_computation", "false_computation", "branch_computations", "select", "scatter");
  private static final Set<String> DIRECTIONS = Set.of("EQ", "NE", "LT", "LE", "GT", "GE");

  private final HloCursor c;
  /** Referenced computation -> first offset. */
  private final Map<String, Integer> calledComputations = new LinkedHashMap<>();

  HloAttributeReader(HloCursor cursor) {
    this.c = cursor;
  }

  /** The typed attributes of one instruction as read so far; null until read. */
  private static final class Typed {
    List<Integer> dims;
    List<Integer> lhsBatch;
    List<Integer> lhsContracting;
    List<Integer> rhsBatch;
    List<Integer> rhsContracting;
    OpAttrs.Slice slice;
    String direction;
    Integer index;
  }

  /**
   * The computations named by calling attributes ({@code to_apply}, {@code calls}, ...) so far,
   * each with the offset of its first use.
   */
  Map<String, Integer> calledComputations() {
    return calledComputations;
  }

  /** Reads the attributes into {@code p.attrs}, {@code p.raw} and {@code p.opName}. */
  void read(PendingInstruction p) {
    Typed typed = new Typed();
    int end = c.pos;
    while (c.accept(',')) {
      c.skipSpace();
      int keyAt = c.pos;
      String key = c.attributeName();
      c.expect('=');
      c.skipSpace();
      boolean twice = isTyped(p.opcode, key) ? readTyped(key, typed) : readRaw(p, key);
      if (twice) {
        throw c.errorAt(keyAt, "each attribute once", "'" + key + "' a second time");
      }
      end = c.pos;
    }
    finish(p, typed, end);
  }

  private static boolean isTyped(Opcode op, String key) {
    return switch (key) {
      case "dimensions" -> DIMS_OPS.contains(op);
      case "lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims" ->
          op == Opcode.DOT;
      case "slice" -> op == Opcode.SLICE;
      case "direction" -> op == Opcode.COMPARE;
      case "index" -> op == Opcode.GET_TUPLE_ELEMENT;
      default -> false;
    };
  }

  /**
   * Reads the value of a typed attribute.
   *
   * @return whether the attribute was read before
   */
  private boolean readTyped(String key, Typed t) {
    boolean twice;
    switch (key) {
      case "dimensions" -> {
        twice = t.dims != null;
        t.dims = c.intList("a dimension number");
      }
      case "lhs_batch_dims" -> {
        twice = t.lhsBatch != null;
        t.lhsBatch = c.intList("a dimension number");
      }
      case "lhs_contracting_dims" -> {
        twice = t.lhsContracting != null;
        t.lhsContracting = c.intList("a dimension number");
      }
      case "rhs_batch_dims" -> {
        twice = t.rhsBatch != null;
        t.rhsBatch = c.intList("a dimension number");
      }
      case "rhs_contracting_dims" -> {
        twice = t.rhsContracting != null;
        t.rhsContracting = c.intList("a dimension number");
      }
      case "slice" -> {
        twice = t.slice != null;
        t.slice = slice();
      }
      case "direction" -> {
        twice = t.direction != null;
        t.direction = direction();
      }
      default -> {
        twice = t.index != null;
        t.index = c.integer("a tuple index");
      }
    }
    return twice;
  }

  /**
   * Keeps an attribute as text unless it was read before.
   *
   * @return whether it was read before (then its value is left unread)
   */
  private boolean readRaw(PendingInstruction p, String key) {
    if (p.raw.containsKey(key)) {
      return true;
    }
    int at = c.pos;
    String value = c.rawValue();
    p.raw.put(key, value);
    if (key.equals("metadata")) {
      p.opName = HloText.opName(value);
    } else if (CALL_KEYS.contains(key)) {
      noteCalls(value, at);
    }
    return false;
  }

  /**
   * Sets {@code p.attrs} from the typed attributes read, or turns a replicating {@code Sharding}
   * custom call into {@link Opcode#FORCE_REPLICATED}.
   *
   * @param end the offset just after the last attribute, where a missing one is reported
   */
  private void finish(PendingInstruction p, Typed t, int end) {
    Opcode op = p.opcode;
    if (DIMS_OPS.contains(op)) {
      p.attrs = new OpAttrs.Dims(t.dims == null ? List.of() : t.dims);
    } else if (op == Opcode.DOT) {
      p.attrs = dot(p, t);
    } else if (op == Opcode.SLICE) {
      p.attrs = t.slice == null ? new OpAttrs.Slice(List.of(), List.of(), List.of()) : t.slice;
    } else if (op == Opcode.COMPARE) {
      p.attrs = new OpAttrs.Compare(t.direction == null ? "" : t.direction);
    } else if (op == Opcode.GET_TUPLE_ELEMENT) {
      if (t.index == null) {
        throw c.errorAt(end, "', index=N' on get-tuple-element");
      }
      p.attrs = new OpAttrs.Index(t.index);
    } else if (op == Opcode.CUSTOM_CALL && "\"Sharding\"".equals(p.raw.get("custom_call_target"))
        && isReplicated(p.raw.get("sharding"))) {
      p.opcode = Opcode.FORCE_REPLICATED;
    } else if (op == Opcode.CUSTOM_CALL) {
      fusedAttention(p);
    }
  }

  /**
   * Turns the fused-attention calls meshplan prints (one tensor out, rank 4) into {@link
   * Opcode#FUSED_ATTENTION} and {@link Opcode#FUSED_ATTENTION_GRAD}; other calls, such as XLA's
   * own cuDNN calls with tuple results, stay opaque.
   */
  private static void fusedAttention(PendingInstruction p) {
    if (!(p.shape instanceof TensorShape t) || t.rank() != 4) {
      return;
    }
    String target = p.raw.get("custom_call_target");
    if (HloText.quote(FUSED_ATTENTION_TARGET).equals(target) && p.operandNames.length == 3) {
      p.opcode = Opcode.FUSED_ATTENTION;
      p.attrs = new OpAttrs.Attention(-1, 1);
      p.raw.remove("custom_call_target");
    } else if (HloText.quote(FUSED_ATTENTION_GRAD_TARGET).equals(target)
        && p.operandNames.length == 5) {
      String index = p.raw.get("output_index");
      if (index != null && index.matches("[012]")) {
        p.opcode = Opcode.FUSED_ATTENTION_GRAD;
        p.attrs = new OpAttrs.Attention(AsciiDigits.parseInt(index), 1);
        p.raw.remove("custom_call_target");
        p.raw.remove("output_index");
      }
    }
  }

  /** The call target of {@link Opcode#FUSED_ATTENTION}: XLA's cuDNN fused attention. */
  static final String FUSED_ATTENTION_TARGET = "__cudnn$fmhaSoftmax";
  /** The call target of {@link Opcode#FUSED_ATTENTION_GRAD}. */
  static final String FUSED_ATTENTION_GRAD_TARGET = "__cudnn$fmhaSoftmaxBackward";

  /** A dot's dimension numbers; absent lists are empty, and lhs and rhs must pair up. */
  private OpAttrs.Dot dot(PendingInstruction p, Typed t) {
    List<Integer> lhsBatch = t.lhsBatch == null ? List.of() : t.lhsBatch;
    List<Integer> rhsBatch = t.rhsBatch == null ? List.of() : t.rhsBatch;
    List<Integer> lhsContracting = t.lhsContracting == null ? List.of() : t.lhsContracting;
    List<Integer> rhsContracting = t.rhsContracting == null ? List.of() : t.rhsContracting;
    if (lhsBatch.size() != rhsBatch.size() || lhsContracting.size() != rhsContracting.size()) {
      throw c.errorAt(p.opcodeAt, "as many rhs as lhs batch and contracting dimensions",
          "lhs " + lhsBatch + "/" + lhsContracting + " and rhs " + rhsBatch + "/"
              + rhsContracting);
    }
    return new OpAttrs.Dot(lhsBatch, lhsContracting, rhsBatch, rhsContracting);
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

  private String direction() {
    int at = c.pos;
    String direction = c.word();
    if (!DIRECTIONS.contains(direction)) {
      throw c.errorAt(at, "a comparison direction (EQ, NE, LT, LE, GT or GE)");
    }
    return direction;
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
}
