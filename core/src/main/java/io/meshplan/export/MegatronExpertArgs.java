package io.meshplan.export;

import io.meshplan.cluster.FusedAttentionKernels;
import io.meshplan.framework.MegatronArg;
import io.meshplan.model.Architecture;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.plan.ParallelConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Megatron-LM's arguments for what a LLaMA block does not have: a mixture-of-experts layer
 * (Mixtral, Qwen3-MoE), its expert parallelism, a head size of its own and per-head q/k norms.
 * The rules are Megatron-LM's at commit d98e8a6 (NVIDIA/Megatron-LM main, 2026-08-22), restated in
 * {@code MegatronMoeConformanceTest}:
 *
 * <ul>
 *   <li>{@code --expert-tensor-parallel-size} defaults to the tensor-parallel size ({@code
 *       megatron/training/arguments.py:587-588}), so it is always written: meshplan's default is 1.
 *   <li>the experts fold into the world as {@code ETP x EP x expert-DP x PP} ({@code
 *       megatron/core/parallel_state.py:874-884}); {@link ParallelConfig#checkExperts} asks the
 *       stricter {@code EP x ETP | TP x DP}.
 *   <li>{@code num_experts % EP == 0} ({@code arguments.py:1655-1658}).
 *   <li>biases in the experts need {@code ETP == 1} ({@code
 *       megatron/core/transformer/transformer_config.py:2612-2615}).
 *   <li>a capacity factor needs the {@code aux_loss} (or seq/global aux, or none) balancing ({@code
 *       transformer_config.py:1836-1860}); meshplan prices each expert's load as {@code
 *       min(imbalance, capacity)} times the even share, the tokens over capacity dropped, which is
 *       Megatron-LM's behaviour without {@code --moe-pad-expert-input-to-capacity} (that flag pads
 *       every expert to its capacity, {@code transformer_config.py:921-924}), so it is not written.
 *   <li>one expert per token under the softmax router needs {@code --moe-router-pre-softmax}
 *       ({@code transformer_config.py:2662-2670}).
 *   <li>grouped GEMM needs compute capability 8 or more ({@code arguments.py:1378-1380}), which the
 *       GPUs with fused attention kernels have ({@link FusedAttentionKernels}: Ampere and later).
 * </ul>
 *
 * <p>The auxiliary loss coefficient is 1e-2, the starting value Megatron-LM's help recommends
 * ({@code arguments.py:3536-3537}); meshplan does not price the router's loss, and the model
 * configs it reads do not all carry one.
 */
final class MegatronExpertArgs {
  /** The auxiliary load-balancing loss coefficient written ({@code --moe-aux-loss-coeff}). */
  static final String AUX_LOSS_COEFF = "1e-2";

  private MegatronExpertArgs() {}

  /**
   * The details of a model's architecture that Megatron-LM export does not write: the Hugging
   * Face families' details ({@link Architecture#beyondLlama}) less the mixture of experts, the head
   * size ({@code --kv-channels}), QKV-only biases ({@code --add-qkv-bias}, {@link
   * MegatronModelArgs}), q/k norms (per head {@code --qk-layernorm}; over all heads refused by
   * {@link MegatronModelArgs#missing}), latent attention and
   * multi-token prediction ({@link MegatronDeepseekArgs}), a squared-ReLU MLP ({@code
   * --squared-relu}) and a hybrid layer pattern ({@link MegatronHybridArgs}), plus expert biases
   * (gpt-oss's, whose
   * experts also clamp their SwiGLU, which meshplan does not model). Sliding windows are written
   * ({@link MegatronModelArgs#window}).
   *
   * @param m the model
   * @return the details in {@link Architecture#beyondLlama}'s order, empty when all are written
   */
  static List<String> unwritten(ModelSpec m) {
    Architecture arch = m.arch();
    AttentionShape attn = arch.attn();
    List<String> out = new ArrayList<>(arch.beyondLlama());
    out.remove("a mixture of " + arch.moe().experts() + " experts");
    // --moe-latent-size (arguments below).
    out.remove("experts in a latent width of " + arch.moe().latent());
    out.remove("head_dim " + attn.headDim());
    out.remove("multi-head latent attention");
    out.remove("multi-token prediction");
    out.remove("prediction depths sharing one module's weights");
    out.remove("QKV biases");
    // Per-head q/k norms are --qk-layernorm; norms over all heads are refused by name
    // (MegatronModelArgs#missing).
    out.remove("q/k norms");
    // Megatron-LM writes squared ReLU (--squared-relu) and hybrid layer patterns
    // (MegatronHybridArgs, which refuses the mixers it cannot build).
    out.remove("a squared-ReLU MLP");
    out.removeIf(d -> d.startsWith("a hybrid layer pattern"));
    if (arch.moe().expertBiases()) {
      out.add("expert biases");
    }
    return out;
  }

