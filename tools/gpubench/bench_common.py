"""What the measuring modules share. No torch at import.

Each measuring module has `measure(env, case, seconds, deadline)` and returns a list of Result:
a CSV row with the monotonic window it was measured in, so that the runner can put the NVML means
of that window beside it.
"""

import math
import time
from dataclasses import dataclass
from typing import Callable, Optional

from csvout import Row

GPU_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


class Unavailable(Exception):
    """The GPU or this torch cannot run the case (no fp8 units, an SDPA backend missing, no
    _scaled_mm signature that works). Recorded as 'unavailable', never a failed run."""


@dataclass
class Env:
    """The device a run measures."""

    torch: object
    device: str                 # "cuda", or "cpu" in the smoke tests
    timer: object               # timing.CudaTimer or timing.WallTimer
    l2_bytes: int
    clock: Callable[[], float] = time.monotonic


@dataclass
class Result:
    row: Row
    t0: float
    t1: float
    # When set, the row's value is this NVML mean over [t0, t1] (for example "mem_clock_mhz").
    nvml_value: Optional[str] = None


def rotation_sets(bytes_per_set, l2_bytes, most=8):
    """How many copies of a case's inputs to cycle through so that together they are at least three
    times the L2 cache, and repeated calls measure device memory, not the cache."""
    if bytes_per_set <= 0:
        raise ValueError("bytes_per_set must be positive, got %r" % (bytes_per_set,))
    return max(1, min(most, math.ceil(3 * l2_bytes / bytes_per_set)))


def cycler(items):
    """A function that returns the items in turn, one per call."""
    state = {"i": 0}
    n = len(items)

    def next_item():
        i = state["i"]
        state["i"] = (i + 1) % n
        return items[i]

    return next_item


def rate_result(kind, case, timed, amount, unit, scale, label="", params_extra=""):
    """A row of amount / median per-call seconds / scale (for example FLOP / s / 1e12 = TFLOP/s)
    over the batches of `timed`."""
    rate = amount / timed.median_per_call_s() / scale
    name = case.name + (" " + label if label else "")
    params = case.params + ("; " + params_extra if params_extra else "")
    row = Row(kind, name, params, case.dtype, rate, unit, timed.device_s, timed.calls)
    return Result(row, timed.t0, timed.t1)


def first_line(e, limit=200):
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."
