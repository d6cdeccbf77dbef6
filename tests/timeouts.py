"""A time limit for one block of a test: a refusal must come at once, never after a hang.

``with within(10.0): call()`` raises ``TimeoutError`` (failing the test) when the
block runs longer than ``seconds``, instead of letting a hang stall the suite.
It uses ``SIGALRM``, so it works in the main thread of a POSIX process (pytest's).
"""

from __future__ import annotations

import signal
from contextlib import contextmanager


@contextmanager
def within(seconds: float):
    """Fail (rather than hang) when the block takes longer than ``seconds``."""

    def alarm(signum, frame):
        raise TimeoutError(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
