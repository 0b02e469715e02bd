"""Bandit FTPL with geometric resampling: Algorithm 4 of Asi, Raman & Talwar
(ICML 2025, App. E.2), after Neu & Bartók (2016)."""
from __future__ import annotations

import numpy as np

from ..core import Learner


def ftpl_learner(K: int, eta: float, M: int) -> Learner:
    """Line 5: I_t = argmin_i (L̂_{t−1}(i) + Z_i), Z ~ Lap(1/η) i.i.d.
    Lines 8–13: redraw Z′ until the perturbed leader is I_t again, at most M
    times; M_t is the number of draws.  Line 17: ℓ̂_t(I_t) = ℓ_t(I_t)·M_t.

    Two readings of the box are fixed here.  Line 11 prints argmax; the
    resampling must re-draw the *same* rule as line 5 (argmin) or the estimate
    is not of 1/P(I_t).  When no redraw matches within M, Neu & Bartók set
    M_t = M (the box initialises M_t = 0); we follow Neu & Bartók, whose
    estimate is biased by the factor 1 − (1 − p)^M, as in Neu & Bartók's geometric resampling.
    """
    scale = 1.0 / eta

    def init(runs, rng):
        return {"L": np.zeros((runs, K))}

    def act(state, advice, rng):
        L = state["L"]
        z = rng.laplace(0.0, scale, L.shape)
        return state, np.argmin(L + z, axis=1)

    def feed(state, actions, losses, rng):
        L = state["L"]
        runs = L.shape[0]
        counts = np.full(runs, M, dtype=float)
        active = np.arange(runs)
        for i in range(1, M + 1):
            if active.size == 0:
                break
            z = rng.laplace(0.0, scale, (active.size, K))
            hit = np.argmin(L[active] + z, axis=1) == actions[active]
            counts[active[hit]] = i
            active = active[~hit]
        L = L.copy()
        L[np.arange(runs), actions] += losses * counts
        return {"L": L}

    return Learner(init=init, act=act, feed=feed, n_arms=K)
