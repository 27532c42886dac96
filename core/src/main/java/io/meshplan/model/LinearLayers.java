package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.graph.TensorShape;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The linear layers of {@link DecoderForward} and the weights they create: {@code x . w} in the
 * compute type, under the FP8 recipe ({@link Fp8Training}) with its casts, on a QLoRA base stored
 * in NF4 ({@link Nf4}), with LoRA adapters beside a frozen weight ({@link Lora}) and the biases
 * the architecture has. It names every weight for reports and knows which ones the step trains.
 */
final class LinearLayers {
  private final Tape t;
  private final ModelSpec spec;
  private final TrainingOptions o;
  private final DType dt;
  /** The forward pass whose keep and save rules the layers follow. */
  private final DecoderForward f;
  private final Map<Integer, String> weightNames = new LinkedHashMap<>();
  private final Map<Integer, Integer> fp8Casts = new HashMap<>();
  /** The LoRA adapters' trainable weights ({@link Lora}). */
  private final java.util.Set<Integer> adapterWeights = new java.util.LinkedHashSet<>();
  /** A fused adapter's down-projection {@code x A}, by adapter and input. */
  private final Map<String, Integer> loraDown = new HashMap<>();
  /** Matrix multiplications of linear layers so far in the current block. */
  private int matmuls;

  LinearLayers(Tape t, ModelSpec spec, TrainingOptions o, DecoderForward f) {
    this.t = t;
    this.spec = spec;
    this.o = o;
    this.dt = o.storageDtype();
    this.f = f;
  }

  /** The weights created so far and their names, in creation order. */
  Map<Integer, String> weightNames() {
    return weightNames;
  }

  /**
   * The weights the step trains: every weight, or the LoRA adapters' alone when the model
   * freezes its weights ({@link Lora}).
   *
   * @return weight ids
   */
  java.util.Set<Integer> trainedWeights() {
    return spec.lora().on() ? adapterWeights : weightNames.keySet();
  }

  /** A new block: torchtitan's per-op policy counts its matrix multiplications from one. */
  void startBlock() {
    matmuls = 0;
  }

  int weight(String name, int... dims) {
    int id = t.param(TensorShape.of(dt, dims), ParamRole.WEIGHT);
    weightNames.put(id, t.layer().scope() + "/" + t.part() + "/" + name);
    return id;
  }

  /**
   * {@code x . w} on a QLoRA base projection ({@link Nf4#linear}): its packed 4-bit codes, its
   * 8-bit block constants and their fp32 constants are frozen weights of their own types.
   */
  private int nf4Linear(int x, String name, int in, int out) {
    int groups = Nf4.groups((long) in * out);
    int codes = typedWeight(name + "_nf4", DType.U8, groups, Nf4.GROUP, Nf4.BLOCK / 2);
    int absmax = typedWeight(name + "_absmax", DType.U8, groups, Nf4.GROUP);
    int absmax2 = typedWeight(name + "_absmax2", DType.F32, groups);
    return Nf4.linear(t, dt, x, new int[] {codes, absmax, absmax2}, in, out);
  }

  private int typedWeight(String name, DType type, int... dims) {
    int id = t.param(TensorShape.of(type, dims), ParamRole.WEIGHT);
    weightNames.put(id, t.layer().scope() + "/" + t.part() + "/" + name);
    return id;
  }

  /**
   * A linear layer with a bias of its own when {@code bias} (a hybrid mixer's {@code use_bias}),
   * whatever the architecture's biases.
   */
  int linear(int x, int in, int out, String name, boolean bias) {
    int y = linear(x, in, out, name);
    if (!bias) {
      return y;
    }
    TensorShape ys = t.shape(y);
    return t.add(y, t.broadcast(weight(name + "_bias", out), ys.dims(), ys.rank() - 1));
  }

  int linear(int x, int in, int out, String name) {
    boolean block = t.layer().kind() == LayerRef.Kind.BLOCK;
    int y;
    Lora.Base storage = block ? spec.lora().storage(name) : Lora.Base.TRAINING;
    if (storage == Lora.Base.NF4) {
      y = nf4Linear(x, name, in, out);
    } else if (storage == Lora.Base.FP8 && o.fp8()) {
      // A frozen FP8 base: the E4M3 weight, read by its GEMMs without a cast.
      y = fp8Linear(x, typedWeight(name, Fp8Training.FORWARD, in, out));
    } else {
      int w = weight(name, in, out);
      y = o.fp8() ? fp8Linear(x, w) : t.dot(x, w);
    }
    // torchtitan's per-op policy saves the 1st, 3rd, 5th... matrix multiplication of a block.
    matmuls++;
    if (matmuls % 2 == 1) {
      f.saves().product(y);
    }
    int product = y;
    MaxTextRemat.productName(name, spec.arch().mlp().gated())
        .ifPresent(n -> f.saves().named(product, n));
    java.util.Optional<Lora.Adapter> adapter = block ? spec.lora().adapterOf(name)
        : java.util.Optional.empty();
    if (adapter.isPresent()) {
      y = t.add(y, adapted(x, in, out, name, adapter.get()));
    }
    boolean qkv = name.equals("wq") || name.equals("wk") || name.equals("wv");
    if (spec.arch().biases() || qkv && spec.arch().attn().qkvBias()) {
      TensorShape ys = t.shape(y);
      y = t.add(y, t.broadcast(weight(name + "_bias", out), ys.dims(), ys.rank() - 1));
    }
    return y;
  }

