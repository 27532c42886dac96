package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link Graph} one instruction at a time, inferring and checking result shapes. Each
 * method returns the id of the new instruction. Names are {@code <op>.<n>} as in Alpa's prototype.
 * A scope (for example {@code layer_3/attention}) set with {@link #scope(String)} is recorded as the
 * instruction's {@code op_name}, so that layer clustering can find the layers again.
 */
public final class GraphBuilder {
  private final String name;
  private final List<Instruction> instructions = new ArrayList<>();
  private final List<AliasPair> aliases = new ArrayList<>();
  private final Map<Opcode, Integer> counters = new EnumMap<>(Opcode.class);
  private int parameterCount;
  private String scope = "";

  /**
   * Starts a graph.
   *
   * @param name the computation name
   */
  public GraphBuilder(String name) {
    this.name = name;
  }

  /**
   * Sets the scope recorded on the instructions added next.
   *
   * @param scope e.g. {@code layer_3/mlp}, or empty
   * @return this builder
   */
  public GraphBuilder scope(String scope) {
    this.scope = scope == null ? "" : scope;
    return this;
  }

  /**
   * The shape of an instruction added so far.
   *
   * @param id its id
   * @return its tensor shape
   */
  public TensorShape shape(int id) {
    return instructions.get(id).tensorShape();
  }

  /**
   * An instruction added so far.
   *
   * @param id its id
   * @return the instruction
   */
  public Instruction instruction(int id) {
    return instructions.get(id);
  }

  /**
   * The number of instructions added so far (the id the next one gets).
   *
   * @return the count
   */
  public int size() {
    return instructions.size();
  }

  private int add(Opcode op, Shape shape, List<Integer> operands, OpAttrs attrs) {
    return add(op, shape, operands, attrs, Map.of());
  }

  private int add(Opcode op, Shape shape, List<Integer> operands, OpAttrs attrs,
      Map<String, String> raw) {
    int n = counters.merge(op, 1, Integer::sum) - 1;
    String base = switch (op) {
      case FORCE_REPLICATED -> "force-replicated";
      case FUSED_ATTENTION -> "fused-attention";
      case FUSED_ATTENTION_GRAD -> "fused-attention-grad";
      case SSD_SCAN -> "ssd-scan";
      case SSD_SCAN_GRAD -> "ssd-scan-grad";
      case GDN_SCAN -> "gdn-scan";
      case GDN_SCAN_GRAD -> "gdn-scan-grad";
      case SELECTIVE_SCAN -> "selective-scan";
      case SELECTIVE_SCAN_GRAD -> "selective-scan-grad";
      case MOE_DISPATCH -> "moe-dispatch";
      case MOE_COMBINE -> "moe-combine";
      default -> op.hloName();
    };
    int id = instructions.size();
    instructions.add(new Instruction(id, base + "." + n, op, shape, operands, attrs, scope, raw));
    return id;
  }

  /**
   * Adds an iota: element {@code [i0, ..., in]} holds {@code i_dimension}.
   *
   * @param shape the result shape
   * @param dimension the dimension that counts
   * @return the id
   */
  public int iota(TensorShape shape, int dimension) {
    check(dimension >= 0 && dimension < shape.rank(), "bad iota dimension " + dimension);
    return add(Opcode.IOTA, shape, List.of(), new OpAttrs.Index(dimension),
        Map.of("iota_dimension", Integer.toString(dimension)));
  }

  /**
   * Looks up rows of a table: {@code out[i..., :] = table[indices[i...], :]} (an embedding
   * lookup; XLA {@code gather} with {@code offset_dims} the last result dimension).
   *
   * @param table a rank-2 table {@code [rows, width]}
   * @param indices integer row indices of any rank
   * @return the id of a {@code [indices..., width]} tensor
   */
  public int gather(int table, int indices) {
    TensorShape t = shape(table);
    TensorShape ix = shape(indices);
    check(t.rank() == 2, "gather needs a rank-2 table, got " + t);
    int[] out = java.util.Arrays.copyOf(ix.dims(), ix.rank() + 1);
    out[ix.rank()] = t.dim(1);
    Map<String, String> raw = new java.util.LinkedHashMap<>();
    raw.put("offset_dims", "{" + ix.rank() + "}");
    raw.put("collapsed_slice_dims", "{0}");
    raw.put("start_index_map", "{0}");
    raw.put("index_vector_dim", Integer.toString(ix.rank()));
    raw.put("slice_sizes", "{1," + t.dim(1) + "}");
    return add(Opcode.GATHER, new TensorShape(t.dtype(), out), List.of(table, indices),
        OpAttrs.NONE, raw);
  }

  /**
   * Mixture-of-experts dispatch ({@link Opcode#MOE_DISPATCH}): tokens {@code [b, s, rest...]}
   * to the rows of {@code groups} local experts, {@code rows} each.
   *
   * @param tokens the tokens, rank at least 2
   * @param weights the routing weights {@code [b, s, k]} that scale each copy, or -1
   * @param groups local experts G
   * @param rows rows per local expert C
   * @return the id of a {@code [G, C, rest...]} tensor of the tokens' type
   */
  public int moeDispatch(int tokens, int weights, int groups, int rows) {
    TensorShape t = shape(tokens);
    check(t.rank() >= 2 && groups > 0 && rows > 0, "dispatch of " + t + " to " + groups + " x "
        + rows + " rows");
    int[] out = new int[t.rank()];
    out[0] = groups;
    out[1] = rows;
    System.arraycopy(t.dims(), 2, out, 2, t.rank() - 2);
    List<Integer> ops = weights < 0 ? List.of(tokens) : List.of(tokens, weights);
    return add(Opcode.MOE_DISPATCH, new TensorShape(t.dtype(), out), ops, OpAttrs.NONE);
  }

  /**
   * Mixture-of-experts combine ({@link Opcode#MOE_COMBINE}): the rows {@code [G, C, rest...]} of
   * the local experts back to tokens {@code [b, s, rest...]}.
   *
   * @param rows the expert rows, rank at least 2
   * @param weights the routing weights {@code [b, s, k]} of the weighted sum, or -1
   * @param batch sequences b
   * @param seq tokens per sequence s
   * @return the id of a {@code [b, s, rest...]} tensor of the rows' type
   */
  public int moeCombine(int rows, int weights, int batch, int seq) {
    TensorShape r = shape(rows);
    check(r.rank() >= 2 && batch > 0 && seq > 0, "combine of " + r + " to " + batch + " x "
        + seq + " tokens");
    int[] out = r.dims().clone();
    out[0] = batch;
    out[1] = seq;
    List<Integer> ops = weights < 0 ? List.of(rows) : List.of(rows, weights);
    return add(Opcode.MOE_COMBINE, new TensorShape(r.dtype(), out), ops, OpAttrs.NONE);
  }

  /**
   * Adds rows into a table: {@code out = operand; out[indices[i...], :] += updates[i..., :]}, the
   * transpose of {@link #gather} (XLA {@code scatter} with an add combiner).
   *
   * @param operand the rank-2 table to add into
   * @param indices integer row indices
   * @param updates {@code [indices..., width]} rows to add
   * @return the id of a tensor shaped like {@code operand}
   */
  public int scatterAdd(int operand, int indices, int updates) {
    TensorShape t = shape(operand);
    TensorShape ix = shape(indices);
    TensorShape u = shape(updates);
    check(t.rank() == 2 && u.rank() == ix.rank() + 1 && u.dim(ix.rank()) == t.dim(1),
        "scatter-add of " + u + " at " + ix + " into " + t + " does not fit");
    Map<String, String> raw = new java.util.LinkedHashMap<>();
    raw.put("update_window_dims", "{" + ix.rank() + "}");
    raw.put("inserted_window_dims", "{0}");
    raw.put("scatter_dims_to_operand_dims", "{0}");
    raw.put("index_vector_dim", Integer.toString(ix.rank()));
    raw.put("to_apply", "%add." + t.dtype().hloName());
    return add(Opcode.SCATTER, t, List.of(operand, indices, updates), OpAttrs.NONE, raw);
  }

  /**
   * Adds a parameter.
   *
   * @param shape its shape
   * @return the id
   */
  public int parameter(TensorShape shape) {
    return add(Opcode.PARAMETER, shape, List.of(), new OpAttrs.Index(parameterCount++));
  }

  /**
   * Adds a scalar constant.
   *
   * @param dtype its type
   * @param value its value
   * @return the id
   */
  public int constant(DType dtype, double value) {
    String lit = value == Math.rint(value) && Math.abs(value) < 1e15
        ? Long.toString((long) value) : Double.toString(value);
    return add(Opcode.CONSTANT, TensorShape.of(dtype), List.of(), new OpAttrs.Literal(lit));
  }

  /**
   * Broadcasts an operand into a larger shape.
   *
   * @param operand the operand
   * @param outDims the result dimensions
   * @param dims for each operand dimension, the result dimension it maps to
   * @return the id
   */
  public int broadcast(int operand, int[] outDims, int... dims) {
    TensorShape in = shape(operand);
    check(dims.length == in.rank(), "broadcast needs one result dimension per operand dimension");
    for (int i = 0; i < dims.length; i++) {
      check(dims[i] >= 0 && dims[i] < outDims.length && outDims[dims[i]] == in.dim(i),
          "broadcast dimension " + i + " does not match");
    }
    return add(Opcode.BROADCAST, new TensorShape(in.dtype(), outDims), List.of(operand),
        new OpAttrs.Dims(boxed(dims)));
  }

  /**
   * Reshapes an operand.
   *
   * @param operand the operand
   * @param newDims the new dimensions, with the same element count
   * @return the id
   */
  public int reshape(int operand, int... newDims) {
    TensorShape in = shape(operand);
    TensorShape out = new TensorShape(in.dtype(), newDims);
    check(out.elementCount() == in.elementCount(), "reshape " + in + " to "
        + Arrays.toString(newDims) + " changes the element count");
    return add(Opcode.RESHAPE, out, List.of(operand), OpAttrs.NONE);
  }

  /**
   * Permutes dimensions: result dimension {@code i} is operand dimension {@code perm[i]}.
   *
   * @param operand the operand
   * @param perm the permutation
   * @return the id
   */
  public int transpose(int operand, int... perm) {
    TensorShape in = shape(operand);
    check(perm.length == in.rank(), "transpose needs a full permutation");
    int[] out = new int[perm.length];
    boolean[] seen = new boolean[perm.length];
    for (int i = 0; i < perm.length; i++) {
      check(perm[i] >= 0 && perm[i] < perm.length && !seen[perm[i]], "not a permutation");
      seen[perm[i]] = true;
      out[i] = in.dim(perm[i]);
    }
    return add(Opcode.TRANSPOSE, new TensorShape(in.dtype(), out), List.of(operand),
        new OpAttrs.Dims(boxed(perm)));
  }

  /**
   * Applies a one-operand elementwise op.
   *
   * @param op the opcode, of kind {@link OpKind#ELEMENTWISE}
   * @param x the operand
   * @return the id
   */
  public int unary(Opcode op, int x) {
    check(op.kind() == OpKind.ELEMENTWISE, op + " is not elementwise");
    return add(op, shape(x), List.of(x), OpAttrs.NONE);
  }

  /**
   * Converts the element type.
   *
   * @param x the operand
   * @param dtype the new type
   * @return the id
   */
  public int convert(int x, DType dtype) {
    return add(Opcode.CONVERT, shape(x).withDtype(dtype), List.of(x), OpAttrs.NONE);
  }

  /**
   * Applies a two-operand elementwise op to operands of equal shape.
   *
   * @param op the opcode
   * @param a the first operand
   * @param b the second operand
   * @return the id
   */
  public int binary(Opcode op, int a, int b) {
    check(op.kind() == OpKind.ELEMENTWISE && op != Opcode.COMPARE, op + " is not a binary op");
    check(shape(a).equals(shape(b)), op.hloName() + " operands differ: " + shape(a) + " vs "
        + shape(b));
    return add(op, shape(a), List.of(a, b), OpAttrs.NONE);
  }

  /**
   * Compares two operands of equal shape.
   *
   * @param direction EQ, NE, LT, LE, GT or GE
   * @param a the first operand
   * @param b the second operand
   * @return the id of a {@code pred} tensor
   */
  public int compare(String direction, int a, int b) {
    check(shape(a).equals(shape(b)), "compare operands differ");
    return add(Opcode.COMPARE, shape(a).withDtype(DType.PRED), List.of(a, b),
        new OpAttrs.Compare(direction));
  }

  /**
   * Selects elementwise.
   *
   * @param pred a {@code pred} tensor
   * @param onTrue the value where pred holds
   * @param onFalse the value elsewhere
   * @return the id
   */
  public int select(int pred, int onTrue, int onFalse) {
    check(shape(onTrue).equals(shape(onFalse)), "select branches differ");
    check(Arrays.equals(shape(pred).dims(), shape(onTrue).dims()), "select predicate differs");
    return add(Opcode.SELECT, shape(onTrue), List.of(pred, onTrue, onFalse), OpAttrs.NONE);
  }

  /**
   * Sums over dimensions.
   *
   * @param x the operand
   * @param dims the reduced dimensions
   * @return the id
   */
  public int reduce(int x, int... dims) {
    TensorShape in = shape(x);
    boolean[] reduced = new boolean[in.rank()];
    for (int d : dims) {
      check(d >= 0 && d < in.rank() && !reduced[d], "bad reduce dimension " + d);
      reduced[d] = true;
    }
    int[] out = new int[in.rank() - dims.length];
    int k = 0;
    for (int i = 0; i < in.rank(); i++) {
      if (!reduced[i]) {
        out[k++] = in.dim(i);
      }
    }
    int[] sorted = dims.clone();
    Arrays.sort(sorted);
    return add(Opcode.REDUCE, new TensorShape(in.dtype(), out), List.of(x),
        new OpAttrs.Dims(boxed(sorted)));
  }

  /**
   * A matrix product contracting lhs dimension 1 with rhs dimension 0.
   *
   * @param lhs the left operand
   * @param rhs the right operand
   * @return the id
   */
  public int dot(int lhs, int rhs) {
    return dot(lhs, rhs, new int[0], new int[] {shape(lhs).rank() - 1}, new int[0], new int[] {0});
  }

  /**
   * A general dot. The result has the batch dimensions, then lhs free, then rhs free dimensions.
   *
   * @param lhs the left operand
   * @param rhs the right operand
   * @param lhsBatch lhs batch dimensions
   * @param lhsContracting lhs contracting dimensions
   * @param rhsBatch rhs batch dimensions
   * @param rhsContracting rhs contracting dimensions
   * @return the id
   */
  public int dot(int lhs, int rhs, int[] lhsBatch, int[] lhsContracting, int[] rhsBatch,
      int[] rhsContracting) {
    TensorShape l = shape(lhs);
    TensorShape r = shape(rhs);
    OpAttrs.Dot attrs = new OpAttrs.Dot(boxed(lhsBatch), boxed(lhsContracting), boxed(rhsBatch),
        boxed(rhsContracting));
    TensorShape out = DotShapes.resultShape(l, r, attrs);
    return add(Opcode.DOT, out, List.of(lhs, rhs), attrs);
  }

  /**
   * A general dot whose result has its own element type, as an FP8 GEMM writes bf16 (HLO states
   * the result type of every dot).
   *
   * @param lhs the left operand
   * @param rhs the right operand
   * @param lhsBatch lhs batch dimensions
   * @param lhsContracting lhs contracting dimensions
   * @param rhsBatch rhs batch dimensions
   * @param rhsContracting rhs contracting dimensions
   * @param result the result's element type
   * @return the id
   */
  public int dot(int lhs, int rhs, int[] lhsBatch, int[] lhsContracting, int[] rhsBatch,
      int[] rhsContracting, DType result) {
    OpAttrs.Dot attrs = new OpAttrs.Dot(boxed(lhsBatch), boxed(lhsContracting), boxed(rhsBatch),
        boxed(rhsContracting));
    TensorShape out = DotShapes.resultShape(shape(lhs), shape(rhs), attrs).withDtype(result);
    return add(Opcode.DOT, out, List.of(lhs, rhs), attrs);
  }

  /**
   * Concatenates along one dimension.
   *
   * @param dim the dimension
   * @param operands the operands
   * @return the id
   */
  public int concatenate(int dim, int... operands) {
    TensorShape first = shape(operands[0]);
    int[] out = first.dims();
    out[dim] = 0;
    List<Integer> ops = new ArrayList<>();
    for (int o : operands) {
      TensorShape s = shape(o);
      check(s.rank() == first.rank(), "concatenate ranks differ");
      out[dim] += s.dim(dim);
      ops.add(o);
    }
    return add(Opcode.CONCATENATE, new TensorShape(first.dtype(), out), ops,
        new OpAttrs.Dims(List.of(dim)));
  }

  /**
   * A static slice with unit strides.
   *
   * @param x the operand
   * @param starts the first index per dimension
   * @param limits one past the last index per dimension
   * @return the id
   */
  public int slice(int x, int[] starts, int[] limits) {
    TensorShape in = shape(x);
    int[] out = new int[in.rank()];
    int[] strides = new int[in.rank()];
    for (int i = 0; i < in.rank(); i++) {
      check(0 <= starts[i] && starts[i] <= limits[i] && limits[i] <= in.dim(i), "bad slice");
      out[i] = limits[i] - starts[i];
      strides[i] = 1;
    }
    return add(Opcode.SLICE, new TensorShape(in.dtype(), out), List.of(x),
        new OpAttrs.Slice(boxed(starts), boxed(limits), boxed(strides)));
  }

  /**
   * Makes a tuple.
   *
   * @param operands its elements
   * @return the id
   */
  public int tuple(int... operands) {
    List<Shape> shapes = new ArrayList<>();
    List<Integer> ops = new ArrayList<>();
    for (int o : operands) {
      shapes.add(instructions.get(o).shape());
      ops.add(o);
    }
    return add(Opcode.TUPLE, new TupleShape(shapes), ops, OpAttrs.NONE);
  }

  /**
   * Causal fused attention, forward ({@link Opcode#FUSED_ATTENTION}), computing a fraction of the
   * causal query-key pairs (a sliding window, packed documents) within sequences of {@code span}
   * tokens ({@link OpAttrs.Attention}).
   *
   * @param q queries {@code [b, s, a, d]}
   * @param k keys {@code [b, s, g, d]}, {@code g} dividing {@code a}
   * @param v values {@code [b, s, g, d_v]} (latent attention's {@code d_v} differs from {@code
   *     d})
   * @param work the fraction of the causal pairs computed, in (0, 1]
   * @param span the documents' length in tokens, 0 for the whole sequence
   * @return the id of the output {@code [b, s, a, d_v]}
   */
  public int fusedAttention(int q, int k, int v, double work, int span) {
    checkAttention(q, k, v);
    TensorShape qs = shape(q);
    TensorShape out = TensorShape.of(qs.dtype(), qs.dim(0), qs.dim(1), qs.dim(2),
        shape(v).dim(3));
    return add(Opcode.FUSED_ATTENTION, out, List.of(q, k, v), new OpAttrs.Attention(-1,
        work, span));
  }

  /**
   * One gradient of causal fused attention ({@link Opcode#FUSED_ATTENTION_GRAD}) computing a
   * fraction of the causal pairs within sequences of {@code span} tokens.
   *
   * @param output 0 for dQ, 1 for dK, 2 for dV
   * @param q the forward's queries
   * @param k its keys
   * @param v its values
   * @param o its output
   * @param dO the gradient of its output
   * @param work the fraction of the causal pairs computed, in (0, 1]
   * @param span the documents' length in tokens, 0 for the whole sequence
   * @return the id of the gradient, shaped as Q (dQ) or K (dK, dV)
   */
  public int fusedAttentionGrad(int output, int q, int k, int v, int o, int dO, double work,
      int span) {
    checkAttention(q, k, v);
    Require.that(output >= 0 && output <= 2,
        () -> "fused attention has 3 gradients, not " + output);
    TensorShape qs = shape(q);
    TensorShape os = TensorShape.of(qs.dtype(), qs.dim(0), qs.dim(1), qs.dim(2),
        shape(v).dim(3));
    Require.that(shape(o).equals(os) && shape(dO).equals(os),
        "the output and its gradient take the queries' shape with the values' head size");
    return add(Opcode.FUSED_ATTENTION_GRAD, switch (output) {
      case 0 -> qs;
      case 1 -> shape(k);
      default -> shape(v);
    }, List.of(q, k, v, o, dO), new OpAttrs.Attention(output, work, span));
  }

  /**
   * A fused scan's forward ({@link OpKind#SCAN}): the SSD scan of a Mamba-2 layer ({@link
   * Opcode#SSD_SCAN}: X {@code [b, s, H, P]}, dt and A dt {@code [b, s, H, 1]}, B and C {@code
   * [b, s, G, N]} with G dividing H; the output shaped as X), the gated delta rule of a Gated
   * DeltaNet layer ({@link Opcode#GDN_SCAN}: Q and K {@code [b, s, H, d_k]}, V {@code [b, s, H,
   * d_v]}, g and beta {@code [b, s, H, 1]}; shaped as V) or the selective scan of a Mamba-1 layer
   * ({@link Opcode#SELECTIVE_SCAN}: u and delta {@code [b, s, D]}, A {@code [D, N]}, B and C
   * {@code [b, s, N]}; shaped as u).
   *
   * @param op the forward opcode
   * @param chunk the chunk length, dividing the sequence (1 for the selective scan)
   * @param operands the five operands, in the order above
   * @return the id of the output
   */
  public int scan(Opcode op, int chunk, int... operands) {
    checkScan(op, chunk, operands);
    return add(op, scanOutputShape(op, operands), boxed(operands), new OpAttrs.Scan(-1, chunk));
  }

  /** The forward output's shape: the values' for Gated DeltaNet, the inputs' otherwise. */
  private TensorShape scanOutputShape(Opcode op, int[] operands) {
    return shape(operands[op == Opcode.GDN_SCAN ? 2 : 0]);
  }

  /**
   * One gradient kernel of a fused scan: the gradient of operand {@code output} from the
   * forward's operands and the output's gradient {@code dY}.
   *
   * @param op the forward opcode
   * @param output the operand whose gradient it yields, 0 to 4
   * @param chunk the forward's chunk length
   * @param dY the gradient of the forward's output
   * @param operands the forward's five operands
   * @return the id of the gradient, shaped as the operand
   */
  public int scanGrad(Opcode op, int output, int chunk, int dY, int... operands) {
    checkScan(op, chunk, operands);
    Require.that(output >= 0 && output < operands.length, () -> "a scan has 5 "
        + "gradients, not " + output);
    Require.that(shape(dY).equals(scanOutputShape(op, operands)),
        "the output's gradient takes the output's shape");
    List<Integer> ops = new ArrayList<>(boxed(operands));
    ops.add(dY);
    Opcode grad = switch (op) {
      case SSD_SCAN -> Opcode.SSD_SCAN_GRAD;
      case GDN_SCAN -> Opcode.GDN_SCAN_GRAD;
      default -> Opcode.SELECTIVE_SCAN_GRAD;
    };
    return add(grad, shape(operands[output]), ops, new OpAttrs.Scan(output, chunk));
  }

  private void checkScan(Opcode op, int chunk, int[] o) {
    Require.that(o.length == 5 && chunk > 0, () -> "a scan takes five operands and a"
        + " positive chunk");
    TensorShape a = shape(o[0]);
    TensorShape d = shape(o[op == Opcode.GDN_SCAN ? 3 : 1]);
    TensorShape c = shape(o[4]);
    boolean fits = switch (op) {
      case SSD_SCAN -> a.rank() == 4 && d.rank() == 4 && c.rank() == 4
          && d.equals(shape(o[2])) && c.equals(shape(o[3])) && d.dim(0) == a.dim(0)
          && d.dim(1) == a.dim(1) && d.dim(2) == a.dim(2) && d.dim(3) == 1
          && c.dim(0) == a.dim(0) && c.dim(1) == a.dim(1) && a.dim(2) % c.dim(2) == 0
          && a.dim(1) % chunk == 0;
      case GDN_SCAN -> {
        TensorShape v = shape(o[2]);
        yield a.rank() == 4 && a.equals(shape(o[1])) && v.rank() == 4 && d.rank() == 4
            && d.equals(c) && v.dim(0) == a.dim(0) && v.dim(1) == a.dim(1)
            && v.dim(2) == a.dim(2) && d.dim(0) == a.dim(0) && d.dim(1) == a.dim(1)
            && d.dim(2) == a.dim(2) && d.dim(3) == 1 && a.dim(1) % chunk == 0;
      }
      case SELECTIVE_SCAN -> {
        TensorShape decay = shape(o[2]);
        yield a.rank() == 3 && a.equals(d) && decay.rank() == 2 && decay.dim(0) == a.dim(2)
            && c.rank() == 3 && c.equals(shape(o[3])) && c.dim(0) == a.dim(0)
            && c.dim(1) == a.dim(1) && c.dim(2) == decay.dim(1);
      }
      default -> false;
    };
    Require.that(fits, () -> op + " does not take operands " + Arrays
        .stream(o).mapToObj(x -> shape(x).toString()).toList() + " with chunk " + chunk
        + " (see GraphBuilder.scan)");
  }

  private void checkAttention(int q, int k, int v) {
    TensorShape qs = shape(q);
    TensorShape ks = shape(k);
    TensorShape vs = shape(v);
    Require.that(qs.rank() == 4 && ks.rank() == 4 && vs.rank() == 4
        && vs.dim(0) == ks.dim(0) && vs.dim(1) == ks.dim(1) && vs.dim(2) == ks.dim(2)
        && qs.dim(0) == ks.dim(0) && ks.dim(1) % qs.dim(1) == 0 && qs.dim(3) == ks.dim(3)
        && qs.dim(2) % ks.dim(2) == 0,
        () -> "fused attention takes Q [b, s, a, d], K [b, c s, g, d]"
        + " and V [b, c s, g, d_v] with g dividing a, got " + qs + ", " + ks + " and " + vs);
  }

  /**
   * Marks a value that must be replicated on every device.
   *
   * @param x the value
   * @return the id of the marker
   */
  public int forceReplicated(int x) {
    return add(Opcode.FORCE_REPLICATED, shape(x), List.of(x), OpAttrs.NONE);
  }

  /**
   * Declares that {@code output} replaces {@code parameter} after the step.
   *
   * @param parameter the parameter id
   * @param output the updated value's id
   * @return this builder
   */
  public GraphBuilder alias(int parameter, int output) {
    aliases.add(new AliasPair(parameter, output));
    return this;
  }

  /**
   * Finishes the graph; the last instruction added is the root.
   *
   * @return the graph
   */
  public Graph build() {
    return new Graph(name, instructions, aliases);
  }

  private static List<Integer> boxed(int[] a) {
    List<Integer> l = new ArrayList<>(a.length);
    for (int x : a) {
      l.add(x);
    }
    return l;
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
