package io.meshplan.graph;

/**
 * Floating-point operations and memory traffic of one instruction on one device holding the whole
 * tensors. A dot of result size R contracting K elements performs 2*R*K FLOPs (one multiply and one
 * add each); elementwise and reduce ops perform one FLOP per input element; data movement ops none.
 */
public final class OpCost {
  private OpCost() {}

  /**
   * FLOPs of an instruction.
   *
   * @param graph the graph
   * @param ins the instruction
   * @return floating-point operations
   */
  public static double flops(Graph graph, Instruction ins) {
    return switch (ins.opcode().kind()) {
      case DOT -> {
        OpAttrs.Dot a = (OpAttrs.Dot) ins.attrs();
        TensorShape lhs = graph.get(ins.operand(0)).tensorShape();
        double k = 1;
        for (int d : a.lhsContracting()) {
          k *= lhs.dim(d);
        }
        yield 2.0 * ins.tensorShape().elementCount() * k;
      }
      case ELEMENTWISE -> ins.shape() instanceof TensorShape t ? t.elementCount() : 0;
      case REDUCE -> graph.get(ins.operand(0)).shape() instanceof TensorShape t
          ? t.elementCount() : 0;
      case FUSED_ATTENTION -> attentionFlops(graph, ins);
      case SCAN -> scanFlops(graph, ins);
      default -> 0;
    };
  }

  /**
   * The FLOPs of a fused scan ({@link OpKind#SCAN}): its forward's, per token times the tokens,
   * or a backward kernel's share of the backward, which computes twice the forward's products
   * (each product has two gradients): the operand the scan maps to its output takes half, the two
   * it contracts with a quarter each, the rest (step sizes and decays, reductions) none, priced
   * by their bytes ({@link #scanGradientShare}).
   */
  private static double scanFlops(Graph graph, Instruction ins) {
    TensorShape first = graph.get(ins.operand(0)).tensorShape();
    double tokens = (double) first.dim(0) * first.dim(1);
    OpAttrs.Scan a = (OpAttrs.Scan) ins.attrs();
    double forward = tokens * switch (ins.opcode()) {
      case SSD_SCAN, SSD_SCAN_GRAD -> {
        TensorShape bc = graph.get(ins.operand(3)).tensorShape();
        yield ssdFlopsPerToken(first.dim(2), first.dim(3), bc.dim(2), bc.dim(3), a.chunk());
      }
      case GDN_SCAN, GDN_SCAN_GRAD -> deltaFlopsPerToken(first.dim(2), first.dim(3),
          graph.get(ins.operand(2)).tensorShape().dim(3), a.chunk());
      default -> 8.0 * first.dim(2) * graph.get(ins.operand(2)).tensorShape().dim(1);
    };
    return a.output() < 0 ? forward : 2 * forward * scanGradientShare(ins.opcode(), a.output());
  }

  /**
   * The share of a scan's backward products that the gradient of one operand takes: the SSD
   * scan's X (operand 0) half and B and C (3, 4) a quarter each; the delta rule's V (2) half and
   * Q and K (0, 1) a quarter each; the selective scan's u (0) half and delta and A (1, 2) a
   * quarter each.
   */
  private static double scanGradientShare(Opcode op, int output) {
    int half = op == Opcode.GDN_SCAN_GRAD ? 2 : 0;
    boolean quarter = switch (op) {
      case SSD_SCAN_GRAD -> output == 3 || output == 4;
      case GDN_SCAN_GRAD -> output == 0 || output == 1;
      default -> output == 1 || output == 2;
    };
    return output == half ? 0.5 : quarter ? 0.25 : 0;
  }

  /**
   * The matrix FLOPs per token of the SSD scan's forward (Dao and Gu, arXiv:2405.21060, section
   * 6 and listing 1) on {@code H} heads of {@code P} channels and {@code G} groups of state
   * {@code N}, in chunks of {@code Q} tokens: inside each chunk {@code C B^T} per group ({@code 2
   * Q N G}) and its decay-masked product with X ({@code 2 Q P H}; whole Q x Q blocks, as the
   * kernels compute them); each chunk's final state {@code B^T X} and each position's output from
   * the state entering its chunk, {@code C h} ({@code 2 N P H} each); the states passed from
   * chunk to chunk ({@code 2 H P N / Q}).
   *
   * @param heads H
   * @param headDim P
   * @param groups G
   * @param state N
   * @param chunk Q, tokens
   * @return FLOPs per token
   */
  public static double ssdFlopsPerToken(double heads, double headDim, double groups,
      double state, double chunk) {
    return 2 * (chunk * state * groups + heads * (chunk * headDim + 2 * state * headDim))
        + 2 * heads * headDim * state / chunk;
  }

