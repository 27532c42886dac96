package io.meshplan.graph;

import java.util.HashMap;
import java.util.Map;

/** Instruction opcodes, with their XLA HLO text names and how the planner treats each. */
public enum Opcode {
  /** {@code parameter}. */
  PARAMETER("parameter", OpKind.PARAMETER),
  /** {@code constant}. */
  CONSTANT("constant", OpKind.SOURCE),
  /** {@code iota}. */
  IOTA("iota", OpKind.SOURCE),
  /** {@code rng}. */
  RNG("rng", OpKind.OPAQUE),
  /** {@code broadcast}. */
  BROADCAST("broadcast", OpKind.BROADCAST),
  /** {@code reshape}. */
  RESHAPE("reshape", OpKind.RESHAPE),
  /** {@code bitcast}. */
  BITCAST("bitcast", OpKind.RESHAPE),
  /** {@code transpose}. */
  TRANSPOSE("transpose", OpKind.TRANSPOSE),
  /** {@code copy}. */
  COPY("copy", OpKind.ELEMENTWISE),
  /** {@code convert}. */
  CONVERT("convert", OpKind.ELEMENTWISE),
  /** {@code negate}. */
  NEGATE("negate", OpKind.ELEMENTWISE),
  /** {@code exponential}. */
  EXP("exponential", OpKind.ELEMENTWISE),
  /** {@code log}. */
  LOG("log", OpKind.ELEMENTWISE),
  /** {@code rsqrt}. */
  RSQRT("rsqrt", OpKind.ELEMENTWISE),
  /** {@code sqrt}. */
  SQRT("sqrt", OpKind.ELEMENTWISE),
  /** {@code tanh}. */
  TANH("tanh", OpKind.ELEMENTWISE),
  /** {@code logistic}. */
  LOGISTIC("logistic", OpKind.ELEMENTWISE),
  /** {@code abs}. */
  ABS("abs", OpKind.ELEMENTWISE),
  /** {@code sine}. */
  SINE("sine", OpKind.ELEMENTWISE),
  /** {@code cosine}. */
  COSINE("cosine", OpKind.ELEMENTWISE),
  /** {@code add}. */
  ADD("add", OpKind.ELEMENTWISE),
  /** {@code subtract}. */
  SUBTRACT("subtract", OpKind.ELEMENTWISE),
  /** {@code multiply}. */
  MULTIPLY("multiply", OpKind.ELEMENTWISE),
  /** {@code divide}. */
  DIVIDE("divide", OpKind.ELEMENTWISE),
  /** {@code maximum}. */
  MAXIMUM("maximum", OpKind.ELEMENTWISE),
  /** {@code minimum}. */
  MINIMUM("minimum", OpKind.ELEMENTWISE),
  /** {@code power}. */
  POWER("power", OpKind.ELEMENTWISE),
  /** {@code compare}. */
  COMPARE("compare", OpKind.ELEMENTWISE),
  /** {@code and}. */
  AND("and", OpKind.ELEMENTWISE),
  /** {@code or}. */
  OR("or", OpKind.ELEMENTWISE),
  /** {@code not}. */
  NOT("not", OpKind.ELEMENTWISE),
  /** {@code select}. */
  SELECT("select", OpKind.ELEMENTWISE),
  /** {@code clamp}. */
  CLAMP("clamp", OpKind.ELEMENTWISE),
  /** {@code reduce}. */
  REDUCE("reduce", OpKind.REDUCE),
  /** {@code dot}. */
  DOT("dot", OpKind.DOT),
  /** {@code concatenate}. */
  CONCATENATE("concatenate", OpKind.CONCATENATE),
  /** {@code slice}. */
  SLICE("slice", OpKind.SLICE),
  /** {@code tuple}. */
  TUPLE("tuple", OpKind.TUPLE),
  /** {@code get-tuple-element}. */
  GET_TUPLE_ELEMENT("get-tuple-element", OpKind.GET_TUPLE_ELEMENT),
  /**
   * A "must be replicated" marker; printed in HLO as XLA's sharding annotation {@code
   * custom-call(...), custom_call_target="Sharding"} with {@code sharding={replicated}}.
   */
  FORCE_REPLICATED("custom-call", OpKind.FORCE_REPLICATED),
  /** {@code dynamic-slice}. */
  DYNAMIC_SLICE("dynamic-slice", OpKind.OPAQUE),
  /** {@code dynamic-update-slice}. */
  DYNAMIC_UPDATE_SLICE("dynamic-update-slice", OpKind.OPAQUE),
  /** {@code gather}. */
  GATHER("gather", OpKind.OPAQUE),
  /** {@code scatter}. */
  SCATTER("scatter", OpKind.OPAQUE),
  /** {@code pad}. */
  PAD("pad", OpKind.OPAQUE),
  /** {@code reduce-window}. */
  REDUCE_WINDOW("reduce-window", OpKind.OPAQUE),
  /** {@code select-and-scatter}. */
  SELECT_AND_SCATTER("select-and-scatter", OpKind.OPAQUE),
  /** {@code custom-call} other than the sharding marker. */
  CUSTOM_CALL("custom-call", OpKind.OPAQUE),
  /**
   * Causal fused attention, forward: operands Q {@code [b, s, a, d]}, K and V {@code [b, s, g,
   * d]} ({@code g} key/value heads dividing {@code a}), output {@code [b, s, a, d]}; the scores
   * stay on chip (Dao et al., FlashAttention, NeurIPS'22). Printed as XLA's cuDNN call {@code
   * custom-call(...), custom_call_target="__cudnn$fmhaSoftmax"}.
   */
  FUSED_ATTENTION("custom-call", OpKind.FUSED_ATTENTION),
  /**
   * Causal fused attention, backward: operands Q, K, V, the output O and its gradient dO; the
   * {@link OpAttrs.Index} says which gradient it yields (0 dQ, 1 dK, 2 dV). The scores are
   * recomputed from Q and K. Printed as {@code custom_call_target="__cudnn$fmhaSoftmaxBackward"}
   * with {@code output_index=N}.
   */
  FUSED_ATTENTION_GRAD("custom-call", OpKind.FUSED_ATTENTION),
  /**
   * The chunked state-space scan of a Mamba-2 layer (SSD: Dao and Gu, arXiv:2405.21060, section
   * 6), forward: operands X {@code [b, s, H, P]}, the step sizes {@code dt} and their products
   * with the heads' decay {@code A dt}, each {@code [b, s, H, 1]}, B and C {@code [b, s, G, N]};
   * the output takes X's shape ({@link OpAttrs.Scan}). Printed as {@code
   * custom_call_target="meshplan$ssdScan"}.
   */
  SSD_SCAN("custom-call", OpKind.SCAN),
  /**
   * One gradient of the SSD scan: operands the forward's five and the output's gradient; the
   * {@link OpAttrs.Scan} says which operand's gradient it yields (0 to 4). Printed as {@code
   * custom_call_target="meshplan$ssdScanBackward"} with {@code output_index=N}.
   */
  SSD_SCAN_GRAD("custom-call", OpKind.SCAN),
  /**
   * The chunked gated delta rule of a Gated DeltaNet layer (Yang, Kautz and Hatamizadeh,
   * arXiv:2412.06464), forward: operands Q and K {@code [b, s, H, d_k]} (the key heads repeated
   * to the value heads), V {@code [b, s, H, d_v]}, the decays {@code g} and the write strengths
   * {@code beta}, each {@code [b, s, H, 1]}; the output takes V's shape. Printed as {@code
   * custom_call_target="meshplan$gdnScan"}.
   */
  GDN_SCAN("custom-call", OpKind.SCAN),
  /**
   * One gradient of the gated delta rule: operands the forward's five and the output's
   * gradient; the {@link OpAttrs.Scan} says which operand's gradient it yields (0 to 4). Printed
   * as {@code custom_call_target="meshplan$gdnScanBackward"} with {@code output_index=N}.
   */
  GDN_SCAN_GRAD("custom-call", OpKind.SCAN),
  /**
   * The selective scan of a Mamba-1 layer (Gu and Dao, arXiv:2312.00752, section 3.3), forward:
   * operands the inputs {@code u} and step sizes {@code delta} {@code [b, s, D]}, the decays
   * {@code A} {@code [D, N]}, and the selection inputs {@code B} and {@code C} {@code [b, s, N]};
   * the output takes {@code u}'s shape ({@link OpAttrs.Scan}, its chunk 1). Printed as {@code
   * custom_call_target="meshplan$selectiveScan"}.
   */
  SELECTIVE_SCAN("custom-call", OpKind.SCAN),
  /**
   * One gradient of the selective scan: operands the forward's five and the output's gradient;
   * the {@link OpAttrs.Scan} says which operand's gradient it yields (0 to 4).
   */
  SELECTIVE_SCAN_GRAD("custom-call", OpKind.SCAN),
  /**
   * Mixture-of-experts token dispatch on one device: operand 0 the tokens {@code [b, s, ...]} in
   * whatever layout they have, an optional operand 1 the routing weights {@code [b, s, k]} that
   * scale each copy; the result {@code [G, C, ...]} holds the rows this device's {@code G} local
   * experts receive, {@code C} each (Megatron-Core's permute, all-to-all and sort by local expert,
   * the all-to-all priced by the stage). Printed as {@code custom_call_target="meshplan$moeDispatch"}.
   */
  MOE_DISPATCH("custom-call", OpKind.TOKEN_EXCHANGE),
  /**
   * Mixture-of-experts token combine on one device, the transpose of {@link #MOE_DISPATCH}: operand
   * 0 the expert rows {@code [G, C, ...]}, an optional operand 1 the routing weights {@code [b, s,
   * k]}; the result {@code [b, s, ...]} in token order, each token the (weighted) sum of its
   * copies. Printed as {@code custom_call_target="meshplan$moeCombine"}.
   */
  MOE_COMBINE("custom-call", OpKind.TOKEN_EXCHANGE),
  /** {@code fusion}. */
  FUSION("fusion", OpKind.OPAQUE),
  /** {@code while}. */
  WHILE("while", OpKind.OPAQUE),
  /** {@code call}. */
  CALL("call", OpKind.OPAQUE),
  /** {@code conditional}. */
  CONDITIONAL("conditional", OpKind.OPAQUE),
  /** {@code reverse}. */
  REVERSE("reverse", OpKind.OPAQUE),
  /** {@code sort}. */
  SORT("sort", OpKind.OPAQUE),
  /** {@code convolution}. */
  CONVOLUTION("convolution", OpKind.OPAQUE),
  /** {@code all-reduce} already present in the input. */
  ALL_REDUCE("all-reduce", OpKind.OPAQUE),
  /** {@code after-all} (token). */
  AFTER_ALL("after-all", OpKind.OPAQUE),
  /** {@code remainder}. */
  REMAINDER("remainder", OpKind.ELEMENTWISE),
  /** {@code floor}. */
  FLOOR("floor", OpKind.ELEMENTWISE),
  /** {@code ceil}. */
  CEIL("ceil", OpKind.ELEMENTWISE),
  /** {@code sign}. */
  SIGN("sign", OpKind.ELEMENTWISE),
  /** {@code exponential-minus-one}. */
  EXPM1("exponential-minus-one", OpKind.ELEMENTWISE),
  /** {@code log-plus-one}. */
  LOG1P("log-plus-one", OpKind.ELEMENTWISE),
  /** {@code erf}. */
  ERF("erf", OpKind.ELEMENTWISE),
  /** {@code atan2}. */
  ATAN2("atan2", OpKind.ELEMENTWISE),
  /** {@code xor}. */
  XOR("xor", OpKind.ELEMENTWISE),
  /** {@code is-finite}. */
  IS_FINITE("is-finite", OpKind.ELEMENTWISE),
  /** {@code round-nearest-even}. */
  ROUND_NEAREST_EVEN("round-nearest-even", OpKind.ELEMENTWISE),
  /** {@code all-gather} already present in the input. */
  ALL_GATHER("all-gather", OpKind.OPAQUE),
  /** {@code reduce-scatter} already present in the input. */
  REDUCE_SCATTER("reduce-scatter", OpKind.OPAQUE),
  /** {@code all-to-all} already present in the input. */
  ALL_TO_ALL("all-to-all", OpKind.OPAQUE),
  /** {@code collective-permute} already present in the input. */
  COLLECTIVE_PERMUTE("collective-permute", OpKind.OPAQUE),
  /** {@code optimization-barrier}. */
  OPTIMIZATION_BARRIER("opt-barrier", OpKind.OPAQUE),
  /** {@code partition-id}. */
  PARTITION_ID("partition-id", OpKind.SOURCE),
  /** {@code replica-id}. */
  REPLICA_ID("replica-id", OpKind.SOURCE),
  /**
   * An opcode this version does not know. The HLO reader keeps the name as written in the
   * instruction's raw attributes under {@code HloModule.OPCODE_KEY} so that it prints back.
   */
  UNKNOWN("unknown", OpKind.OPAQUE);

  private static final Map<String, Opcode> BY_HLO = new HashMap<>();

  static {
    for (Opcode op : values()) {
      if (op != FORCE_REPLICATED && op != UNKNOWN) {
        BY_HLO.putIfAbsent(op.hloName, op);
      }
    }
  }

  private final String hloName;
  private final OpKind kind;

  Opcode(String hloName, OpKind kind) {
    this.hloName = hloName;
    this.kind = kind;
  }

  /**
   * The HLO text name.
   *
   * @return e.g. {@code get-tuple-element}
   */
  public String hloName() {
    return hloName;
  }

  /**
   * How the planner treats this opcode.
   *
   * @return the kind
   */
  public OpKind kind() {
    return kind;
  }

  /**
   * Looks up an HLO opcode name.
   *
   * @param name the text name
   * @return the opcode, or {@code null} when unknown
   */
  public static Opcode fromHlo(String name) {
    return BY_HLO.get(name);
  }
}
