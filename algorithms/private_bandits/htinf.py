"""HTINF (Huang et al. 2022) with α = 2: the base learner of Corollary 3.2.

The paper only cites it (Huang et al. 2022); the update used here:
FTRL with the ½-Tsallis regulariser −2Σ√x_i, learning rate η_t = 1/(σ√t),
importance-weighted loss estimates, and a skip rule that feeds a loss as 0
when |ℓ| > Θ·√x_{t,i}/η_t with Θ = 1 − 2^{−1/3}.
"""
from __future__ import annotations

import numpy as np

from ..backend import add_at, xp_of
from ..core import Learner, sample_categorical

THETA = 1.0 - 2.0 ** (-1.0 / 3.0)


def tsallis_weights(scaled_L: np.ndarray, iters: int = 60) -> np.ndarray:
    """x_i = 1/(η L̂_i + λ)², with λ chosen so that Σx_i = 1 (the FTRL step in
    closed form).  f(λ) = Σ(ηL̂_i + λ)^{−2} − 1 is convex and decreasing on
    λ > −min ηL̂, with root in [m + 1, m + √K] for m = −min ηL̂; Newton from
    the left end increases monotonically to the root, so it needs no
    safeguarding and vectorises over runs."""
    xp = xp_of(scaled_L)
    m = -scaled_L.min(axis=-1, keepdims=True)
    lam = m + 1.0
    for _ in range(iters):
        s = scaled_L + lam
        inv2 = s ** -2.0
        f = inv2.sum(axis=-1, keepdims=True) - 1.0
        fp = -2.0 * (s ** -3.0).sum(axis=-1, keepdims=True)
        step = f / fp
        lam = lam - step
        if bool(xp.all(xp.abs(step) <= 1e-13 * xp.abs(lam))):
            break
    x = (scaled_L + lam) ** -2.0
    return x / x.sum(axis=-1, keepdims=True)


def htinf_learner(K: int, sigma: float) -> Learner:
    """Per round (its own round counter t = 1, 2, …): x_t from the closed-form
    FTRL step at η_t = 1/(σ√t); sample I_t ~ x_t; on loss ℓ of I_t feed
    ℓ̂(I_t) = ℓ/x_t(I_t) unless |ℓ| > Θ√x_t(I_t)/η_t, in which case feed 0."""

    def eta(t):
        return 1.0 / (sigma * np.sqrt(t))

    def probs(state, advice=None):
        return tsallis_weights(eta(state["t"] + 1) * state["L"])

    def init(runs, rng):
        return {"L": xp_of(rng).zeros((runs, K)), "t": 0}

    def commit(state, advice, actions):
        return {**state, "x": probs(state)}

    def act(state, advice, rng):
        x = probs(state)
        actions = sample_categorical(x, rng.random(x.shape[0]))
        return {**state, "x": x}, actions

    def feed(state, actions, losses, rng):
        t = state["t"] + 1
        xp = xp_of(state["L"])
        rows = xp.arange(actions.shape[0])
        x_played = state["x"][rows, actions]
        skip = xp.abs(losses) > THETA * xp.sqrt(x_played) / eta(t)
        return {"L": add_at(xp, state["L"], rows, actions,
                            xp.where(skip, 0.0, losses / x_played)), "t": t}

    return Learner(init=init, act=act, feed=feed, n_arms=K, probs=probs, commit=commit)
