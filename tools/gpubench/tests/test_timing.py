"""time_calls with a fake clock: warm-up, batch sizing, and the end it never passes."""

import unittest

import _support  # noqa: F401
from timing import Batch, Timed, time_calls


class FakeDevice:
    """Each call takes `per_call` seconds of fake time (the first call `first` seconds)."""

    def __init__(self, per_call, first=None):
        self.now = 100.0
        self.per_call = per_call
        self.first = first
        self.calls = 0

    def clock(self):
        return self.now

    def batch(self, call, calls):
        spent = 0.0
        for _ in range(calls):
            step = self.first if (self.calls == 0 and self.first is not None) else self.per_call
            self.calls += 1
            spent += step
        self.now += spent
        return spent

    def synchronize(self):
        pass


class TimeCalls(unittest.TestCase):
    def test_stops_at_its_seconds(self):
        dev = FakeDevice(0.001)
        timed = time_calls(None, dev, seconds=2.0, deadline=1e9, batch_s=0.05, clock=dev.clock)
        self.assertLessEqual(dev.now, 100.0 + 2.0 + 1e-9)
        self.assertGreater(dev.now, 100.0 + 2.0 - 0.06)
        # 50 calls a batch: 0.05 s / 0.001 s
        self.assertEqual(timed.batches[0].calls, 50)
        self.assertAlmostEqual(timed.median_per_call_s(), 0.001)

    def test_stops_at_the_deadline_when_it_comes_first(self):
        dev = FakeDevice(0.001)
        time_calls(None, dev, seconds=60.0, deadline=100.5, batch_s=0.05, clock=dev.clock)
        self.assertLessEqual(dev.now, 100.5 + 1e-9)

    def test_warm_up_is_at_least_three_calls_and_not_timed(self):
        dev = FakeDevice(0.01, first=1.0)  # a slow first call (module load, autotuning)
        timed = time_calls(None, dev, seconds=3.0, deadline=1e9, batch_s=0.1, clock=dev.clock)
        self.assertGreaterEqual(timed.warmup_calls, 3)
        self.assertAlmostEqual(timed.median_per_call_s(), 0.01)
        self.assertEqual(timed.calls + timed.warmup_calls, dev.calls)

    def test_always_one_timed_batch_even_without_time(self):
        dev = FakeDevice(0.5)
        timed = time_calls(None, dev, seconds=0.1, deadline=1e9, batch_s=0.05, clock=dev.clock)
        self.assertEqual(len(timed.batches), 1)
        self.assertEqual(timed.batches[0].calls, 1)

    def test_last_batch_shrinks_to_fit(self):
        dev = FakeDevice(0.01)
        time_calls(None, dev, seconds=1.0, deadline=1e9, batch_s=0.3, clock=dev.clock)
        self.assertLessEqual(dev.now, 101.0 + 1e-9)
        self.assertGreater(dev.now, 101.0 - 0.011)


class Windows(unittest.TestCase):
    def setUp(self):
        # ten batches of 1 s each, 10 calls, getting slower: 0.10, 0.11, ... 0.19 s a call
        self.timed = Timed(3, tuple(Batch(float(i), i + 1.0, 1.0 + i / 10, 10)
                                    for i in range(10)))

    def test_start_window(self):
        start = self.timed.start_window(1.0)
        self.assertEqual(len(start.batches), 1)
        self.assertAlmostEqual(start.median_per_call_s(), 0.10)
        self.assertEqual(len(self.timed.start_window(3.0).batches), 3)

    def test_last_third(self):
        # span 0..10 s: the last third starts at 6.67 s, so batches starting at 7, 8, 9;
        # per call 0.17, 0.18, 0.19, median 0.18
        steady = self.timed.last_fraction(1 / 3)
        self.assertEqual([b.t0 for b in steady.batches], [7.0, 8.0, 9.0])
        self.assertAlmostEqual(steady.median_per_call_s(), 0.18)
        self.assertEqual(steady.calls, 30)

    def test_window(self):
        self.assertEqual(len(self.timed.window(2.0, 5.0).batches), 3)


if __name__ == "__main__":
    unittest.main()
