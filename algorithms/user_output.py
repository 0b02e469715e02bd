"""What code under audit prints while the tool runs it: discarded.

An audit calls the user's code thousands of times a second; a print a run
(or a round) would bury the audit's own output under the code's and slow
every run by the terminal's speed.  ``silenced()`` routes ``sys.stdout`` to
a stream that keeps nothing for as long as any caller holds it (counted,
so nested and concurrent holders in threads are safe); the first holder
saves the stream in place and the last restores it.  The tool's own output
goes to stdout only outside these calls, and its progress to stderr.

May import: the standard library.
"""
from __future__ import annotations

import io
import sys
import threading
from contextlib import contextmanager

_LOCK = threading.Lock()
_HELD = {"count": 0, "saved": None}


class _Discard(io.TextIOBase):
    """A text stream that keeps nothing."""

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        return len(text)


_DISCARD = _Discard()


def hold() -> None:
    """Start discarding (counted: the first holder swaps the stream)."""
    with _LOCK:
        if _HELD["count"] == 0:
            _HELD["saved"], sys.stdout = sys.stdout, _DISCARD
        _HELD["count"] += 1


def release() -> None:
    """Undo one ``hold`` (the last restores the stream saved)."""
    with _LOCK:
        _HELD["count"] -= 1
        if _HELD["count"] == 0:
            sys.stdout, _HELD["saved"] = _HELD["saved"], None


@contextmanager
def silenced():
    """What is printed to stdout inside is discarded."""
    hold()
    try:
        yield
    finally:
        release()
