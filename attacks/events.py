"""Families of candidate events on action sequences.

The engine only ever keeps counts: a family maps a chunk of action sequences
``(runs, rounds)`` (and, for learners that play points, the points x_t at the
rounds the family lists in ``point_rounds``: ``{round: (runs, d)}``) to how
many runs fall in each event, so memory does not grow with the number of runs.
Every family has ``labels``, ``point_rounds`` and ``count(actions, points)``;
most also have ``indicators(actions, points)``, the (runs, events) matrix
whose column sums ``count`` gives, so that the counts of many blocks of
runs come from one pass over a chunk (``count_blocks``: coupled runs count
every block of a chunk).

Single-round events miss leaks that show only jointly (two actions that are
each distributed alike on both sides but are coupled differently), so the
standard families also hold joint events {I_s = a and I_u = b} over a
bounded number of round pairs (``JointActionAt``, ``joint_pairs``).  Pure-ε
claims are refuted where probabilities are small, so the thresholds of point
events reach far into both tails of a pilot sample (``CoordinateAbove``,
``CoordinateBelow``, ``quantile_thresholds``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from algorithms.simulate import simulate


def is_release(key) -> bool:
    """Observations hold points under their round t and released values
    under ``("r", t)`` (``algorithms.simulate.released_key``)."""
    return isinstance(key, tuple)


def item_name(key, coord: int) -> str:
    """The label of one number of an observation: x_t[i] or r_t[i]."""
    if is_release(key):
        return f"r_{key[1] + 1}[{coord + 1}]"
    return f"x_{key + 1}[{coord + 1}]"


def column(obs: dict, key, coord: int, runs: int) -> np.ndarray:
    """One number per run, NaN where it was not observed."""
    x = obs.get(key) if obs is not None else None
    if x is None:
        return np.full(runs, np.nan)
    x = np.asarray(x, dtype=float).reshape(runs, -1)
    return x[:, coord] if coord < x.shape[1] else np.full(runs, np.nan)


class NumberEvents:
    """The shared part of families of events on single numbers (points
    under their round, releases under ``("r", t)``) of ``items``
    ((key, coord), …): which rounds they read, and their counts from
    their ``indicators`` (``attacks.floats.FloatGrain``,
    ``attacks.lattice.Lattice``)."""

    items: tuple

    @property
    def point_rounds(self) -> tuple:
        return tuple(sorted({k for k, _ in self.items if not is_release(k)}))

    @property
    def release_rounds(self) -> tuple:
        return tuple(sorted({k[1] for k, _ in self.items if is_release(k)}))

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        return self.indicators(actions, points).sum(axis=0, dtype=np.int64)


def cut_numbers(items: Sequence, sides: Sequence[dict], cut, most: int) -> tuple:
    """(kept items, their cuts): ``cut`` applied to each number of
    ``items`` from its pilot values on the two ``sides`` ({key: (runs,
    d)}), the first ``most`` items with a cut kept, in order."""
    if any(not obs for obs in sides):
        return (), ()
    runs = [len(next(iter(obs.values()))) for obs in sides]
    kept, cuts = [], []
    for key, coord in items:
        if len(kept) == most:
            break
        got = cut([column(obs, key, coord, n) for obs, n in zip(sides, runs)])
        if got:
            kept.append((key, coord))
            cuts.append(got)
    return tuple(kept), tuple(cuts)


@dataclass(frozen=True)
class ActionAt:
    """{I_t = a} for each listed round t (1-based in labels) and arm a."""

    rounds: tuple
    n_arms: int
    point_rounds = ()

    @property
    def labels(self) -> list[str]:
        return [f"I_{t + 1} = {a + 1}" for t in self.rounds for a in range(self.n_arms)]

    @property
    def blocks(self) -> list:
        """The arms of one round exclude one another (``audit.engine.unions``)."""
        return [(k * self.n_arms, self.n_arms) for k in range(len(self.rounds))]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        cols = actions[:, list(self.rounds)]
        return np.stack([(cols == a).sum(axis=0) for a in range(self.n_arms)], axis=1).ravel()

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        cols = actions[:, list(self.rounds)]
        return (cols[:, :, None] == np.arange(self.n_arms)).reshape(len(cols),
                                                                    cols.shape[1] * self.n_arms)


@dataclass(frozen=True)
class JointActionAt:
    """{I_s = a and I_u = b} for each listed pair of rounds (s, u) (0-based,
    1-based in labels) and arms a, b: K² events a pair.  Two rounds whose
    actions are each distributed alike on both sides can still be coupled
    differently; only a joint event sees that."""

    pairs: tuple        # ((s, u), ...), 0-based
    n_arms: int
    point_rounds = ()

    @property
    def labels(self) -> list[str]:
        K = self.n_arms
        return [f"I_{s + 1} = {a + 1} and I_{u + 1} = {b + 1}"
                for s, u in self.pairs for a in range(K) for b in range(K)]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        K = self.n_arms
        out = [np.bincount(actions[:, s].astype(np.int64) * K + actions[:, u], minlength=K * K)
               for s, u in self.pairs]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        K = self.n_arms
        codes = np.arange(K * K)
        out = [(actions[:, s].astype(np.int64) * K + actions[:, u])[:, None] == codes
               for s, u in self.pairs]
        return np.hstack(out) if out else np.zeros((len(actions), 0), dtype=bool)


@dataclass(frozen=True)
class ActionRun:
    """{I_t = a for every t in s..k}: arm a chosen at every round from
    ``start`` s through each listed end k (0-based, 1-based in labels), for
    each listed arm.  A joint event over many rounds: where every round
    pushes the learner's state the same way, a long run can separate the
    two sides far more than any single round.  Counted from each run's
    length of the streak of a starting at s."""

    start: int
    ends: tuple         # 0-based last rounds, each >= start
    arms: tuple         # 0-based arms
    point_rounds = ()

    @property
    def labels(self) -> list[str]:
        return [f"I_t = {a + 1} for every t in {self.start + 1}..{k + 1}"
                for a in self.arms for k in self.ends]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        if not self.ends:
            return np.zeros(0, dtype=np.int64)
        s, last = self.start, max(self.ends)
        block = actions[:, s:last + 1]
        width = block.shape[1]
        out = []
        for a in self.arms:
            streak = np.cumprod(block == a, axis=1).sum(axis=1)    # length of the streak from s
            hist = np.bincount(streak, minlength=width + 1)
            at_least = hist[::-1].cumsum()[::-1]                   # runs with streak >= L
            out.append(at_least[[k - s + 1 for k in self.ends]])
        return np.concatenate(out)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        if not self.ends:
            return np.zeros((len(actions), 0), dtype=bool)
        s, last = self.start, max(self.ends)
        block = actions[:, s:last + 1]
        lengths = np.asarray([k - s + 1 for k in self.ends])
        return np.hstack([np.cumprod(block == a, axis=1).sum(axis=1)[:, None] >= lengths
                          for a in self.arms])


# Joint events are K² a pair of rounds: at most this many in a standard
# family, over pairs among at most JOINT_ROUNDS rounds.
JOINT_EVENTS = 256
JOINT_ROUNDS = 6


def joint_pairs(rounds: Sequence[int], n_arms: int, max_events: int = JOINT_EVENTS,
                max_rounds: int = JOINT_ROUNDS) -> tuple:
    """Pairs (s, u), s < u, among the first ``max_rounds`` of ``rounds`` (in
    the order given: the rounds that matter first), as many as keep the
    number of joint events K²·pairs within ``max_events``; nearer pairs
    first."""
    chosen = []
    for t in rounds:
        t = int(t)
        if t not in chosen:
            chosen.append(t)
        if len(chosen) == max_rounds:
            break
    pairs = sorted(((min(s, u), max(s, u)) for i, s in enumerate(chosen) for u in chosen[i + 1:]),
                   key=lambda p: (p[1] - p[0], p))
    return tuple(pairs[:max_events // (n_arms * n_arms)])


@dataclass(frozen=True)
class ArmCountAtLeast:
    """{#plays of arm a in rounds [start, end) ≥ c} for each window, arm and
    threshold c = 1 … window length."""

    windows: tuple  # ((start, end), ...), 0-based, end exclusive
    n_arms: int
    point_rounds = ()

    @property
    def labels(self) -> list[str]:
        return [f"#{{t in {s + 1}..{e}: I_t = {a + 1}}} >= {c}"
                for s, e in self.windows for a in range(self.n_arms) for c in range(1, e - s + 1)]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = []
        for s, e in self.windows:
            block = actions[:, s:e]
            for a in range(self.n_arms):
                n = (block == a).sum(axis=1)
                hist = np.bincount(n, minlength=e - s + 1)
                out.append(hist[::-1].cumsum()[::-1][1:])  # runs with count >= c, c = 1..len
        return np.concatenate(out)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        out = []
        for s, e in self.windows:
            block = actions[:, s:e]
            for a in range(self.n_arms):
                out.append((block == a).sum(axis=1)[:, None] >= np.arange(1, e - s + 1))
        return np.hstack(out) if out else np.zeros((len(actions), 0), dtype=bool)


@dataclass(frozen=True)
class Union:
    """Several families counted side by side."""

    parts: tuple

    @property
    def labels(self) -> list[str]:
        return [label for p in self.parts for label in p.labels]

    @property
    def point_rounds(self) -> tuple:
        return tuple(sorted({r for p in self.parts for r in p.point_rounds}))

    @property
    def release_rounds(self) -> tuple:
        """Rounds whose released values a part reads (``attacks.values``)."""
        return tuple(sorted({r for p in self.parts for r in release_rounds_of(p)}))

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        return np.concatenate([p.count(actions, points) for p in self.parts])


# The most indicator cells one pass of ``count_blocks`` builds (runs × events):
# a chunk of 10 000 runs with thousands of events is counted a slice of
# blocks at a time.
MAX_CELLS = 4_000_000


def rows_of(points, rows):
    """The observations of the runs ``rows`` (a slice): every array cut by row."""
    if points is None:
        return None
    return {k: v[rows] for k, v in points.items()}


def count_blocks(family, actions: np.ndarray, points, m: int) -> np.ndarray:
    """(blocks, events): ``family.count`` on each block of ``m`` consecutive
    runs of the chunk ``actions`` (its observations ``points``), in one pass
    of the family's ``indicators`` where it has them (a slice of blocks at a
    time, ``MAX_CELLS``), else a count per block.  A ``Union`` counts each
    part its own way."""
    k = len(actions) // m
    if k * m != len(actions):
        raise ValueError(f"count_blocks: {len(actions)} runs is not a multiple of {m}")
    parts = getattr(family, "parts", None)
    if parts is not None:
        cols = [count_blocks(p, actions, points, m) for p in parts]
        return np.hstack(cols) if cols else np.zeros((k, 0), dtype=np.int64)
    ind = getattr(family, "indicators", None)
    if ind is None:
        return np.stack([np.asarray(family.count(actions[j * m:(j + 1) * m],
                                                 rows_of(points, slice(j * m, (j + 1) * m))),
                                    dtype=np.int64) for j in range(k)]).reshape(k, -1)
    step = max(1, MAX_CELLS // max(1, m * len(family.labels)))
    out = []
    for s in range(0, k, step):
        stop = min(k, s + step)
        rows = slice(s * m, stop * m)
        x = np.asarray(ind(actions[rows], rows_of(points, rows)))
        out.append(x.reshape(stop - s, m, x.shape[1]).sum(axis=1, dtype=np.int64))
    return np.vstack(out)


def release_rounds_of(family) -> tuple:
    """The rounds whose released values ``family`` reads (none for a family
    of actions and points)."""
    return tuple(getattr(family, "release_rounds", ()))


@dataclass(frozen=True)
class SwitchAt:
    """{I_t ≠ I_{t−1}} for each listed round t ≥ 1 (0-based): when a lazy
    learner changes its choice (switch times)."""

    rounds: tuple
    point_rounds = ()

    @property
    def labels(self) -> list[str]:
        return [f"I_{t + 1} != I_{t}" for t in self.rounds]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        r = np.asarray(self.rounds, dtype=int)
        return (actions[:, r] != actions[:, r - 1]).sum(axis=0)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        r = np.asarray(self.rounds, dtype=int)
        return actions[:, r] != actions[:, r - 1]


@dataclass(frozen=True)
class CoordinateAbove:
    """{x_t[i] > c} for learners that play points: for each listed round t
    (0-based), coordinate i and threshold c.  The thresholds must be fixed
    before the audit's runs (a grid, or quantiles of an independent pilot
    sample: ``pilot_thresholds``), so selecting among them stays valid."""

    rounds: tuple
    coords: tuple
    thresholds: tuple      # one tuple of thresholds per (round, coordinate)
    symbol = ">"           # class attributes, not fields: the comparison

    @staticmethod
    def test(x: np.ndarray, c: np.ndarray) -> np.ndarray:
        return x > c

    @property
    def point_rounds(self) -> tuple:
        return tuple(self.rounds)

    @property
    def labels(self) -> list[str]:
        out, k = [], 0
        for t in self.rounds:
            for i in self.coords:
                out += [f"x_{t + 1}[{i + 1}] {self.symbol} {c:.4g}" for c in self.thresholds[k]]
                k += 1
        return out

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        out, k = [], 0
        for t in self.rounds:
            x = points[t]
            for i in self.coords:
                c = np.asarray(self.thresholds[k])
                out.append(self.test(x[:, i][:, None], c[None, :]).sum(axis=0))
                k += 1
        return np.concatenate(out)

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        out, k = [], 0
        for t in self.rounds:
            x = points[t]
            for i in self.coords:
                out.append(self.test(x[:, i][:, None], np.asarray(self.thresholds[k])[None, :]))
                k += 1
        return np.hstack(out) if out else np.zeros((len(actions), 0), dtype=bool)


@dataclass(frozen=True)
class CoordinateBelow(CoordinateAbove):
    """{x_t[i] ≤ c}: the lower-tail twin of ``CoordinateAbove`` (whose events
    {x > c} at a low threshold c have probability near 1 on both sides, so
    they cannot show a ratio there).  Thresholds fixed before the audit."""

    symbol = "<="

    @staticmethod
    def test(x: np.ndarray, c: np.ndarray) -> np.ndarray:
        return x <= c


# Quantile levels of the point thresholds: a central grid, and far tails
# (down to the pilot's extremes, level ~1/(pilot size)) where a pure-ε claim
# is refuted by small probabilities.
TAIL_LEVELS = (0.001, 0.003, 0.01)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_counts=True)`` for a 2-D integer
    array, the same rows in the same (lexicographic) order: each row read as
    one mixed-radix number, first column most significant, and those
    numbers made unique — a hundred times faster than numpy's row sort
    (the pilots' code sequences: 8 000 runs × up to 1 000 rounds).  Falls
    back to numpy's where the numbers would not fit in 62 bits."""
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.shape[1] == 0 or rows.shape[0] == 0 or \
            not np.issubdtype(rows.dtype, np.integer):
        return np.unique(rows, axis=0, return_counts=True)
    lo, hi = int(rows.min()), int(rows.max())
    base = hi - lo + 1
    if rows.shape[1] * np.log2(max(base, 2)) >= 62 or lo < -2 ** 62 or hi > 2 ** 62:
        return np.unique(rows, axis=0, return_counts=True)
    key = np.zeros(rows.shape[0], dtype=np.int64)
    # Widened before the shift: in a narrow dtype (int8 codes) rows − lo overflows.
    for col in (rows.astype(np.int64) - lo).T:
        key = key * base + col
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return rows[first], counts


