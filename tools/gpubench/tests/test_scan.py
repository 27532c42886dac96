"""The scan kind: its counts pinned against meshplan's own (core's HybridModelsTest pins the same
bytes for OpCost), and its rows where the kernels cannot run. Needs no torch."""

import importlib.util
import time
import unittest

import _support  # noqa: F401 - puts the kit on the path
import bench_scan
import cases
import formulas
import runner
from bench_common import Env, Unavailable
from csvout import UNAVAILABLE
from plan import Item
from timing import WallTimer


class SsdCounts(unittest.TestCase):
    # Nemotron-H 8B's mixer on one sequence of 8192: H 128, P 64, G 8, N 128, Q 128, bf16.
    # Per token X = 16,384, BC = 2,048, S32 = 32,768, S16 = 16,384, CB32 = 4,096 bytes.
    # Forward 3 X + 4 BC + 2 S32 + 2 S16 + 2 CB32 + 26 H = 167,168 a token, x 8192 =
    # 1,369,440,256; backward 9 X + 15 BC + 6 S32 + 5 S16 + 5 CB32 + 66 H = 485,632 a token,
    # x 8192 = 3,978,297,344 (both as meshplan's HybridModelsTest pins OpCost's).
    def test_bytes(self):
        args = (1, 8192, 128, 64, 8, 128, 128)
        self.assertEqual(formulas.ssd_scan_bytes(*args, "fwd"), 1_369_440_256)
        self.assertEqual(formulas.ssd_scan_bytes(*args, "bwd"), 3_978_297_344)
        self.assertEqual(formulas.ssd_scan_bytes(*args, "fwd+bwd"), 5_347_737_600)

    def test_flops(self):
        # 2 s (Q N G + H Q P + 2 H N P) + 2 (s / Q) H P N = 19,327,352,832 + 34,359,738,368 +
        # 134,217,728 = 53,821,308,928; the backward twice that.
        args = (1, 8192, 128, 64, 8, 128, 128)
        self.assertEqual(formulas.ssd_scan_flops(*args, "fwd"), 53_821_308_928)
        self.assertEqual(formulas.ssd_scan_flops(*args, "fwd+bwd"), 3 * 53_821_308_928)

    def test_refuses_a_sequence_not_in_whole_chunks_and_bad_sizes(self):
        with self.assertRaises(ValueError):
            formulas.ssd_scan_bytes(1, 8000, 128, 64, 8, 128, 128, "fwd")
        with self.assertRaises(ValueError):
            formulas.ssd_scan_flops(1, 8192, 0, 64, 8, 128, 128, "fwd")
        with self.assertRaises(ValueError):
            formulas.ssd_scan_bytes(1, 8192, 128, 64, 8, 128, 128, "sideways")


class DeltaRuleCounts(unittest.TestCase):
    # Qwen3-Next's Gated DeltaNet on 4096 tokens: 32 value heads, d_k = d_v = 128, C 64, bf16.
    # Per token and head K = V = 256, C e = 128, h = 512: forward 6 K + 6 V + C e + 2 h + 22 =
    # 4,246, x 32 x 4096 = 556,531,712; backward 21 K + 15 V + 2 C e + 4 h + 54 = 11,574,
    # x 32 x 4096 = 1,517,027,328 (as HybridModelsTest pins OpCost's).
    def test_bytes(self):
        args = (1, 4096, 32, 128, 128, 64)
        self.assertEqual(formulas.delta_rule_bytes(*args, "fwd"), 556_531_712)
        self.assertEqual(formulas.delta_rule_bytes(*args, "bwd"), 1_517_027_328)

    def test_flops(self):
        # per chunk and head 2 C^2 (3 d_k + 2 d_v) + 6 C d_k d_v + floor(2 C^3 / 3) = 5,242,880
        # + 6,291,456 + 174,762 = 11,709,098; x 64 chunks x 32 heads = 23,980,232,704.
        self.assertEqual(formulas.delta_rule_flops(1, 4096, 32, 128, 128, 64, "fwd"),
                         23_980_232_704)


class ScanRows(unittest.TestCase):
    def test_cases_count_what_formulas_count(self):
        ssd = [c for c in cases.scan_cases() if c.op == "ssd" and c.model == "nemotron-h-8b"]
        self.assertEqual([c.direction for c in ssd], ["fwd", "fwd+bwd"])
        self.assertEqual(ssd[0].bytes(), 1_369_440_256)
        self.assertEqual(ssd[0].params, "b=1 s=8192 H=128 P=64 G=8 N=128 Q=128")
        self.assertEqual(len(cases.scan_cases()), 6)

    def test_without_a_gpu_each_case_is_one_unavailable_row(self):
        env = Env(None, "cpu", WallTimer(), 1 << 16)
        for case in cases.scan_cases():
            (result,) = runner.run_item(env, Item("scan", case, 1000), 1.0,
                                        time.monotonic() + 1.0)
            self.assertEqual(result.row.value, UNAVAILABLE)
            self.assertEqual(result.row.unit, "ms")
            self.assertIn("unavailable: the Triton kernels need a CUDA GPU", result.row.params)

    @unittest.skipIf(importlib.util.find_spec("mamba_ssm") is not None
                     or importlib.util.find_spec("fla") is not None,
                     "the kernels' packages are installed here")
    def test_a_missing_package_is_named(self):
        with self.assertRaisesRegex(Unavailable, "mamba_ssm is not importable"):
            bench_scan._kernel("ssd")
        with self.assertRaisesRegex(Unavailable, "flash-linear-attention"):
            bench_scan._kernel("delta")


if __name__ == "__main__":
    unittest.main()
