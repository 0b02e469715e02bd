"""The EXP4 variants of Asi, Raman & Talwar (ICML 2025): Algorithm 6
(local-DP EXP4, Thm 4.4) and Algorithm 2 (private batched EXP4, Thm 4.5).

Expert advice μ_t ∈ Π([K])^N is public; both learners take it in ``act``.
"""
from __future__ import annotations

import numpy as np

from ..backend import xp_of
from ..core import Learner, TranscriptModel, sample_categorical, softmax_rows


def _mix(P, advice, gamma, K):
    """Q_t(i) = (1 − γ) Σ_j P(j) μ_t^j(i) + γ/K  (Alg 6 line 6, Alg 2 line 8)."""
    return (1.0 - gamma) * (P @ advice) + gamma / K


def ldp_exp4_learner(K: int, N: int, eta: float, gamma: float, epsilon: float,
                     noise_after_weighting: bool = False) -> Learner:
    """Algorithm 6: Laplace(1/ε) noise is added to the observed loss (line 8)
    *before* importance weighting (line 9), so each released value ℓ′_t(I_t)
    has sensitivity 1: ε-DP per round and, as each loss is used once, overall.

    ``noise_after_weighting=True`` is a mutant: the noise is added to
    ℓ_t(I_t)/Q_t(I_t), whose sensitivity is up to K/γ, so the same noise buys
    only (εK/γ)-DP."""
    scale = 1.0 / epsilon

    def probs(state, advice):
        return _mix(softmax_rows(state["logw"]), advice, gamma, K)

    def init(runs, rng):
        xp = xp_of(rng)
        return {"logw": xp.zeros((runs, N)), "noisy": xp.full(runs, np.nan)}

    def act(state, advice, rng):
        Q = probs(state, advice)
        actions = sample_categorical(Q, rng.random(Q.shape[0]))
        rows = xp_of(Q).arange(Q.shape[0])
        return {**state, "q_played": Q[rows, actions],
                "mu_played": advice[:, actions].T}, actions

    def feed(state, actions, losses, rng):
        if noise_after_weighting:
            est = losses / state["q_played"] + rng.laplace(0.0, scale, losses.shape[0])
            noisy = est
        else:
            noisy = losses + rng.laplace(0.0, scale, losses.shape[0])       # line 8
            est = noisy / state["q_played"]                                  # line 9
        logw = state["logw"] - eta * state["mu_played"] * est[:, None]       # lines 10–11
        logw = logw - logw.max(axis=1, keepdims=True)
        return {"logw": logw, "noisy": noisy}

    def means(actions, losses, aux=None, advice=None):
        played = losses[np.arange(actions.shape[1]), actions]  # release t: ℓ_t(I_t)
        return played / aux if noise_after_weighting else played

    model = TranscriptModel(released=lambda s: s["noisy"], means=means, scale=scale,
                            aux=(lambda s: s["q_played"]) if noise_after_weighting else None)
    return Learner(init=init, act=act, feed=feed, n_arms=K, probs=probs, transcript=model)


