"""--list: the plan as text, with neither torch nor a GPU."""

import os
import tempfile
import unittest

import _support


class ListMode(unittest.TestCase):
    def test_default_plan(self):
        code, out, err = _support.run_main(["--list"])
        self.assertEqual((code, err), (0, ""))
        lines = out.splitlines()
        # planned: gemm 2 * 60,000 + 45 * 2,037 = 211,665; attention 36 * 1,680 = 60,480;
        # norm 8 * 2,362 = 18,896; elementwise 12 * 1,575 = 18,900; launch 3 * 3,780 = 11,340;
        # block 6 * 7,560 = 45,360; scan 6 * 1,890 = 11,340; total 377,981 ms, printed 378.0 s.
        self.assertEqual(lines[0], "gpubench time plan: budget 420 s = 378.0 s planned for gemm, "
                                   "attention, norm, elementwise, launch, block, scan + 42.0 s "
                                   "reserved "
                                   "(start-up, warm-ups, writing); a watchdog stops the run at "
                                   "435 s")
        self.assertIn("gemm: 211.7 s planned of a 211.7 s share (2 sustained at 60.00 s, "
                      "45 sweep shapes at 2.04 s, 63 left out for time)", lines)
        self.assertIn("    60.00 s  bf16  sustained llama3-405b mlp_in tp8   "
                      "M=8192 K=16384 N=13312", lines)
        self.assertIn("     1.68 s  bf16  cudnn bwd d64 s2048                "
                      "b=8 h=32 s=2048 d=64 causal", lines)
        self.assertIn("total: 118 cases, 378.0 s planned of 420 s", lines)
        for kind in ("gemm", "attention", "norm", "elementwise", "launch", "block", "scan"):
            self.assertTrue(any(line.startswith(kind + ": ") for line in lines), kind)

    def test_only_and_budget(self):
        code, out, _ = _support.run_main(["--list", "--only", "block", "--budget-seconds", "100"])
        self.assertEqual(code, 0)
        # 100 s: reserve 10 s, so block has 90 s; 6 cases at min(20 s, 90 / 6 = 15 s).
        self.assertIn("block: 90.0 s planned of a 90.0 s share (6 cases at 15.00 s)",
                      out.splitlines())
        self.assertNotIn("gemm:", out)
        self.assertNotIn("attention:", out)

    def test_list_never_imports_torch_nor_writes(self):
        with tempfile.TemporaryDirectory() as tmp:
            blocked = _support.fake_torch(tmp, "raise ImportError('torch is blocked here')\n")
            out_path = os.path.join(tmp, "never.csv")
            code, out, err = _support.run_process(["--list", "--out", out_path],
                                                  pythonpath=blocked)
            self.assertEqual((code, err), (0, ""))
            self.assertIn("total: 118 cases", out)
            self.assertFalse(os.path.exists(out_path))


if __name__ == "__main__":
    unittest.main()
