"""FLOP and byte counts behind every rate gpubench reports. Pure Python: no torch.

Every function returns an exact integer count (FLOP or bytes), so a rate is count / seconds and the
arithmetic can be pinned in tests. The conventions and their sources:

* GEMM: 2 * M * N * K floating-point operations (one multiply and one add per multiply-accumulate),
  as NVIDIA's "Matrix Multiplication Background User's Guide" (Deep Learning Performance
  documentation) counts them.
* Attention: FlashAttention-2's benchmark convention (Dao, "FlashAttention-2: Faster Attention with
  Better Parallelism and Work Partitioning", 2023, section 4.1; flops() in
  benchmarks/benchmark_flash_attention.py of Dao-AILab/flash-attention): forward
  4 * batch * heads * seq^2 * head_dim, halved when causal; backward 2.5 times the forward;
  forward and backward together 3.5 times the forward.
* A transformer block: its matrix products (2 * tokens * in * out each) plus attention as above;
  the backward pass of the matrix products costs twice their forward (Narayanan et al., "Efficient
  Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21, section 5.1).
  Norms, RoPE and elementwise work are not counted, as model-FLOP utilisation does not count them
  (Chowdhery et al., "PaLM", 2022, appendix B).
* Bandwidth: the fewest bytes an operation must move through device memory, each input read once
  and each output written once, as STREAM counts them (McCalpin, "Memory Bandwidth and Machine
  Balance in Current High Performance Computers", 1995: copy moves 2 words per element, add 3).
"""

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1}

DIRECTIONS = ("fwd", "bwd", "fwd+bwd")


def gemm_flops(m, n, k):
    """FLOP of one [m, k] x [k, n] matrix product."""
    _positive(m=m, n=n, k=k)
    return 2 * m * n * k


def attention_flops(batch, heads, seq, head_dim, causal=True, direction="fwd"):
    """FLOP of scaled dot-product attention over seq queries and seq keys, FlashAttention-2's way.

    The forward count is 4 * batch * heads * seq^2 * head_dim (two matrix products, QK^T and PV,
    of 2 * seq^2 * head_dim each per head), halved when causal; the backward is 2.5 times that.
    """
    _positive(batch=batch, heads=heads, seq=seq, head_dim=head_dim)
    forward = 4 * batch * heads * seq * seq * head_dim
    if causal:
        forward //= 2  # forward is a multiple of 4, so this is exact
    return _by_direction(forward, direction, backward_num=5, backward_den=2)


def block_matmul_flops_fwd(tokens, hidden, heads, kv_heads, head_dim, ffn, gated=True):
    """FLOP of the forward matrix products of one LLaMA-style block (fused QKV with grouped KV
    heads, output projection, a SwiGLU MLP of three matrices or a GeLU MLP of two)."""
    _positive(tokens=tokens, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
              ffn=ffn)
    qkv = hidden * (heads + 2 * kv_heads) * head_dim
    out = heads * head_dim * hidden
    mlp = (3 if gated else 2) * hidden * ffn
    return 2 * tokens * (qkv + out + mlp)


def block_flops(batch, seq, hidden, heads, kv_heads, head_dim, ffn, direction, gated=True):
    """FLOP of one block: matrix products (backward twice the forward) plus causal attention."""
    matmul = block_matmul_flops_fwd(batch * seq, hidden, heads, kv_heads, head_dim, ffn, gated)
    attention_fwd = attention_flops(batch, heads, seq, head_dim, causal=True, direction="fwd")
    if direction == "fwd":
        return matmul + attention_fwd
    if direction == "fwd+bwd":
        return 3 * matmul + attention_fwd * 7 // 2
    raise ValueError("direction must be 'fwd' or 'fwd+bwd', got %r" % (direction,))


def rms_norm_bytes(tokens, hidden, dtype="bf16"):
    """Bytes of an RMSNorm forward: read x [tokens, hidden] and the weight, write y."""
    _positive(tokens=tokens, hidden=hidden)
    return (2 * tokens * hidden + hidden) * DTYPE_BYTES[dtype]


def layer_norm_bytes(tokens, hidden, dtype="bf16"):
    """Bytes of a LayerNorm forward: read x, the weight and the bias, write y."""
    _positive(tokens=tokens, hidden=hidden)
    return (2 * tokens * hidden + 2 * hidden) * DTYPE_BYTES[dtype]


def elementwise_bytes(op, elements, dtype="bf16"):
    """Bytes of an elementwise op over `elements` values: add and SiLU(gate)*up read two tensors
    and write one; copy reads one and writes one."""
    _positive(elements=elements)
    per_element = {"add": 3, "silu_mul": 3, "copy": 2}
    if op not in per_element:
        raise ValueError("op must be one of %s, got %r" % (sorted(per_element), op))
    return per_element[op] * elements * DTYPE_BYTES[dtype]


