package io.meshplan.model;

import io.meshplan.graph.DType;
import io.meshplan.util.InputException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Named model presets and where their numbers come from.
 *
 * <ul>
 *   <li>{@code llama2-7b}, {@code llama2-13b}, {@code llama2-70b}: Touvron et al. 2023, "Llama 2",
 *       Table 1, and the released {@code config.json} files (hidden 4096/5120/8192, layers
 *       32/40/80, heads 32/40/64, key/value heads 32/40/8, intermediate 11008/13824/28672,
 *       vocabulary 32000). Their default workload is the example of the Alpa simulation document:
 *       batch 8, sequence 1024, fp32 as in Alpa's prototype.
 *   <li>{@code llama-7b}, {@code llama-13b}, {@code llama-33b}, {@code llama-65b}: Touvron et al.
 *       2023, "LLaMA", Table 2 (dimension 4096/5120/6656/8192, heads 32/40/52/64, layers
 *       32/40/60/80, context 2048) with the intermediate sizes of the released configs
 *       (11008/13824/17920/22016).
 *   <li>{@code llama3-8b}, {@code llama3-70b}, {@code llama3.1-8b}, {@code llama3.1-70b}, {@code
 *       llama3.1-405b} (also {@code llama3-405b}, the name the command-line contract uses; Meta
 *       released the 405B model as Llama 3.1): the {@code config.json} of
 *       meta-llama/Meta-Llama-3(.1)-*: hidden 4096/8192/16384, layers 32/80/126, heads
 *       32/64/128, 8 key/value heads, intermediate
 *       14336/28672/53248, vocabulary 128256; Dubey et al. 2024, "The Llama 3 Herd of Models",
 *       Table 3. Sequence 8192 (the pre-training context).
 *   <li>{@code mistral-7b}: the {@code config.json} of mistralai/Mistral-7B-v0.1 (hidden 4096,
 *       32 layers, 32 heads, 8 key/value heads, intermediate 14336, vocabulary 32000); Jiang et
 *       al. 2023, Table 1. Sequence 8192.
 *   <li>{@code mixtral-8x7b}, {@code mixtral-8x22b}: the {@code config.json} of
 *       mistralai/Mixtral-8x7B-v0.1 and mistralai/Mixtral-8x22B-v0.1 (hidden 4096/6144, layers
 *       32/56, heads 32/48, 8 key/value heads, 8 experts of which 2 per token, expert
 *       intermediate size 14336/16384, vocabulary 32000, untied); Jiang et al. 2024, "Mixtral of
 *       Experts", Table 1 (8x7B). The base 8x22B's vocabulary is 32000 (Mixtral-8x22B-Instruct-v0.1's
 *       is 32768). Sequence 32768, the pre-training context of section 2.
 *   <li>{@code qwen3-235b-a22b}, {@code qwen3-30b-a3b}: the {@code config.json} of
 *       Qwen/Qwen3-235B-A22B and Qwen/Qwen3-30B-A3B (hidden 4096/2048, layers 94/48, heads
 *       64/32, 4 key/value heads, head_dim 128, an RMSNorm on each query and key head, 128
 *       experts of which 8 per token, {@code moe_intermediate_size} 1536/768, every layer an MoE
 *       layer, vocabulary 151936, untied); Qwen3 Technical Report (2025), Table 2. Sequence 4096,
 *       the first pre-training stage's (section 3.2).
 *   <li>{@code gpt-oss-120b}, {@code gpt-oss-20b}: the {@code config.json} of openai/gpt-oss-120b
 *       and openai/gpt-oss-20b (hidden 2880, layers 36/24, 64 heads of 64, 8 key/value heads,
 *       biases on Q, K, V and the output projection, a learned attention sink per head, a
 *       128-token window on every other layer from the first, 128/32 experts of which 4 per token
 *       with biases, expert intermediate size 2880, a router with a bias, vocabulary 201088,
 *       untied); OpenAI, "gpt-oss-120b and gpt-oss-20b Model Card" (2025). Sequence 4096, the
 *       rotary context before YaRN ({@code initial_context_length}). The experts' clamped SwiGLU
 *       has the matrices of {@link Architecture.Mlp#SWIGLU}.
 *   <li>{@code llama4-scout}, {@code llama4-maverick}: the {@code text_config} of
 *       meta-llama/Llama-4-Scout-17B-16E and meta-llama/Llama-4-Maverick-17B-128E (hidden 5120,
 *       48 layers, 40 heads and 8 key/value heads of 128, {@code use_qk_norm}, {@code
 *       attention_chunk_size} 8192, {@code no_rope_layer_interval} 4, 16/128 experts of {@code
 *       intermediate_size} 8192 of which 1 per token with a shared expert of the same size, {@code
 *       interleave_moe_layer_step} 1/2 with {@code intermediate_size_mlp} 16384 on the dense
 *       blocks, vocabulary 202048, untied); Meta, "The Llama 4 herd" (April 2025): 17B active
 *       parameters, 109B and 400B in all with the vision encoder. Sequence 8192.
 *   <li>{@code gpt-1.7b} ... {@code gpt-1t}: Narayanan et al. SC'21, Table 1 (hidden, layers,
 *       heads; vocabulary 51200, sequence 2048, ffn 4h, tied embeddings, learned positions). The
 *       default batch is the row's global batch size.
 *   <li>{@code gpt3-175b}: Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads,
 *       context 2048) with GPT-2's vocabulary of 50257.
 *   <li>{@code opt-125m} ... {@code opt-175b}: Zhang et al. 2022, "OPT", Table 1 (layers, heads,
 *       d_model; ffn 4h), vocabulary 50272 and 2048 positions (2050 rows) from the released
 *       configs. OPT-350m is left out: its embedding width (512) differs from its hidden size.
 *   <li>{@code gpt}: a generic Megatron-style GPT (the GPT-2 small shape: 12 layers, hidden 768,
 *       12 heads, vocabulary 51200, sequence 2048); every dimension is meant to be overridden.
 *   <li>{@code alpa-mlp}: the MLP of Alpa's prototype solver tests.
 * </ul>
 *
 * Presets other than the three LLaMA 2 ones and {@code alpa-mlp} default to bf16 and batch 8
 * (Megatron GPT: its Table 1 global batch). The {@code ffn} of a mixture-of-experts preset is its
 * expert's intermediate size, the same as {@link MoeShape#expertFfn}; its dense blocks, where it
 * has them, have their own size ({@link MoeShape#denseFfn}).
 *
 * <p>Each preset's rotary base, RoPE scaling, norm epsilon and sliding window are those of the
 * released {@code config.json} it names ({@link Numerics}; the constants below cite each file);
 * the GPT and OPT presets keep Megatron-LM's and OPT's dropout of 0.1.
 *
 * <p>{@code deepseek-v3}: DeepSeek-AI 2024, "DeepSeek-V3 Technical Report" (arXiv:2412.19437),
 * section 4.2, and the {@code config.json} of deepseek-ai/DeepSeek-V3: 61 blocks of hidden 7168,
 * 128 heads of multi-head latent attention (query latent 1536, key/value latent 512, 128 + 64
 * query/key and 128 value dimensions per head), the first 3 blocks dense (intermediate 18432),
 * the other 58 with 256 routed experts of 2048, 8 per token, and one shared expert; vocabulary
 * 129280, untied; one multi-token prediction module. 671,026,404,352 parameters in the main
 * model (the report's 671B) and 11,610,067,968 in the module sharing its embedding and head
 * (the report's 14B counts its own copies of them, 1,853,358,080 more); 37.6B active per token
 * (the report's 37B). Sequence 4096 (the pre-training context).
 */
public final class Presets {
  private static final Map<String, ModelSpec> PRESETS = new LinkedHashMap<>();
  private static final int MEGATRON_VOCAB = 51200;
  private static final int MEGATRON_SEQ = 2048;
  private static final int OPT_VOCAB = 50272;

  /**
   * meta-llama/Llama-2-7b-hf (and 13b, 70b) {@code config.json}: {@code rms_norm_eps} 1e-5, no
   * {@code rope_theta} (transformers' 10,000); mistralai/Mistral-7B-v0.1 has the same numbers.
   */
  private static final Numerics LLAMA2 = Numerics.rotary(10_000, 1e-5);

  /** huggyllama/llama-7b (and 13b, 30b, 65b) {@code config.json}: {@code rms_norm_eps} 1e-6. */
  private static final Numerics LLAMA1 = Numerics.rotary(10_000, 1e-6);

  /**
   * meta-llama/Meta-Llama-3-8B and -70B {@code config.json}: {@code rope_theta} 500000, {@code
   * rms_norm_eps} 1e-5, no {@code rope_scaling}.
   */
  private static final Numerics LLAMA3 = Numerics.rotary(500_000, 1e-5);

  /**
   * meta-llama/Llama-3.1-8B, -70B and -405B {@code config.json}: Llama 3's numbers and {@code
   * rope_scaling} {@code {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
   * "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}.
   */
  private static final Numerics LLAMA31 = LLAMA3.withScaling(
      new RopeScaling.Llama3(8, 1, 4, 8192));

  static {
    put(new ModelSpec("llama2-7b", ModelSpec.Family.LLAMA, 32, 4096, 32, 32, 11008, 32000, 1024,
        8, DType.F32, Architecture.llama().withNumerics(LLAMA2)));
    put(new ModelSpec("llama2-13b", ModelSpec.Family.LLAMA, 40, 5120, 40, 40, 13824, 32000, 1024,
        8, DType.F32, Architecture.llama().withNumerics(LLAMA2)));
    put(new ModelSpec("llama2-70b", ModelSpec.Family.LLAMA, 80, 8192, 64, 8, 28672, 32000, 1024,
        8, DType.F32, Architecture.llama().withNumerics(LLAMA2)));
    put(new ModelSpec("alpa-mlp", ModelSpec.Family.ALPA_MLP, 2, 128, 1, 1, 128, 1, 1, 1024,
        DType.F32));
    llama("llama-7b", 32, 4096, 32, 32, 11008, 32000, 2048, LLAMA1);
    llama("llama-13b", 40, 5120, 40, 40, 13824, 32000, 2048, LLAMA1);
    llama("llama-33b", 60, 6656, 52, 52, 17920, 32000, 2048, LLAMA1);
    llama("llama-65b", 80, 8192, 64, 64, 22016, 32000, 2048, LLAMA1);
    llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, LLAMA3);
    llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, LLAMA3);
    llama("llama3.1-8b", 32, 4096, 32, 8, 14336, 128256, 8192, LLAMA31);
    llama("llama3.1-70b", 80, 8192, 64, 8, 28672, 128256, 8192, LLAMA31);
    llama("llama3.1-405b", 126, 16384, 128, 8, 53248, 128256, 8192, LLAMA31);
    llama("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192, LLAMA31);
    // mistralai/Mistral-7B-v0.1 config.json: sliding_window 4096 on every layer.
    put(new ModelSpec("mistral-7b", ModelSpec.Family.LLAMA, 32, 4096, 32, 8, 14336, 32000, 8192,
        8, DType.BF16, Architecture.llama().withNumerics(LLAMA2).withAttention(
            AttentionShape.PLAIN.withWindow(4096, 0, 0))));
    mixtral("mixtral-8x7b", 32, 4096, 32, 14336, 32000);
    mixtral("mixtral-8x22b", 56, 6144, 48, 16384, 32000);
    qwen3Moe("qwen3-235b-a22b", 94, 4096, 64, 1536);
    qwen3Moe("qwen3-30b-a3b", 48, 2048, 32, 768);
    gptOss("gpt-oss-120b", 36, 128);
    gptOss("gpt-oss-20b", 24, 32);
    llama4("llama4-scout", 16, 1);
    llama4("llama4-maverick", 128, 2);
    deepseekV3();
    deepseekV2("deepseek-v2", 60, 5120, 128, 1536, 160, 1536, 12288, 8, 3);
    deepseekV2("deepseek-v2-lite", 27, 2048, 16, 0, 64, 1408, 10944, 1, 1);
    nemotronH8b();
    nemotron3Nano();
    nemotron3Super();
    qwen3Next();
    jamba();
    // Narayanan et al. SC'21, Table 1: name, hidden, layers, heads, global batch.
    megatron("gpt-1.7b", 2304, 24, 24, 512);
    megatron("gpt-3.6b", 3072, 30, 32, 512);
    megatron("gpt-7.5b", 4096, 36, 32, 512);
    megatron("gpt-18.4b", 6144, 40, 48, 1024);
    megatron("gpt-39.1b", 8192, 48, 64, 1536);
    megatron("gpt-76.1b", 10240, 60, 80, 1792);
    megatron("gpt-145.6b", 12288, 80, 96, 2304);
    megatron("gpt-310.1b", 16384, 96, 128, 2160);
    megatron("gpt-529.6b", 20480, 105, 128, 2520);
    megatron("gpt-1t", 25600, 128, 160, 3072);
    put(new ModelSpec("gpt3-175b", ModelSpec.Family.GPT, 96, 12288, 96, 96, 4 * 12288, 50257,
        2048, 8, DType.BF16, Architecture.megatronGpt(2048)));
    opt("opt-125m", 12, 768, 12);
    opt("opt-1.3b", 24, 2048, 32);
    opt("opt-2.7b", 32, 2560, 32);
    opt("opt-6.7b", 32, 4096, 32);
    opt("opt-13b", 40, 5120, 40);
    opt("opt-30b", 48, 7168, 56);
    opt("opt-66b", 64, 9216, 72);
    opt("opt-175b", 96, 12288, 96);
    put(new ModelSpec("gpt", ModelSpec.Family.GPT, 12, 768, 12, 12, 4 * 768, MEGATRON_VOCAB,
        MEGATRON_SEQ, 8, DType.BF16, Architecture.megatronGpt(MEGATRON_SEQ)));
  }

  private Presets() {}

  private static void put(ModelSpec s) {
    PRESETS.put(s.name(), s);
  }

  private static void llama(String name, int layers, int hidden, int heads, int kvHeads, int ffn,
      int vocab, int seq, Numerics numerics) {
    put(new ModelSpec(name, ModelSpec.Family.LLAMA, layers, hidden, heads, kvHeads, ffn, vocab,
        seq, 8, DType.BF16, Architecture.llama().withNumerics(numerics)));
  }

  /** Mixtral: LLaMA's block with 8 SwiGLU experts, 2 per token, and 8 key/value heads. */
  private static void mixtral(String name, int layers, int hidden, int heads, int expertFfn,
      int vocab) {
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false, AttentionShape.PLAIN,
        new MoeShape(8, 2, expertFfn, 0, false), 0,
        // mistralai/Mixtral-8x7B-v0.1 and -8x22B-v0.1 config.json: rope_theta 1e6, rms_norm_eps
        // 1e-5, sliding_window null.
        Numerics.rotary(1_000_000, 1e-5));
    put(new ModelSpec(name, ModelSpec.Family.LLAMA, layers, hidden, heads, 8, expertFfn, vocab,
        32768, 8, DType.BF16, a));
  }

  /** Qwen3-MoE: head_dim 128, q/k norms per head, 128 experts, 8 per token, 4 key/value heads. */
  private static void qwen3Moe(String name, int layers, int hidden, int heads, int expertFfn) {
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false,
        new AttentionShape(128, false, AttentionShape.QkNorm.PER_HEAD, 2, 0, 0, 0, 0, 0),
        new MoeShape(128, 8, expertFfn, 0, false), 0,
        // Qwen/Qwen3-235B-A22B and Qwen/Qwen3-30B-A3B config.json: rope_theta 1e6, rms_norm_eps
        // 1e-6, no rope_scaling.
        Numerics.rotary(1_000_000, 1e-6));
    put(new ModelSpec(name, ModelSpec.Family.LLAMA, layers, hidden, heads, 4, expertFfn, 151936,
        4096, 8, DType.BF16, a));
  }

  /**
   * Llama 4's text model: 48 blocks of hidden 5120, 40 heads and 8 key/value heads of 128, a
   * weightless L2 norm on the queries and keys, chunked attention (8192 tokens) on three blocks of
   * four and global attention without rotary positions on every fourth, and experts of 8192 of
   * which one per token beside a shared expert of 8192 on every {@code step}-th block, the other
   * blocks dense with an MLP of 16384.
   */
  private static void llama4(String name, int experts, int step) {
    MoeShape moe = new MoeShape(experts, 1, 8192, 8192, false);
    if (step > 1) {
      // transformers' Llama4TextConfig: moe_layers = range(step - 1, layers, step).
      java.util.List<Integer> dense = new java.util.ArrayList<>();
      for (int i = 0; i < 48; i++) {
        if ((i + 1) % step != 0) {
          dense.add(i);
        }
      }
      moe = moe.withDenseLayers(dense, 16384);
    }
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false,
        new AttentionShape(128, false, AttentionShape.QkNorm.L2, 2, 0, 0, 0, 0, 0)
            .withChunks(8192, 4),
        moe, 0,
        // meta-llama/Llama-4-Scout-17B-16E and -Maverick-17B-128E config.json text_config:
        // rope_theta 500000, rms_norm_eps 1e-5 (their RoPE scaling prices nothing and is read
        // from a config.json given as --model).
        Numerics.rotary(500_000, 1e-5));
    put(new ModelSpec(name, ModelSpec.Family.LLAMA, 48, 5120, 40, 8, 8192, 202048, 8192, 8,
        DType.BF16, a));
  }

  /**
   * GPT-OSS: hidden 2880, 64 heads of 64, 8 key/value heads, attention biases and sinks, a
   * 128-token window on layers 0, 2, 4, ..., experts of 2880 with biases, 4 per token.
   */
  private static void gptOss(String name, int layers, int experts) {
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, true, false,
        new AttentionShape(64, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 128, 2, 0, true),
        new MoeShape(experts, 4, 2880, 0, true), 0,
        // openai/gpt-oss-120b and -20b config.json: rope_theta 150000, rms_norm_eps 1e-5,
        // rope_scaling yarn (factor 32, original_max_position_embeddings 4096, beta_fast 32,
        // beta_slow 1, truncate false).
        Numerics.rotary(150_000, 1e-5).withScaling(
            new RopeScaling.Yarn(32, 4096, 32, 1, 1, 0, false)));
    put(new ModelSpec(name, ModelSpec.Family.LLAMA, layers, 2880, 64, 8, 2880, 201088, 4096, 8,
        DType.BF16, a));
  }

  /** DeepSeek-V3: see the class comment. */
  private static void deepseekV3() {
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false,
        AttentionShape.latent(new Mla(1536, 512, 128, 64, 128)),
        new MoeShape(256, 8, 2048, 2048, false).withDenseLayers(java.util.List.of(0, 1, 2),
            18432).withGroupLimit(8, 4), 1,
        // deepseek-ai/DeepSeek-V3 config.json: rope_theta 10000, rms_norm_eps 1e-6, rope_scaling
        // yarn (factor 40, original_max_position_embeddings 4096, beta_fast 32, beta_slow 1,
        // mscale 1, mscale_all_dim 1).
        Numerics.rotary(10_000, 1e-6).withScaling(
            new RopeScaling.Yarn(40, 4096, 32, 1, 1, 1, true)));
    put(new ModelSpec("deepseek-v3", ModelSpec.Family.LLAMA, 61, 7168, 128, 128, 2048, 129280,
        4096, 8, DType.BF16, a));
  }

  /**
   * DeepSeek-V2 and DeepSeek-V2-Lite (DeepSeek-AI 2024, "DeepSeek-V2", arXiv:2405.04434, and the
   * released {@code config.json} of deepseek-ai/DeepSeek-V2 and DeepSeek-V2-Lite): DeepSeek-V3's
   * blocks without its prediction module. Latent attention of {@code kv_lora_rank} 512, 128 + 64
   * query/key and 128 value dimensions per head, a query latent of 1536 (V2) or none (V2-Lite);
   * the first block dense, the others with 160 routed experts of 1536 (V2) or 64 of 1408
   * (V2-Lite), 6 per token, and two shared experts; V2's router picks its experts within 3 of 8
   * groups (device-limited routing); vocabulary 102400, untied; rope_theta 10000, rms_norm_eps
   * 1e-6, YaRN (factor 40, original 4096, beta_fast 32, beta_slow 1, mscale and mscale_all_dim
   * 0.707). 235,741,434,880 and 15,706,484,224 parameters (the paper's 236B and 15.7B; the
   * arithmetic is in DeepseekModelsTest). Sequence 4096 (the pre-training context).
   */
  private static void deepseekV2(String name, int layers, int hidden, int heads, int qLora,
      int experts, int expertFfn, int denseFfn, int groups, int groupTopK) {
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false,
        AttentionShape.latent(new Mla(qLora, 512, 128, 64, 128)),
        new MoeShape(experts, 6, expertFfn, 2 * expertFfn, false).withDenseLayers(
            java.util.List.of(0), denseFfn).withGroupLimit(groups, groupTopK), 0,
        Numerics.rotary(10_000, 1e-6).withScaling(
            new RopeScaling.Yarn(40, 4096, 32, 1, 0.707, 0.707, true)));
    put(new ModelSpec(name, ModelSpec.Family.LLAMA, layers, hidden, heads, heads, expertFfn,
        102400, 4096, 8, DType.BF16, a));
  }

  /**
   * Nemotron-H 8B (nvidia/Nemotron-H-8B-Base-8K config.json, as Megatron-Bridge's bridge test
   * states it: tests/unit_tests/models/nemotronh/test_nemotron_h_bridge.py at ebdef7c1): 52
   * layers of {@code hybrid_override_pattern} (24 Mamba-2, 4 attention, 24 MLP), hidden 4096,
   * Mamba-2 with 128 heads of 64, state 128, 8 groups, a 4-tap convolution with bias, chunks of
   * 128, the gated norm over groups of 1024 channels ({@code d_inner / n_groups}); attention of
   * 32 heads of 128 and 8 key/value heads, no position encoding; a squared-ReLU MLP of 21504;
   * no linear biases; RMSNorm (eps 1e-5); vocabulary 131072, untied. Sequence 8192.
   */
  private static void nemotronH8b() {
    MambaShape mamba = new MambaShape(128, 64, 128, 8, 4, 128, 8, true, false);
    Architecture a = new Architecture(Architecture.Mlp.RELU2, Architecture.Norm.RMS,
        Architecture.Positions.NONE, 0, false, false,
        new AttentionShape(128, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
        MoeShape.DENSE, 0, Numerics.rotary(10_000, 1e-5),
        new HybridPattern("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-", mamba));
    put(new ModelSpec("nemotron-h-8b", ModelSpec.Family.GPT, 52, 4096, 32, 8, 21504, 131072,
        8192, 8, DType.BF16, a));
  }

  /**
   * Nemotron 3 Nano 30B-A3B (Megatron-Bridge's {@code Nemotron3NanoProvider},
   * nemotron_h_provider.py at 38b4a06b): 52 layers of a hybrid pattern (23 Mamba-2, 23 mixture-of-experts, 6 attention),
   * hidden 2688; Mamba-2 with 64 heads of 64, state 128, 8 groups (Megatron-Core's default
   * 4-tap convolution with bias and chunks of 128); attention of 32 heads of 128 and 2 key/value
   * heads, no position encoding; 128 squared-ReLU experts of 1856, 6 per token, beside a shared
   * squared-ReLU expert of 3712; vocabulary 131072, untied. Sequence 8192, its performance
   * recipes'. Megatron-Bridge's model page: "3.5B active parameters and 30B parameters in total".
   */
  private static void nemotron3Nano() {
    MambaShape mamba = new MambaShape(64, 64, 128, 8, 4, 128, 8, true, false);
    Architecture a = new Architecture(Architecture.Mlp.RELU2, Architecture.Norm.RMS,
        Architecture.Positions.NONE, 0, false, false,
        new AttentionShape(128, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
        new MoeShape(128, 6, 1856, 3712, false), 0, Numerics.rotary(10_000, 1e-5),
        new HybridPattern("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", mamba));
    put(new ModelSpec("nemotron-3-nano-30b-a3b", ModelSpec.Family.GPT, 52, 2688, 32, 2, 1856,
        131072, 8192, 8, DType.BF16, a));
  }

  /**
   * Nemotron 3 Super 120B-A12B (the released config.json of {@code
   * nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16}, which Megatron-Bridge's verification card
   * pins at revision d51eab0d, {@code examples/model_verification_cards/
   * nemotron-3-super-120b-a12b/card.yaml} at 067f987): 88 layers of a hybrid pattern (40 Mamba-2,
   * 40 mixture-of-experts, 8 attention), hidden 4096; Mamba-2 with 128 heads of 64, state 128, 8
   * groups (4-tap convolution with bias, chunks of 128); attention of 32 heads of 128 and 2
   * key/value heads, no position encoding; LatentMoE ({@link MoeShape#latent}): 512
   * squared-ReLU experts of 2688 working in a latent width of 1024, 22 per token, beside a
   * shared squared-ReLU expert of 5376 in the full width; vocabulary 131072, untied. Sequence
   * 8192, its performance recipes'. One multi-token prediction module ({@code
   * num_nextn_predict_layers} 1) of an attention and an expert layer ({@code
   * mtp_hybrid_override_pattern} {@code *E}; {@link HybridPattern#mtp}).
   */
  private static void nemotron3Super() {
    MambaShape mamba = new MambaShape(128, 64, 128, 8, 4, 128, 8, true, false);
    Architecture a = new Architecture(Architecture.Mlp.RELU2, Architecture.Norm.RMS,
        Architecture.Positions.NONE, 0, false, false,
        new AttentionShape(128, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
        new MoeShape(512, 22, 2688, 5376, false).withLatent(1024), 1,
        Numerics.rotary(10_000, 1e-5),
        new HybridPattern("MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*"
            + "EMEMEMEM*EMEMEMEME", mamba).withMtp("*E"));
    put(new ModelSpec("nemotron-3-super-120b-a12b", ModelSpec.Family.GPT, 88, 4096, 32, 2, 2688,
        131072, 8192, 8, DType.BF16, a));
  }

  /**
   * Qwen3-Next-80B-A3B (transformers' {@code Qwen3NextConfig} defaults at 249ef81, "similar to
   * Qwen3-Next-80B-A3B-Instruct", and the release's config.json): 48 layers, each a mixer and a
   * mixture-of-experts MLP, written as 96 sublayers ({@code GE} three times, then {@code *E}, as
   * {@code full_attention_interval} 4 places the attention); hidden 2048; Gated DeltaNet of 16
   * key heads and 32 value heads of 128, a 4-tap convolution, chunks of 64; gated attention of 16
   * heads of 256 and 2 key/value heads, per-head q/k RMSNorms, rotary positions on a quarter of
   * each head (theta 10^7); 512 SwiGLU experts of 512, 10 per token, beside a gated shared expert
   * of 512; vocabulary 151936, untied. Sequence 4096. The model card: "80B total parameters, only
   * 3B active" (its multi-token prediction weights ship apart and are not counted).
   */
  private static void qwen3Next() {
    GdnShape gdn = new GdnShape(16, 32, 128, 128, 4, 64);
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.ROTARY, 0, false, false,
        new AttentionShape(256, false, AttentionShape.QkNorm.PER_HEAD, 2, 0, 0, 0, 0, 0),
        new MoeShape(512, 10, 512, 512, false).withSharedGate(), 0,
        Numerics.rotary(10_000_000, 1e-6).withRotary(0.25, false),
        HybridPattern.parse("GEGEGE*E".repeat(12), 96, null, gdn, true));
    put(new ModelSpec("qwen3-next-80b-a3b", ModelSpec.Family.LLAMA, 96, 2048, 16, 2, 512,
        151936, 4096, 8, DType.BF16, a));
  }

  /**
   * Jamba v0.1 (transformers' {@code JambaConfig} defaults at 161d2be, "similar to Jamba-v0.1";
   * AI21 Jamba 1.5 Mini has the same architecture): 32 layers, each a mixer (attention on layers
   * 4, 12, 20, 28 by {@code attn_layer_period} 8 and {@code attn_layer_offset} 4, Mamba-1
   * elsewhere) and an MLP (16 SwiGLU experts of 14336, 2 per token, on the odd layers by {@code
   * expert_layer_period} 2 and {@code expert_layer_offset} 1, a dense SwiGLU MLP of 14336 on the
   * even ones), written as 64 sublayers; hidden 4096; Mamba-1 of inner 8192 ({@code
   * mamba_expand} 2), state 16, a 4-tap convolution with bias, dt rank 256, Jamba's inner norms;
   * attention of 32 heads of 128 and 8 key/value heads without positions; vocabulary 65536,
   * untied. Sequence 4096. AI21: "12B active parameters and an overall of 52B parameters".
   */
  private static void jamba() {
    StringBuilder p = new StringBuilder();
    for (int i = 0; i < 32; i++) {
      p.append(i % 8 == 4 ? HybridPattern.ATTENTION : HybridPattern.SELECTIVE)
          .append(i % 2 == 1 ? HybridPattern.MOE : HybridPattern.MLP);
    }
    Architecture a = new Architecture(Architecture.Mlp.SWIGLU, Architecture.Norm.RMS,
        Architecture.Positions.NONE, 0, false, false,
        new AttentionShape(128, false, AttentionShape.QkNorm.NONE, 2, 0, 0, 0, 0, 0),
        new MoeShape(16, 2, 14336, 0, false), 0, Numerics.rotary(10_000, 1e-6),
        HybridPattern.parse(p.toString(), 64, null, null, false,
            new Mamba1Shape(8192, 16, 4, 256, true, false, true)));
    put(new ModelSpec("jamba-v0.1", ModelSpec.Family.GPT, 64, 4096, 32, 8, 14336, 65536, 4096, 8,
        DType.BF16, a));
  }

  private static void megatron(String name, int hidden, int layers, int heads, int globalBatch) {
    put(new ModelSpec(name, ModelSpec.Family.GPT, layers, hidden, heads, heads, 4 * hidden,
        MEGATRON_VOCAB, MEGATRON_SEQ, globalBatch, DType.BF16,
        Architecture.megatronGpt(MEGATRON_SEQ)));
  }

  private static void opt(String name, int layers, int hidden, int heads) {
    put(new ModelSpec(name, ModelSpec.Family.GPT, layers, hidden, heads, heads, 4 * hidden,
        OPT_VOCAB, 2048, 8, DType.BF16, Architecture.opt(2048)));
  }

  /**
   * The preset names, in catalog order.
   *
   * @return the names
   */
  public static Iterable<String> names() {
    return PRESETS.keySet();
  }

  /**
   * Whether a name is a preset.
   *
   * @param name the name
   * @return true when {@link #get} knows it
   */
  public static boolean contains(String name) {
    return PRESETS.containsKey(name);
  }

  /**
   * Looks up a preset.
   *
   * @param name the preset name
   * @return its spec
   * @throws InputException naming the valid presets when the name is unknown
   */
  public static ModelSpec get(String name) {
    ModelSpec s = PRESETS.get(name);
    if (s == null) {
      throw new InputException("unknown model preset '" + name + "'; valid presets: "
          + String.join(", ", PRESETS.keySet()));
    }
    return s;
  }
}
