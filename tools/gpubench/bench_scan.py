"""The sequence mixers of hybrid models, run by the Triton kernels the training stacks call.

Mamba-2's SSD scan through mamba_ssm's mamba_chunk_scan_combined and the gated delta rule through
flash-linear-attention's chunk_gated_delta_rule, on random inputs of a published layer's shape,
forward and forward+backward (torch.autograd.grad of every input that trains). Neither package is
a dependency of the kit: where one is not importable, its rows read 'unavailable' and say why.
Reports milliseconds per call, the GB/s of the traffic meshplan prices for the kernel chain
(formulas.ssd_scan_bytes, formulas.delta_rule_bytes) and the TFLOP/s of its counted products.
"""

from bench_common import Result, Unavailable, first_line, rate_result
from csvout import Row
from timing import time_calls

BATCH_S = 0.1


def _kernel(op):
    try:
        if op == "ssd":
            from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined
            return mamba_chunk_scan_combined
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
        return chunk_gated_delta_rule
    except Exception as e:  # ImportError, or a package whose CUDA extension fails to load
        package = "mamba_ssm" if op == "ssd" else "flash-linear-attention (fla)"
        raise Unavailable("%s is not importable: %s" % (package, first_line(e, 120)))


def _inputs(torch, case, device):
    """Random inputs of the case's shape, and the call on them."""
    b, s, h = case.batch, case.seq, case.heads
    bf16 = torch.bfloat16
    if case.op == "ssd":
        x = torch.randn(b, s, h, case.head_dim, device=device, dtype=bf16)
        dt = torch.randn(b, s, h, device=device, dtype=bf16) * 0.5
        bm = torch.randn(b, s, case.groups, case.state, device=device, dtype=bf16)
        cm = torch.randn(b, s, case.groups, case.state, device=device, dtype=bf16)
        a = -torch.rand(h, device=device, dtype=torch.float32) * 8 - 1
        d = torch.ones(h, device=device, dtype=torch.float32)
        dt_bias = torch.rand(h, device=device, dtype=torch.float32)
        trained = [x, dt, bm, cm]

        def call(kernel):
            return kernel(x, dt, a, bm, cm, case.chunk, D=d, dt_bias=dt_bias, dt_softplus=True)
        return trained, call
    q = torch.nn.functional.normalize(
        torch.randn(b, s, h, case.head_dim, device=device, dtype=torch.float32), dim=-1).to(bf16)
    k = torch.nn.functional.normalize(
        torch.randn(b, s, h, case.head_dim, device=device, dtype=torch.float32), dim=-1).to(bf16)
    v = torch.randn(b, s, h, case.state, device=device, dtype=bf16)
    g = torch.nn.functional.logsigmoid(torch.randn(b, s, h, device=device,
                                                   dtype=torch.float32))
    beta = torch.rand(b, s, h, device=device, dtype=bf16)
    trained = [q, k, v, g, beta]

    def call(kernel):
        out = kernel(q, k, v, g, beta)
        return out[0] if isinstance(out, tuple) else out
    return trained, call


def measure(env, case, seconds, deadline):
    torch = env.torch
    if env.device != "cuda":
        raise Unavailable("the Triton kernels need a CUDA GPU")
    kernel = _kernel(case.op)
    trained, run = _inputs(torch, case, env.device)
    if case.direction == "fwd":
        def call():
            with torch.no_grad():
                run(kernel)
    else:
        for t in trained:
            t.requires_grad_()
        out = run(kernel)
        grad = torch.randn_like(out)
        del out

        def call():
            torch.autograd.grad(run(kernel), trained, grad)

    timed = time_calls(call, env.timer, seconds, deadline, BATCH_S, clock=env.clock)
    ms = timed.median_per_call_s() * 1e3
    time_row = Row("scan", case.name, case.params, case.dtype, ms, "ms", timed.device_s,
                   timed.calls)
    return [Result(time_row, timed.t0, timed.t1),
            rate_result("scan", case, timed, case.bytes(), "GB/s", 1e9,
                        params_extra="counted: the kernel chain's traffic as meshplan prices it"),
            rate_result("scan", case, timed, case.flops(), "TFLOP/s", 1e12,
                        params_extra="counted: the chunked algorithm's matrix products")]
