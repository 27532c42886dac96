"""Exit 3, with one line, when torch cannot be imported or sees no GPU; no file is written."""

import os
import tempfile
import unittest

import _support

NO_GPU_TORCH = """
__version__ = "0.0-fake"
class version:
    cuda = None
class cuda:
    @staticmethod
    def is_available():
        return False
"""


class NoDevice(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out.csv")

    def tearDown(self):
        self.tmp.cleanup()

    def run_with(self, torch_body):
        fake = _support.fake_torch(os.path.join(self.tmp.name, "fake"), torch_body)
        return _support.run_process(["--out", self.out, "--budget-seconds", "60"],
                                    pythonpath=fake)

    def test_without_torch(self):
        code, out, err = self.run_with("raise ImportError('No module named torch (test)')\n")
        self.assertEqual((code, out), (3, ""))
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("gpubench: PyTorch cannot be imported (ImportError: No module named torch "
                      "(test))", err)
        self.assertFalse(os.path.exists(self.out))

    def test_broken_torch_install(self):
        code, _, err = self.run_with(
            "raise OSError('libcudart.so.13: cannot open shared object')\n")
        self.assertEqual(code, 3)
        self.assertIn("OSError: libcudart.so.13", err)

    def test_torch_without_a_gpu(self):
        code, out, err = self.run_with(NO_GPU_TORCH)
        self.assertEqual((code, out), (3, ""))
        self.assertEqual(err.splitlines(), ["gpubench: torch 0.0-fake sees no CUDA GPU (built for "
                                            "CUDA None); run this on a machine with an NVIDIA "
                                            "GPU, or use --list"])
        self.assertFalse(os.path.exists(self.out))

    def test_a_bad_output_path_is_reported_before_the_missing_torch(self):
        open(self.out, "w").close()
        code, _, err = self.run_with("raise ImportError('blocked')\n")
        self.assertEqual(code, 2)
        self.assertIn("already exists", err)


if __name__ == "__main__":
    unittest.main()