  /**
   * A LoRA adapter's path {@code (alpha / r) (x A) B} for projection {@code name} ({@link Lora}),
   * in the compute type (the adapters are plain linear layers beside an FP8 base, as torchtitan's
   * {@code LoRALinear} builds them): the down-projection {@code x A} is made once per adapter and
   * input, shared by the projections of a fused adapter, and kept for {@code B}'s weight
   * gradient; {@code A}'s weight gradient reads {@code x}.
   */
  private int adapted(int x, int in, int out, String name, Lora.Adapter a) {
    Lora lora = spec.lora();
    int r = lora.rank();
    String key = a.name() + "@" + x;
    Integer down = loraDown.get(key);
    if (down == null) {
      int wa = weight(a.name() + "_lora_a", in, r);
      adapterWeights.add(wa);
      down = f.keep(t.dot(x, wa));
      loraDown.put(key, down);
    }
    int wb = weight(name + "_lora_b", r, out);
    adapterWeights.add(wb);
    int up = t.dot(down, wb);
    return t.mul(up, t.broadcast(t.constant(dt, lora.alpha() / r), t.shape(up).dims()));
  }

  /**
   * {@code x . w} as Transformer Engine's {@code Linear} runs it under the hybrid FP8 recipe
   * ({@link Fp8Training}). The forward casts the input and the weight to E4M3 and multiplies them
   * into a bf16 result; the input's cast is made once per input (Q, K and V, or the gate and up
   * projections, share it as TE's fused QKV and fc1 GEMMs do) and it is the value kept for the
   * backward pass: TE's {@code _Linear.forward} saves the FP8 input (or its FP8 transpose, the
   * same bytes) rather than the bf16 one, and {@code LayerNormLinear} and {@code LayerNormMLP}
   * save their FP8 norm output and FP8 activation output the same way. The backward casts the
   * output gradient to E5M2 once and reads it in both GEMMs: {@code dx = g8 . w8^T} and {@code
   * dw = x8^T . g8}, each written in bf16.
   *
   * <p>Each cast is one memory-bound kernel: it reads the 2-byte value and writes 1 byte per
   * element. The amax that delayed scaling records is reduced inside the same kernel (TE's
   * cast and cast-transpose kernels compute it as they convert), so it moves no bytes of its own
   * and is priced within the cast; the scale update from the amax history is one small kernel
   * per step over a few scalars per tensor and is left out. The weight's cast is not kept: it is
   * cast again in the backward pass (a recomputation costing 3 bytes per weight element) where
   * TE caches it across micro-batches.
   */
  private int fp8Linear(int x, int w) {
    int x8 = fp8Casts.computeIfAbsent(x, k -> f.keep(t.convert(k, Fp8Training.FORWARD)));
    int w8 = t.shape(w).dtype() == Fp8Training.FORWARD ? w : t.convert(w, Fp8Training.FORWARD);
    int r = t.shape(x).rank();
    int[] none = {};
    int y = t.dot(x8, w8, none, new int[] {r - 1}, none, new int[] {0}, dt);
    t.customVjp(y, (bp, g) -> {
      Tape tp = bp.tape();
      int g8 = tp.convert(g, Fp8Training.GRADIENT);
      int[] rows = new int[r - 1];
      for (int i = 0; i < rows.length; i++) {
        rows[i] = i;
      }
      // Each GEMM only where its gradient is needed: a frozen weight (LoRA) has none.
      if (bp.needsGrad(x)) {
        // dx[..., in] = sum_out g8[..., out] * w8[in, out]
        bp.accumulate(x, tp.dot(g8, bp.fwd(w8), none, new int[] {r - 1}, none, new int[] {1},
            dt));
      }
      if (bp.needsGrad(w)) {
        // dw[in, out] = sum over the rows of x8[..., in] * g8[..., out]
        bp.accumulate(w, tp.dot(bp.fwd(x8), g8, none, rows, none, rows, dt));
      }
    });
    return y;
  }
}
