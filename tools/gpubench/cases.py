"""What gpubench measures: the shapes of public training runs, as plain data. No torch.

Each case is a frozen record that names itself, states its shape, and counts its FLOP or bytes
through formulas.py. The lists are in priority order: when the time plan cannot fit them all, it
keeps a prefix.
"""

from dataclasses import dataclass

import formulas


@dataclass(frozen=True)
class Model:
    """The layer sizes of one published model; `ffn` is per expert for a mixture of experts."""

    name: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    gated: bool  # SwiGLU (gate and up projections fused: 2 * ffn columns) or GeLU (ffn columns)
    source: str


# Sizes as each model's published configuration gives them.
LLAMA32_1B = Model("llama3.2-1b", 2048, 32, 8, 64, 8192, True,
                   "meta-llama/Llama-3.2-1B config.json")
LLAMA3_8B = Model("llama3-8b", 4096, 32, 8, 128, 14336, True,
                  "meta-llama/Meta-Llama-3-8B config.json")
LLAMA3_70B = Model("llama3-70b", 8192, 64, 8, 128, 28672, True,
                   "meta-llama/Meta-Llama-3-70B config.json")
LLAMA3_405B = Model("llama3-405b", 16384, 128, 8, 128, 53248, True,
                    "meta-llama/Llama-3.1-405B config.json")
GPT3_175B = Model("gpt3-175b", 12288, 96, 96, 128, 49152, False,
                  "Brown et al. 2020, table 2.1 (d_ff = 4 * d_model)")
MIXTRAL_8X7B = Model("mixtral-8x7b", 4096, 32, 8, 128, 14336, True,
                     "mistralai/Mixtral-8x7B-v0.1 config.json (8 experts, top 2)")
QWEN3_235B = Model("qwen3-235b-a22b", 4096, 64, 4, 128, 1536, True,
                   "Qwen/Qwen3-235B-A22B config.json (128 experts, top 8)")
QWEN3_30B = Model("qwen3-30b-a3b", 2048, 32, 4, 128, 768, True,
                  "Qwen/Qwen3-30B-A3B config.json (128 experts, top 8)")

MODELS = (LLAMA32_1B, LLAMA3_8B, LLAMA3_70B, LLAMA3_405B, GPT3_175B, MIXTRAL_8X7B, QWEN3_235B,
          QWEN3_30B)


@dataclass(frozen=True)
class GemmCase:
    """One layer's forward product y[M, N] = x[M, K] @ W[N, K]^T, as torch's linear computes it."""

    model: str
    layer: str
    tp: int
    m: int
    k: int
    n: int
    dtype: str
    sustained: bool = False

    @property
    def name(self):
        prefix = "sustained " if self.sustained else ""
        return "%s%s %s tp%d" % (prefix, self.model, self.layer, self.tp)

    @property
    def params(self):
        return "M=%d K=%d N=%d" % (self.m, self.k, self.n)

    def flops(self):
        return formulas.gemm_flops(self.m, self.n, self.k)


