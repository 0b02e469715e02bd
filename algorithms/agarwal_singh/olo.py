"""The other instances of Agarwal & Singh (ICML 2017) whose privacy the
findings audit: Corollary 3.2's online linear optimisation over the sphere
and over the cube (Algorithm 1 with R(x) = ‖x‖₂² on the tree of
Algorithm 2), and Algorithm 4 (the reduction of Lemma 4.2) around any base
bandit learner.

Corollary 3.2, items 2 and 3 (Section 2 defines the sets):

* sphere: 𝒳 = {‖x‖₂ ≤ 1}, 𝒴 = {‖l‖₂ ≤ 1}, λ = √N log T/ε (‖𝒴‖₁ = √N);
* cube:   𝒳 = {‖x‖∞ ≤ 1}, 𝒴 = {‖l‖₁ ≤ 1}, λ = log T/ε (‖𝒴‖₁ = 1).

Line 5 of Algorithm 1, argmin_{x ∈ 𝒳} η⟨x, L̃⟩ + ‖x‖₂², is the Euclidean
projection of the unconstrained minimiser −ηL̃/2 onto 𝒳: radial on the
ball (u/max(1, ‖u‖₂)), coordinatewise clipping to [−1, 1] on the cube.

Algorithm 4 (Lemma 4.2): round t plays the base learner's x̃_t (here a
vertex e_{i_t} of the simplex: the arm i_t), observes ⟨l_t, x̃_t⟩ = l_t(i_t)
and forwards l_t(i_t) + ⟨Z_t, x̃_t⟩ = l_t(i_t) + Z_t(i_t), Z_t ~ Lap^N(λ),
to the base learner; λ = B/ε with B = max |⟨l, x̃⟩|/‖x̃‖∞.  Only Z_t(i_t)
is ever used, so one Laplace draw per run is the same law as the box's N.
Draw order per round: the base learner's ``act``, then (in ``feed``) the
Laplace draw, then the base learner's ``feed``.
"""
from __future__ import annotations

import numpy as np

from ..core import Learner, sample_categorical, softmax_rows
from .bandit import played_loss_laplace
from .full_info import _tree_learner, laplace_pad


def project_ball(u: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row onto the unit ℓ₂ ball."""
    norm = np.linalg.norm(u, axis=1, keepdims=True)
    return u / np.maximum(norm, 1.0)


def project_cube(u: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row onto [−1, 1]^N."""
    return np.clip(u, -1.0, 1.0)


PROJECTIONS = {"sphere": project_ball, "cube": project_cube}


def ftrl_olo_learner(N: int, T: int, eta: float, lam: float, draws: int, released_until: int,
                     body: str) -> Learner:
    """Algorithm 1 with R(x) = ‖x‖₂² over ``body`` ("sphere": the unit ℓ₂
    ball, "cube": [−1, 1]^N) and 𝒟 = Lap^N(λ), on the tree of Algorithm 2
    (``full_info._tree_learner``: same padding and draw order as the
    experts' FTRL, minus the expert's uniform).  The output is the point x_t
    (``point``); there is no discrete action (every action is 0)."""
    project = PROJECTIONS[body]

    def laplace(rng, shape):
        return rng.laplace(0.0, lam, shape)

    def choose(Lt, rng):
        x = project(-0.5 * eta * Lt)
        return x, np.zeros(x.shape[0], dtype=np.int64)

    return _tree_learner(N, T, draws, laplace, laplace_pad(lam), choose, released_until,
                         {"scale": float(lam)})


def exp2_learner(N: int, eta: float, gamma: float) -> Learner:
    """Algorithm 5 (EXP2 with exploration μ uniform) on its own, a base
    learner for Algorithm 4: p_t = (1 − γ)q_t + γ/N, i_t ~ p_t with one
    uniform per run, and q_{t+1}(i_t) ∝ q_t(i_t) exp(−η ℓ̃/p_t(i_t)) for the
    fed loss ℓ̃ (any sign; log-weights)."""

    def init(runs, rng):
        return {"logq": np.zeros((runs, N)), "p_played": np.ones(runs)}

    def act(state, advice, rng):
        p = (1.0 - gamma) * softmax_rows(state["logq"]) + gamma / N
        a = sample_categorical(p, rng.random(p.shape[0]))
        return {**state, "p_played": p[np.arange(p.shape[0]), a]}, a

    def feed(state, actions, fed, rng):
        logq = state["logq"].copy()
        logq[np.arange(logq.shape[0]), actions] -= eta * fed / state["p_played"]
        return {**state, "logq": logq}

    return Learner(init=init, act=act, feed=feed, n_arms=N)


def reduction_learner(base: Learner, lam: float) -> Learner:
    """Algorithm 4 𝒜′(𝒜, Lap^N(λ)) around the base learner ``base``
    (module docstring).  The released values are the forwarded noisy
    losses; the base learner sees nothing else, so the arms are
    post-processing of them (Lemma 4.2's proof)."""

    def init(runs, rng):
        return {"base": base.init(runs, rng), "released": np.full(runs, np.nan)}

    def act(state, advice, rng):
        b, a = base.act(state["base"], advice, rng)
        return {**state, "base": b}, a

    def feed(state, actions, obs, rng):
        noisy = obs + rng.laplace(0.0, lam, obs.shape[0])
        return {"base": base.feed(state["base"], actions, noisy, rng), "released": noisy}

    return Learner(init=init, act=act, feed=feed, n_arms=base.n_arms,
                   transcript=played_loss_laplace(lam))