def quantile_thresholds(values: np.ndarray, n_thresholds: int = 15,
                        tails: bool = True) -> tuple[tuple, tuple]:
    """(upper, lower) thresholds from a pilot sample: ``upper`` for events
    {x > c} (a central grid of ``n_thresholds`` quantiles, the upper tail
    levels 1 − ``TAIL_LEVELS`` and the sample's maximum), ``lower`` for events
    {x ≤ c} (the tail levels and the minimum; empty without ``tails``)."""
    values = np.asarray(values, dtype=float)
    central = np.quantile(values, np.linspace(0.02, 0.98, n_thresholds))
    if not tails:
        return tuple(float(c) for c in np.unique(central)), ()
    upper = np.concatenate([central, np.quantile(values, 1 - np.array(TAIL_LEVELS)),
                            [values.max()]])
    lower = np.concatenate([[values.min()], np.quantile(values, TAIL_LEVELS)])
    return (tuple(float(c) for c in np.unique(upper)),
            tuple(float(c) for c in np.unique(lower)))


def pilot_quantiles(alg, losses_pair, point_rounds: Sequence[int], statistics, stream: int,
                    n_thresholds: int = 15, pilot_runs: int = 4000, advice=None) -> tuple:
    """Thresholds for point events {x > c}, fixed before the audit: quantiles
    of each statistic over a pilot sample of both sides (the upper thresholds
    of ``quantile_thresholds``: a central grid and the far upper tail).
    ``statistics(points)`` maps the recorded points ``{round: (runs, d)}`` to
    a list of per-run values, one array per threshold group.  The pilot draws
    from ``SeedSequence([0x5EED, stream, side])``, independent of every audit
    stream, so events chosen from it keep the audit's bounds valid."""
    pooled = None
    for side, losses in enumerate(losses_pair):
        rng = np.random.default_rng(np.random.SeedSequence([0x5EED, stream, side]))
        tr = simulate(alg, losses, pilot_runs, rng, advice=advice, rounds=max(point_rounds) + 1,
                      point_rounds=point_rounds)
        values = statistics(tr.points)
        pooled = [[v] for v in values] if pooled is None else [p + [v] for p, v in zip(pooled, values)]
    return tuple(quantile_thresholds(np.concatenate(p), n_thresholds)[0] for p in pooled)


