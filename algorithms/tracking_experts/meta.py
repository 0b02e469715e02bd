"""The reduction of Theorem 4.1 of Asi, Raman & Saha (private static regret
⟹ private dynamic regret): algorithm ℬ runs a private experts algorithm 𝒜
over the meta-experts ℰ, each a sequence of experts with at most S switches,
plays the expert its chosen meta-expert plays this round, and feeds 𝒜 the
meta-loss ℓ̃_t(e) = ℓ_t(e(t)).

The meta-experts (proof of Theorem 4.1): e_{t_{1:c}, j_{1:c+1}} for c = 0..S,
switch times t_1 < … < t_c in [T] and experts j_1..j_{c+1} in [N]; it plays
j_i from round t_{i−1} + 1 to t_i with t_0 = 0 and t_{c+1} = T (the proof's
"t_0 = 1" would leave round 1 unassigned; a switch at t_c = T plays j_{c+1}
nowhere, and that meta-expert is kept, as the proof's count
|ℰ| = Σ_c C(T, c) N^{c+1} keeps it).  They are fixed before the game, so ℬ's
output is a function of 𝒜's output and public data.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..core import Learner


def meta_experts(T: int, N: int, S: int) -> np.ndarray:
    """The table ℰ as an (|ℰ|, T) array of 0-based experts, in the order
    c = 0..S, switch times lexicographic, experts lexicographic."""
    rows = []
    for c in range(S + 1):
        for times in itertools.combinations(range(1, T + 1), c):
            bounds = (0,) + times + (T,)
            for experts in itertools.product(range(N), repeat=c + 1):
                row = np.empty(T, dtype=np.int64)
                for i, j in enumerate(experts):
                    row[bounds[i]:bounds[i + 1]] = j
                rows.append(row)
    return np.asarray(rows)


def meta_reduction_learner(base: Learner, table: np.ndarray, n_experts: int) -> Learner:
    """ℬ around the full-information learner ``base`` over the |ℰ| rows of
    ``table``: ℬ plays J_t = E_t(t) for 𝒜's choice E_t, and feeds 𝒜 the row
    ℓ̃_t = ℓ_t(table[:, t]).  Draws: only 𝒜's, in 𝒜's order."""
    if not base.full_rows:
        raise ValueError("the reduction of Theorem 4.1 needs a full-information 𝒜")

    def init(runs, rng):
        return {"base": base.init(runs, rng), "t": 0, "meta": np.zeros(runs, dtype=np.int64)}

    def act(state, advice, rng):
        b, m = base.act(state["base"], None, rng)
        return {**state, "base": b, "meta": m}, table[m, state["t"]]

    def feed(state, actions, row, rng):
        meta_row = np.asarray(row, dtype=float)[table[:, state["t"]]]
        b = base.feed(state["base"], state["meta"], meta_row, rng)
        return {**state, "base": b, "t": state["t"] + 1}

    return Learner(init=init, act=act, feed=feed, n_arms=n_experts, feedback="full")