  /**
   * What Megatron-LM cannot run of an input's experts, if anything.
   *
   * @param input the input
   * @return the reason, empty when it can
   */
  static Optional<String> missing(ExportInput input) {
    Optional<String> blocks = MegatronDeepseekArgs.missing(input.model());
    if (blocks.isPresent()) {
      return blocks;
    }
    MoeShape moe = input.model().arch().moe();
    ParallelConfig c = input.config();
    if (moe.routed() && input.model().arch().biases() && c.expertTensorParallel() > 1) {
      return Optional.of("Megatron-LM supports biases in the experts only with expert"
          + " tensor-parallel size 1 (transformer_config.py:2612-2615); got "
          + c.expertTensorParallel());
    }
    return Optional.empty();
  }

  /**
   * The arguments of a model's head size, q/k norms, latent attention, experts and dense blocks,
   * in that order.
   *
   * @param input an expressible input
   * @return the arguments, empty for a LLaMA-style dense model
   */
  static List<List<String>> arguments(ExportInput input) {
    ModelSpec m = input.model();
    AttentionShape attn = m.arch().attn();
    List<List<String>> a = new ArrayList<>();
    if (attn.headDim() > 0) {
      a.add(List.of(MegatronArg.KV_CHANNELS.flag(), Integer.toString(attn.headDim())));
    }
    if (attn.qkNorm() == AttentionShape.QkNorm.PER_HEAD) {
      a.add(List.of(MegatronArg.QK_LAYERNORM.flag()));
    }
    a.addAll(MegatronDeepseekArgs.attention(m));
    MoeShape moe = m.arch().moe();
    if (!moe.routed()) {
      return a;
    }
    ParallelConfig c = input.config();
    a.add(List.of(MegatronArg.NUM_EXPERTS.flag(), Integer.toString(moe.experts())));
    a.add(List.of(MegatronArg.MOE_ROUTER_TOPK.flag(), Integer.toString(moe.topK())));
    if (moe.topK() == 1) {
      a.add(List.of(MegatronArg.MOE_ROUTER_PRE_SOFTMAX.flag()));
    }
    a.add(List.of(MegatronArg.MOE_FFN_HIDDEN_SIZE.flag(), Integer.toString(moe.expertFfn())));
    if (moe.latent() > 0) {
      // LatentMoE: transformer_config.py:952 (moe_latent_size), moe_layer.py:265-304 at d98e8a6.
      a.add(List.of(MegatronArg.MOE_LATENT_SIZE.flag(), Integer.toString(moe.latent())));
    }
    if (!m.arch().hybrid().on()) {
      // A hybrid's expert layers are its pattern's E symbols (MegatronHybridArgs).
      a.addAll(MegatronDeepseekArgs.layerPattern(m));
    }
    if (moe.sharedFfn() > 0) {
      a.add(List.of(MegatronArg.MOE_SHARED_EXPERT_INTERMEDIATE_SIZE.flag(), Integer.toString(moe.sharedFfn())));
      if (moe.sharedGate()) {
        // transformer_config.py:713; shared_experts.py:139, 203-206: sigmoid(x w), w one h-vector.
        a.add(List.of(MegatronArg.MOE_SHARED_EXPERT_GATE.flag()));
      }
    }
    a.add(List.of(MegatronArg.EXPERT_MODEL_PARALLEL_SIZE.flag(), Integer.toString(c.expertParallel())));
    a.add(List.of(MegatronArg.EXPERT_TENSOR_PARALLEL_SIZE.flag(), Integer.toString(c.expertTensorParallel())));
    // DeepEP and Hybrid-EP exchange tokens between the GPUs of an expert-parallel group; without
    // one (EP 1) nothing is exchanged and the all-to-all dispatcher runs (Megatron-Core's DeepEP
    // manager asserts TP x EP > 1: token_dispatcher.py:1836 at d98e8a6).
    boolean flex = input.overlaps().dispatcher().deduplicates() && c.expertParallel() > 1;
    io.meshplan.model.ExpertDispatcher d = input.overlaps().dispatcher();
    a.add(List.of(MegatronArg.MOE_TOKEN_DISPATCHER_TYPE.flag(), flex ? "flex" : "alltoall"));
    if (flex) {
      a.add(List.of(MegatronArg.MOE_FLEX_DISPATCHER_BACKEND.flag(), d.word()));
    }
    if (moe.groups() > 1) {
      a.add(List.of(MegatronArg.MOE_ROUTER_NUM_GROUPS.flag(), Integer.toString(moe.groups())));
      a.add(List.of(MegatronArg.MOE_ROUTER_GROUP_TOPK.flag(), Integer.toString(moe.groupTopK())));
    }
    a.add(List.of(MegatronArg.MOE_ROUTER_LOAD_BALANCING_TYPE.flag(), "aux_loss"));
    a.add(List.of(MegatronArg.MOE_AUX_LOSS_COEFF.flag(), AUX_LOSS_COEFF));
    if (moe.capacityFactor() > 0) {
      a.add(List.of(MegatronArg.MOE_EXPERT_CAPACITY_FACTOR.flag(), number(moe.capacityFactor())));
    }
    if (FusedAttentionKernels.of(input.cluster().gpu()).isPresent()) {
      a.add(List.of(MegatronArg.MOE_GROUPED_GEMM.flag()));
    }
    return a;
  }

  /** A factor as Python reads it back exactly: the shortest decimal of the double. */
  private static String number(double x) {
    String s = Double.toString(x);
    return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s.toLowerCase(Locale.ROOT);
  }
}
