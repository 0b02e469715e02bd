"""The progress reporter every phase of an audit reports through (declaration
pilots, black-box pairs, white-box loss-distribution sampling, report
writing): a tqdm bar when stderr is a terminal, else plain lines for a CI
log: the first once a phase has run ``first`` seconds (a second: a slow
phase shows it is alive at once), then at most one every ``interval``
seconds, plus a final line.  A phase whose work reports nothing for a
while (slow code inside one chunk) still shows: a timer thread writes the
line (or redraws the bar) when it is due (``heartbeat``)::

    audit: black-box canary 40% (80000/200000 runs), 3.1 s elapsed, ~4.6 s left
    audit: black-box canary done (200000/200000 runs) in 7.7 s

``Reporter(enabled=False)`` (``--quiet``) reports nothing.  A reporter only
counts and writes to stderr: it never touches a random stream, so results
are the same with or without it.  ``reporting(reporter)`` makes a reporter
the one in effect (``active()``) for code that is not handed one, e.g. the
audits of ``audit check``.

May import: tqdm and the standard library only.
"""
from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from typing import Callable, Optional

INTERVAL = 5.0      # seconds between two plain lines of one phase
FIRST_LINE = 1.0    # seconds before a phase's first plain line
BAR_DELAY = 1.0     # a bar appears only once a phase has run this long


class Phase:
    """One phase: ``update(n)`` adds finished work, ``to(done)`` sets the
    total done so far (the ``progress`` callback of ``run_chunks``).  Use as
    a context manager: a phase left normally ends with its final line; one
    left by an exception (an error, Ctrl-C) only clears its bar."""

    def __init__(self, reporter: "Reporter", name: str, total: int, unit: str,
                 quiet_below: float = 0.0):
        self.reporter, self.name, self.total, self.unit = reporter, name, max(0, int(total)), unit
        self.quiet_below = quiet_below
        self.done = 0
        self.start = reporter.clock()
        self.last_line = None
        self.closed = False
        self.bar = None
        self._lock = threading.Lock()
        self._timer = None
        if reporter.enabled and self.total and reporter.is_tty:
            from tqdm import tqdm
            self.bar = tqdm(total=self.total, desc=f"audit: {name}", unit=f" {unit}",
                            file=reporter.stream, leave=False, delay=reporter.bar_delay,
                            dynamic_ncols=True, unit_scale=True)
        if reporter.enabled and self.total and reporter.heartbeat:
            self._arm(max(reporter.first, reporter.bar_delay) if self.bar is not None
                      else reporter.first)

    def _arm(self, delay: float) -> None:
        t = threading.Timer(delay, self._beat)
        t.daemon = True
        self._timer = t
        t.start()

    def _beat(self) -> None:
        """The timer's turn: the line (or the bar) as it stands, even if no
        work was reported since; then again ``interval`` seconds on."""
        r = self.reporter
        with self._lock:
            if self.closed:
                return
            if self.bar is not None:
                self.bar.refresh()
            else:
                self._due(r.clock(), force=True)
        self._arm(r.interval)

    def _due(self, now: float, force: bool = False) -> None:
        r = self.reporter
        wait = (r.first, self.start) if self.last_line is None else (r.interval, self.last_line)
        if (now - wait[1] >= wait[0] or force and now - wait[1] >= wait[0] - 0.05) \
                and (self.done < self.total):
            self.last_line = now
            r.write(self.line(now))

    def update(self, n: int) -> None:
        self.to(self.done + n)

    def to(self, done: int) -> None:
        done = min(int(done), self.total) if self.total else int(done)
        step, self.done = done - self.done, done
        r = self.reporter
        if not r.enabled or self.closed:
            return
        with self._lock:
            if self.bar is not None:
                if step:
                    self.bar.update(step)
                return
            self._due(r.clock())

    def line(self, now: Optional[float] = None) -> str:
        """The plain progress line at time ``now``."""
        elapsed = (self.reporter.clock() if now is None else now) - self.start
        frac = self.done / self.total if self.total else 1.0
        text = (f"audit: {self.name} {int(100 * frac)}% ({self.done}/{self.total} {self.unit}), "
                f"{elapsed:.1f} s elapsed")
        if 0 < frac < 1:
            text += f", ~{elapsed * (1 - frac) / frac:.1f} s left"
        return text

    def close(self, completed: bool = True) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        if self._timer is not None:
            self._timer.cancel()
        r = self.reporter
        if self.bar is not None:
            self.bar.close()
        elif r.enabled and completed and self.total and \
                r.clock() - self.start >= self.quiet_below:  # an empty phase says nothing
            elapsed = r.clock() - self.start
            r.write(f"audit: {self.name} done ({self.done}/{self.total} {self.unit}) "
                    f"in {elapsed:.1f} s")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(completed=exc_type is None)


class Reporter:
    """Opens phases.  ``stream`` defaults to ``sys.stderr`` at the time of
    each write (so test capture works); ``tty`` overrides its ``isatty()``."""

    def __init__(self, enabled: bool = True, stream=None, tty: Optional[bool] = None,
                 interval: float = INTERVAL, bar_delay: float = BAR_DELAY,
                 clock: Callable[[], float] = time.monotonic, first: Optional[float] = None,
                 heartbeat: Optional[bool] = None):
        self.enabled, self._stream, self._tty = enabled, stream, tty
        self.interval, self.bar_delay, self.clock = interval, bar_delay, clock
        self.first = min(FIRST_LINE, interval) if first is None else first
        # The timer runs on the real clock: not with a clock of the caller's.
        self.heartbeat = (clock is time.monotonic) if heartbeat is None else heartbeat

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    @property
    def is_tty(self) -> bool:
        if self._tty is not None:
            return self._tty
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError):
            return False

    def write(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not stop an audit
            pass

    def phase(self, name: str, total: int, unit: str = "runs", quiet_below: float = 0.0) -> Phase:
        """A phase; ``quiet_below`` (seconds): no final line for a phase that
        took less (a step that is usually instant, reported only when it
        is not)."""
        return Phase(self, name, total, unit, quiet_below)


SILENT = Reporter(enabled=False)
_ACTIVE: contextvars.ContextVar[Reporter] = contextvars.ContextVar("audit_progress",
                                                                   default=SILENT)


def active() -> Reporter:
    """The reporter in effect: the one installed by ``reporting``, else silent."""
    return _ACTIVE.get()


@contextlib.contextmanager
def reporting(reporter: Reporter):
    """``with reporting(r):`` — ``active()`` returns ``r`` inside the block."""
    token = _ACTIVE.set(reporter)
    try:
        yield reporter
    finally:
        _ACTIVE.reset(token)
