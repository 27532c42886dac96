package io.meshplan.model;

import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Low-rank adaptation (Hu et al., LoRA, arXiv:2106.09685, section 4.1): the base weights are
 * frozen and each adapted projection {@code y = x W} gains a trainable path {@code (alpha / r) (x
 * A) B}, {@code A} of {@code in x r} and {@code B} of {@code r x out}. Only the adapters have
 * gradients, fp32 accumulators and Adam state; the frozen weights have none, the data-parallel
 * reduction moves the adapters' gradients alone, and the backward pass computes no weight
 * gradient of a frozen weight (it still carries the activations' gradient through it).
 *
 * <p>An adapter adapts one projection, or several projections of one input at once, as the
 * frameworks fuse them: Megatron-Core's {@code linear_qkv} (the query, key and value projections)
 * and {@code linear_fc1} (gate and up) take one {@code A} and one {@code B} over their joined
 * outputs (Megatron-Bridge's {@code LoRA}, {@code peft/lora.py}); Hugging Face PEFT's {@code
 * q_proj} ... {@code down_proj} and torchtitan main's {@code wq}, {@code wkv}, {@code wo}, {@code
 * w1}, {@code w2}, {@code w3} ({@code components/lora.py} at b5bcd76, {@code LoRAConverter}, which
 * gives {@code wkv}'s two built projections an adapter each) adapt each projection on its own.
 * A fused adapter is one {@code A} shared by its projections and one {@code B} per projection: the
 * same parameters and FLOPs as one {@code B} over the joined outputs.
 *
 * <p>QLoRA (Dettmers et al., arXiv:2305.14314, sections 2 and 3) keeps the same adapters on a
 * base whose linear layers are stored in 4-bit NormalFloat with double quantization ({@link
 * Nf4}), as transformers' bitsandbytes 4-bit loader does ({@code
 * integrations/bitsandbytes.py}, {@code replace_with_bnb_linear}, huggingface/transformers
 * f6cf875a): every {@code nn.Linear} of the blocks becomes a {@code Linear4bit} whether or not it
 * has an adapter, while the embeddings, the norms and the LM head ({@code
 * get_keys_to_not_convert}: the output embedding) stay in bf16. bitsandbytes' {@code MatMul4Bit}
 * ({@code autograd/_functions.py} at 60a0d8a5) dequantizes the weight to the compute type before
 * the forward GEMM and again in the backward pass for the input's gradient; it keeps only the
 * quantized weight and computes no weight gradient.
 *
 * <p>Under the FP8 recipe a frozen base may be stored in FP8 instead ({@link Base#FP8}):
 * Transformer Engine's {@code fp8_model_init}, which Megatron-LM turns on with {@code
 * --fp8-param-gather} and NeMo with {@code fp8_params} (as MLPerf Training's Llama 2 70B LoRA
 * submissions run, {@code megatron_gpt_peft_tuning_config.yaml}, mlcommons/training_results_v5.1
 * 441d65f): each block projection's weight is kept as E4M3 with its scale, one byte an element,
 * and its GEMMs read it without a cast; the embeddings, norms and LM head stay in bf16.
 *
 * <p>Without adapters the same storage holds trained weights ({@link #fp8Weights}): Megatron-LM's
 * {@code --fp8-param-gather} in full FP8 training ("Keep the compute param in fp8 (do not use any
 * other intermediate dtype) and perform the param all-gather in fp8", {@code
 * megatron/training/arguments.py} at d98e8a6), which MLPerf Training's FP8 Llama 3.1
 * submissions run ({@code FP8_PARAM_GATHER=True}, NVIDIA's {@code config_common.sh},
 * mlcommons/training_results_v5.1 441d65f). Each block projection is then one byte an element
 * on every GPU, and the distributed optimizer, which keeps the fp32 master shard, all-gathers the
 * updated weights in FP8: half the bytes of a bf16 gather. The gradients and the optimizer state
 * are those of any trained weight.
 *
 * @param rank r, the adapters' inner size; 0 for no adapters (every weight trained)
 * @param alpha the scale's numerator: the adapters' output is multiplied by {@code alpha / r}
 * @param adapters the adapters, in the order the targets named them
 * @param base how the base's block projections are stored: frozen under adapters, trained
 *     without them (FP8 only)
 */
public record Lora(int rank, double alpha, List<Adapter> adapters, Base base)
    implements java.io.Serializable {
  private static final long serialVersionUID = 2L;

  /** How the base's block projections are stored. */
  public enum Base {
    /** In the training precision (LoRA). */
    TRAINING(""),
    /** In 4-bit NormalFloat with double quantization ({@link Nf4}; QLoRA). */
    NF4("nf4"),
    /** In FP8 E4M3, read by FP8 GEMMs without a cast (under the FP8 recipe only). */
    FP8("fp8");

    private final String word;

    Base(String word) {
      this.word = word;
    }

    /**
     * The word a plan file's {@code model.lora.base} writes.
     *
     * @return {@code nf4} or {@code fp8}; empty for the training precision, which it omits
     */
    public String word() {
      return word;
    }

    /**
     * Reads a plan file's or a data file's word for a stored base.
     *
     * @param w the word
     * @return {@link #NF4} or {@link #FP8}, or empty for any other word
     */
    public static java.util.Optional<Base> parse(String w) {
      return java.util.Arrays.stream(values())
          .filter(b -> b != TRAINING && b.word.equals(w)).findFirst();
    }
  }

  /** No adapters: every weight is trained. */
  public static final Lora NONE = new Lora(0, 0, List.of());

  /**
   * No adapters, every weight trained, the block projections kept in FP8 ({@link #fp8Weights}:
   * Megatron-LM's {@code --fp8-param-gather} in full training).
   */
  public static final Lora FP8_WEIGHTS = NONE.withBase(Base.FP8);

  /**
   * Adapters on a base kept in the training precision (LoRA).
   *
   * @param rank r
   * @param alpha the scale's numerator
   * @param adapters the adapters
   */
  public Lora(int rank, double alpha, List<Adapter> adapters) {
    this(rank, alpha, adapters, Base.TRAINING);
  }

  /**
   * The smallest alpha: 1/1024. Published recipes use 8 to 512 (PEFT's default 8, NeMo's 32, the
   * QLoRA paper's 16); a scale of 2^-10 already leaves the adapters' output as good as off.
   */
  public static final double MIN_ALPHA = 1.0 / 1024;

  /**
   * The largest alpha: 2^21, far above any published recipe's and twice the largest rank (the
   * hidden size, at most {@link ModelSpec#MAX_HIDDEN}), so the default 2R always fits.
   */
  public static final double MAX_ALPHA = 1 << 21;

  /** The most adapters a model has: the seven projections of a block. */
  private static final int MAX_ADAPTERS = 7;

  /** The projections of a block, as {@link DecoderForward} names their weights. */
  public static final List<String> PROJECTIONS = List.of("wq", "wk", "wv", "wo", "w1", "w3",
      "w2");

  /**
   * One adapter: a shared {@code A} and a {@code B} per projection.
   *
   * @param name its target word ({@code q_proj}, {@code linear_qkv}, ...)
   * @param projections the projections it adapts, weight names of {@link #PROJECTIONS}
   */
  public record Adapter(String name, List<String> projections) implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /** Validates the fields. */
    public Adapter {
      Require.nonNull(name, "adapter name");
      projections = List.copyOf(projections);
      Require.that(!projections.isEmpty(), "an adapter adapts at least one projection");
      for (String p : projections) {
        Require.that(PROJECTIONS.contains(p), () -> "unknown projection " + p);
      }
    }
  }

  /** Validates the fields. */
  public Lora {
    Require.nonNull(adapters, "adapters");
    adapters = List.copyOf(adapters);
    Require.that(rank >= 0, () -> "LoRA rank must be positive, got " + rank);
    Require.that((rank == 0) == adapters.isEmpty(),
        "a LoRA rank needs targets, and targets a rank");
    Require.that(rank == 0 || Double.isFinite(alpha) && alpha >= MIN_ALPHA && alpha <= MAX_ALPHA,
        () -> "LoRA alpha must be a number from 1/1024 to " + (long) MAX_ALPHA + ", got "
            + alpha);
    Require.that(adapters.size() <= MAX_ADAPTERS,
        () -> "at most " + MAX_ADAPTERS + " LoRA adapters");
    Require.nonNull(base, "base");
    Require.that(base != Base.NF4 || rank > 0, "a quantized base (QLoRA) needs LoRA adapters");
    Set<String> seen = new LinkedHashSet<>();
    for (Adapter a : adapters) {
      for (String p : a.projections()) {
        Require.that(seen.add(p), () -> "LoRA targets adapt " + word(p) + " twice");
      }
    }
  }

  /**
   * Adapters from a list of target words (comma-separated): Hugging Face PEFT's {@code q_proj},
   * {@code k_proj}, {@code v_proj}, {@code o_proj}, {@code gate_proj}, {@code up_proj}, {@code
   * down_proj}; Megatron-Core's {@code linear_qkv}, {@code linear_proj}, {@code linear_fc1},
   * {@code linear_fc2}; torchtitan's {@code wqkv} (its llama3 flavors' fused projection, as
   * {@code linear_qkv}), {@code wq}, {@code wkv}, {@code wo}, {@code w1}, {@code w2}, {@code
   * w3}; and the groups {@code all-linear} (PEFT's word: every projection of a block,
   * each on its own), {@code attention} and {@code mlp}. {@code up_proj} and {@code linear_fc1}
   * of a model without a gated MLP name its one input projection.
   *
   * @param rank r, at least 1
   * @param alpha the scale's numerator
   * @param targets the words
   * @param gated whether the model's MLP is gated (has gate and up projections)
   * @return the adapters
   * @throws IllegalArgumentException for an unknown word, a projection named twice, or a gate
   *     projection of an MLP without one
   */
  public static Lora of(int rank, double alpha, String targets, boolean gated) {
    Require.that(rank >= 1, () -> "LoRA rank must be at least 1, got " + rank);
    Require.nonNull(targets, "targets");
    Map<String, Adapter> out = new LinkedHashMap<>();
    for (String raw : targets.split(",", -1)) {
      String w = io.meshplan.util.Words.trimmed(raw).toLowerCase(Locale.ROOT);
      Require.that(!w.isEmpty(),
          "LoRA targets must be a comma-separated list of names, got an empty name");
      for (Adapter a : expand(w, gated)) {
        Require.that(out.put(a.name(), a) == null, () -> "LoRA targets adapt " + a.name()
            + " twice");
      }
    }
    return new Lora(rank, alpha, new ArrayList<>(out.values()));
  }

  private static List<Adapter> expand(String w, boolean gated) {
    // A model without a gated MLP has one input projection, w1, which PEFT calls up_proj.
    Adapter up = gated ? new Adapter("up_proj", List.of("w3")) : new Adapter("up_proj",
        List.of("w1"));
    Adapter gate = new Adapter("gate_proj", List.of("w1"));
    Adapter downProj = new Adapter("down_proj", List.of("w2"));
    List<Adapter> mlp = gated ? List.of(gate, up, downProj) : List.of(up, downProj);
    List<Adapter> attention = List.of(new Adapter("q_proj", List.of("wq")),
        new Adapter("k_proj", List.of("wk")), new Adapter("v_proj", List.of("wv")),
        new Adapter("o_proj", List.of("wo")));
    return switch (w) {
      case "all-linear" -> {
        List<Adapter> all = new ArrayList<>(attention);
        all.addAll(mlp);
        yield all;
      }
      case "attention" -> attention;
      case "mlp" -> mlp;
      case "q_proj", "wq" -> List.of(attention.get(0));
      case "k_proj", "wk" -> List.of(attention.get(1));
      case "v_proj", "wv" -> List.of(attention.get(2));
      case "wkv" -> attention.subList(1, 3);
      case "o_proj", "wo", "linear_proj" -> List.of(attention.get(3));
      case "down_proj", "w2", "linear_fc2" -> List.of(downProj);
      case "up_proj" -> List.of(up);
      case "w1" -> List.of(gated ? gate : up);
      case "gate_proj", "w3" -> {
        Require.that(gated, () -> "LoRA target " + w + ": the model's MLP has no gate projection "
            + "(its input projection is up_proj)");
        yield List.of(w.equals("w3") ? up : gate);
      }
      case "linear_qkv", "wqkv" -> List.of(new Adapter("linear_qkv", List.of("wq", "wk", "wv")));
      case "linear_fc1" -> List.of(gated ? new Adapter("linear_fc1", List.of("w1", "w3"))
          : new Adapter("linear_fc1", List.of("w1")));
      default -> throw new IllegalArgumentException("unknown LoRA target '"
          + io.meshplan.util.TerminalText.escape(io.meshplan.util.Words.clipped(w))
          + "'; use q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, linear_qkv, "
          + "linear_proj, linear_fc1, linear_fc2, wq, wkv, wqkv, wo, w1, w2, w3, attention, "
          + "mlp or all-linear");
    };
  }

  /** Hugging Face PEFT's word for a projection (of a gated MLP for w1 and w3). */
  private static String word(String projection) {
    return switch (projection) {
      case "wq" -> "q_proj";
      case "wk" -> "k_proj";
      case "wv" -> "v_proj";
      case "wo" -> "o_proj";
      case "w1" -> "gate_proj";
      case "w3" -> "up_proj";
      default -> "down_proj";
    };
  }

  /**
   * The same adapters on a base stored in NF4 (QLoRA).
   *
   * @return adapters with {@link #quantized}
   */
  public Lora withQuantizedBase() {
    return withBase(Base.NF4);
  }

  /**
   * The same adapters on a base stored another way.
   *
   * @param b how the base is stored
   * @return the adapters
   */
  public Lora withBase(Base b) {
    return new Lora(rank, alpha, adapters, b);
  }

  /**
   * Whether the base is stored in NF4 (QLoRA).
   *
   * @return true for {@link Base#NF4}
   */
  public boolean quantized() {
    return base == Base.NF4;
  }

  /**
   * Whether the block projections are stored in FP8: a frozen base under adapters, or trained
   * weights ({@link #fp8Weights}).
   *
   * @return true for {@link Base#FP8}
   */
  public boolean fp8Base() {
    return base == Base.FP8;
  }

  /**
   * Whether the model trains every weight and keeps its block projections in FP8 (Megatron-LM's
   * {@code --fp8-param-gather} in full training; see the class comment).
   *
   * @return true for {@link Base#FP8} without adapters
   */
  public boolean fp8Weights() {
    return base == Base.FP8 && !on();
  }

  /**
   * How a block weight is stored: every projection of {@link #PROJECTIONS}, adapted or not, as
   * the base is; the other weights in the training precision.
   *
   * @param projection a weight name
   * @return the storage
   */
  public Base storage(String projection) {
    return PROJECTIONS.contains(projection) ? base : Base.TRAINING;
  }

  /**
   * Whether the model trains adapters (and freezes its weights).
   *
   * @return true with a rank
   */
  public boolean on() {
    return rank > 0;
  }

  /**
   * The adapter of a projection.
   *
   * @param projection a weight name of {@link #PROJECTIONS}
   * @return its adapter, empty when it is not adapted
   */
  public Optional<Adapter> adapterOf(String projection) {
    for (Adapter a : adapters) {
      if (a.projections().contains(projection)) {
        return Optional.of(a);
      }
    }
    return Optional.empty();
  }

  /**
   * The target words that give these adapters back through {@link #of}: the adapters' names.
   *
   * @return the words joined by commas, empty for {@link #NONE}
   */
  public String targets() {
    return String.join(",", adapters.stream().map(Adapter::name).toList());
  }

  /**
   * Checks the adapters against a model: a decoder whose blocks have the adapted projections,
   * dense (LoRA on routed experts and on latent attention is not modelled), without
   * multi-token prediction, and a rank of at most its hidden size.
   *
   * @param name the model's name
   * @param family its family
   * @param hidden its hidden size
   * @param arch its layer design
   * @throws IllegalArgumentException when the model cannot take them
   */
  void check(String name, ModelSpec.Family family, int hidden, Architecture arch) {
    if (!on()) {
      return;
    }
    Require.that(!quantized() || !arch.hybrid().on(), () -> "QLoRA on a hybrid model (" + name
        + ") is not modelled: its mixers' 4-bit projections are not priced");
    Require.that(family != ModelSpec.Family.ALPA_MLP, "LoRA adapts transformer decoders");
    Require.that(rank <= hidden, () -> "LoRA rank " + rank + " exceeds the model's hidden width "
        + hidden);
    Require.that(!arch.moe().routed(), () -> "LoRA on a mixture-of-experts model (" + name
        + ") is not modelled: its experts' frozen weights and adapters are not priced");
    Require.that(!arch.attn().mla().on(), () -> "LoRA on latent attention (" + name
        + ") is not modelled");
    Require.that(arch.mtpDepth() == 0, "LoRA with multi-token prediction is not modelled");
    for (Adapter a : adapters) {
      Require.that(arch.mlp().gated() || !a.projections().contains("w3"), () -> "LoRA target "
          + a.name() + ": " + name + "'s MLP has no gate projection");
    }
  }

  /**
   * A projection's input and output sizes in a block of the model.
   *
   * @param spec the model
   * @param projection a weight name of {@link #PROJECTIONS}
   * @return {in, out}
   */
  static long[] dims(ModelSpec spec, String projection) {
    long h = spec.hidden();
    long q = (long) spec.heads() * spec.headDim();
    long kv = (long) spec.kvHeads() * spec.headDim();
    long v = (long) spec.kvHeads() * spec.valueHeadDim();
    long o = (long) spec.heads() * spec.valueHeadDim();
    long f = spec.ffn();
    return switch (projection) {
      case "wq" -> new long[] {h, q};
      case "wk" -> new long[] {h, kv};
      case "wv" -> new long[] {h, v};
      case "wo" -> new long[] {o, h};
      case "w1", "w3" -> new long[] {h, f};
      default -> new long[] {f, h};
    };
  }

  /**
   * The trainable parameters of one block: {@code r (in + sum out)} per adapter, its shared
   * {@code A} and a {@code B} per projection.
   *
   * @param spec the model
   * @return parameters, 0 without adapters
   */
  public long blockParameters(ModelSpec spec) {
    long n = 0;
    for (Adapter a : adapters) {
      long in = dims(spec, a.projections().get(0))[0];
      long out = 0;
      for (String p : a.projections()) {
        out += dims(spec, p)[1];
      }
      n = Math.addExact(n, Math.multiplyExact((long) rank, in + out));
    }
    return n;
  }

  /**
   * Words for reports: {@code LoRA rank 16, alpha 32, targets q_proj,k_proj,...}, {@code QLoRA
   * (NF4 base) rank 16, ...} on a quantized base.
   *
   * @return the words, {@code full} without adapters
   */
  public String words() {
    if (!on()) {
      return fp8Weights() ? "full (FP8 weights)" : "full";
    }
    String a = alpha == Math.rint(alpha) && Math.abs(alpha) < 1e15
        ? Long.toString((long) alpha) : Double.toString(alpha);
    String kind = switch (base) {
      case NF4 -> "QLoRA (NF4 base)";
      case FP8 -> "LoRA (FP8 base)";
      case TRAINING -> "LoRA";
    };
    return kind + " rank " + rank + ", alpha " + a
        + ", targets "
        + targets();
  }
}