  /**
   * The matrix FLOPs per token of the chunkwise gated delta rule's forward (Yang et al.,
   * "Parallelizing Linear Transformers with the Delta Rule over Sequence Length",
   * arXiv:2406.06484, section 3.3; with the decay of Gated DeltaNet, arXiv:2412.06464, section
   * 3.3) on {@code H} heads of queries and keys of {@code d_k} and values of {@code d_v}, in
   * chunks of C tokens, per chunk and head: {@code K K^T} ({@code 2 C^2 d_k}), the triangular
   * solve for {@code T} ({@code 2 C^3 / 3}), {@code W = T K} and {@code U = T V} ({@code 2 C^2
   * (d_k + d_v)}), {@code W S} and {@code Q S} ({@code 4 C d_k d_v}), {@code Q K^T} and its
   * masked product with {@code U - W S} ({@code 2 C^2 (d_k + d_v)}), and the state's update
   * {@code K^T (U - W S)} ({@code 2 C d_k d_v}).
   *
   * @param heads H
   * @param keyDim d_k
   * @param valueDim d_v
   * @param chunk C, tokens
   * @return FLOPs per token
   */
  public static double deltaFlopsPerToken(double heads, double keyDim, double valueDim,
      double chunk) {
    return heads * (2 * chunk * (3 * keyDim + 2 * valueDim) + 6 * keyDim * valueDim
        + 2 * chunk * chunk / 3);
  }

  // The selective scan (Gu and Dao, arXiv:2312.00752, section 3.3: h_t = exp(delta A) h_{t-1} +
  // delta B_t u_t, y_t = C_t h_t) takes per token, channel and state an exponential and a
  // multiply for the decay, two multiplies for the input, a multiply-add for the state and one
  // for the output: 8 FLOPs, none on tensor cores (scanFlops' default).

  /**
   * The model FLOPs of an instruction: those of the training algorithm, as MFU counts them (Chowdhery
   * et al., PaLM, appendix B): a dot's, and fused attention's without the scores its backward
   * computes again ({@link #recomputedFlops}); elementwise work is not counted.
   *
   * @param graph the graph
   * @param ins the instruction
   * @return model FLOPs
   */
  public static double modelFlops(Graph graph, Instruction ins) {
    return switch (ins.opcode()) {
      case DOT -> flops(graph, ins);
      case FUSED_ATTENTION, FUSED_ATTENTION_GRAD -> flops(graph, ins) - recomputedFlops(graph, ins);
      case SSD_SCAN, SSD_SCAN_GRAD, GDN_SCAN, GDN_SCAN_GRAD -> flops(graph, ins);
      // The selective scan's are elementwise, not counted, as elementwise work is not.
      default -> 0;
    };
  }

  /**
   * FLOPs an instruction spends computing again what the forward pass computed: the scores S = Q
   * K^T that the fused attention backward (its dQ part) rebuilds, {@code b a s_q s_kv d_qk}
   * (causal, times the window's work).
   *
   * @param graph the graph
   * @param ins the instruction
   * @return FLOPs, 0 for every other instruction
   */
  public static double recomputedFlops(Graph graph, Instruction ins) {
    if (ins.opcode() != Opcode.FUSED_ATTENTION_GRAD
        || ((OpAttrs.Attention) ins.attrs()).output() != 0) {
      return 0;
    }
    return pairs(graph, ins) * graph.get(ins.operand(0)).tensorShape().dim(3);
  }

