import threading
import time
import unittest

import _support  # noqa: F401
from watchdog import Watchdog


class WatchdogTest(unittest.TestCase):
    def test_fires_at_the_deadline(self):
        fired = threading.Event()
        start = time.monotonic()
        dog = Watchdog(start + 0.2, fired.set).start()
        self.assertTrue(fired.wait(5))
        self.assertGreaterEqual(time.monotonic() - start, 0.2)
        self.assertTrue(dog.fired)

    def test_cancelled_in_time_never_fires(self):
        fired = threading.Event()
        dog = Watchdog(time.monotonic() + 0.3, fired.set).start()
        dog.cancel()
        self.assertFalse(fired.wait(0.6))
        self.assertFalse(dog.fired)

    def test_last_words_come_first_and_their_failure_is_ignored(self):
        said = []
        fired = threading.Event()

        def fire():
            said.append("fire")
            fired.set()

        def broken():
            said.append("last words")
            raise OSError("disk full")

        dog = Watchdog(time.monotonic() + 0.1, fire)
        dog.last_words = broken
        dog.start()
        self.assertTrue(fired.wait(5))
        self.assertEqual(said, ["last words", "fire"])


if __name__ == "__main__":
    unittest.main()
