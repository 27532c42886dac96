"""Per-kernel launch cost: a thousand in-place adds on one element, back to back.

Three numbers: the device interval per kernel in eager mode (events around the thousand; the GPU
waits on the host, so this is the launch rate), the host time to submit one eager launch, and the
device interval per kernel when the thousand are captured once in a CUDA graph and replayed.
"""

import statistics
import time

from bench_common import Result, Unavailable
from csvout import Row
from timing import time_calls

BATCH_S = 0.05


def measure(env, case, seconds, deadline):
    torch = env.torch
    x = torch.zeros(1, device=env.device, dtype=torch.float32)
    kernels = case.kernels

    def launches():
        for _ in range(kernels):
            x.add_(1.0)

    if case.mode == "eager_host":
        return [_host_submit(env, case, launches, seconds, deadline)]
    call = launches
    if case.mode == "graph":
        call = _graph(torch, env, launches)
    timed = time_calls(call, env.timer, seconds, deadline, BATCH_S, clock=env.clock)
    per_kernel_us = timed.median_per_call_s() / kernels * 1e6
    row = Row("launch", case.name, case.params, case.dtype, per_kernel_us, "us/kernel",
              timed.device_s, timed.calls * kernels)
    return [Result(row, timed.t0, timed.t1)]


def _graph(torch, env, launches):
    if env.device != "cuda" or not hasattr(torch.cuda, "CUDAGraph"):
        raise Unavailable("CUDA graphs need a CUDA device and torch.cuda.CUDAGraph")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launches()  # warm-up off the capture, as torch's CUDA graph notes ask
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launches()
    return graph.replay


def _host_submit(env, case, launches, seconds, deadline):
    """Host seconds to issue `kernels` launches, without waiting for them; the device is drained
    between samples so the launch queue never fills."""
    clock = env.clock
    start = clock()
    end = min(start + seconds, deadline)
    for _ in range(3):
        launches()
    env.timer.synchronize()
    samples = []
    t0 = clock()
    while not samples or clock() < end:
        a = time.perf_counter()
        launches()
        samples.append(time.perf_counter() - a)
        env.timer.synchronize()
    per_kernel_us = statistics.median(samples) / case.kernels * 1e6
    row = Row("launch", case.name, case.params, case.dtype, per_kernel_us, "us/kernel",
              sum(samples), len(samples) * case.kernels)
    return Result(row, t0, clock())
