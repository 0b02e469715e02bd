"""Algorithm 4 (reduction to the non-private setting for bandit feedback)
around Algorithm 5 (EXP2 with exploration μ) of Agarwal & Singh (ICML 2017),
for multi-armed bandits (Theorem 4.1): the decision set is the simplex's
vertices {e_i}, so x̃_t = e_{i_t} and ⟨ℓ_t, x̃_t⟩ = ℓ_t(i_t).
"""
from __future__ import annotations

import numpy as np

from ..core import Learner, TranscriptModel, sample_categorical, softmax_rows


def private_exp2_learner(N: int, eta: float, gamma: float, lam: float) -> Learner:
    """Per round (draw order: one uniform per run, then one Laplace per run):

    * Alg 5 line 3: p_t = (1 − γ) q_t + γ μ with μ uniform; play i_t ~ p_t.
    * Alg 4 lines 3–5: observe ℓ_t(i_t), forward ℓ_t(i_t) + ⟨Z_t, e_{i_t}⟩
      with Z_t ~ Lap^N(λ).  Only Z_t(i_t) is ever used, so one Laplace draw per
      run is the same law as the box's N draws.
    * Alg 5 lines 4–5: with P_t = diag(p_t), the estimate P_t⁺ e_i e_iᵀ ℓ̃_t
      is (ℓ_t(i_t) + Z_t(i_t)) / p_t(i_t) on i_t and 0 elsewhere; q_{t+1} ∝
      q_t exp(−η ℓ̂_t), kept as log-weights (the noisy loss can be negative).

    The released values are the forwarded noisy losses; actions depend only
    on them and independent uniforms, so the transcript loss is exact.  The
    loss estimate and the log-weights take losses of any sign (the paper's
    ‖l_t‖∞ ≤ 1 allows negative ones, and the noisy loss is negative anyway):
    nothing is clipped.  ``shift_bound`` bounds each release's mean shift
    over every history by max_i |ℓ_t(i) − ℓ′_t(i)|, so the audit reports the
    pair's worst case (Σ_t shift_t/λ, an upper bound).
    """

    def init(runs, rng):
        return {"logq": np.zeros((runs, N)), "p_played": np.ones(runs),
                "released": np.full(runs, np.nan)}

    def dist(state):
        from scipy.special import expit   # here: importing scipy.special takes a third of a second
        logq = state["logq"]
        if N == 2:
            # softmax over two arms is a logistic; a row reduction per round
            # costs more than the whole rest of the step.
            q0 = expit(logq[:, 0] - logq[:, 1])
            q = np.stack([q0, 1.0 - q0], axis=1)
        else:
            q = softmax_rows(logq)
        return (1.0 - gamma) * q + gamma / N

    def act(state, advice, rng):
        p = dist(state)
        a = sample_categorical(p, rng.random(p.shape[0]))
        return {**state, "p_played": p[np.arange(p.shape[0]), a]}, a

    def feed(state, actions, obs, rng):
        noisy = obs + rng.laplace(0.0, lam, obs.shape[0])
        logq = state["logq"].copy()
        logq[np.arange(logq.shape[0]), actions] -= eta * noisy / state["p_played"]
        return {**state, "logq": logq, "released": noisy}

    return Learner(init=init, act=act, feed=feed, n_arms=N,
                   transcript=played_loss_laplace(lam))


def played_loss_laplace(lam: float) -> TranscriptModel:
    """The transcript of Algorithm 4: round t releases the played arm's loss
    ℓ_t(i_t) plus Laplace(λ), kept in the state's ``released``."""

    def means(actions, losses, aux=None, advice=None):
        T = actions.shape[1]
        return np.asarray(losses, dtype=float)[np.arange(T), actions]

    def shift_bound(losses_a, losses_b, rounds, advice=None):
        # Release t's mean is ℓ_t(i_t): over every history its two means are
        # at most max_i |ℓ_t(i) − ℓ′_t(i)| apart (ℓ₁ of a scalar).
        a = np.asarray(losses_a, dtype=float)[:rounds]
        b = np.asarray(losses_b, dtype=float)[:rounds]
        return np.abs(a - b).max(axis=1)

    return TranscriptModel(released=lambda s: s["released"], means=means, scale=float(lam),
                           shift_bound=shift_bound)
