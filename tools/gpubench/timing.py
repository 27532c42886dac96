"""Timing loops: warm-up, then batches of calls timed on the device, until the case's time is
spent. No torch at import: the CUDA timer takes the torch module it is given.

A batch is k back-to-back calls between two CUDA events, followed by a wait on the second event;
k is chosen so that a batch lasts about `batch_s`, which keeps launch gaps and the wait small
against the work, and gives samples in time for the sustained GEMMs. Statistics are the median of
the per-call times of the batches, or of the batches inside a window.
"""

import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Batch:
    t0: float         # monotonic seconds, host, when the batch was issued
    t1: float         # monotonic seconds, host, when its last call had finished
    device_s: float   # seconds between the two events
    calls: int

    @property
    def per_call_s(self):
        return self.device_s / self.calls


@dataclass(frozen=True)
class Timed:
    warmup_calls: int
    batches: tuple

    @property
    def calls(self):
        return sum(b.calls for b in self.batches)

    @property
    def device_s(self):
        return sum(b.device_s for b in self.batches)

    @property
    def t0(self):
        return self.batches[0].t0

    @property
    def t1(self):
        return self.batches[-1].t1

    def median_per_call_s(self):
        return statistics.median(b.per_call_s for b in self.batches)

    def window(self, t_from, t_to):
        """The batches that lie wholly inside [t_from, t_to], as a Timed."""
        inside = tuple(b for b in self.batches if b.t0 >= t_from and b.t1 <= t_to)
        return Timed(0, inside)

    def start_window(self, seconds):
        """The first `seconds` of timed batches (at least the first batch)."""
        limit = self.t0 + seconds
        inside = tuple(b for i, b in enumerate(self.batches) if i == 0 or b.t1 <= limit)
        return Timed(0, inside)

    def last_fraction(self, fraction):
        """The batches that started in the last `fraction` of the timed span (at least one)."""
        start = self.t1 - (self.t1 - self.t0) * fraction
        inside = tuple(b for b in self.batches if b.t0 >= start) or self.batches[-1:]
        return Timed(0, inside)


class CudaTimer:
    """Times a batch of calls with CUDA events on the current stream."""

    def __init__(self, torch):
        self._torch = torch

    def batch(self, call, calls):
        torch = self._torch
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            call()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0

    def synchronize(self):
        self._torch.cuda.synchronize()


class WallTimer:
    """Times a batch with the host clock, for devices without events (the CPU, in tests)."""

    def __init__(self, clock=time.perf_counter, synchronize=lambda: None):
        self._clock = clock
        self._synchronize = synchronize

    def batch(self, call, calls):
        start = self._clock()
        for _ in range(calls):
            call()
        self._synchronize()
        return self._clock() - start

    def synchronize(self):
        self._synchronize()


def time_calls(call, timer, seconds, deadline, batch_s, clock=time.monotonic, warmup_calls=3,
               warmup_s=0.25, max_calls_per_batch=100_000):
    """Warms up (at least `warmup_calls` calls, and until min(warmup_s, seconds / 10) has passed),
    then times batches until `seconds` have passed since the start or `deadline` (monotonic) comes,
    whichever is first. Always times at least one batch; never starts a batch expected to end past
    the end."""
    start = clock()
    end = min(start + seconds, deadline)
    warm_until = start + min(warmup_s, seconds / 10)
    warm = 0
    per_call = None
    while warm < warmup_calls or (clock() < warm_until and clock() < end):
        per_call = timer.batch(call, 1)
        warm += 1
    per_call = max(per_call, 1e-7)
    batches = []
    while True:
        now = clock()
        remaining = end - now
        if batches and remaining < per_call:
            break
        calls = int(min(max_calls_per_batch, max(1, round(batch_s / per_call))))
        if batches:
            calls = min(calls, max(1, int(remaining / per_call)))
        device_s = timer.batch(call, calls)
        batches.append(Batch(now, clock(), device_s, calls))
        per_call = max(device_s / calls, 1e-7)
        if batches[-1].t1 >= end:
            break
    return Timed(warm, tuple(batches))
