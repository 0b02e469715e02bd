"""Algorithm 2 of Asi, Raman & Saha ("SVT-based algorithm"): Algorithm 1 run
with ε/2, restarted whenever an AboveThreshold instance (sparse vector
technique, ε/2) finds a window whose regret is too large.

Line by line (t is 1-based, t_i the start of the current instance):

* line 2: a new instance of Algorithm 1 "from t_i" with privacy ε/2, i.e.
  report-noisy-max with Laplace(2/(ε/2)) = Laplace(4/ε) (Lemma 2.3) at its
  local rounds τ = t − t_i + 1 = 2^ℓ over its local window [τ/2, τ − 1].
* line 3: ``InitializeSparseVec(ε/2, β/T)``: AboveThreshold (Dwork & Roth,
  Alg. 1 / Thm 3.23, the Lemma 2.4 mechanism) with ε' = ε/2 for Δ-sensitive
  queries: noisy threshold ρ ~ Laplace(2Δ/ε'), each query gets fresh
  ν ~ Laplace(4Δ/ε'); it halts at the first query with q + ν ≥ ρ (the
  threshold is 0: the box folds Reg_w + α + 1 into the query).  The paper
  assumes 1-sensitive queries (Lemma 2.4), i.e. Δ = 1.
* lines 7–8: α = 16(2 log T + log(2/β))/ε, Reg_w = 16 log(NT/β)/ε +
  9 √(w log(TN/β)), and for every w ≤ t − t_i the query
  q_w^t = Σ_{i=t−w}^{t} ℓ_i(j_i) − min_j Σ_{i=t−w}^{t} ℓ_i(j) − Reg_w − α − 1.
  β = 1/T (Theorem 3.6).  Logs are natural.
* lines 9–12: if some q_w^t is above threshold, t_{i+1} = t and "go to
  line 2": a fresh Algorithm 1 and a fresh AboveThreshold.

Privacy arithmetic (see the package README paragraph / report):
the regret query is 2-sensitive, not 1-sensitive: changing ℓ_r from (0, 1)
to (1, 0) when j_r = 1st expert and the 2nd expert is the window minimiser
raises Σ ℓ_i(j_i) by 1 and lowers min_j Σ ℓ_i(j) by 1.  And with the literal
restart t_{i+1} = t the restart round's loss is read by the halting
AboveThreshold, by the new AboveThreshold (its windows [t − w, t'] may start
at t_{i+1}) and by the new Algorithm 1 (its first window, local round 1, is
round t_{i+1}), whereas the proof of Theorem 3.6 ("each user is used in the
instantiation of both Algorithm 1 and SVT with parameters ε/2") needs every
loss in one Algorithm 1 instance and one AboveThreshold instance.
``restart="next"`` is that reading (the new instances start at t + 1) and
``sensitivity=2`` calibrates AboveThreshold to the true sensitivity.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import Learner
from .lazy import J0


def svt_thresholds(T: int, N: int, epsilon: float, scale: float = 1.0):
    """α and w ↦ Reg_w + α + 1 (Alg. 2 line 7, β = 1/T as in Theorem 3.6),
    multiplied by ``scale``.  AboveThreshold is private for every
    data-independent threshold, so ``scale`` never changes the privacy claim;
    scale < 1 only lets a short audit prefix see restarts (with the paper's
    constants α ≈ 16·3·log T/ε, no restart can happen in fewer than about
    T = 2000 rounds at ε = 1)."""
    beta = 1.0 / T
    alpha = 16.0 * (2.0 * math.log(T) + math.log(2.0 / beta)) / epsilon
    reg0 = 16.0 * math.log(N * T / beta) / epsilon
    lg = math.log(T * N / beta)

    def offset(w: np.ndarray) -> np.ndarray:
        return scale * (reg0 + 9.0 * np.sqrt(w * lg) + alpha + 1.0)

    return alpha, offset


def svt_learner(N: int, T: int, epsilon: float, restart: str = "literal",
                sensitivity: float = 1.0, threshold_scale: float = 1.0) -> Learner:
    """Algorithm 2.  ``restart``: "literal" (t_{i+1} = t, the box) or "next"
    (t_{i+1} = t + 1, what the privacy proof needs); ``sensitivity``: the Δ
    AboveThreshold's noise is calibrated for (the paper: 1)."""
    if restart not in ("literal", "next"):
        raise ValueError(f"restart must be 'literal' or 'next', got {restart!r}")
    eps_half = epsilon / 2.0                     # lines 2 and 3: ε/2 each
    b_rnm = 2.0 / eps_half                       # Lemma 2.3 at ε/2
    b_rho = 2.0 * sensitivity / eps_half         # AboveThreshold at ε/2 (D&R Thm 3.23)
    b_nu = 4.0 * sensitivity / eps_half
    _, offset = svt_thresholds(T, N, epsilon, threshold_scale)

    def init(runs, rng):
        cap = 16
        return {"t": 0, "start": np.ones(runs, dtype=np.int64),
                "window": np.zeros((runs, N)), "j": np.full(runs, J0, dtype=np.int64),
                "rho": rng.laplace(0.0, b_rho, size=runs),
                # prefix sums: P[:, s] = Σ_{i ≤ s} ℓ_i(j_i) per run; C[s] = Σ_{i ≤ s} ℓ_i
                "P": np.zeros((runs, cap)), "C": np.zeros((cap, N))}

    def act(state, advice, rng):
        t = state["t"] + 1
        tau = t - state["start"] + 1             # local round of the current instance
        j, window = state["j"], state["window"]
        decide = (tau >= 2) & ((tau & (tau - 1)) == 0)
        fresh = tau == 1                         # instance's first round: plays j_0
        if decide.any():
            z = rng.laplace(0.0, b_rnm, size=(j.shape[0], N))
            pick = np.argmin(window + z, axis=1)
            j = np.where(decide, pick, j)
            window = np.where(decide[:, None], 0.0, window)
        if fresh.any():
            j = np.where(fresh, J0, j)
        new = dict(state)
        new.update(j=j, window=window)
        return new, j

    def feed(state, actions, row, rng):
        t = state["t"] + 1
        runs = actions.shape[0]
        P, C = state["P"], state["C"]
        if t >= P.shape[1]:                      # grow the prefix-sum buffers
            P = np.concatenate([P, np.zeros_like(P)], axis=1)
            C = np.concatenate([C, np.zeros_like(C)], axis=0)
        P[:, t] = P[:, t - 1] + row[actions]
        C[t] = C[t - 1] + row
        window = state["window"] + row
        # Line 8: windows [s, t] for s = t − w, w ≤ t − t_i, i.e. s ≥ t_i.
        s = np.arange(1, t + 1)
        best = (C[t][None, :] - C[:t]).min(axis=1)           # (t,), the same for every run
        # q + ν ≥ ρ  ⇔  ν − P_{s−1} ≥ ρ − P_t + min + offset  (played sum = P_t − P_{s−1})
        rhs = (state["rho"] - P[:, t])[:, None] + (best + offset((t - s).astype(float)))[None, :]
        # One ν ~ Laplace(b_ν) per query, drawn as b_ν(E − E') with E, E' ~ Exp(1)
        # (cheaper than Generator.laplace; the reference draws it the same way).
        nu = rng.standard_exponential(size=(runs, t))
        nu -= rng.standard_exponential(size=(runs, t))
        nu *= b_nu
        nu -= P[:, :t]
        hit = nu >= rhs
        live = s[None, :] >= state["start"][:, None]
        fired = (hit & live).any(axis=1)
        rho_new = rng.laplace(0.0, b_rho, size=runs)         # line 3 of a restarted instance
        start, rho = state["start"], state["rho"]
        if fired.any():
            rho = np.where(fired, rho_new, rho)
            if restart == "literal":
                # t_{i+1} = t; the new Algorithm 1 starts "from t_i": its local
                # round 1 is this round, so its first window already holds ℓ_t.
                start = np.where(fired, t, start)
                window = np.where(fired[:, None], row[None, :], window)
            else:
                # The proof's reading: the new instances see only ℓ_{t+1}, ….
                start = np.where(fired, t + 1, start)
                window = np.where(fired[:, None], 0.0, window)
        return {"t": t, "start": start, "window": window, "j": state["j"], "rho": rho,
                "P": P, "C": C, "restarted": fired}

    return Learner(init=init, act=act, feed=feed, n_arms=N, feedback="full")
