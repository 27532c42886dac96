"""Every measuring module run for real on the CPU with tiny shapes, where torch is installed.

This machine and CI have no torch, so these are skipped there; where torch is present (the GPU
machine, or a developer's), they check that each measurement runs end to end and yields a rate,
and that what the CPU lacks (forced fused SDPA backends, CUDA graphs) becomes 'unavailable'.
"""

import importlib.util
import time
import unittest

import _support  # noqa: F401
import cases
import runner
from plan import Item

HAVE_TORCH = importlib.util.find_spec("torch") is not None


@unittest.skipUnless(HAVE_TORCH, "torch is not installed here; the GPU machine runs these")
class OnTheCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch

        from bench_common import Env
        from timing import WallTimer
        cls.env = Env(torch, "cpu", WallTimer(), 1 << 16)

    def run_case(self, kind, case, seconds=0.2):
        return [r.row for r in runner.run_item(self.env, Item(kind, case, int(seconds * 1000)),
                                               seconds, time.monotonic() + seconds)]

    def assert_rate(self, row, unit):
        self.assertEqual(row.unit, unit)
        self.assertIsInstance(row.value, float, row)
        self.assertGreater(row.value, 0)
        self.assertGreater(row.iterations, 0)

    def test_gemm_sweep_and_sustained(self):
        (row,) = self.run_case("gemm", cases.GemmCase("t", "mlp_in", 1, 64, 32, 48, "bf16"))
        self.assert_rate(row, "TFLOP/s")
        rows = self.run_case("gemm", cases.GemmCase("t", "mlp_in", 1, 64, 32, 48, "bf16", True),
                             seconds=1.5)
        self.assertEqual([r.name for r in rows], ["sustained t mlp_in tp1 start",
                                                  "sustained t mlp_in tp1 steady",
                                                  "sustained t mlp_in tp1 steady memory clock"])
        self.assert_rate(rows[0], "TFLOP/s")
        self.assert_rate(rows[1], "TFLOP/s")

    def test_fp8_runs_or_is_unavailable(self):
        (row,) = self.run_case("gemm", cases.GemmCase("t", "mlp_in", 1, 64, 32, 48, "fp8"))
        if row.value == "unavailable":
            self.assertIn("unavailable: ", row.params)
        else:
            self.assert_rate(row, "TFLOP/s")

    def test_attention_forward_and_backward(self):
        for direction in ("fwd", "bwd"):
            (row,) = self.run_case("attention", cases.AttentionCase("FLASH_ATTENTION", 2, 4, 64,
                                                                    16, direction))
            if row.value != "unavailable":
                self.assert_rate(row, "TFLOP/s")

    def test_a_backend_the_device_lacks_is_unavailable(self):
        (row,) = self.run_case("attention", cases.AttentionCase("CUDNN_ATTENTION", 2, 4, 64, 16,
                                                                "fwd"))
        self.assertEqual(row.value, "unavailable")
        self.assertIn("CUDNN_ATTENTION refused", row.params)

    def test_norms_and_elementwise(self):
        for op in ("rms_norm", "layer_norm"):
            (row,) = self.run_case("norm", cases.NormCase(op, "t", 64, 32))
            self.assert_rate(row, "GB/s")
        for op in ("add", "silu_mul", "copy"):
            (row,) = self.run_case("elementwise", cases.ElementwiseCase(op, "t", 64, 32))
            self.assert_rate(row, "GB/s")

    def test_launch(self):
        for mode in ("eager", "eager_host"):
            (row,) = self.run_case("launch", cases.LaunchCase(mode, 10))
            self.assert_rate(row, "us/kernel")
        (row,) = self.run_case("launch", cases.LaunchCase("graph", 10))
        self.assertEqual(row.value, "unavailable")

    def test_block(self):
        tiny = cases.Model("tiny", 64, 4, 2, 16, 128, True, "test")
        for direction in ("fwd", "fwd+bwd"):
            ms, rate = self.run_case("block", cases.BlockCase(tiny, 32, 2, direction))
            self.assert_rate(ms, "ms")
            self.assert_rate(rate, "TFLOP/s")

    def test_block_matches_a_float64_reference(self):
        # The block computes what it should: bf16 against the same block in float64.
        import torch

        import bench_block
        tiny = cases.Model("tiny", 64, 4, 2, 16, 128, True, "test")
        torch.manual_seed(0)
        weights, rope = bench_block.build(torch, tiny, 32, "cpu")
        x = torch.randn(2, 32, 64, dtype=torch.bfloat16)
        out = bench_block.forward(torch, tiny, x, weights, rope)
        w64 = {k: v.detach().double() for k, v in weights.items()}
        rope64 = tuple(t.double() for t in rope)
        ref = bench_block.forward(torch, tiny, x.double(), w64, rope64)
        error = (out.double() - ref).norm() / ref.norm()
        self.assertLess(error.item(), 2e-2)


if __name__ == "__main__":
    unittest.main()
