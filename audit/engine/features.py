"""Features of a whole output trajectory, for a learned witness
(``audit.engine.witness``): one fixed-length vector per run, built from its
actions ``(runs, rounds)`` and, for learners that play points, the points at
the recorded rounds ``{round: (runs, d)}``.

Why these features: hand-written events look at one round or one release at
a time; a leak that shows only in the joint behaviour of a trajectory (two
rounds whose actions are each uniform on both sides but correlated
differently) needs features of several rounds at once.  Everything is
anchored at the changed round c of the pair (the first round where the two
loss sequences differ): the actions up to c do not depend on the change on
their own, what follows it does.

* one-hot actions at rounds c, c+1, … (up to a cap),
* the fraction of plays of each arm in windows before c and in geometrically
  growing windows after it (so the whole prefix is covered at any horizon),
* switch indicators (I_t ≠ I_{t−1}) after c, the number of switches and the
  first and last switch times,
* joint indicators of pairs of rounds among the first rounds from c: products
  of one-hot actions 1{I_t = a, I_s = b} and 1{I_t = I_s},
* for points: the coordinates at a few recorded rounds and their differences
  between those rounds;
* for numbers an attack or the black-box evidence reads as statistics
  (``values``: released values, their differences and sums, a number
  together with the code prefix released before it; ``attacks.values``),
  each statistic where it was observed (0 elsewhere) and whether it was.

One arm is left out of every one-hot block (its indicator is 1 minus the
others), and with many arms only the arms whose loss changes and the first
others are tracked, so the dimension stays bounded (≤ ``MAX_DIM``) whatever
the horizon and the number of arms.

May import: numpy only.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Optional, Sequence

import numpy as np

MAX_DIM = 512
MAX_ARMS = 8            # arms with their own indicators
ONEHOT_BUDGET = 64      # one-hot features over the rounds from c
PAIR_BUDGET = 96        # products 1{I_t = a, I_s = b}
SAME_ROUNDS = 10        # 1{I_t = I_s} for pairs among the first 10 rounds from c
MAX_WINDOWS = 10        # geometric windows after c (plus one before c)
MAX_POINT_ROUNDS = 8
MAX_COORDS = 8
POINT_BUDGET = 128


@dataclass(frozen=True)
class TrajectoryFeatures:
    """The feature map of one neighbouring pair (built by ``for_pair``).
    All rounds are 0-based; ``arms`` are the tracked arms, ``onehot`` the
    rounds with one-hot features, ``pairs`` the round pairs with product
    features, ``same`` those with 1{I_t = I_s}, ``windows`` the count
    windows ``(start, end)``, ``point_rounds`` the rounds whose points are
    features and ``coords`` their tracked coordinates."""

    changed: int
    rounds: int
    n_arms: int
    arms: tuple
    onehot: tuple
    pairs: tuple
    same: tuple
    windows: tuple
    point_rounds: tuple = ()
    coords: tuple = ()
    # Statistics of observed numbers (``attacks.values.Stat``-like: its
    # ``value(obs, runs)`` and ``mask(actions)``), two features each.
    values: tuple = ()

    @property
    def dimension(self) -> int:
        A, P, C = len(self.arms), len(self.point_rounds), len(self.coords)
        return (len(self.onehot) * A + len(self.windows) * A + self._switch_dim()
                + len(self.pairs) * A * A + len(self.same)
                + P * C + (P * (P - 1) // 2) * C + 2 * len(self.values))

    @property
    def release_rounds(self) -> tuple:
        """Rounds whose released values the statistics read."""
        return tuple(sorted({k[1] for s in self.values for k, _, _ in s.terms
                             if isinstance(k, tuple)}))

    @property
    def value_point_rounds(self) -> tuple:
        """Rounds whose points the statistics read (besides ``point_rounds``)."""
        return tuple(sorted({k for s in self.values for k, _, _ in s.terms
                             if not isinstance(k, tuple)}))

    def value_block(self, actions, obs: Optional[dict], runs: int) -> np.ndarray:
        """The statistics' features ``(runs, 2·len(values))``: each value
        where it was observed and its condition holds (0 elsewhere), then
        that indicator.  ``actions`` may be a dict {round: (runs,)}."""
        if not self.values:
            return np.zeros((runs, 0), dtype=np.float32)
        cols = []
        for s in self.values:
            v, ok = self._value(s, actions, obs, runs)
            cols += [np.where(ok, v, 0.0), ok.astype(float)]
        return np.stack(cols, axis=1).astype(np.float32)

    def _switch_rounds(self) -> np.ndarray:
        return np.asarray([t for t in self.onehot if t >= 1], dtype=int)

    def _switch_dim(self) -> int:
        return len(self._switch_rounds()) + 3 if self.rounds - self.changed >= 2 else 0

    def __call__(self, actions: np.ndarray, points: Optional[dict] = None) -> np.ndarray:
        """Features ``(runs, dimension)`` (float32) of the runs' trajectories.
        Each block is written straight into one float32 array (the same
        casts as converting block by block and concatenating, one copy
        fewer: the witness scores every run of an audit with it)."""
        acts = np.asarray(actions)[:, :self.rounds]
        runs = acts.shape[0]
        out = np.empty((runs, self.dimension), dtype=np.float32)
        col = 0

        def put(block) -> None:
            nonlocal col
            block = np.asarray(block).reshape(runs, -1)
            out[:, col:col + block.shape[1]] = block
            col += block.shape[1]

        arms = np.asarray(self.arms, dtype=acts.dtype)
        oh = acts[:, list(self.onehot), None] == arms                   # (runs, rounds, arms)
        if self.onehot:
            put(oh)
        for s, e in self.windows:
            put((acts[:, s:e, None] == arms).mean(axis=1))
        if self._switch_dim():
            after = acts[:, self.changed:]
            sw = after[:, 1:] != after[:, :-1]                       # switch at c+1, c+2, …
            span = sw.shape[1]
            r = self._switch_rounds()
            put(acts[:, r] != acts[:, r - 1])
            any_switch = sw.any(axis=1)
            first = np.where(any_switch, sw.argmax(axis=1), span)
            last = np.where(any_switch, span - 1 - sw[:, ::-1].argmax(axis=1), -1)
            put(np.stack([sw.mean(axis=1), first / span, (last + 1) / span], axis=1))
        for t, s in self.pairs:                 # pairs are among the one-hot rounds
            i, j = t - self.onehot[0], s - self.onehot[0]
            put(oh[:, i, :, None] & oh[:, j, None, :])
        if self.same:
            t, s = np.asarray(self.same).T
            put(acts[:, t] == acts[:, s])
        if self.point_rounds:
            xs = [_coords(points[r], len(self.coords)) for r in self.point_rounds]
            for x in xs:
                put(x)
            for i, j in combinations(range(len(xs)), 2):
                put(xs[j] - xs[i])
        for s in self.values:
            v, ok = self._value(s, acts, points, runs)
            put(np.where(ok, v, 0.0))
            put(ok)
        assert col == self.dimension
        return out

    @staticmethod
    def _value(stat, actions, obs, runs: int) -> tuple:
        """(the statistic's values, where it was observed and its condition holds)."""
        v = stat.value(obs, runs)
        ok = np.isfinite(v)
        m = stat.mask(actions)
        if m is not None:
            ok &= m
        return v, ok

    def describe(self) -> str:
        parts = [f"{len(self.onehot)} rounds of actions from round {self.changed + 1}",
                 f"{len(self.windows)} count windows", f"{len(self.pairs) + len(self.same)} "
                 f"round pairs"]
        if self.point_rounds:
            parts.append(f"points at {len(self.point_rounds)} rounds")
        if self.values:
            parts.append(f"{len(self.values)} statistics of released numbers")
        return f"{self.dimension} features ({', '.join(parts)})"


def _coords(x, n: int) -> np.ndarray:
    """The first ``n`` coordinates of points ``(runs, d)``, zero-padded."""
    x = np.asarray(x, dtype=float).reshape(len(x), -1)[:, :n]
    return np.pad(x, ((0, 0), (0, n - x.shape[1])))


def _tracked_arms(n_arms: int, changed_arms: Sequence[int]) -> tuple:
    """Every arm but the last when there are few; else the arms whose loss
    changes first, then the lowest others, ``MAX_ARMS`` in all."""
    if n_arms - 1 <= MAX_ARMS:
        return tuple(range(n_arms - 1))
    order = [int(a) for a in changed_arms] + [a for a in range(n_arms) if a not in changed_arms]
    return tuple(sorted(order[:MAX_ARMS]))


def _windows(changed: int, rounds: int) -> tuple:
    """[0, c) when c > 0, then [c, c+1), [c+1, c+3), [c+3, c+7), … with the
    last window running to the end of the prefix."""
    out = [(0, changed)] if changed > 0 else []
    start, width = changed, 1
    while start < rounds:
        end = rounds if len(out) >= MAX_WINDOWS else min(rounds, start + width)
        out.append((start, end))
        start, width = end, 2 * width
    return tuple(out)


def for_pair(losses_a: np.ndarray, losses_b: np.ndarray, rounds: int, n_arms: int,
             plays_points: bool = False, point_rounds: Sequence[int] = ()) -> TrajectoryFeatures:
    """The feature map for one pair simulated over its first ``rounds``
    rounds.  With ``plays_points`` the map also uses the points at up to
    ``MAX_POINT_ROUNDS`` rounds from c: first the ``point_rounds`` an attack
    found informative, then c, c+1, …; the first ``MAX_COORDS`` coordinates
    of each (zeros stand in for missing ones, so the dimension is known
    before any run)."""
    diff = np.flatnonzero(np.any(np.asarray(losses_a) != np.asarray(losses_b),
                                 axis=tuple(range(1, np.ndim(losses_a)))))
    changed = int(min(diff[0], rounds - 1)) if len(diff) else 0
    row_a, row_b = np.asarray(losses_a)[changed], np.asarray(losses_b)[changed]
    changed_arms = (np.flatnonzero(np.ravel(row_a != row_b)).tolist()
                    if np.ndim(row_a) == 1 and np.size(row_a) == n_arms else [])
    arms = _tracked_arms(n_arms, changed_arms)
    A = max(1, len(arms))
    onehot = tuple(range(changed, min(rounds, changed + max(2, ONEHOT_BUDGET // A))))
    m = 2
    while m < len(onehot) and (m + 1) * m // 2 * A * A <= PAIR_BUDGET:
        m += 1
    pairs = tuple(combinations(onehot[:m], 2)) if arms else ()
    same = tuple(combinations(onehot[:SAME_ROUNDS], 2)) if n_arms > 2 else ()
    prs, coords = (), ()
    if plays_points:
        coords = tuple(range(MAX_COORDS))
        C = len(coords)
        wanted = [int(r) for r in point_rounds if changed <= r < rounds]
        wanted += [r for r in range(changed, rounds) if r not in wanted]
        P = 1
        while (P < min(MAX_POINT_ROUNDS, len(wanted))
               and (P + 1) * C + (P + 1) * P // 2 * C <= POINT_BUDGET):
            P += 1
        prs = tuple(sorted(wanted[:P]))
    f = TrajectoryFeatures(changed, rounds, n_arms, arms, onehot, pairs, same,
                           _windows(changed, rounds), prs, coords)
    assert f.dimension <= MAX_DIM, f.dimension
    return f
