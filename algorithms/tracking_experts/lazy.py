"""Algorithm 1 of Asi, Raman & Saha ("Limited Updates for Online Optimization
with Stochastic Adversaries"): a lazy learner that re-chooses its expert only
at rounds t = 2^ℓ, by report-noisy-max over the window [t/2, t − 1].

The box writes ``argmax_j Σ ℓ_i(j) + Z_t(j)`` over *losses*; the intent (the
proof of Lemma A.2 compares with j* = argmin E[ℓ(j)]) is the lowest-loss
expert, so we play ``argmin_j Σ ℓ_i(j) + Z_t(j)``.  Because Z is
symmetric this is report-noisy-max on the counts −Σ ℓ_i(j), which have the
same sensitivity, so the privacy analysis (Lemma 2.3) is unchanged.
"""
from __future__ import annotations

import numpy as np

from ..core import Learner

J0 = 0  # line 1: "Set j_0 ∈ [N]": any data-independent expert; we take expert 1.


def is_decision(tau: int) -> bool:
    """Line 3: local round τ = 2^ℓ with ℓ ≥ 1."""
    return tau >= 2 and (tau & (tau - 1)) == 0


def lazy_learner(N: int, noise_scale: float) -> Learner:
    """Algorithm 1 over N experts with Z_t(j) ~ Laplace(noise_scale).

    The window sums are public-schedule sums of the full-information losses,
    so they are the same for every run (shape (N,)); only the noise is per run.
    Each loss ℓ_i lies in exactly one window (rounds 1, 2–3, 4–7, …; the
    losses after the last power of two ≤ T are never used), which is why one
    report-noisy-max per window gives ε-DP for the whole sequence of choices
    (proof of Theorem 3.1).
    """

    def init(runs, rng):
        return {"t": 0, "window": np.zeros(N), "j": np.full(runs, J0, dtype=np.int64)}

    def act(state, advice, rng):
        t = state["t"] + 1                      # 1-based round of the box
        j, window = state["j"], state["window"]
        if is_decision(t):
            z = rng.laplace(0.0, noise_scale, size=(j.shape[0], N))
            j = np.argmin(window[None, :] + z, axis=1)
            window = np.zeros(N)                # next window starts at this round t
        return {"t": state["t"], "window": window, "j": j}, j

    def feed(state, actions, row, rng):
        return {"t": state["t"] + 1, "window": state["window"] + row, "j": state["j"]}

    return Learner(init=init, act=act, feed=feed, n_arms=N, feedback="full")
