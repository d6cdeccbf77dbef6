"""A time limit for one block of a test: a refusal must come at once, never after a hang.

``with within(10.0): call()`` raises ``TimeoutError`` (failing the test) when the
block uses more than ``seconds`` of CPU time (user and system, all threads of
the process), or more than ``WALL_FACTOR`` times as much wall time, instead of
letting a hang stall the suite.  CPU time is what a runaway computation spends,
and it does not grow when other jobs load the machine (a wall-clock bound alone
failed under a parallel ``make test``); the wall bound still catches a block
that waits forever.  It uses ``SIGPROF`` and ``SIGALRM``, so it works in the
main thread of a POSIX process (pytest's).
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

#: The wall-time bound of :func:`within`, as a multiple of its CPU-time bound.
WALL_FACTOR = 10


@contextmanager
def within(seconds: float):
    """Fail (rather than hang) when the block takes more than ``seconds`` of CPU time, or
    ``WALL_FACTOR * seconds`` of wall time."""

    def alarm(kind: str, limit: float):
        def handler(signum, frame):
            raise TimeoutError(f"took more than {limit:g} s of {kind} time")

        return handler

    previous = (
        signal.signal(signal.SIGPROF, alarm("CPU", seconds)),
        signal.signal(signal.SIGALRM, alarm("wall", WALL_FACTOR * seconds)),
    )
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, WALL_FACTOR * seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])
