"""Norm and elementwise bandwidth: RMSNorm, LayerNorm, add, SiLU(gate) * up and copy on bf16
activations, in GB/s of the fewest bytes each must move (formulas.py).

Eager torch runs SiLU(gate) * up as two kernels with an intermediate, so it moves more bytes than
it is credited with; the rate says what a model's unfused MLP activation gets. Inputs rotate over
enough copies to defeat the L2 cache.
"""

from bench_common import cycler, rate_result, rotation_sets
from timing import time_calls

BATCH_S = 0.05
EPS = 1e-5


def measure_norm(env, case, seconds, deadline):
    torch = env.torch
    F = torch.nn.functional
    sets = rotation_sets(case.tokens * case.hidden * 2, env.l2_bytes)
    xs = cycler([torch.randn(case.tokens, case.hidden, device=env.device, dtype=torch.bfloat16)
                 for _ in range(sets)])
    weight = torch.randn(case.hidden, device=env.device, dtype=torch.bfloat16)
    bias = torch.randn(case.hidden, device=env.device, dtype=torch.bfloat16)
    shape = (case.hidden,)
    if case.op == "layer_norm":
        how = "torch.nn.functional.layer_norm"

        def call():
            F.layer_norm(xs(), shape, weight, bias, EPS)
    elif hasattr(F, "rms_norm"):
        how = "torch.nn.functional.rms_norm"

        def call():
            F.rms_norm(xs(), shape, weight, EPS)
    else:
        how = "x * rsqrt(mean(x^2) + eps) * w in fp32 (this torch has no rms_norm)"

        def call():
            x = xs().float()
            (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)).to(torch.bfloat16) * weight

    timed = time_calls(call, env.timer, seconds, deadline, BATCH_S, clock=env.clock)
    return [rate_result("norm", case, timed, case.bytes(), "GB/s", 1e9,
                        params_extra="%s; %d input sets" % (how, sets))]


def measure_elementwise(env, case, seconds, deadline):
    torch = env.torch
    F = torch.nn.functional
    inputs = 1 if case.op == "copy" else 2
    sets = rotation_sets(case.tokens * case.width * 2 * inputs, env.l2_bytes)

    def activation():
        return torch.randn(case.tokens, case.width, device=env.device, dtype=torch.bfloat16)

    pairs = cycler([(activation(), activation() if inputs == 2 else None) for _ in range(sets)])
    out = torch.empty(case.tokens, case.width, device=env.device, dtype=torch.bfloat16)
    if case.op == "add":
        how = "torch.add(x, y, out=o)"

        def call():
            x, y = pairs()
            torch.add(x, y, out=out)
    elif case.op == "copy":
        how = "o.copy_(x)"

        def call():
            x, _ = pairs()
            out.copy_(x)
    else:
        how = "torch.mul(F.silu(g), u, out=o), two kernels"

        def call():
            gate, up = pairs()
            torch.mul(F.silu(gate), up, out=out)

    timed = time_calls(call, env.timer, seconds, deadline, BATCH_S, clock=env.clock)
    return [rate_result("elementwise", case, timed, case.bytes(), "GB/s", 1e9,
                        params_extra="%s; %d input sets" % (how, sets))]
