"""Causal scaled dot-product attention, forward and backward, on each SDPA backend forced in turn
through torch.nn.attention.sdpa_kernel.

Queries, keys and values are laid out as models make them ([batch, seq, heads, dim] transposed to
[batch, heads, seq, dim]). The backward is timed alone, as FlashAttention-2's benchmark does:
torch.autograd.grad of one forward's output, retaining the graph, again and again.
"""

import warnings

from bench_common import Unavailable, first_line, rate_result
from timing import time_calls

BATCH_S = 0.05


def measure(env, case, seconds, deadline):
    torch = env.torch
    F = torch.nn.functional
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        raise Unavailable("torch %s has no torch.nn.attention.sdpa_kernel" % torch.__version__) \
            from None
    backend = getattr(SDPBackend, case.backend, None)
    if backend is None:
        raise Unavailable("torch %s has no SDPBackend.%s" % (torch.__version__, case.backend))
    backward = case.direction == "bwd"

    def tensor():
        t = torch.randn(case.batch, case.seq, case.heads, case.head_dim, device=env.device,
                        dtype=torch.bfloat16).transpose(1, 2).detach()
        return t.requires_grad_(backward)

    q, k, v = tensor(), tensor(), tensor()
    with sdpa_kernel(backend):
        out = _first_call(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), case)
        if backward:
            grad = torch.randn_like(out)
            inputs = (q, k, v)

            def call():
                torch.autograd.grad(out, inputs, grad, retain_graph=True)

            _first_call(call, case)
        else:
            def call():
                F.scaled_dot_product_attention(q, k, v, is_causal=True)

        timed = time_calls(call, env.timer, seconds, deadline, BATCH_S, clock=env.clock)
    note = "FlashAttention-2 count: 4*b*h*s^2*d/2 forward, 2.5x backward"
    return [rate_result("attention", case, timed, case.flops(), "TFLOP/s", 1e12,
                        params_extra=note)]


def _first_call(fn, case):
    """Runs fn once; a backend that refuses the case (its warnings say why) is Unavailable."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return fn()
        except RuntimeError as e:
            reasons = [first_line(w.message, 160) for w in caught]
            raise Unavailable("%s refused: %s" % (
                case.backend, " / ".join(reasons + [first_line(e, 160)]))) from None
