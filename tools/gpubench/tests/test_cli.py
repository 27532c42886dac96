"""Argument errors: one line on stderr and exit 2, before torch is ever imported."""

import os
import tempfile
import unittest

import _support
import cli


class ArgumentErrors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out.csv")

    def tearDown(self):
        self.tmp.cleanup()

    def assert_usage(self, argv, fragment):
        code, out, err = _support.run_main(argv)
        self.assertEqual(code, 2, err)
        self.assertEqual(out, "")
        self.assertEqual(err.count("\n"), 1, err)
        self.assertTrue(err.startswith("gpubench: "), err)
        self.assertIn(fragment, err)
        return err

    def test_out_is_required(self):
        self.assert_usage([], "--out FILE is required")

    def test_empty_out(self):
        self.assert_usage(["--out", " "], "--out is empty")

    def test_unknown_flag(self):
        self.assert_usage(["--out", self.out, "--turbo"], "unrecognized arguments: --turbo")

    def test_abbreviations_are_not_guessed(self):
        self.assert_usage(["--out", self.out, "--budget", "100"], "unrecognized arguments")

    def test_budget_not_a_number(self):
        self.assert_usage(["--out", self.out, "--budget-seconds", "ten"],
                          "must be a number of seconds, got 'ten'")

    def test_budget_out_of_range(self):
        for bad in ("59.9", "441", "0", "-1", "nan", "inf"):
            self.assert_usage(["--out", self.out, "--budget-seconds", bad], "from 60 to 440")

    def test_budget_without_value(self):
        self.assert_usage(["--out", self.out, "--budget-seconds"], "expected one argument")

    def test_unknown_kind(self):
        err = self.assert_usage(["--out", self.out, "--only", "gemm,fft"], "unknown kind 'fft'")
        self.assertIn("gemm,attention,norm,elementwise,launch,block", err)

    def test_empty_kind(self):
        self.assert_usage(["--out", self.out, "--only", ","], "--only needs at least one kind")
        self.assert_usage(["--out", self.out, "--only", "gemm,"], "unknown kind ''")

    def test_existing_out_without_force(self):
        open(self.out, "w").close()
        self.assert_usage(["--out", self.out], "already exists")

    def test_out_through_a_symbolic_link_even_with_force(self):
        target = os.path.join(self.tmp.name, "target.csv")
        open(target, "w").close()
        link = os.path.join(self.tmp.name, "link.csv")
        os.symlink(target, link)
        self.assert_usage(["--out", link, "--force"], "symbolic link")
        dangling = os.path.join(self.tmp.name, "dangling.csv")
        os.symlink(os.path.join(self.tmp.name, "nowhere.csv"), dangling)
        self.assert_usage(["--out", dangling], "symbolic link")
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "nowhere.csv")))

    def test_out_is_a_folder(self):
        self.assert_usage(["--out", self.tmp.name, "--force"], "not a regular file")

    def test_out_in_a_missing_folder(self):
        self.assert_usage(["--out", os.path.join(self.tmp.name, "no", "out.csv")],
                          "does not exist")

    def test_real_process_exit_code_and_one_line(self):
        code, out, err = _support.run_process(["--budget-seconds", "9000", "--out", self.out])
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err.splitlines(), ["gpubench: --budget-seconds must be from 60 to 440 "
                                            "(the run must end inside 8 minutes), got 9000"])
        self.assertFalse(os.path.exists(self.out))


class Parsing(unittest.TestCase):
    def test_defaults(self):
        opts = cli.parse(["--out", "x.csv"])
        self.assertEqual((opts.out, opts.force, opts.budget_s, opts.kinds, opts.list_only),
                         ("x.csv", False, 420.0, cli.plan.KINDS, False))

    def test_only_keeps_run_order_and_drops_repeats(self):
        opts = cli.parse(["--list", "--only", "block, gemm,block"])
        self.assertEqual(opts.kinds, ("gemm", "block"))

    def test_list_needs_no_out(self):
        self.assertTrue(cli.parse(["--list"]).list_only)


if __name__ == "__main__":
    unittest.main()
