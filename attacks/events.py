"""Families of candidate events on action sequences.

The engine only ever keeps counts: a family maps a chunk of action sequences
``(runs, rounds)`` to how many runs fall in each event, so memory does not
grow with the number of runs.
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

    @property
    def labels(self) -> list[str]:
        return [f"I_{t + 1} = {a + 1}" for t in self.rounds for a in range(self.n_arms)]

    def count(self, actions: np.ndarray) -> np.ndarray:
        cols = actions[:, list(self.rounds)]
        return np.stack([(cols == a).sum(axis=0) for a in range(self.n_arms)], axis=1).ravel()


@dataclass(frozen=True)
class ArmCountAtLeast:
    """{#plays of arm a in rounds [start, end) ≥ c} for each window, arm and
    threshold c = 1 … window length."""

    windows: tuple  # ((start, end), ...), 0-based, end exclusive
    n_arms: int

    @property
    def labels(self) -> list[str]:
        return [f"#{{t in {s + 1}..{e}: I_t = {a + 1}}} >= {c}"
                for s, e in self.windows for a in range(self.n_arms) for c in range(1, e - s + 1)]

    def count(self, actions: np.ndarray) -> np.ndarray:
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

    def count(self, actions: np.ndarray) -> np.ndarray:
        return np.concatenate([p.count(actions) for p in self.parts])


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
