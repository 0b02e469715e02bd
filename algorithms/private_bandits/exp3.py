"""EXP3 with mixing: Algorithm 3 of Asi, Raman & Talwar (ICML 2025, App. D)."""
from __future__ import annotations

import math

import numpy as np

from ..backend import add_at, xp_of
from ..core import Learner, sample_categorical, softmax_rows


def exp3_learner(K: int, eta: float, gamma: float) -> Learner:
    """Algorithm 3.  Line 4: P_t = (1 − γ) w_t/Σw_t + γ/K;  line 6:
    ℓ̂_t(i) = ℓ_t(i)·1{I_t=i}/P_t(i);  line 7: w_{t+1}(i) = w_t(i)·exp(−η ℓ̂_t(i)).

    Weights are kept in the log domain so that the App. G.1 divergence
    (probabilities within 1e-5 of the mixing floor) stays exact.  With two
    arms the state is the single log-ratio d = log w(2) − log w(1), which
    makes a round a handful of vector operations (the hot loop of audits).
    """
    if K == 2:
        return _exp3_two_arms(eta, gamma)

    def probs(state, advice=None):
        return (1.0 - gamma) * softmax_rows(state["logw"]) + gamma / K

    def init(runs, rng):
        return {"logw": xp_of(rng).zeros((runs, K))}

    def commit(state, advice, actions):
        return {"logw": state["logw"], "P": probs(state)}

    def act(state, advice, rng):
        P = probs(state)
        actions = sample_categorical(P, rng.random(P.shape[0]))
        return {"logw": state["logw"], "P": P}, actions

    def feed(state, actions, losses, rng):
        xp = xp_of(state["logw"])
        rows = xp.arange(state["logw"].shape[0])
        logw = add_at(xp, state["logw"], rows, actions,
                      -eta * losses / state["P"][rows, actions])
        # Re-centre so that exp() in probs never underflows every arm at once.
        logw = logw - logw.max(axis=1, keepdims=True)
        return {"logw": logw}

    return Learner(init=init, act=act, feed=feed, n_arms=K, probs=probs, commit=commit)


def _exp3_two_arms(eta: float, gamma: float) -> Learner:
    def p_first(d):
        # P_t(1) = (1 − γ)/(1 + e^d) + γ/2, written to stay exact for |d| large.
        xp = xp_of(d)
        return (1.0 - gamma) * xp.exp(-xp.logaddexp(0.0, d)) + gamma / 2

    def probs(state, advice=None):
        p0 = p_first(state["d"])
        xp = xp_of(p0)
        if xp is not np:
            return xp.stack([p0, 1.0 - p0], axis=1)
        # Two columns written in place: np.stack costs twice this (the
        # replay of 10⁵ rounds in EXP3's default audit calls it 4·10⁵ times).
        out = np.empty((p0.shape[0], 2))
        out[:, 0] = p0
        np.subtract(1.0, p0, out=out[:, 1])
        return out

    def init(runs, rng):
        return {"d": xp_of(rng).zeros(runs)}

    def commit(state, advice, actions):
        return {"d": state["d"], "p0": p_first(state["d"])}

    def act(state, advice, rng):
        p0 = p_first(state["d"])
        actions = (rng.random(p0.shape[0]) >= p0).astype(np.int8)  # = sample_categorical
        return {"d": state["d"], "p0": p0}, actions

    def feed(state, actions, losses, rng):
        p0 = state["p0"]
        xp = xp_of(p0)
        played_second = actions.astype(bool)
        step = eta * losses / xp.where(played_second, 1.0 - p0, p0)
        return {"d": state["d"] + xp.where(played_second, -step, step)}

    def replay(losses, history):
        d, c, g2 = 0.0, 1.0 - gamma, gamma / 2
        exp = math.exp
        lo = np.asarray(losses, dtype=float).tolist()
        p_first_t = [0.0] * len(history)
        for t, a in enumerate(np.asarray(history).tolist()):
            p0 = c * exp(-d) / (1.0 + exp(-d)) + g2 if d > 0 else c / (1.0 + exp(d)) + g2
            p_first_t[t] = p0
            step = eta * lo[t][a]
            d = d - step / (1.0 - p0) if a else d + step / p0
        p0 = np.array(p_first_t)
        return np.stack([p0, 1.0 - p0], axis=1)

    return Learner(init=init, act=act, feed=feed, n_arms=2, probs=probs, commit=commit,
                   replay=replay)