  /**
   * The matrix FLOPs of causal fused attention (Dao, FlashAttention-2, arXiv:2307.08691, section
   * 3.1): on queries {@code [b, s, a, d_qk]} and values of {@code d_v} per head, a score-sized
   * matrix product over {@code d} dimensions costs {@code 2 b a s^2 d} FLOPs, half of which
   * causal masking skips: {@code P d} with {@code P = b a s^2 / 2} the causal pairs times 2. Under
   * context parallelism a GPU's {@code s/c} queries meet the keys of the whole sequence {@code
   * s}, and Megatron-Core's load balancing (each GPU holds two of the {@code 2c} chunks, one from
   * each end) gives each GPU {@code 1/c} of the causal work: {@code P = b a (s/c) s}, which is
   * {@code b a s_q s_kv} in both cases; a sliding window computes the fraction {@link
   * OpAttrs.Attention#work} of it. The forward runs S = Q K^T ({@code d_qk}) and O = P V ({@code
   * d_v}). The backward runs, for dQ, S again and dQ = dS K ({@code d_qk} each) and dP = dO V^T
   * ({@code d_v}); dK = dS^T Q ({@code d_qk}); dV = P^T dO ({@code d_v}). With {@code d_qk = d_v
   * = d} (every model but latent attention's) that is 2G forward and 3G, G, G backward for {@code
   * G = P d}, 2.5 times the forward.
   */
  private static double attentionFlops(Graph graph, Instruction ins) {
    double dqk = graph.get(ins.operand(0)).tensorShape().dim(3);
    double dv = graph.get(ins.operand(2)).tensorShape().dim(3);
    double p = pairs(graph, ins);
    if (ins.opcode() == Opcode.FUSED_ATTENTION) {
      return p * (dqk + dv);
    }
    return switch (((OpAttrs.Attention) ins.attrs()).output()) {
      case 0 -> p * (2 * dqk + dv);
      case 1 -> p * dqk;
      default -> p * dv;
    };
  }

  /**
   * The tokens of the sequences a fused attention kernel attends within, which set its speed
   * ({@link io.meshplan.cluster.SequenceScaling}): the queries' length, the sequence, or under
   * context parallelism one GPU's share of it, whose kernels Megatron-Core's ring runs against
   * one share of keys at a time (the all-gather form, Llama 3's, meets the whole sequence's keys
   * and runs somewhat faster than so priced); or the packed documents' length where documents
   * are packed ({@link OpAttrs.Attention#span}), if shorter.
   *
   * @param graph the graph
   * @param ins a fused attention kernel, forward or backward
   * @return tokens, >= 1
   */
  public static int attentionSpan(Graph graph, Instruction ins) {
    int queries = graph.get(ins.operand(0)).tensorShape().dim(1);
    int span = ins.attrs() instanceof OpAttrs.Attention a ? a.span() : 0;
    return span > 0 ? Math.min(span, queries) : queries;
  }

  /** {@code b a s_q s_kv} times the window's work: twice the causal query-key pairs. */
  private static double pairs(Graph graph, Instruction ins) {
    TensorShape q = graph.get(ins.operand(0)).tensorShape();
    TensorShape k = graph.get(ins.operand(1)).tensorShape();
    OpAttrs.Attention a = ins.attrs() instanceof OpAttrs.Attention x ? x
        : new OpAttrs.Attention(-1, 1);
    return (double) q.dim(0) * q.dim(2) * q.dim(1) * (double) k.dim(1) * a.work();
  }

  /**
   * Bytes read and written by an instruction: its operands and its result; a token exchange's
   * rows ({@link #exchangeBytes}) and an SSD scan's kernel chain ({@link #ssdKernelBytes}) as
   * their kernels move them, and so does a gated delta rule's ({@link
   * #deltaKernelBytes}).
   *
   * @param graph the graph
   * @param ins the instruction
   * @return bytes of memory traffic
   */
  public static double bytesAccessed(Graph graph, Instruction ins) {
    if (ins.opcode().kind() == OpKind.TOKEN_EXCHANGE) {
      return exchangeBytes(graph, ins);
    }
    if (ins.opcode() == Opcode.SSD_SCAN || ins.opcode() == Opcode.SSD_SCAN_GRAD) {
      return ssdKernelBytes(graph, ins);
    }
    if (ins.opcode() == Opcode.GDN_SCAN || ins.opcode() == Opcode.GDN_SCAN_GRAD) {
      return deltaKernelBytes(graph, ins);
    }
    double b = ins.shape().byteSize();
    for (int op : ins.operands()) {
      b += graph.get(op).shape().byteSize();
    }
    return b;
  }

