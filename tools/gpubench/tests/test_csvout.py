import csv
import io
import os
import tempfile
import threading
import unittest

import _support  # noqa: F401
import csvout
from csvout import CsvWriter, OutputRefused, Row


class Writing(unittest.TestCase):
    def write(self, rows, metadata=(("gpu", "NVIDIA H200"),)):
        stream = io.StringIO()
        writer = CsvWriter(stream)
        writer.metadata(metadata)
        writer.header()
        for row in rows:
            writer.row(row)
        return stream.getvalue(), writer

    def test_metadata_then_fixed_header(self):
        text, _ = self.write([], [("gpu", "NVIDIA H200"), ("torch", "2.11.0")])
        self.assertEqual(text.splitlines(), [
            "# gpu: NVIDIA H200",
            "# torch: 2.11.0",
            "kind,name,shape/params,dtype,value,unit,seconds measured,iterations,"
            "mean SM clock MHz,mean power W,mean temperature C"])

    def test_metadata_stays_on_one_line(self):
        text, _ = self.write([], [("driver\nx", "580.1\r\n# fake: line")])
        self.assertEqual(text.splitlines()[0], "# driver x: 580.1 # fake: line")

    def test_numbers_and_missing_readings(self):
        row = Row("gemm", "llama3-8b qkv tp1", "M=8192 K=4096 N=6144", "bf16", 712.34567891,
                  "TFLOP/s", 2.0004, 431, 1980.0, None, float("nan"))
        text, writer = self.write([row])
        self.assertEqual(text.splitlines()[-1], "gemm,llama3-8b qkv tp1,M=8192 K=4096 N=6144,"
                                                "bf16,712.346,TFLOP/s,2.0004,431,1980,n/a,n/a")
        self.assertEqual(writer.rows, 1)

    def test_quoting_of_commas_quotes_and_newlines(self):
        row = Row("attention", 'cudnn "fwd"', "b=4, h=16 | unavailable: no\nkernel", "bf16",
                  csvout.UNAVAILABLE, "TFLOP/s")
        text, _ = self.write([row])
        parsed = list(csv.reader(io.StringIO(text.split("\n", 2)[2])))
        self.assertEqual(parsed, [["attention", 'cudnn "fwd"',
                                   "b=4, h=16 | unavailable: no\nkernel", "bf16", "unavailable",
                                   "TFLOP/s", "n/a", "n/a", "n/a", "n/a", "n/a"]])
        self.assertIn('"cudnn ""fwd"""', text)

    def test_every_row_has_every_column(self):
        for row in (Row("a", "b", "c", "d", 1.0, "u"), Row("a", "b", "c", "d", "error", "u", 1, 2)):
            self.assertEqual(len(row.cells()), len(csvout.HEADER))

    def test_order_is_enforced(self):
        writer = CsvWriter(io.StringIO())
        with self.assertRaises(ValueError):
            writer.row(Row("a", "b", "c", "d", 1.0, "u"))
        writer.header()
        with self.assertRaises(ValueError):
            writer.metadata([("late", "x")])

    def test_rows_from_two_threads_do_not_interleave(self):
        stream = io.StringIO()
        writer = CsvWriter(stream)
        writer.header()

        def many(tag):
            for i in range(500):
                writer.row(Row(tag, str(i), "p" * 50, "bf16", float(i), "u"))

        threads = [threading.Thread(target=many, args=(t,)) for t in ("x", "y")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rows = list(csv.reader(io.StringIO(stream.getvalue())))[1:]
        self.assertEqual(len(rows), 1000)
        self.assertTrue(all(len(r) == 11 for r in rows))

    def test_the_watchdogs_row_never_waits_on_a_stuck_writer(self):
        stream = io.StringIO()
        writer = CsvWriter(stream)
        writer.header()
        row = Row("run", "watchdog", "hard stop", "", csvout.ERROR, "")
        writer._lock.acquire()  # the main thread stuck inside a write
        try:
            self.assertFalse(writer.try_row(row, 0.05))
        finally:
            writer._lock.release()
        self.assertTrue(writer.try_row(row, 0.05))
        self.assertEqual(stream.getvalue().splitlines()[-1],
                         "run,watchdog,hard stop,,error,,n/a,n/a,n/a,n/a,n/a")
        writer.close()
        self.assertFalse(writer.try_row(row, 0.05))


class Target(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "out.csv")

    def tearDown(self):
        self.tmp.cleanup()

    def test_creates_a_new_file(self):
        with csvout.open_target(self.path, force=False) as f:
            f.write("x")
        with open(self.path) as f:
            self.assertEqual(f.read(), "x")

    def test_refuses_an_existing_file_unless_forced(self):
        with open(self.path, "w") as f:
            f.write("old")
        with self.assertRaisesRegex(OutputRefused, "already exists.*--force"):
            csvout.open_target(self.path, force=False)
        with csvout.open_target(self.path, force=True) as f:
            f.write("new")
        with open(self.path) as f:
            self.assertEqual(f.read(), "new")

    def test_refuses_a_link_to_a_file_and_leaves_the_file_alone(self):
        target = os.path.join(self.tmp.name, "precious.txt")
        with open(target, "w") as f:
            f.write("keep")
        os.symlink(target, self.path)
        for force in (False, True):
            with self.assertRaisesRegex(OutputRefused, "symbolic link"):
                csvout.open_target(self.path, force=force)
        with open(target) as f:
            self.assertEqual(f.read(), "keep")

    def test_refuses_a_dangling_link_and_creates_nothing(self):
        nowhere = os.path.join(self.tmp.name, "nowhere.csv")
        os.symlink(nowhere, self.path)
        with self.assertRaisesRegex(OutputRefused, "symbolic link"):
            csvout.open_target(self.path, force=True)
        self.assertFalse(os.path.exists(nowhere))

    def test_refuses_a_link_put_there_after_the_check(self):
        # check_target passes, then a link appears: O_NOFOLLOW and O_EXCL still refuse it.
        csvout.check_target(self.path, force=True)
        target = os.path.join(self.tmp.name, "precious.txt")
        open(target, "w").close()
        os.symlink(target, self.path)
        original = csvout.check_target
        csvout.check_target = lambda path, force: None
        try:
            for force in (False, True):
                with self.assertRaises(OutputRefused):
                    csvout.open_target(self.path, force=force)
        finally:
            csvout.check_target = original
        self.assertEqual(os.path.getsize(target), 0)

    def test_refuses_a_folder_and_a_fifo(self):
        with self.assertRaisesRegex(OutputRefused, "not a regular file"):
            csvout.open_target(self.tmp.name, force=True)
        fifo = os.path.join(self.tmp.name, "pipe")
        os.mkfifo(fifo)
        with self.assertRaisesRegex(OutputRefused, "not a regular file"):
            csvout.open_target(fifo, force=True)

    def test_refuses_a_missing_folder(self):
        with self.assertRaisesRegex(OutputRefused, "does not exist"):
            csvout.open_target(os.path.join(self.tmp.name, "a", "b.csv"), force=False)


if __name__ == "__main__":
    unittest.main()
