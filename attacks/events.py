"""Families of candidate events on action sequences.

The engine only ever keeps counts: a family maps a chunk of action sequences
``(runs, rounds)`` (and, for learners that play points, the points x_t at the
rounds the family lists in ``point_rounds``: ``{round: (runs, d)}``) to how
many runs fall in each event, so memory does not grow with the number of runs.
Every family has ``labels``, ``point_rounds`` and ``count(actions, points)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class ActionAt:
    """{I_t = a} for each listed round t (1-based in labels) and arm a."""

    rounds: tuple
    n_arms: int
    point_rounds = ()

    @property
    def labels(self) -> list[str]:
        return [f"I_{t + 1} = {a + 1}" for t in self.rounds for a in range(self.n_arms)]

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        cols = actions[:, list(self.rounds)]
        return np.stack([(cols == a).sum(axis=0) for a in range(self.n_arms)], axis=1).ravel()


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

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        return np.concatenate([p.count(actions, points) for p in self.parts])


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


@dataclass(frozen=True)
class CoordinateAbove:
    """{x_t[i] > c} for learners that play points: for each listed round t
    (0-based), coordinate i and threshold c.  The thresholds must be fixed
    before the audit's runs (a grid, or quantiles of an independent pilot
    sample: ``pilot_thresholds``), so selecting among them stays valid."""

    rounds: tuple
    coords: tuple
    thresholds: tuple      # one tuple of thresholds per (round, coordinate)

    @property
    def point_rounds(self) -> tuple:
        return tuple(self.rounds)

    @property
    def labels(self) -> list[str]:
        out, k = [], 0
        for t in self.rounds:
            for i in self.coords:
                out += [f"x_{t + 1}[{i + 1}] > {c:.4g}" for c in self.thresholds[k]]
                k += 1
        return out

    def count(self, actions: np.ndarray, points=None) -> np.ndarray:
        out, k = [], 0
        for t in self.rounds:
            x = points[t]
            for i in self.coords:
                c = np.asarray(self.thresholds[k])
                out.append((x[:, i][:, None] > c[None, :]).sum(axis=0))
                k += 1
        return np.concatenate(out)


def pilot_quantiles(alg, losses_pair, point_rounds: Sequence[int], statistics, stream: int,
                    n_thresholds: int = 15, pilot_runs: int = 4000, advice=None) -> tuple:
    """Thresholds for point events, fixed before the audit: quantiles of each
    statistic over a pilot sample of both sides.  ``statistics(points)`` maps
    the recorded points ``{round: (runs, d)}`` to a list of per-run values,
    one array per threshold group.  The pilot draws from
    ``SeedSequence([0x5EED, stream, side])``, independent of every audit
    stream, so events chosen from it keep the audit's bounds valid."""
    from audit.execution.runs import simulate
    qs = np.linspace(0.02, 0.98, n_thresholds)
    pooled = None
    for side, losses in enumerate(losses_pair):
        rng = np.random.default_rng(np.random.SeedSequence([0x5EED, stream, side]))
        tr = simulate(alg, losses, pilot_runs, rng, advice=advice, rounds=max(point_rounds) + 1,
                      point_rounds=point_rounds)
        values = statistics(tr.points)
        pooled = [[v] for v in values] if pooled is None else [p + [v] for p, v in zip(pooled, values)]
    return tuple(tuple(float(c) for c in np.unique(np.quantile(np.concatenate(p), qs)))
                 for p in pooled)


def pilot_thresholds(alg, losses_pair, rounds: Sequence[int], coords: Sequence[int],
                     n_thresholds: int = 15, pilot_runs: int = 4000, advice=None) -> tuple:
    """Thresholds for ``CoordinateAbove``: quantiles of x_t[i] over a pilot
    sample of both sides (``pilot_quantiles``)."""
    return pilot_quantiles(alg, losses_pair, rounds,
                           lambda pts: [pts[t][:, i] for t in rounds for i in coords],
                           0xA11D, n_thresholds, pilot_runs, advice)


def standard_events(rounds: int, n_arms: int, focus: Sequence[int] = (), max_rounds: int = 64,
                    windows: Sequence[tuple] = ()) -> Union:
    """Actions at the focus rounds and at up to ``max_rounds`` rounds spread
    over the prefix, plus arm counts over the given windows (by default the
    whole prefix when it is short)."""
    spread = np.unique(np.linspace(0, rounds - 1, min(rounds, max_rounds)).astype(int))
    chosen = tuple(sorted(set(int(t) for t in focus if 0 <= t < rounds) | set(spread.tolist())))
    parts = [ActionAt(chosen, n_arms)]
    if not windows and rounds <= 256:
        windows = ((0, rounds),)
    if windows:
        parts.append(ArmCountAtLeast(tuple(windows), n_arms))
    return Union(tuple(parts))
