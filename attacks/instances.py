"""Named loss instances (oblivious adversaries) for regret estimates.

Each instance is written on [0, 1] and placed in the algorithm's loss range
[lo, hi] (``Algorithm.loss_range``) by lo + (hi − lo)·x, so on [0, 1] it is
unchanged and elsewhere it spans the whole range.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass(frozen=True)
class Instance:
    name: str
    losses: np.ndarray            # (T, K)
    advice: Optional[np.ndarray]  # (T, N, K) or None
    description: str

    def best_loss(self) -> float:
        """Cumulative loss of the best fixed arm (or expert) in hindsight."""
        if self.advice is None:
            return float(self.losses.sum(axis=0).min())
        return float(np.einsum("tnk,tk->n", self.advice, self.losses).min())


def default_advice(T: int, N: int, K: int) -> np.ndarray:
    """Public advice: expert j puts 0.8 on arm j mod K and spreads the rest
    evenly, so expert 0 (backing the best arm of ``gap``) is the one to follow."""
    adv = np.full((N, K), 0.2 / (K - 1))
    adv[np.arange(N), np.arange(N) % K] = 0.8
    return np.broadcast_to(adv, (T, N, K)).copy()


def in_range(x: np.ndarray, loss_range: tuple = (0.0, 1.0)) -> np.ndarray:
    """[0, 1] → [lo, hi] affinely; the identity, bit for bit, on [0, 1]."""
    lo, hi = float(loss_range[0]), float(loss_range[1])
    return lo + (hi - lo) * np.asarray(x, dtype=float)


def _where(loss_range) -> str:
    lo, hi = float(loss_range[0]), float(loss_range[1])
    return "" if (lo, hi) == (0.0, 1.0) else f", mapped onto [{lo:g}, {hi:g}]"


def gap(T: int, K: int, N: Optional[int] = None, gap_size: float = 0.2, seed: int = 0,
        loss_range: tuple = (0.0, 1.0)) -> Instance:
    """Stochastic losses drawn once (so the adversary is oblivious): arm 1 is
    Bernoulli(0.5 − gap), the others Bernoulli(0.5), 0 and 1 standing for
    the ends of ``loss_range``."""
    means = np.full(K, 0.5)
    means[0] -= gap_size
    losses = in_range((np.random.default_rng(seed).random((T, K)) < means).astype(float),
                      loss_range)
    advice = None if N is None else default_advice(T, N, K)
    return Instance("gap", losses, advice,
                    f"Bernoulli losses, arm 1 mean {means[0]:.2f}, others 0.50"
                    f"{_where(loss_range)}")


def lemma51(T: int, K: int = 2, N: Optional[int] = None,
            loss_range: tuple = (0.0, 1.0)) -> Instance:
    """The two-arm instance of Section 5.2: arm 1 loss ½, arm 2 loss 1 (on
    [0, 1]; mapped into ``loss_range``)."""
    if K != 2:
        raise ValueError(f"instance lemma51 needs K = 2 arms, got {K}")
    losses = in_range(np.tile([0.5, 1.0], (T, 1)), loss_range)
    advice = None if N is None else default_advice(T, N, K)
    return Instance("lemma51", losses, advice, f"arm 1 loss 1/2, arm 2 loss 1 (Section 5.2)"
                                               f"{_where(loss_range)}")


INSTANCES = {"gap": gap, "lemma51": lemma51}


def make_instance(name: str, T: int, K: int, N: Optional[int] = None,
                  loss_range: tuple = (0.0, 1.0)) -> Instance:
    """The named instance, its losses in ``loss_range`` (the algorithm's)."""
    try:
        factory = INSTANCES[name]
    except KeyError:
        raise ValueError(f"unknown instance {name!r}; choose from: {', '.join(INSTANCES)}") from None
    return factory(T, K, N, loss_range=loss_range)