def ssd_scan_bytes(batch, seq, heads, head_dim, groups, state, chunk, direction, dtype="bf16"):
    """Device-memory bytes of Mamba-2's chunked SSD scan as its Triton kernel chain moves them
    (state-spaces/mamba mamba_ssm/ops/triton/ssd_combined.py at e9594ce): per token, with e the
    element size, X = heads * head_dim * e, BC = groups * state * e, the chunk states S32 =
    4 * heads * head_dim * state / chunk (fp32) and S16 = e * heads * head_dim * state / chunk,
    and C B^T in fp32, CB32 = 4 * groups * chunk. Forward 3 X + 4 BC + 2 S32 + 2 S16 + 2 CB32 +
    (e + 24) * heads; backward 9 X + 15 BC + 6 S32 + 5 S16 + 5 CB32 + (e + 64) * heads. The same
    count as meshplan's OpCost.ssdKernelBytes, so a measured rate checks the price."""
    _positive(batch=batch, seq=seq, heads=heads, head_dim=head_dim, groups=groups, state=state,
              chunk=chunk)
    _divides(chunk=chunk, seq=seq)
    e = DTYPE_BYTES[dtype]
    tokens = batch * seq
    chunks = tokens // chunk
    x = heads * head_dim * e
    bc = groups * state * e
    states = chunks * heads * head_dim * state  # elements of one copy of the chunk states
    cb = 4 * groups * chunk
    fwd = tokens * (3 * x + 4 * bc + 2 * cb + (e + 24) * heads) + states * (2 * 4 + 2 * e)
    bwd = tokens * (9 * x + 15 * bc + 5 * cb + (e + 64) * heads) + states * (6 * 4 + 5 * e)
    return _pick(direction, fwd, bwd)


def ssd_scan_flops(batch, seq, heads, head_dim, groups, state, chunk, direction):
    """Matrix FLOP of the SSD scan (Dao and Gu, arXiv:2405.21060, section 6): per token 2 (chunk *
    state * groups + heads * (chunk * head_dim + 2 * state * head_dim)), plus the states passed
    between chunks, 2 * heads * head_dim * state per chunk; the backward twice the forward."""
    _positive(batch=batch, seq=seq, heads=heads, head_dim=head_dim, groups=groups, state=state,
              chunk=chunk)
    _divides(chunk=chunk, seq=seq)
    tokens = batch * seq
    fwd = (2 * tokens * (chunk * state * groups + heads * (chunk * head_dim + 2 * state * head_dim))
           + 2 * (tokens // chunk) * heads * head_dim * state)
    return _by_direction(fwd, direction, backward_num=2, backward_den=1)


def delta_rule_bytes(batch, seq, heads, key_dim, value_dim, chunk, direction, dtype="bf16"):
    """Device-memory bytes of the chunked gated delta rule as flash-linear-attention's Triton
    kernels move them (fla/ops/gated_delta_rule/chunk.py at bc3b101d): per token and value head,
    K = key_dim * e, V = value_dim * e, the chunk's triangular matrix chunk * e and the chunk
    states h = key_dim * value_dim * e / chunk. Forward 6 K + 6 V + chunk e + 2 h + 20 + e;
    backward 21 K + 15 V + 2 chunk e + 4 h + 48 + 3 e (meshplan's OpCost.deltaKernelBytes)."""
    _positive(batch=batch, seq=seq, heads=heads, key_dim=key_dim, value_dim=value_dim,
              chunk=chunk)
    _divides(chunk=chunk, seq=seq)
    e = DTYPE_BYTES[dtype]
    tokens = batch * seq
    states = (tokens // chunk) * heads * key_dim * value_dim * e
    k = key_dim * e
    v = value_dim * e
    fwd = tokens * heads * (6 * k + 6 * v + chunk * e + 20 + e) + 2 * states
    bwd = tokens * heads * (21 * k + 15 * v + 2 * chunk * e + 48 + 3 * e) + 4 * states
    return _pick(direction, fwd, bwd)


def delta_rule_flops(batch, seq, heads, key_dim, value_dim, chunk, direction):
    """Matrix FLOP of the chunkwise gated delta rule (Yang et al., arXiv:2406.06484, section 3.3):
    per chunk and head 2 C^2 (3 d_k + 2 d_v) + 6 C d_k d_v + 2 C^3 / 3 (the triangular solve,
    rounded down to a whole FLOP); the backward twice the forward."""
    _positive(batch=batch, seq=seq, heads=heads, key_dim=key_dim, value_dim=value_dim,
              chunk=chunk)
    _divides(chunk=chunk, seq=seq)
    chunks = batch * seq // chunk
    per_chunk = (2 * chunk * chunk * (3 * key_dim + 2 * value_dim) + 6 * chunk * key_dim * value_dim
                 + 2 * chunk ** 3 // 3)
    fwd = chunks * heads * per_chunk
    return _by_direction(fwd, direction, backward_num=2, backward_den=1)


def _pick(direction, fwd, bwd):
    if direction == "fwd":
        return fwd
    if direction == "bwd":
        return bwd
    if direction == "fwd+bwd":
        return fwd + bwd
    raise ValueError("direction must be one of %s, got %r" % (DIRECTIONS, direction))


def _divides(chunk, seq):
    if seq % chunk:
        raise ValueError("the sequence (%d) must be a whole number of chunks of %d" % (seq, chunk))


def _by_direction(forward, direction, backward_num, backward_den):
    """A count whose backward is a fixed multiple of its forward (forward + floor(forward * num /
    den) for both, which is floor(forward * (num + den) / den) for an integer forward)."""
    return _pick(direction, forward, forward * backward_num // backward_den)


def _positive(**values):
    for key, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError("%s must be a positive integer, got %r" % (key, value))