  /**
   * The traffic of an SSD scan as Mamba-2's Triton kernels run it, which write their intermediate
   * results to device memory between kernels: the chunked scan is not one kernel but a chain
   * ({@code mamba_ssm/ops/triton/ssd_combined.py}, state-spaces/mamba at e9594ce, {@code
   * _mamba_chunk_scan_combined_fwd} and {@code _mamba_chunk_scan_combined_bwd}, which
   * Megatron-Core's {@code MambaMixer} calls through {@code mamba_split_conv1d_scan_combined} for
   * training, {@code megatron/core/ssm/mamba_mixer.py} at d98e8a64dd). PyTorch's blog "Accelerating
   * Mamba2 with Kernel Fusion" (2026) finds that chain "mostly bottlenecked by memory bandwidth
   * and latency". Per token, with {@code e} the activations' element size, {@code X = H P e} (x,
   * its output and their gradients), {@code BC = G N e} (B or C and their gradients), the chunk
   * states {@code S32 = 4 H P N / Q} in fp32 and {@code S16 = e H P N / Q} in the activations'
   * dtype, and the chunk products {@code CB32 = 4 G Q} in fp32:
   * <ul>
   *   <li>the forward runs five kernels: the step sizes' cumulative sum (writing {@code dA} and
   *       {@code dt} in fp32), the chunk states ({@code B}, {@code x} to {@code S32}), the state
   *       passing ({@code S32} to {@code S16}), {@code C B^T} ({@code B}, {@code C} to {@code
   *       CB32}) and the chunk scan ({@code CB32}, {@code x}, {@code C}, {@code S16} to the
   *       output): {@code 3 X + 4 BC + 2 S32 + 2 S16 + 2 CB32 + (e + 24) H};
   *   <li>the backward runs the first four again (its state passing writing fp32), then the
   *       states' gradients ({@code C}, the output's gradient to {@code S32}), their passing
   *       backward ({@code 2 S32} to {@code 2 S16}), {@code dx} ({@code x}, {@code B}, {@code
   *       CB32}, the output's gradient and {@code S16} to {@code dx}), {@code dB} and {@code dC}
   *       (each {@code x} or the output's gradient, {@code S16} and B or C to its gradient), the
   *       chunk products' gradient ({@code x}, the output's gradient to {@code CB32}) and two
   *       batched products adding it into {@code dB} and {@code dC}: {@code 9 X + 15 BC + 6 S32
   *       + 5 S16 + 5 CB32 + (e + 64) H}.
   * </ul>
   * Each backward kernel of the graph (one per gradient) takes the share of that traffic that it
   * takes of the backward's products ({@link #scanGradientShare}): x half, B and C a quarter
   * each. The gate and norm after the scan are the graph's own elementwise work, not counted here.
   */
  private static double ssdKernelBytes(Graph graph, Instruction ins) {
    TensorShape x = graph.get(ins.operand(0)).tensorShape();
    TensorShape b = graph.get(ins.operand(3)).tensorShape();
    OpAttrs.Scan a = (OpAttrs.Scan) ins.attrs();
    double tokens = (double) x.dim(0) * x.dim(1);
    double e = x.dtype().bytes();
    double h = x.dim(2);
    double xs = h * x.dim(3) * e;
    double bc = (double) b.dim(2) * b.dim(3) * e;
    double states = h * x.dim(3) * b.dim(3) / a.chunk();
    double cb = 4.0 * b.dim(2) * a.chunk();
    return tokens * scanShare(ins,
        3 * xs + 4 * bc + 2 * 4 * states + 2 * e * states + 2 * cb + (e + 24) * h,
        9 * xs + 15 * bc + 6 * 4 * states + 5 * e * states + 5 * cb + (e + 64) * h);
  }

  /**
   * What one instruction of a scan takes of its kernel chain's traffic: all of the forward's, or
   * a backward kernel's share of the backward's ({@link #scanGradientShare}).
   *
   * @param ins the scan's forward or one of its backward kernels
   * @param forward the forward chain's bytes per token
   * @param backward the backward chain's bytes per token
   * @return bytes per token
   */
  private static double scanShare(Instruction ins, double forward, double backward) {
    int output = ((OpAttrs.Scan) ins.attrs()).output();
    return output < 0 ? forward : backward * scanGradientShare(ins.opcode(), output);
  }

