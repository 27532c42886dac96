"""The runner's scheduling with stand-in measurements on a fake clock: shares are kept, an overrun
is taken from later cases in proportion, a spent part skips its cases, and a case that cannot run
or fails becomes one row while the run goes on."""

import csv
import io
import unittest

import _support  # noqa: F401
import runner
from bench_common import Env, Result, Unavailable
from cases import GemmCase, NormCase
from csvout import CsvWriter, Row
from nvml_sampler import NvmlSampler, Sample
from plan import Item, Part, Plan


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def gemm(i):
    return GemmCase("m", "layer%d" % i, 1, 16, 16, 16, "bf16")


class Execute(unittest.TestCase):
    def setUp(self):
        self.clock = FakeClock()
        self.env = Env(None, "fake", None, 0, self.clock)
        self.given = []
        self.overrun = {}
        self.saved = dict(runner.MEASURE)
        runner.MEASURE["gemm"] = self.fake_measure
        runner.MEASURE["norm"] = self.fake_measure
        self.sampler = NvmlSampler()
        for t in range(0, 200):
            self.sampler.add(Sample(float(t), 1900.0, 3200.0, 600.0, 60.0))

    def tearDown(self):
        runner.MEASURE.clear()
        runner.MEASURE.update(self.saved)

    def fake_measure(self, env, case, seconds, deadline):
        self.given.append((case.name, round(seconds, 3)))
        if case.name in self.overrun:
            action = self.overrun[case.name]
            if action == "unavailable":
                raise Unavailable("no fp8 units here")
            if action == "fail":
                raise MemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            seconds *= action
        t0 = self.clock.now
        self.clock.now += seconds
        row = Row("gemm", case.name, case.params, case.dtype, 1.0, "TFLOP/s", seconds, 1)
        return [Result(row, t0, self.clock.now)]

    def run_plan(self, parts, soft_end):
        stream = io.StringIO()
        writer = CsvWriter(stream)
        writer.header()
        the_plan = Plan(100_000, 10_000, tuple(parts))
        runner.execute(the_plan, self.env, writer, self.sampler, soft_end, lambda row: None)
        return list(csv.DictReader(io.StringIO(stream.getvalue())))

    def test_on_schedule_every_case_gets_its_share(self):
        parts = [Part("gemm", 6_000, tuple(Item("gemm", gemm(i), 2_000) for i in range(3)), 0,
                      ""),
                 Part("norm", 4_000, (Item("norm", NormCase("rms_norm", "m", 8, 8), 4_000),), 0,
                      "")]
        rows = self.run_plan(parts, soft_end=50.0)
        self.assertEqual(self.given, [("m layer0 tp1", 2.0), ("m layer1 tp1", 2.0),
                                      ("m layer2 tp1", 2.0), ("rms_norm m", 4.0)])
        self.assertEqual(len(rows), 4)
        self.assertEqual(rows[0]["mean SM clock MHz"], "1900")
        self.assertEqual(rows[0]["mean power W"], "600")

    def test_an_overrun_is_taken_from_the_later_cases(self):
        # 10 s to the soft end for 10 s of plan: the gemm part gets its 6 s, layer0 its 2 s, but
        # layer0 takes 3 x 2 = 6 s. At 6 s the part's time is spent: layer1 and layer2 are
        # skipped. The norm part then finds 4 s left for its 4 s of plan and gets all of it.
        self.overrun["m layer0 tp1"] = 3
        parts = [Part("gemm", 6_000, tuple(Item("gemm", gemm(i), 2_000) for i in range(3)), 0,
                      ""),
                 Part("norm", 4_000, (Item("norm", NormCase("rms_norm", "m", 8, 8), 4_000),), 0,
                      "")]
        rows = self.run_plan(parts, soft_end=10.0)
        self.assertEqual(self.given, [("m layer0 tp1", 2.0), ("rms_norm m", 4.0)])
        self.assertEqual([r["value"] for r in rows], ["1", "skipped", "skipped", "1"])
        self.assertIn("skipped: the part's time was spent", rows[1]["shape/params"])
        self.assertLessEqual(self.clock.now, 10.0)

    def test_a_late_start_cuts_every_share_in_proportion(self):
        # 10 s of plan, 5 s left: each 2 s case gets 1 s, the 4 s case 2 s.
        self.clock.now = 45.0
        parts = [Part("gemm", 6_000, tuple(Item("gemm", gemm(i), 2_000) for i in range(3)), 0,
                      ""),
                 Part("norm", 4_000, (Item("norm", NormCase("rms_norm", "m", 8, 8), 4_000),), 0,
                      "")]
        self.run_plan(parts, soft_end=50.0)
        self.assertEqual(self.given, [("m layer0 tp1", 1.0), ("m layer1 tp1", 1.0),
                                      ("m layer2 tp1", 1.0), ("rms_norm m", 2.0)])
        self.assertLessEqual(self.clock.now, 50.0)

    def test_unavailable_and_failed_cases_are_rows_and_the_run_goes_on(self):
        self.overrun["m layer0 tp1"] = "unavailable"
        self.overrun["m layer1 tp1"] = "fail"
        parts = [Part("gemm", 6_000, tuple(Item("gemm", gemm(i), 2_000) for i in range(3)), 0,
                      "")]
        rows = self.run_plan(parts, soft_end=50.0)
        self.assertEqual([r["value"] for r in rows], ["unavailable", "error", "1"])
        self.assertEqual(rows[0]["shape/params"], "M=16 K=16 N=16 | unavailable: no fp8 units here")
        self.assertEqual(rows[1]["shape/params"], "M=16 K=16 N=16 | error: MemoryError: CUDA out "
                                                  "of memory. Tried to allocate 2.00 GiB")
        self.assertEqual(rows[0]["mean SM clock MHz"], "n/a")
        self.assertEqual(rows[2]["value"], "1")

    def test_a_value_taken_from_nvml(self):
        def measure(env, case, seconds, deadline):
            row = Row("gemm", case.name + " steady memory clock", "", "bf16", None, "MHz")
            return [Result(row, 10.0, 20.0, nvml_value="mem_clock_mhz")]

        runner.MEASURE["gemm"] = measure
        rows = self.run_plan([Part("gemm", 2_000, (Item("gemm", gemm(0), 2_000),), 0, "")], 50.0)
        self.assertEqual(rows[0]["value"], "3200")


if __name__ == "__main__":
    unittest.main()