def pilot_thresholds(alg, losses_pair, rounds: Sequence[int], coords: Sequence[int],
                     n_thresholds: int = 15, pilot_runs: int = 4000, advice=None) -> tuple:
    """Thresholds for ``CoordinateAbove``: quantiles of x_t[i] over a pilot
    sample of both sides (``pilot_quantiles``)."""
    return pilot_quantiles(alg, losses_pair, rounds,
                           lambda pts: [pts[t][:, i] for t in rounds for i in coords],
                           0xA11D, n_thresholds, pilot_runs, advice)


def standard_events(rounds: int, n_arms: int, focus: Sequence[int] = (), max_rounds: int = 64,
                    windows: Sequence[tuple] = (), joint: Optional[Sequence[int]] = None) -> Union:
    """Actions at the focus rounds and at up to ``max_rounds`` rounds spread
    over the prefix, joint actions at pairs of the focus rounds (or of the
    rounds ``joint`` lists; ``joint_pairs`` keeps their number bounded), plus
    arm counts over the given windows (by default the whole prefix when it
    is short)."""
    spread = np.unique(np.linspace(0, rounds - 1, min(rounds, max_rounds)).astype(int))
    chosen = tuple(sorted(set(int(t) for t in focus if 0 <= t < rounds) | set(spread.tolist())))
    parts = [ActionAt(chosen, n_arms)]
    pairs = joint_pairs([t for t in (focus if joint is None else joint) if 0 <= t < rounds], n_arms)
    if pairs:
        parts.append(JointActionAt(pairs, n_arms))
    if not windows and rounds <= 256:
        windows = ((0, rounds),)
    if windows:
        parts.append(ArmCountAtLeast(tuple(windows), n_arms))
    return Union(tuple(parts))


