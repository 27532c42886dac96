"""One LLaMA-style transformer block, forward and forward+backward, written plainly in torch.

RMSNorm (in fp32, as Llama's reference code does), a fused QKV projection with grouped KV heads,
rotary embeddings (rotate-half form), causal SDPA on torch's own backend choice, the output
projection and residual, RMSNorm, a SwiGLU MLP and residual. Weights are bf16 leaves that require
grad, so the forward records autograd as it does in training. Reports milliseconds per call and
TFLOP/s of the counted work (formulas.block_flops: matrix products and attention only).
"""

from bench_common import Result, rate_result
from csvout import Row
from timing import time_calls

BATCH_S = 0.1
EPS = 1e-5
ROPE_THETA = 500000.0  # Llama 3's rope_theta


def build(torch, model, seq, device):
    """The block's weights and rotary tables, random (std 0.02) and bf16."""
    d = model.head_dim
    qkv_out = (model.heads + 2 * model.kv_heads) * d

    def weight(*shape):
        w = torch.randn(*shape, device=device, dtype=torch.bfloat16) * 0.02
        return w.requires_grad_()

    weights = {
        "norm1": torch.ones(model.hidden, device=device, dtype=torch.bfloat16).requires_grad_(),
        "wqkv": weight(qkv_out, model.hidden),
        "wo": weight(model.hidden, model.heads * d),
        "norm2": torch.ones(model.hidden, device=device, dtype=torch.bfloat16).requires_grad_(),
        "w_gate": weight(model.ffn, model.hidden),
        "w_up": weight(model.ffn, model.hidden),
        "w_down": weight(model.hidden, model.ffn),
    }
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, d, 2, device=device,
                                                  dtype=torch.float32) / d))
    angles = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)  # [seq, d]
    rope = (angles.cos().to(torch.bfloat16)[:, None, :],
            angles.sin().to(torch.bfloat16)[:, None, :])
    return weights, rope


def forward(torch, model, x, weights, rope):
    """The block on x [batch, seq, hidden]."""
    F = torch.nn.functional
    b, s, _ = x.shape
    d = model.head_dim
    h = _rms_norm(torch, x, weights["norm1"])
    q, k, v = F.linear(h, weights["wqkv"]).split(
        [model.heads * d, model.kv_heads * d, model.kv_heads * d], dim=-1)
    q = _rotate(torch, q.view(b, s, model.heads, d), rope)
    k = _rotate(torch, k.view(b, s, model.kv_heads, d), rope)
    v = v.view(b, s, model.kv_heads, d)
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    if model.kv_heads != model.heads:
        repeat = model.heads // model.kv_heads
        k = k.repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
    attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    x = x + F.linear(attn.transpose(1, 2).reshape(b, s, model.heads * d), weights["wo"])
    h = _rms_norm(torch, x, weights["norm2"])
    mlp = F.silu(F.linear(h, weights["w_gate"])) * F.linear(h, weights["w_up"])
    return x + F.linear(mlp, weights["w_down"])


def _rms_norm(torch, x, weight):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * weight


def _rotate(torch, x, rope):
    cos, sin = rope
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def measure(env, case, seconds, deadline):
    torch = env.torch
    model = case.model
    weights, rope = build(torch, model, case.seq, env.device)
    x = torch.randn(case.batch, case.seq, model.hidden, device=env.device, dtype=torch.bfloat16)
    x.requires_grad_()
    if case.direction == "fwd":
        def call():
            forward(torch, model, x, weights, rope)
    else:
        grad = torch.randn_like(x)
        inputs = [x] + list(weights.values())

        def call():
            out = forward(torch, model, x, weights, rope)
            torch.autograd.grad(out, inputs, grad)

    timed = time_calls(call, env.timer, seconds, deadline, BATCH_S, clock=env.clock)
    ms = timed.median_per_call_s() * 1e3
    time_row = Row("block", case.name, case.params, case.dtype, ms, "ms", timed.device_s,
                   timed.calls)
    counted = ("counted: matrix products x3 + causal attention x3.5"
               if case.direction == "fwd+bwd" else "counted: matrix products + causal attention")
    return [Result(time_row, timed.t0, timed.t1),
            rate_result("block", case, timed, case.flops(), "TFLOP/s", 1e12,
                        params_extra=counted)]
