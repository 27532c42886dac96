"""runner.run end to end with a stand-in torch and stand-in measurements: the file it writes, and
the watchdog that ends a run whose case never returns (exit 4, rows kept)."""

import os
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import unittest

import _support
import cli
import plan
import runner
from bench_common import Result
from csvout import HEADER, Row


def fake_torch():
    props = types.SimpleNamespace(name="Fake GPU", major=9, minor=0, multi_processor_count=132,
                                  total_memory=141 * 2**30, L2_cache_size=60 * 2**20,
                                  uuid="fake-uuid")
    cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None,
                                 get_device_properties=lambda i: props, empty_cache=lambda: None)
    cudnn = types.SimpleNamespace(is_available=lambda: True, version=lambda: 91000)
    return types.SimpleNamespace(__version__="2.99.0+fake", zeros=lambda *a, **k: None, cuda=cuda,
                                 version=types.SimpleNamespace(cuda="13.0"),
                                 backends=types.SimpleNamespace(cudnn=cudnn))


class Run(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.saved = dict(runner.MEASURE)

        def measure(env, case, seconds, deadline):
            t = env.clock()
            return [Result(Row("launch", case.name, case.params, case.dtype, 4.25, "us/kernel",
                               0.5, 1000), t, t + 0.001)]

        runner.MEASURE["launch"] = measure

    def tearDown(self):
        runner.MEASURE.clear()
        runner.MEASURE.update(self.saved)
        self.tmp.cleanup()

    def test_writes_metadata_header_and_rows(self):
        out = os.path.join(self.tmp.name, "bench.csv")
        opts = cli.parse(["--out", out, "--only", "launch", "--budget-seconds", "60"])
        the_plan = plan.make_plan(opts.budget_s, opts.kinds)
        logged, warned = [], []
        code = runner.run(opts, the_plan, time.monotonic(), fake_torch(), time.monotonic,
                          logged.append, warned.append)
        self.assertEqual(code, 0)
        with open(out) as f:
            lines = f.read().splitlines()
        comments = [line for line in lines if line.startswith("# ")]
        keys = [line[2:].split(":", 1)[0] for line in comments]
        for key in ("gpubench", "date_utc", "gpu", "driver", "cuda", "torch", "power_limit_w",
                    "max_sm_clock_mhz", "max_mem_clock_mhz", "budget_s"):
            self.assertIn(key, keys)
        self.assertIn("# gpu: Fake GPU", lines)
        self.assertIn("# torch: 2.99.0+fake", lines)
        self.assertIn("# cuda: 13.0", lines)
        self.assertEqual(lines[len(comments)], ",".join(HEADER))
        self.assertEqual(lines[:len(comments)], comments)  # comments lead, then the header
        rows = lines[len(comments) + 1:]
        self.assertEqual(len(rows), 3)
        self.assertTrue(rows[0].startswith("launch,eager launch interval,1000 x add_ on 1 element,"
                                           "fp32,4.25,us/kernel,0.5,1000,"))
        self.assertTrue(logged[-1].startswith("wrote 3 rows to " + out))

    def test_refuses_an_output_that_appeared_meanwhile(self):
        out = os.path.join(self.tmp.name, "bench.csv")
        opts = cli.parse(["--out", out, "--only", "launch", "--budget-seconds", "60"])
        open(out, "w").close()
        warned = []
        code = runner.run(opts, plan.make_plan(60, ("launch",)), time.monotonic(), fake_torch(),
                          time.monotonic, lambda line: None, warned.append)
        self.assertEqual(code, cli.EXIT_USAGE)
        self.assertIn("already exists", warned[0])


WATCHDOG_SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    sys.path.insert(0, sys.argv[2])
    from test_run import fake_torch
    sys.modules["torch"] = fake_torch()
    import gpubench, runner
    runner.execute = lambda *args, **kwargs: time.sleep(60)  # a case that never returns
    # Started long enough ago that the hard stop (60 + 15 = 75 s after the start) is half a
    # second away.
    code = gpubench.main(["--out", sys.argv[3], "--only", "launch", "--budget-seconds", "60"],
                         started=time.monotonic() - 75 + 0.5)
    print("not reached", code)
""")


class WatchdogEndsTheRun(unittest.TestCase):
    def test_exit_4_and_a_last_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.csv")
            began = time.monotonic()
            done = subprocess.run([sys.executable, "-c", WATCHDOG_SCRIPT, _support.KIT,
                                   os.path.dirname(os.path.abspath(__file__)), out],
                                  capture_output=True, text=True, timeout=30,
                                  env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
            self.assertLess(time.monotonic() - began, 20)
            self.assertEqual(done.returncode, cli.EXIT_WATCHDOG, done.stderr)
            self.assertNotIn("not reached", done.stdout)
            self.assertEqual(done.stderr.splitlines(),
                             ["gpubench: hard stop 75 s after the start: a case did not return; "
                              "%s keeps the rows measured so far" % out])
            with open(out) as f:
                lines = f.read().splitlines()
            self.assertTrue(lines[-1].startswith("run,watchdog,hard stop 75 s after start"),
                            lines[-1])
            self.assertEqual(lines[-2], ",".join(HEADER))


class MainEndToEnd(unittest.TestCase):
    """gpubench.main with the stand-in torch: exit 0, the file written, torch never imported for
    real."""

    def test_main_runs_a_plan(self):
        saved_torch = sys.modules.get("torch")
        saved_measure = dict(runner.MEASURE)

        def measure(env, case, seconds, deadline):
            t = env.clock()
            return [Result(Row("norm", case.name, case.params, case.dtype, 2900.5, "GB/s", 0.4,
                               80), t, t + 0.01)]

        sys.modules["torch"] = fake_torch()
        runner.MEASURE["norm"] = measure
        try:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "bench.csv")
                code, stdout, stderr = _support.run_main(
                    ["--out", out, "--only", "norm", "--budget-seconds", "60"])
                self.assertEqual(code, 0, stderr)
                with open(out) as f:
                    rows = [line for line in f.read().splitlines()
                            if line.startswith("norm,")]
        finally:
            runner.MEASURE.clear()
            runner.MEASURE.update(saved_measure)
            if saved_torch is None:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = saved_torch
        self.assertEqual(len(rows), 8)
        self.assertTrue(rows[0].startswith("norm,rms_norm llama3-8b,tokens=8192 hidden=4096,bf16,"
                                           "2900.5,GB/s,0.4,80,"), rows[0])
        self.assertIn("norm        bf16 rms_norm llama3-8b", stdout)
        self.assertIn("wrote 8 rows to " + out, stdout)


if __name__ == "__main__":
    unittest.main()