def events_after(change: int, rounds: int, n_arms: int, focus: Sequence[int] = (),
                 max_rounds: int = 64, window: int = 256, joint: bool = True) -> Union:
    """The standard family of a pair that differs only at round ``change``
    (0-based).  The actions up to that round are alike on both sides, so
    every event looks after it: actions at the focus rounds (default: the 8
    rounds after the change; the first ones matter most) and at up to
    ``max_rounds`` rounds spread over the rest of the prefix, switches at
    the focus rounds, joint actions at pairs of the first focus rounds
    (``joint_pairs``; none without ``joint``) and arm counts over at most
    ``window`` rounds after the change."""
    first = change + 1
    if first >= rounds:
        raise ValueError(f"a change at round {change + 1} shows in no action of a "
                         f"{rounds}-round prefix")
    order = [int(t) for t in focus if first <= t < rounds] or list(range(first, min(rounds,
                                                                                  first + 8)))
    order = list(dict.fromkeys(order))
    spread = np.unique(np.linspace(first, rounds - 1, min(rounds - first, max_rounds)).astype(int))
    parts = [ActionAt(tuple(sorted(set(order) | set(spread.tolist()))), n_arms),
             SwitchAt(tuple(sorted(order))),
             ArmCountAtLeast(((first, min(rounds, first + window)),), n_arms)]
    pairs = joint_pairs(order, n_arms) if joint else ()
    if pairs:
        parts.insert(1, JointActionAt(pairs, n_arms))
    return Union(tuple(parts))
