"""Algorithm 3 of Asi, Raman & Saha ("Private Online Learner for Adaptive
Adversaries"): mirror descent with the entropy regulariser on the clipped
simplex Δ̃_N = {w ∈ Δ_N : min_j w(j) ≥ S/(NT)}, fed Laplace-noised losses.

Line 4: J_t ~ w_t (one uniform per run, ``sample_categorical``); line 6:
ℓ̃_t = ℓ_t + Z_t with Z_t(i) ~ Laplace(b) i.i.d. (the box: b = 1/ε);
line 7: w_{t+1} = argmin_{w ∈ Δ̃_N} ⟨w, η ℓ̃_t⟩ + D_φ(w ‖ w_t).  The
unconstrained minimiser over Δ_N is v ∝ w_t e^{−η ℓ̃_t}; the Bregman (KL)
projection of v onto Δ̃_N is w_i = max(c, κ v_i) with κ chosen so that
Σ w_i = 1 (Herbster & Warmuth 2001, as used by Lu & Zhang's Alg. 2).

Everything the learner does after round t is a function of the released
ℓ̃_1 … ℓ̃_t and fresh uniforms, so the exact transcript privacy loss is
computable (``TranscriptModel``): releases are ℓ̃_t (runs, N), means ℓ_t.
"""
from __future__ import annotations

import numpy as np

from ..core import Learner, TranscriptModel, sample_categorical


def project_clipped(v: np.ndarray, c: float) -> np.ndarray:
    """KL projection of rows of ``v`` (each summing to 1) onto {w ≥ c, Σw = 1}:
    w_i = max(c, κ v_i).  With v sorted decreasingly and k coordinates left
    unclipped, κ_k = (1 − (N − k)c)/Σ_{i ≤ k} v_(i); the right k is the largest
    with κ_k v_(k) ≥ c (then every smaller coordinate falls below c)."""
    n = v.shape[-1]
    if c <= 0.0:
        return v
    vs = -np.sort(-v, axis=-1)
    k = np.arange(1, n + 1)
    kappa = (1.0 - (n - k) * c) / np.cumsum(vs, axis=-1)
    ok = kappa * vs >= c
    kstar = n - 1 - np.argmax(ok[..., ::-1], axis=-1)      # last index where ok
    kap = np.take_along_axis(kappa, kstar[..., None], axis=-1)
    return np.maximum(c, kap * v)


def adaptive_learner(N: int, eta: float, clip: float, noise_scale: float) -> Learner:
    """Algorithm 3 with step η, floor c = ``clip`` = S/(NT) and Laplace(``noise_scale``)."""

    def init(runs, rng):
        return {"w": np.full((runs, N), 1.0 / N)}           # line 2

    def act(state, advice, rng):
        w = state["w"]
        j = sample_categorical(w, rng.random(w.shape[0]))  # line 4
        return {"w": w}, j

    def feed(state, actions, row, rng):
        w = state["w"]
        noisy = row[None, :] + rng.laplace(0.0, noise_scale, size=w.shape)   # line 6
        logv = np.log(w) - eta * noisy                       # line 7, before projection
        logv -= logv.max(axis=1, keepdims=True)
        v = np.exp(logv)
        v /= v.sum(axis=1, keepdims=True)
        return {"w": project_clipped(v, clip), "noisy": noisy}

    def point(state):
        return state["w"]

    def released(state):
        return state["noisy"]

    def means(actions, losses, aux, advice):
        m, T = actions.shape
        return np.broadcast_to(np.asarray(losses, dtype=float)[None, :T, :], (m, T, N))

    return Learner(init=init, act=act, feed=feed, n_arms=N, feedback="full", point=point,
                   transcript=TranscriptModel(released=released, means=means, scale=noise_scale))