def layer_gemms(model, tp, tokens, dtype):
    """The four forward GEMMs of a dense block under Megatron-style tensor parallelism of degree
    `tp`: QKV and the MLP's input are split by columns, the attention output and the MLP's output
    by rows. QKV has the real grouped-query width (heads + 2 * kv_heads) * head_dim."""
    qkv = (model.heads + 2 * model.kv_heads) * model.head_dim
    mlp_in = (2 if model.gated else 1) * model.ffn
    shapes = (("qkv", model.hidden, qkv // tp),
              ("attn_out", model.heads * model.head_dim // tp, model.hidden),
              ("mlp_in", model.hidden, mlp_in // tp),
              ("mlp_out", model.ffn // tp, model.hidden))
    return [GemmCase(model.name, layer, tp, tokens, k, n, dtype) for layer, k, n in shapes]


def expert_gemms(model, tokens_per_expert, dtype):
    """The two GEMMs of one expert's SwiGLU MLP (gate and up fused), unsplit (experts are spread by
    expert parallelism, not tensor parallelism)."""
    return [GemmCase(model.name, "expert_in", 1, tokens_per_expert, model.hidden, 2 * model.ffn,
                     dtype),
            GemmCase(model.name, "expert_out", 1, tokens_per_expert, model.ffn, model.hidden,
                     dtype)]


# Tokens per microbatch (M): Llama 3 trained at 8192 tokens per sequence after starting at 4096
# (Llama 3 paper, section 3.4.1), so 4096, 8192 and 16384 (micro-batch 2); GPT-3 at 2048 per
# sequence, so 4096 is micro-batch 2. Tensor-parallel degrees as published: 405B at TP 8 (Llama 3
# paper, table 4), GPT-3 175B at TP 8 (Narayanan et al. 2021), 70B at TP 8 (torchtitan's
# llama3_70b config) or 4, 8B at TP 1 (FSDP only) or 2.
# Tokens per expert assume balanced routing: Mixtral with all 8 experts on one GPU and 8192 tokens
# sends 8192 * 2 / 8 = 2048 to each; Qwen3 with expert parallelism 8 (16 experts per GPU) and
# 8192 tokens per GPU sends 8 * 8192 * 8 / 128 = 4096 to each.
def sweep_gemms(dtype):
    """Every sweep GEMM, most important first."""
    cases = []
    for model, tp, tokens in ((LLAMA3_8B, 1, 8192), (LLAMA3_70B, 8, 8192),
                              (LLAMA3_405B, 8, 8192), (GPT3_175B, 8, 4096)):
        cases += layer_gemms(model, tp, tokens, dtype)
    cases += expert_gemms(MIXTRAL_8X7B, 2048, dtype)
    cases += expert_gemms(QWEN3_235B, 4096, dtype)
    cases += expert_gemms(QWEN3_30B, 4096, dtype)
    for model, tp, tokens in ((LLAMA3_8B, 2, 8192), (LLAMA3_70B, 4, 8192),
                              (LLAMA3_8B, 1, 4096), (LLAMA3_8B, 1, 16384),
                              (LLAMA3_70B, 8, 16384), (LLAMA3_405B, 8, 16384),
                              (LLAMA3_405B, 8, 4096), (GPT3_175B, 8, 8192)):
        cases += layer_gemms(model, tp, tokens, dtype)
    return cases


def sustained_gemms():
    """The shapes held for a minute each to reach thermal and power steady state: Llama 3 405B's
    MLP input at TP 8 (3.57 TFLOP a product), in bf16 and in fp8."""
    base = layer_gemms(LLAMA3_405B, 8, 8192, "bf16")[2]
    return [GemmCase(base.model, base.layer, base.tp, base.m, base.k, base.n, dtype, True)
            for dtype in ("bf16", "fp8")]


@dataclass(frozen=True)
class AttentionCase:
    """Causal scaled dot-product attention on one forced SDPA backend."""

    backend: str  # a torch.nn.attention.SDPBackend member name
    batch: int
    heads: int
    seq: int
    head_dim: int
    direction: str  # fwd or bwd
    dtype: str = "bf16"

    @property
    def name(self):
        short = {"FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient",
                 "CUDNN_ATTENTION": "cudnn"}.get(self.backend, self.backend.lower())
        return "%s %s d%d s%d" % (short, self.direction, self.head_dim, self.seq)

    @property
    def params(self):
        return "b=%d h=%d s=%d d=%d causal" % (self.batch, self.heads, self.seq, self.head_dim)

    def flops(self):
        return formulas.attention_flops(self.batch, self.heads, self.seq, self.head_dim,
                                        causal=True, direction=self.direction)


ATTENTION_BACKENDS = ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION")


def attention_cases():
    """FlashAttention-2's benchmark grid: batch * seq = 16384 tokens, hidden 2048 (so 16 heads of
    128 or 32 of 64), causal; head dim 128 first."""
    cases = []
    for head_dim in (128, 64):
        for seq in (4096, 8192, 2048):
            for backend in ATTENTION_BACKENDS:
                for direction in ("fwd", "bwd"):
                    cases.append(AttentionCase(backend, 16384 // seq, 2048 // head_dim, seq,
                                               head_dim, direction))
    return cases


@dataclass(frozen=True)
class NormCase:
    """A norm's forward over activations [tokens, hidden]."""

    op: str  # rms_norm or layer_norm
    model: str
    tokens: int
    hidden: int
    dtype: str = "bf16"

    @property
    def name(self):
        return "%s %s" % (self.op, self.model)

    @property
    def params(self):
        return "tokens=%d hidden=%d" % (self.tokens, self.hidden)

    def bytes(self):
        if self.op == "rms_norm":
            return formulas.rms_norm_bytes(self.tokens, self.hidden, self.dtype)
        return formulas.layer_norm_bytes(self.tokens, self.hidden, self.dtype)


_ACTIVATION_MODELS = (LLAMA3_8B, LLAMA3_70B, GPT3_175B, LLAMA3_405B)


def norm_cases():
    """RMSNorm and LayerNorm over 8192 tokens at each model's hidden size."""
    return [NormCase(op, model.name, 8192, model.hidden)
            for op in ("rms_norm", "layer_norm") for model in _ACTIVATION_MODELS]


@dataclass(frozen=True)
class ElementwiseCase:
    """An elementwise op over a [tokens, width] activation."""

    op: str  # add, silu_mul or copy
    label: str
    tokens: int
    width: int
    dtype: str = "bf16"

    @property
    def name(self):
        return "%s %s" % (self.op, self.label)

    @property
    def params(self):
        return "tokens=%d width=%d" % (self.tokens, self.width)

    def bytes(self):
        return formulas.elementwise_bytes(self.op, self.tokens * self.width, self.dtype)


def elementwise_cases():
    """The residual add and a copy at each model's hidden size; SiLU(gate) * up at the MLP width
    each GPU holds (ffn / tp)."""
    cases = []
    for op in ("add", "copy"):
        cases += [ElementwiseCase(op, model.name, 8192, model.hidden)
                  for model in _ACTIVATION_MODELS]
    for model, tp in ((LLAMA3_8B, 1), (LLAMA3_70B, 4), (LLAMA3_70B, 8), (LLAMA3_405B, 8)):
        cases.append(ElementwiseCase("silu_mul", "%s tp%d" % (model.name, tp), 8192,
                                     model.ffn // tp))
    return cases


@dataclass(frozen=True)
class LaunchCase:
    """Tiny kernels back to back (an in-place add on one element), `kernels` per timed call."""

    mode: str  # eager (device interval), eager_host (host submit time) or graph (CUDA graph replay)
    kernels: int = 1000
    dtype: str = "fp32"

    @property
    def name(self):
        return {"eager": "eager launch interval", "eager_host": "eager host submit",
                "graph": "graph kernel interval"}[self.mode]

    @property
    def params(self):
        return "%d x add_ on 1 element" % self.kernels


def launch_cases():
    return [LaunchCase("eager"), LaunchCase("eager_host"), LaunchCase("graph")]


@dataclass(frozen=True)
class BlockCase:
    """One LLaMA-style block (RMSNorm, fused QKV, RoPE, causal SDPA, output projection, SwiGLU) on
    one GPU, bf16."""

    model: Model
    seq: int
    batch: int
    direction: str  # fwd or fwd+bwd
    dtype: str = "bf16"

    @property
    def name(self):
        return "%s %s" % (self.model.name, self.direction)

    @property
    def params(self):
        m = self.model
        return "b=%d s=%d hidden=%d heads=%d kv=%d d=%d ffn=%d" % (
            self.batch, self.seq, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn)

    def flops(self):
        m = self.model
        return formulas.block_flops(self.batch, self.seq, m.hidden, m.heads, m.kv_heads,
                                    m.head_dim, m.ffn, self.direction, m.gated)


def block_cases():
    """Hidden 2048, 4096 and 8192 with their published heads and MLP widths, seq 4096."""
    cases = []
    for model, batch in ((LLAMA32_1B, 2), (LLAMA3_8B, 2), (LLAMA3_70B, 1)):
        for direction in ("fwd", "fwd+bwd"):
            cases.append(BlockCase(model, 4096, batch, direction))
    return cases


@dataclass(frozen=True)
class ScanCase:
    """A hybrid layer's sequence mixer run by the Triton kernels the training stacks call: Mamba-2's
    chunked SSD scan (mamba_ssm's mamba_chunk_scan_combined, which Megatron-Core and NeMo
    AutoModel train Nemotron-H and Nemotron 3 with) or the chunked gated delta rule
    (flash-linear-attention's chunk_gated_delta_rule, Megatron-Core's Qwen3-Next). One GPU's whole
    heads, bf16. No paper or kernel repository publishes their rates; this measures them."""

    op: str          # "ssd" or "delta"
    model: str
    heads: int       # SSD heads, or the delta rule's value heads (keys repeated to them)
    head_dim: int    # SSD head dim P, or the delta rule's key dim
    state: int       # SSD state N, or the delta rule's value dim
    groups: int      # SSD groups G of B and C (1 for the delta rule)
    chunk: int
    seq: int
    batch: int
    direction: str   # fwd or fwd+bwd
    source: str
    dtype: str = "bf16"

    @property
    def name(self):
        return "%s %s %s" % (self.model, self.op, self.direction)

    @property
    def params(self):
        if self.op == "ssd":
            return "b=%d s=%d H=%d P=%d G=%d N=%d Q=%d" % (
                self.batch, self.seq, self.heads, self.head_dim, self.groups, self.state,
                self.chunk)
        return "b=%d s=%d H=%d d_k=%d d_v=%d C=%d" % (
            self.batch, self.seq, self.heads, self.head_dim, self.state, self.chunk)

    def flops(self):
        if self.op == "ssd":
            return formulas.ssd_scan_flops(self.batch, self.seq, self.heads, self.head_dim,
                                           self.groups, self.state, self.chunk, self.direction)
        return formulas.delta_rule_flops(self.batch, self.seq, self.heads, self.head_dim,
                                         self.state, self.chunk, self.direction)

    def bytes(self):
        if self.op == "ssd":
            return formulas.ssd_scan_bytes(self.batch, self.seq, self.heads, self.head_dim,
                                           self.groups, self.state, self.chunk, self.direction,
                                           self.dtype)
        return formulas.delta_rule_bytes(self.batch, self.seq, self.heads, self.head_dim,
                                         self.state, self.chunk, self.direction, self.dtype)


def scan_cases():
    """Nemotron-H 8B's and Nemotron 3 Nano's Mamba-2 mixers at 8,192 tokens and Qwen3-Next's
    Gated DeltaNet at 4,096, forward and forward+backward."""
    shapes = (
        ("ssd", "nemotron-h-8b", 128, 64, 128, 8, 128, 8192,
         "nvidia/Nemotron-H-8B-Base-8K config.json (mamba_num_heads 128, mamba_head_dim 64, "
         "ssm_state_size 128, n_groups 8, chunk_size 128)"),
        ("ssd", "nemotron-3-nano", 64, 64, 128, 8, 128, 8192,
         "nvidia Nemotron 3 Nano 30B-A3B config.json (mamba_num_heads 64)"),
        ("delta", "qwen3-next-80b", 32, 128, 128, 1, 64, 4096,
         "Qwen/Qwen3-Next-80B-A3B-Instruct config.json (linear_num_value_heads 32, "
         "linear_key_head_dim 128, linear_value_head_dim 128; fla's chunk size 64)"),
    )
    out = []
    for op, model, heads, head_dim, state, groups, chunk, seq, source in shapes:
        for direction in ("fwd", "fwd+bwd"):
            out.append(ScanCase(op, model, heads, head_dim, state, groups, chunk, seq, 1,
                                direction, source))
    return out
