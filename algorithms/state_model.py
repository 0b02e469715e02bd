"""A declaration for learners whose chosen action depends on the history only
through one scalar state: ``ScalarStateModel``.  An algorithm declares one
in ``Algorithm.extra["state_model"]``; the auditor then computes exact
probabilities of action events by a forward recursion over a grid of that
state (``audit.engine.models.scalar_state.recursion``), after checking the declaration against
the code on pilots (``audit.engine.models.scalar_state``).

The model, at every round t = 1, 2, … (u_1 = ``start``):

* the action: J_t ~ ``action_probs(u_t)``, drawn independently of
  everything else given u_t;
* the update: u_{t+1} = clip(u_t + ``shift(ℓ_t)`` + ``step``·D_t, ``lo``,
  ``hi``), with D_1, D_2, … i.i.d. of the law ``noise`` and independent of
  the past and of the actions (full information: ℓ_t is the whole row).

Such a chain is monotone: a larger u_t gives a stochastically larger
u_{t+1}.  Each arm's probability is declared monotone in u (``monotone``:
+1 increasing, −1 decreasing, 0 neither), which is what lets the auditor
bound event probabilities from both sides by rounding the state up or down.

Example: Algorithm 3 of Asi, Raman & Saha with N = 2 experts keeps
w_t ∈ [c, 1 − c]²; with u = ln(w_1/w_2) the update w_{t+1} ∝ w_t e^{−η ℓ̃_t}
clipped at c is u_{t+1} = clip(u_t − η(ℓ_t(1) − ℓ_t(2)) − η(Z_1 − Z_2)),
and Z_1 − Z_2 of two i.i.d. Laplace(b) is symmetric, so D = −(Z_1 − Z_2)
has the ``LaplaceDifference(b)`` law.

May import: nothing from the project (numpy only).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class LaplaceDifference:
    """D = Z − Z′ with Z, Z′ i.i.d. Laplace(0, b): density
    (1 + |x|/b) e^{−|x|/b}/(4b), tail P(D > a) = (2 + a/b) e^{−a/b}/4 for
    a ≥ 0 (integrate the density; symmetric about 0)."""

    scale: float

    def __post_init__(self):
        b = self.scale
        if isinstance(b, bool) or not isinstance(b, (int, float, np.number)) \
                or not (b > 0 and math.isfinite(b)):
            raise ValueError(f"LaplaceDifference.scale must be a finite number > 0, got {b!r}")

    def tail(self, a) -> np.ndarray:
        """P(D > a) for a ≥ 0."""
        x = np.asarray(a, dtype=float) / self.scale
        return np.exp(-x) * (2.0 + x) / 4.0

    def sf(self, x) -> np.ndarray:
        """P(D > x) for every real x."""
        x = np.asarray(x, dtype=float)
        t = self.tail(np.abs(x))
        return np.where(x >= 0, t, 1.0 - t)

    def cdf(self, x) -> np.ndarray:
        """P(D ≤ x)."""
        return self.sf(-np.asarray(x, dtype=float))

    def interval(self, x1, x2) -> np.ndarray:
        """P(x1 < D ≤ x2) for x1 ≤ x2, elementwise, without cancellation in
        the tails: for 0 ≤ a1 ≤ a2, tail(a1) − tail(a2) =
        e^{−a1/b}/4·[−(2 + a1/b)·expm1(−h) − h e^{−h}] with h = (a2 − a1)/b,
        a difference of two terms of ratio at least (2 + a1/b)/1 > 2, so it
        loses no more than a few ulps."""
        x1 = np.asarray(x1, dtype=float)
        x2 = np.asarray(x2, dtype=float)
        b = self.scale

        def diff(a1, a2):
            A = a1 / b
            h = (a2 - a1) / b
            return np.exp(-A) / 4.0 * (-(2.0 + A) * np.expm1(-h) - h * np.exp(-h))

        pos, neg = x1 >= 0, x2 <= 0
        mid = ~(pos | neg)
        out = np.where(pos, diff(np.abs(x1), np.abs(x2)), 0.0)
        out = np.where(neg, diff(np.abs(x2), np.abs(x1)), out)
        out = np.where(mid, 1.0 - self.tail(np.abs(x1)) - self.tail(np.abs(x2)), out)
        return np.maximum(out, 0.0)

    def __str__(self) -> str:
        return f"Laplace({self.scale:g}) − Laplace({self.scale:g})"


@dataclass(frozen=True)
class ScalarStateModel:
    """See the module docstring.  ``state(learner_state) -> (runs,)`` reads
    u_t from the state ``act`` receives at round t (and, after ``feed``,
    u_{t+1}); ``action_probs(u) -> (m, K)`` for u of shape (m,);
    ``shift(row) -> float`` for a loss row (K,).  ``source`` says where the
    model comes from (paper, line)."""

    state: Callable[[dict], np.ndarray]
    action_probs: Callable[[np.ndarray], np.ndarray]
    shift: Callable[[np.ndarray], float]
    step: float
    noise: LaplaceDifference
    lo: float
    hi: float
    monotone: tuple
    start: float = 0.0
    source: str = ""

    def __post_init__(self):
        for name in ("step", "lo", "hi", "start"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) \
                    or not math.isfinite(v):
                raise ValueError(f"ScalarStateModel.{name} must be a finite number, got {v!r}")
        if not self.step > 0:
            raise ValueError(f"ScalarStateModel.step must be > 0, got {self.step!r}")
        if not self.lo < self.hi:
            raise ValueError(f"ScalarStateModel.lo must be < hi, got lo={self.lo!r}, "
                             f"hi={self.hi!r}")
        if not self.lo <= self.start <= self.hi:
            raise ValueError(f"ScalarStateModel.start must be in [lo, hi] = [{self.lo:g}, "
                             f"{self.hi:g}], got {self.start!r}")
        if not isinstance(self.noise, LaplaceDifference):
            raise ValueError(f"ScalarStateModel.noise must be a LaplaceDifference, got "
                             f"{self.noise!r}")
        if not all(m in (-1, 0, 1) for m in self.monotone):
            raise ValueError(f"ScalarStateModel.monotone must hold -1, 0 or +1 per arm, got "
                             f"{self.monotone!r}")

    @property
    def n_arms(self) -> int:
        return len(self.monotone)

    def describe(self) -> str:
        return (f"u' = clip(u + shift(ℓ) + {self.step:.4g}·D, [{self.lo:.4g}, {self.hi:.4g}]), "
                f"D ~ {self.noise}, u_1 = {self.start:g}")
