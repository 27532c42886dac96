"""The one CSV a run writes: `#` metadata lines, a fixed header, then one row per measurement.
No torch.

Rows are written and flushed one by one, so a run cut short keeps what it measured. The file is
created only where nothing stands, or, with force, over a regular file; never through a symbolic
link (the last path component is opened with O_NOFOLLOW).
"""

import csv
import math
import os
import stat
import threading
from dataclasses import dataclass
from typing import Optional, Union

HEADER = ("kind", "name", "shape/params", "dtype", "value", "unit", "seconds measured",
          "iterations", "mean SM clock MHz", "mean power W", "mean temperature C")

NA = "n/a"
# Values that are not numbers; the reason goes at the end of shape/params.
UNAVAILABLE = "unavailable"
ERROR = "error"
SKIPPED = "skipped"


class OutputRefused(Exception):
    """The output path cannot be written as asked; the message says why and what to do."""


@dataclass
class Row:
    kind: str
    name: str
    params: str
    dtype: str
    value: Union[float, str]
    unit: str
    seconds: Optional[float] = None
    iterations: Optional[int] = None
    sm_clock_mhz: Optional[float] = None
    power_w: Optional[float] = None
    temp_c: Optional[float] = None

    def cells(self):
        return [self.kind, self.name, self.params, self.dtype, _number(self.value), self.unit,
                _number(self.seconds), _number(self.iterations), _number(self.sm_clock_mhz),
                _number(self.power_w), _number(self.temp_c)]


def _number(value):
    if value is None:
        return NA
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError("a cell is a number or a string, got %r" % (value,))
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return NA
    return "%.6g" % value


def check_target(path, force):
    """Raises OutputRefused when `path` cannot be written: a symbolic link, something that is not
    a regular file, an existing file without force, or a folder that does not exist."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise OutputRefused("%s is a symbolic link; gpubench never writes through one: give "
                                "the path of a new file" % path)
        if not stat.S_ISREG(info.st_mode):
            raise OutputRefused("%s exists and is not a regular file: give the path of a new file"
                                % path)
        if not force:
            raise OutputRefused("%s already exists: give a new path, or add --force to replace it"
                                % path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputRefused("the folder of %s does not exist: create %s first" % (path, folder))


def open_target(path, force):
    """Opens `path` for writing, refusing what check_target refuses, race-free: O_NOFOLLOW for
    the link, O_EXCL unless force."""
    check_target(path, force)
    # O_NONBLOCK: a FIFO put there after the check fails to open instead of blocking.
    flags = (os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NONBLOCK", 0))
    flags |= os.O_TRUNC if force else os.O_EXCL
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise OutputRefused("%s already exists: give a new path, or add --force to replace it"
                            % path) from None
    except OSError as e:
        raise OutputRefused("cannot create %s: %s" % (path, e.strerror or e)) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputRefused("%s is not a regular file: give the path of a new file" % path)
    return os.fdopen(fd, "w", newline="", encoding="utf-8")


def comment_line(key, value):
    """One metadata line, `# key: value`, on one line whatever the value holds."""
    return "# %s: %s\n" % (_one_line(key), _one_line(value))


def _one_line(text):
    return " ".join(str(text).split())


class CsvWriter:
    """Writes metadata, the header and rows to an open text file, flushing each row. Safe to call
    from two threads (the watchdog writes its last row from its own)."""

    def __init__(self, stream):
        self._stream = stream
        self._csv = csv.writer(stream, lineterminator="\n")
        self._lock = threading.Lock()
        self._header_written = False
        self.rows = 0

    def metadata(self, pairs):
        with self._lock:
            if self._header_written:
                raise ValueError("metadata comes before the header")
            for key, value in pairs:
                self._stream.write(comment_line(key, value))
            self._stream.flush()

    def header(self):
        with self._lock:
            self._csv.writerow(HEADER)
            self._header_written = True
            self._stream.flush()

    def row(self, row):
        with self._lock:
            if not self._header_written:
                raise ValueError("the header comes before the rows")
            self._csv.writerow(row.cells())
            self._stream.flush()
            self.rows += 1

    def try_row(self, row, timeout_s):
        """Writes a row unless the lock stays taken for timeout_s (the watchdog's last row must
        never wait on a stuck writer). Returns whether it wrote."""
        if not self._lock.acquire(timeout=timeout_s):
            return False
        try:
            if self._header_written and not self._stream.closed:
                self._csv.writerow(row.cells())
                self._stream.flush()
                self.rows += 1
                return True
            return False
        finally:
            self._lock.release()

    def close(self):
        with self._lock:
            self._stream.close()
