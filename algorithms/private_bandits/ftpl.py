"""Bandit FTPL with geometric resampling: Algorithm 4 of Asi, Raman & Talwar
(ICML 2025, App. E.2), after Neu & Bartók (2016)."""
from __future__ import annotations

import numpy as np

from ..backend import add_at, xp_of
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
        return {"L": xp_of(rng).zeros((runs, K))}

    def act(state, advice, rng):
        L = state["L"]
        z = rng.laplace(0.0, scale, L.shape)
        return state, xp_of(L).argmin(L + z, axis=1)

    def feed(state, actions, losses, rng):
        L = state["L"]
        xp = xp_of(L)
        runs = L.shape[0]
        counts = xp.full(runs, M, dtype=float)
        if xp is np:
            active = np.arange(runs)
            for i in range(1, M + 1):
                if active.size == 0:
                    break
                z = rng.laplace(0.0, scale, (active.size, K))
                hit = np.argmin(L[active] + z, axis=1) == actions[active]
                counts[active[hit]] = i
                active = active[~hit]
        else:
            # Arrays of one shape on a device (a new shape each redraw would
            # compile anew): every run redraws M times, and only the runs
            # still waiting for a match keep theirs — the same law.  Always
            # M draws: stopping when every run has matched would make a
            # block's later draws depend on other blocks' runs (coupled
            # runs draw block by block, audit.execution.blocks).
            waiting = xp.ones(runs, dtype=bool)
            for i in range(1, M + 1):
                z = rng.laplace(0.0, scale, (runs, K))
                hit = waiting & (xp.argmin(L + z, axis=1) == actions)
                counts = xp.where(hit, float(i), counts)
                waiting = waiting & ~hit
        return {"L": add_at(xp, L, xp.arange(runs), actions, losses * counts)}

    return Learner(init=init, act=act, feed=feed, n_arms=K)