def batched_exp4_learner(K: int, N: int, eta: float, gamma: float, tau: int,
                         noise_scale: float) -> Learner:
    """Algorithm 2: P_r is fixed for a batch of τ rounds (line 6); per round
    Q_t mixes it with that round's advice; the batch average of μ_t^j·ℓ̂_t is
    released for every expert j with Lap(noise_scale) noise (line 14) and
    fed to multiplicative weights (line 15).

    ``noise_scale`` is 3K√(N ln(1/δ))/(γτε) for the paper's algorithm (line 14);
    it is a parameter so mutants can be built from the same code."""

    def probs(state, advice):
        P = state["P"] if state["t"] % tau else softmax_rows(state["logw"])
        return _mix(P, advice, gamma, K)

    def init(runs, rng):
        xp = xp_of(rng)
        return {"logw": xp.zeros((runs, N)), "P": xp.full((runs, N), 1.0 / N), "t": 0,
                "acc": xp.zeros((runs, N)), "noisy": xp.full((runs, N), np.nan)}

    def act(state, advice, rng):
        state = dict(state)
        if state["t"] % tau == 0:                                            # line 5
            state["P"] = softmax_rows(state["logw"])
        Q = _mix(state["P"], advice, gamma, K)
        actions = sample_categorical(Q, rng.random(Q.shape[0]))
        rows = xp_of(Q).arange(Q.shape[0])
        state["q_played"] = Q[rows, actions]
        state["mu_played"] = advice[:, actions].T
        return state, actions

    def feed(state, actions, losses, rng):
        state = dict(state)
        t = state["t"] + 1
        state["t"] = t
        # μ_t^j · ℓ̂_t = μ_t^j(I_t) ℓ_t(I_t)/Q_t(I_t): only the played arm is non-zero.
        acc = state["acc"] + state["mu_played"] * (losses / state["q_played"])[:, None]
        if t % tau == 0:                                                     # line 12
            noisy = acc / tau + rng.laplace(0.0, noise_scale, acc.shape)     # line 14
            logw = state["logw"] - eta * noisy                               # line 15
            state["logw"] = logw - logw.max(axis=1, keepdims=True)
            state["noisy"] = noisy
            acc = xp_of(acc).zeros_like(acc)
        else:
            state["noisy"] = xp_of(acc).full(acc.shape, np.nan)
        state["acc"] = acc
        return state

    def means(actions, losses, aux, advice):
        # Release r, expert j: (1/τ) Σ_{s in batch r} μ_s^j(I_s) ℓ_s(I_s)/Q_s(I_s);
        # Q_s(I_s) (aux) depends only on earlier releases, so it is the same on
        # both sides of a neighbouring pair.  Summed arm by arm as one batched
        # matrix product per arm (the (M, T, N) gather of μ_s(I_s) is slow).
        M, T = actions.shape
        n_batches = T // tau
        n = n_batches * tau
        acts, q = actions[:, :n], np.asarray(aux, float)[:, :n]
        adv = np.asarray(advice, float)[:n].reshape(n_batches, tau, N, K)
        out = np.zeros((n_batches, M, N))
        for k in range(K):
            w = np.where(acts == k, np.asarray(losses, float)[:n, k][None, :] / q, 0.0)
            out += np.matmul(w.reshape(M, n_batches, tau).transpose(1, 0, 2), adv[:, :, :, k])
        return out.transpose(1, 0, 2) / tau

    model = TranscriptModel(released=lambda s: s["noisy"], means=means, scale=noise_scale,
                            aux=lambda s: s["q_played"],
                            shift_bound=_batched_shift_bound(K, N, gamma, tau))
    return Learner(init=init, act=act, feed=feed, n_arms=K, probs=probs, transcript=model)


def _batched_shift_bound(K: int, N: int, gamma: float, tau: int):
    """For release r (batch r, a vector over the N experts), an upper bound
    over every history on the ℓ₁ distance of its two means.  A round s of
    batch r that differs between the sequences moves coordinate j by
    μ_s^j(I_s)|Δℓ_s(I_s)|/(τ Q_s(I_s)) (Algorithm 2 line 14), so the ℓ₁ shift
    is at most max_i |Δℓ_s(i)| Σ_j μ_s^j(i) / (τ q_s(i)) with q_s(i) ≤ Q_s(i):

    * batch 1: P_1 is uniform (w_1 ≡ 1, line 1), so
      q_s(i) = Q_s(i) = (1 − γ) mean_j μ_s^j(i) + γ/K exactly (line 8);
    * later batches: P_r is any point of the simplex (the Laplace noise of
      line 14 reaches every weight vector), so
      q_s(i) = (1 − γ) min_j μ_s^j(i) + γ/K, the infimum of line 8 over P_r.

    At γ = 1 both are 1/K and the bound is exact for every pair; with every
    expert recommending the changed arm it is N·K/τ, i.e. √N ε/(3√ln(1/δ))
    over the scale of line 14 (the proof of Theorem 4.5 allows ε)."""
    def shift_bound(losses_a, losses_b, rounds, advice):
        n_batches = rounds // tau
        a = np.asarray(losses_a, float)[:n_batches * tau]
        b = np.asarray(losses_b, float)[:n_batches * tau]
        adv = np.asarray(advice, float)[:n_batches * tau]          # (T, N, K)
        out = np.zeros(n_batches)
        for s in np.flatnonzero(np.any(a != b, axis=1)):
            mu = adv[s]
            floor = mu.mean(axis=0) if s < tau else mu.min(axis=0)
            q = (1.0 - gamma) * floor + gamma / K
            out[s // tau] += float(np.max(np.abs(a[s] - b[s]) * mu.sum(axis=0) / q)) / tau
        return out
    return shift_bound