  /**
   * The traffic of a chunked gated delta rule as flash-linear-attention's Triton kernels run it
   * ({@code fla/ops/gated_delta_rule/chunk.py}, fla-org/flash-linear-attention at bc3b101d,
   * {@code chunk_gated_delta_rule_fwd} and {@code chunk_gated_delta_rule_bwd}, which
   * Megatron-Core's {@code GatedDeltaNet} calls: {@code megatron/core/ssm/gated_delta_net/}
   * at d98e8a64dd), the same class of kernel chain as {@link #ssdKernelBytes}: per token and
   * value head, with {@code e} the activations' element size, {@code K = d_k e} and {@code V =
   * d_v e} bytes, the chunk's triangular matrix {@code A} of {@code C e} and the chunk states
   * {@code h} of {@code d_k d_v e / C} (in the activations' dtype, {@code chunk_delta_h.py}):
   * <ul>
   *   <li>forward: the gates' cumulative sum, the fused {@code K K^T}, triangular solve and
   *       {@code W}, {@code U} kernel ({@code k}, {@code v} to {@code w}, {@code u}, {@code A}),
   *       the states ({@code k}, {@code w}, {@code u} to {@code h} and the new values) and the
   *       output ({@code q}, {@code k}, the new values and {@code h} to {@code o}): {@code 6 K +
   *       6 V + C e + 2 h + 20 + e};
   *   <li>backward: {@code w} and {@code u} and the states again, the values' local gradient,
   *       the states' gradients ({@code dh}), the gradients of {@code q}, {@code k}, {@code w}
   *       and the gates (reading {@code h} and {@code dh}), the WY representation's backward,
   *       and the sum of the two key gradients: {@code 21 K + 15 V + 2 C e + 4 h + 48 + 3 e}.
   * </ul>
   * Each backward kernel of the graph takes the share of that traffic that it takes of the
   * products ({@link #scanGradientShare}): the values' gradient half, the queries' and keys' a
   * quarter each.
   */
  private static double deltaKernelBytes(Graph graph, Instruction ins) {
    TensorShape q = graph.get(ins.operand(0)).tensorShape();
    TensorShape v = graph.get(ins.operand(2)).tensorShape();
    OpAttrs.Scan a = (OpAttrs.Scan) ins.attrs();
    double tokens = (double) q.dim(0) * q.dim(1);
    double e = q.dtype().bytes();
    double k = q.dim(3) * e;
    double vs = v.dim(3) * e;
    double tri = a.chunk() * e;
    double states = (double) q.dim(3) * v.dim(3) * e / a.chunk();
    double heads = q.dim(2);
    return tokens * heads * scanShare(ins, 6 * k + 6 * vs + tri + 2 * states + 20 + e,
        21 * k + 15 * vs + 2 * tri + 4 * states + 48 + 3 * e);
  }

  /**
   * The traffic of a token dispatch or combine on one device: it reads and writes each of its
   * expert rows once (Megatron-Core's permute and unpermute kernels gather rows by index), and
   * reads the routing weights, {@code 2 R + W} bytes with {@code R} the bytes of the expert-side
   * tensor ({@code [G, C, ...]}: the dispatch's result, the combine's first operand) and {@code
   * W} those of the weights. The token-side tensor is not charged whole: a device touches only
   * the tokens routed through it, which are the rows.
   */
  private static double exchangeBytes(Graph graph, Instruction ins) {
    double rows = ins.opcode() == Opcode.MOE_DISPATCH ? ins.shape().byteSize()
        : graph.get(ins.operand(0)).shape().byteSize();
    double weights = ins.operands().size() > 1 ? graph.get(ins.operand(1)).shape().byteSize() : 0;
    return 2 * rows + weights;
  }

  /**
   * Total FLOPs of a graph.
   *
   * @param graph the graph
   * @return the sum over instructions
   */
  public static double totalFlops(Graph graph) {
    double f = 0;
    for (Instruction ins : graph.instructions()) {
      f += flops(graph, ins);
    }
    return f;
  }
}
