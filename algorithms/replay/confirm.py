"""Re-execution: every law the replay states is confirmed by running the
unmodified code on plain values before anything uses it.

The replay (``tracer``, ``law``) reads a law from a model of what Python
and numpy do with a ``Traced`` draw; an operation that model gets wrong
would be misread silently.  So, after the law is built, the code runs
again on a ``PlainGenerator``: a generator that returns the chosen values
themselves, as plain numbers of the types the real library returns (a
Python ``float`` from ``random()``, a ``np.uint8`` from
``integers(..., dtype=np.uint8)``, a plain ``int`` from ``random.randint``),
so the code's own arithmetic — wrap-around, bit operations, comparisons
with a ``Fraction``, conversions in other types' methods — runs as it does
in production.  For every joint cell of every independent part, every
point of the cell where it has at most ``PER_CELL`` (a drawn integer cut at
every value is a cell of one point), else the cell's two corners (every
draw at its interval's lowest value; every draw at its highest) and
``POINTS`` points drawn uniformly inside it, must give exactly the output
the law says the cell gives; draws no part reads get
values drawn uniformly over their whole grid.  Any disagreement refuses the
replay (``ReplayRefused``), naming the draws and both outputs.

What this guarantees: a cell of at most ``PER_CELL`` points is checked
whole; in a larger one, a misread that covers a share s of it (the set of
its points where the code's output differs from the law's) survives with
probability at most (1 − s·(1 − 2⁻¹¹))^POINTS — below 10⁻⁶ for s = 1 %.  What it cannot: a
misread confined to a set smaller than that, which random points miss
(e.g. one grid value of 2^53 handled wrongly and no corner on it).

May import: numpy and ``algorithms.replay.tracer``.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from algorithms.replay.tracer import RANDOM_GRID, ReplayGenerator, ReplayRefused

# A point is a 64-bit word modulo the interval's length L ≤ 2^53: each
# value has probability within a factor 1 + 2^-11 of 1/L, so a set of
# share s is hit with probability ≥ s·(1 − 2^-11), and a 1 % misread
# escapes 1 400 points with probability ≤ (1 − 0.01·(1 − 2^-11))^1400
# < 7.9·10⁻⁷.
POINTS = 1400
CORNERS = 2             # every draw at its cell's lowest value, and at its highest
PER_CELL = CORNERS + POINTS
MISSED_SHARE = 0.01
ESCAPE = (1 - MISSED_SHARE * (1 - 2.0 ** -11)) ** POINTS
CONFIRM_SEED = 0x2E_E8EC
MAX_RUN_ROUNDS = 2_000_000      # re-executed run-rounds of code called one run at a time (~1 min)
MAX_DRAWS = 10 ** 7             # draw elements of one vectorised re-execution


def words(what: str) -> str:
    """What a confirmed replay rests on, in words."""
    return (f"a replay of the code on chosen uniform draws, confirmed by re-executing the "
            f"unmodified code at {PER_CELL:,} points per cell (every point of a cell that has "
            f"no more; else {CORNERS} corners and {POINTS:,} at random: a misread covering "
            f"{MISSED_SHARE:.0%} of a cell escapes with probability below "
            f"{_power(ESCAPE)}){what}")


def _power(x: float) -> str:
    return f"10^{math.ceil(math.log10(x))}"


class PlainGenerator(ReplayGenerator):
    """The replay generator's bookkeeping (draws numbered per kind, chosen
    by ``choose``) returning plain values typed as numpy and Python return
    them: no ``Traced``, nothing watched."""

    def _make(self, kind, low, high, size, dtype=None):
        one = getattr(self.choose, "one", None)
        if size is None and self.single_run and one is not None:
            # one value of one run's draw: the hot path of code called run by run
            if self._next + 1 - self._first > self.limit:
                return super()._make(kind, low, high, size, dtype)      # refuses
            self._next += 1
            sig = (kind, low, high)
            n = self._taken.get(sig, 0)
            self._taken[sig] = n + 1
            if kind == "random":
                return one(sig, n, RANDOM_GRID) / RANDOM_GRID
            return _scalar(dtype)(one(sig, n, high - low) + low)
        draw, index, shape = self._allocate(kind, low, high, size, dtype)
        v = draw.value(index).reshape(shape)
        if shape:
            return v
        return float(v) if kind == "random" else v[()]

    def python_int(self, x):
        return int(x) if np.ndim(x) == 0 else x

    def _pick(self, pop, idx):
        return pop[idx]


_SCALARS: dict = {}


def _scalar(dtype):
    """The scalar type numpy returns for one draw of ``dtype``."""
    got = _SCALARS.get(dtype)
    if got is None:
        got = _SCALARS[dtype] = np.dtype(dtype or np.int64).type
    return got


def filler(seed: int):
    """Grid indices drawn uniformly for draws the law does not fix
    (``fill(size, count)``), from a seed sequence (no bit generator is
    built: the replay watches every live one)."""
    k = itertools.count()

    def fill(size: int, count: int) -> np.ndarray:
        w = np.random.SeedSequence([CONFIRM_SEED, seed, next(k)]).generate_state(
            count, np.uint64)
        return (w % np.asarray(size, dtype=np.uint64)).astype(np.int64)
    return fill


def _name(elem) -> str:
    kind, low, high, n = elem
    what = "random()" if kind == "random" else f"integers [{low}, {high})"
    return f"{what} draw {n + 1}"


def _shown(elem, index: int):
    kind, low = elem[0], elem[1]
    return repr(index / RANDOM_GRID) if kind == "random" else str(index + low)


def reexecute(run, plan, labels, per_run: bool, rounds: int, draws_per_run: float,
              plain, seed: int = 0) -> int:
    """Run the code (``run(runs, assign, fill) -> values (runs, m)``, with
    ``assign``: logical draw element → grid indices per run) on every
    joint cell of every part of ``plan`` (per part: (output elements,
    logical draw elements, the cells — per element its (lo, hi) — and each
    cell's output)) — at each of its points where it has at most
    ``PER_CELL`` (a drawn integer cut at every value: one point), else at
    its two corners and ``POINTS`` random points — and raise
    ``ReplayRefused`` at the first output that differs from its cell's;
    ``plain`` turns an output value into the comparable Python value.
    Returns the runs re-executed."""
    fill = filler(seed)
    tables = []
    for group, elems, cells, outs in plan:
        lo = np.array([[c[0] for c in cell] for cell in cells], dtype=np.int64).reshape(
            len(cells), len(elems))
        hi = np.array([[c[1] for c in cell] for cell in cells], dtype=np.int64).reshape(
            len(cells), len(elems))
        # a cell of at most PER_CELL points is run at every one of them
        size = [math.prod(int(b - a) for a, b in cell) for cell in cells]
        every = np.array([n <= PER_CELL for n in size], dtype=bool)
        runs = np.array([n if n <= PER_CELL else PER_CELL for n in size], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(runs)])
        # per cell and element, the stride of its offset in the cell's points
        stride = np.ones_like(lo)
        for j in range(len(elems) - 2, -1, -1):
            stride[:, j] = stride[:, j + 1] * np.where(every, hi[:, j + 1] - lo[:, j + 1], 1)
        want = np.empty((len(outs), len(group)), dtype=object)     # each cell's output
        for i, y in enumerate(outs):
            want[i, :] = y
        tables.append((group, elems, lo, hi, outs, every, starts, stride, want))
    total = max((int(t[6][-1]) for t in tables), default=1)
    if per_run and total * max(1, rounds) > MAX_RUN_ROUNDS:
        raise ReplayRefused(f"confirming the replay would re-execute the code {total:,} times "
                            f"over {rounds} rounds (more than {MAX_RUN_ROUNDS:,} run-rounds)")
    chunk = 2048 if per_run else max(1, min(total, int(MAX_DRAWS // max(1.0, draws_per_run))))
    for start in range(0, total, chunk):
        q = np.arange(start, min(total, start + chunk), dtype=np.int64)
        assign, picks = {}, []
        for group, elems, lo, hi, outs, every, starts, stride, _ in tables:
            qi = q % starts[-1]                     # a part with fewer runs goes round again
            c = np.searchsorted(starts, qi, side="right") - 1
            k = qi - starts[c]
            for j, e in enumerate(elems):
                a, b = lo[c, j], hi[c, j]
                inside = a + fill(b - a, q.size)
                sampled = np.where(k == 0, a, np.where(k == 1, b - 1, inside))
                assign[e] = np.where(every[c], a + (k // stride[c, j]) % (b - a), sampled)
            picks.append(c)
        values = np.frompyfunc(plain, 1, 1)(run(q.size, assign, fill))
        for (group, elems, lo, hi, outs, *_, want), c in zip(tables, picks):
            same = np.asarray(values[:, list(group)] == want[c], dtype=bool).all(axis=1)
            if same.all():
                continue
            r = int(np.argmin(same))
            got = tuple(values[r, j] for j in group)
            draws = ", ".join(f"{_name(e)} = {_shown(e, int(assign[e][r]))}"
                              for e in elems) or "no draw"
            shown = lambda v: ", ".join(f"{labels[j]} = {x!r}"  # noqa: E731
                                        for j, x in zip(group, v))
            raise ReplayRefused(f"re-executing the code as written disagrees with its "
                                f"replay: with {draws} it output {shown(got)}, where the "
                                f"replay said {shown(outs[c[r]])}")
    return total
