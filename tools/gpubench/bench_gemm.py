"""Sustained and sweep GEMMs, bf16 through torch.mm and fp8 through torch._scaled_mm.

Inputs are random normal values (never zeros, which run faster than real data). The product is
x[M, K] @ W[N, K]^T, the layout torch's linear gives cuBLAS. A sustained case runs for its whole
share and reports TFLOP/s over its first second and over its last third (steady state); its NVML
means come from those same windows.
"""

from bench_common import Result, Unavailable, cycler, first_line, rate_result, rotation_sets
from csvout import Row
from timing import time_calls

SUSTAINED_BATCH_S = 0.1
SWEEP_BATCH_S = 0.05
START_WINDOW_S = 1.0
STEADY_FRACTION = 1 / 3


def measure(env, case, seconds, deadline):
    torch = env.torch
    elem = 1 if case.dtype == "fp8" else 2
    sets = rotation_sets((case.m * case.k + case.n * case.k) * elem, env.l2_bytes)
    xs = [torch.randn(case.m, case.k, device=env.device, dtype=torch.bfloat16)
          for _ in range(sets)]
    ws = [torch.randn(case.n, case.k, device=env.device, dtype=torch.bfloat16)
          for _ in range(sets)]
    if case.dtype == "fp8":
        call, extra = _fp8_call(torch, env, xs, ws)
    else:
        out = torch.empty(case.m, case.n, device=env.device, dtype=torch.bfloat16)
        pairs = cycler([(x, w.t()) for x, w in zip(xs, ws)])

        def call():
            x, wt = pairs()
            torch.mm(x, wt, out=out)

        extra = "torch.mm into bf16"
    extra += "; %d input set%s" % (sets, "" if sets == 1 else "s")
    batch_s = SUSTAINED_BATCH_S if case.sustained else SWEEP_BATCH_S
    timed = time_calls(call, env.timer, seconds, deadline, batch_s, clock=env.clock)
    flops = case.flops()
    if not case.sustained:
        return [rate_result("gemm", case, timed, flops, "TFLOP/s", 1e12, params_extra=extra)]
    start = timed.start_window(START_WINDOW_S)
    steady = timed.last_fraction(STEADY_FRACTION)
    results = [rate_result("gemm", case, start, flops, "TFLOP/s", 1e12, "start",
                           extra + "; first %.0f s" % START_WINDOW_S),
               rate_result("gemm", case, steady, flops, "TFLOP/s", 1e12, "steady",
                           extra + "; last third of %.1f s" % (timed.t1 - timed.t0))]
    clock_row = Row("gemm", case.name + " steady memory clock", case.params + "; NVML mean",
                    case.dtype, None, "MHz", steady.device_s, steady.calls)
    results.append(Result(clock_row, steady.t0, steady.t1, nvml_value="mem_clock_mhz"))
    return results


def _fp8_call(torch, env, xs, ws):
    """A call of torch._scaled_mm on e4m3 copies of the inputs with per-tensor scales of 1, in
    whichever form this torch accepts; Unavailable when none works."""
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        raise Unavailable("torch %s has no torch._scaled_mm or float8_e4m3fn" % torch.__version__)
    if env.device == "cuda":
        capability = torch.cuda.get_device_capability()
        if tuple(capability) < (8, 9):
            raise Unavailable("compute capability %d.%d has no fp8 matrix units (needs 8.9+)"
                              % tuple(capability))
    e4m3 = torch.float8_e4m3fn
    x8 = [x.to(e4m3) for x in xs]
    # _scaled_mm wants its second operand column-major: W[N, K] row-major, transposed.
    w8 = [w.to(e4m3).t() for w in ws]
    one = torch.ones((), device=env.device, dtype=torch.float32)
    # Keyword arguments fit both signatures: torch 2.1-2.3 (scales optional, returns (out, amax))
    # and 2.4+ (scales required, returns out).
    forms = ((dict(scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True),
              "fast accumulation"),
             (dict(scale_a=one, scale_b=one, out_dtype=torch.bfloat16), "default accumulation"))
    errors = []
    for kwargs, label in forms:
        try:
            result = torch._scaled_mm(x8[0], w8[0], **kwargs)
            if isinstance(result, tuple):
                result = result[0]
            if tuple(result.shape) != (xs[0].shape[0], ws[0].shape[0]):
                raise RuntimeError("result shape %s" % (tuple(result.shape),))
        except Exception as e:  # noqa: BLE001 - each form may be refused by some torch
            errors.append(first_line(e, 120))
            continue
        pairs = cycler(list(zip(x8, w8)))

        def call(kwargs=kwargs):
            x, w = pairs()
            torch._scaled_mm(x, w, **kwargs)

        return call, "torch._scaled_mm e4m3 x e4m3 into bf16, per-tensor scales, " + label
    raise Unavailable("torch._scaled_mm refused every form: " + " / ".join(errors))
