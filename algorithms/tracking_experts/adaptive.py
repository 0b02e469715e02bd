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

For N = 2 the chosen expert depends on the history only through
u_t = ln(w_t(1)/w_t(2)) (``two_expert_state_model``), which lets the auditor
compute exact probabilities of the chosen experts (Definition 2.1's output)
by a recursion on u.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import Learner, TranscriptModel, sample_categorical
from ..state_model import LaplaceDifference, ScalarStateModel


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


def adaptive_learner(N: int, eta: float, clip: float, noise_scale: float,
                     show_weights: bool = True) -> Learner:
    """Algorithm 3 with step η, floor c = ``clip`` = S/(NT) and Laplace(``noise_scale``).
    ``show_weights`` exposes w_t as the learner's point (events may then
    threshold it); an audit of the chosen experts alone (Definition 2.1)
    must not see w_t, which reveals the noisy losses."""

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

    return Learner(init=init, act=act, feed=feed, n_arms=N, feedback="full",
                   point=point if show_weights else None,
                   transcript=TranscriptModel(released=released, means=means, scale=noise_scale))


def two_expert_state_model(eta: float, clip: float, noise_scale: float) -> ScalarStateModel:
    """Algorithm 3 with N = 2 as a scalar state model (``algorithms.state_model``).

    With u = ln(w(1)/w(2)): line 4 draws expert 1 with probability
    w(1) = 1/(1 + e^{−u}) (increasing in u), expert 2 with 1/(1 + e^{u})
    (decreasing).  Line 7 before projection is v ∝ w_t e^{−η ℓ̃_t}, i.e.
    ln(v(1)/v(2)) = u_t − η(ℓ_t(1) − ℓ_t(2)) − η(Z_t(1) − Z_t(2)); the KL
    projection onto Δ̃_2 = {w ≥ c} is max(c, κ v_i) (``project_clipped``),
    which for N = 2 clips w(1) to [c, 1 − c], i.e. u to
    [ln(c/(1 − c)), ln((1 − c)/c)].  Z_t(1) − Z_t(2) of two i.i.d.
    Laplace(b) (line 6) is symmetric, so the update is u + shift + η·D with
    shift = −η(ℓ(1) − ℓ(2)) and D ~ Laplace(b) − Laplace(b).  Needs c < 1/2
    (else w is fixed at (1/2, 1/2))."""
    if not 0.0 < clip < 0.5:
        raise ValueError(f"clip must be in (0, 1/2) for a two-expert state model, got {clip!r}")
    bound = math.log((1.0 - clip) / clip)

    def state(st):
        w = np.asarray(st["w"], dtype=float)
        return np.log(w[:, 0]) - np.log(w[:, 1])

    def action_probs(u):
        u = np.asarray(u, dtype=float)
        p1 = 1.0 / (1.0 + np.exp(-u))
        return np.stack([p1, 1.0 / (1.0 + np.exp(u))], axis=-1)

    def shift(row):
        return -eta * (float(row[0]) - float(row[1]))

    return ScalarStateModel(state=state, action_probs=action_probs, shift=shift, step=eta,
                            noise=LaplaceDifference(noise_scale), lo=-bound, hi=bound,
                            monotone=(1, -1), start=0.0,
                            source="Asi, Raman & Saha, Algorithm 3, lines 4, 6, 7 with N = 2")
