"""The last line of defence of the time budget. No torch.

A daemon thread waits until the hard stop; if the run has not finished by then (a kernel that
hangs, a part that ignores its deadline), it calls `last_words` (set once there is a file to write
a last row to; its failure is ignored) and then `on_fire`, which ends the process. A CUDA call
that never returns cannot be interrupted from Python, so ending the process is the only way to
keep the promise that the run ends in time.
"""

import threading
import time


class Watchdog:
    def __init__(self, deadline, on_fire, clock=time.monotonic):
        self._deadline = deadline
        self._on_fire = on_fire
        self._clock = clock
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._wait, name="gpubench-watchdog", daemon=True)
        self.fired = False
        self.last_words = None

    def start(self):
        self._thread.start()
        return self

    def _wait(self):
        while not self._done.is_set():
            left = self._deadline - self._clock()
            if left <= 0:
                self.fired = True
                if self.last_words is not None:
                    try:
                        self.last_words()
                    except Exception:  # noqa: BLE001 - ending the process matters more
                        pass
                self._on_fire()
                return
            self._done.wait(min(left, 1.0))

    def cancel(self):
        """The run finished: the watchdog will not fire."""
        self._done.set()
        self._thread.join(timeout=2.0)
