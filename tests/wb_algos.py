"""Small correct algorithms, declared plausibly but sometimes wrongly, for the
tests of the declaration checks and of the white-box modes' soundness.

Each has a privacy guarantee derived in its docstring, so a test can say
what the true ε is and that no mode may report more.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import Algorithm, Claim, Learner
from algorithms.core import (Finite, Gaussian, Laplace, TranscriptModel, sample_categorical,
                             softmax_rows)
from algorithms.private_bandits.exp3 import exp3_learner


# ------------------------------------------------------------------ 3 rounds
def three_rounds(c: float = 1.2, claim_epsilon: float = 1.0, delta: float = 0.0,
                 rare: float = 0.0) -> Algorithm:
    """A full-information learner over 2 arms and 3 rounds, random only
    through sampling from ``probs``.  Let s = ℓ_1(arm 2) ∈ [0, 1] and u = 1 − s.

    * round 1: arm 1 with probability 1 (a deterministic round);
    * round 2: arm 1 with probability 0.3·e^{u/2}, else arm 2;
    * round 3: after arm 1, arm 2 with probability 0.3·e^{−c·u}; after arm 2,
      arm 2 with probability ½.

    (With ``rare`` > 0, round 2 instead plays arm 2 with probability rare·u and
    round 3 is uniform: an output of mass ≤ rare that is impossible when s = 1.)

    Only ℓ_1(arm 2) matters, and every output probability is monotone in u,
    so the largest |log-ratio| over all neighbouring pairs is attained at
    u = 1 vs u = 0 (the g1 pair: ℓ_1 = (1, 0) vs (1, 1)).  The outputs'
    log-ratios ln P_ℓ(x)/P_ℓ′(x) are, for x = (1, 1, 1), (1, 1, 2), (1, 2, ·):
    ½ + ln((1 − 0.3e^{−c})/0.7), ½ − c, ln((1 − 0.3e^{½})/0.7) = −0.326.
    c = 1.2: max |ratio| = 0.762, so the algorithm is 0.762-DP; but the
    per-round conditional ratio at round 3 after arm 1 is c = 1.2.
    c = 2: forward max 0.815, reverse 1.5: only the reverse direction
    exceeds ε = 1.
    """
    K, T = 2, 3

    def dist(state):
        t, u, prev = state["t"], state["u"], state["prev"]
        runs = u.shape[0]
        p2 = np.zeros(runs)
        if rare:
            if t == 1:
                p2 = rare * u
            elif t == 2:
                p2 = np.full(runs, 0.5)
        elif t == 1:
            p2 = 1.0 - 0.3 * np.exp(u / 2)
        elif t == 2:
            p2 = np.where(prev == 0, 0.3 * np.exp(-c * u), 0.5)
        return np.stack([1.0 - p2, p2], axis=1)

    def init(runs, rng):
        return {"t": 0, "u": np.zeros(runs), "prev": np.zeros(runs, dtype=np.int64)}

    def probs(state, advice=None):
        return dist(state)

    def commit(state, advice, actions):
        return {**state, "prev": np.asarray(actions, dtype=np.int64)}

    def act(state, advice, rng):
        p = dist(state)
        a = sample_categorical(p, rng.random(p.shape[0]))
        return commit(state, advice, a), a

    def feed(state, actions, row, rng):
        u = np.full(actions.shape[0], 1.0 - row[1]) if state["t"] == 0 else state["u"]
        return {"t": state["t"] + 1, "u": u, "prev": state["prev"]}

    learner = Learner(init=init, act=act, feed=feed, n_arms=K, probs=probs, commit=commit,
                      feedback="full")
    # With ``rare`` no pure ε holds (an output impossible on one side); its mass is δ(0).
    true = math.inf if rare else max(
        abs(0.5 + math.log((1 - 0.3 * math.exp(-c)) / 0.7)), abs(0.5 - c),
        abs(math.log((1 - 0.3 * math.exp(0.5)) / 0.7)))
    return Algorithm("three-rounds", learner,
                     Claim(claim_epsilon, delta, "actions", "test: derived in the docstring"),
                     T, K, {"c": c, "rare": rare}, default_attacks=("g1",),
                     extra={"true_epsilon": true})


# ------------------------------------------- EXP3 with noise drawn in feed
def noisy_feedback_exp3(T: int = 60, epsilon: float = 0.5, eta: float = 0.3,
                        gamma: float = 0.2, declare_probs: bool = True) -> Algorithm:
    """EXP3 over 2 arms fed ℓ_t(I_t) + Lap(1/ε) instead of ℓ_t(I_t).

    ε-DP (actions): each loss in [0, 1] is observed at most once, through one
    Laplace(1/ε) release of sensitivity 1; the actions are post-processing of
    the releases (Laplace mechanism + post-processing).  Declaring
    ``probs``/``commit`` is natural (act does sample from probs) but wrong for
    a white-box replay: the noise drawn in ``feed`` is randomness that
    probs/commit do not capture."""
    base = exp3_learner(2, eta, gamma)

    def feed(state, actions, losses, rng):
        noisy = losses + rng.laplace(0.0, 1.0 / epsilon, actions.shape[0])
        return base.feed(state, actions, noisy, rng)

    # EXP3's own probs/commit (and no replay shortcut) — the plausible, wrong declaration.
    learner = base._replace(feed=feed, replay=None,
                            probs=base.probs if declare_probs else None,
                            commit=base.commit if declare_probs else None)
    K = 2
    return Algorithm("noisy-feedback-exp3", learner,
                     Claim(epsilon, 0.0, "actions", "Laplace mechanism + post-processing"),
                     T, K, {"epsilon": epsilon, "eta": eta, "gamma": gamma},
                     default_attacks=("first-round",))


# --------------------------------------- Hedge with a shared loss vector
def shared_hedge(T: int = 8, eta: float = 0.1, declare_shared: bool = False) -> Algorithm:
    """Hedge (exponential weights, full information) over 2 experts, written
    the way ``algorithms/tracking_experts/lazy.py`` keeps its window: the
    cumulative loss vector is one array shared by all runs (it depends only
    on the public loss rows).  P_t(i) ∝ e^{−η L_{t−1}(i)}; a change of one
    round moves each L(i) by ≤ 1, so each later round's ratio is ≤ e^{2η}
    and T rounds give 2ηT-DP (basic composition)."""
    K = 2

    def probs(state, advice=None):
        runs = state["n"].shape[0]
        return np.broadcast_to(softmax_rows(-eta * state["L"][None, :]), (runs, K)).copy()

    def init(runs, rng):
        return {"L": np.zeros(K), "n": np.zeros(runs)}

    def commit(state, advice, actions):
        return state

    def act(state, advice, rng):
        p = probs(state)
        return state, sample_categorical(p, rng.random(p.shape[0]))

    def feed(state, actions, row, rng):
        return {"L": state["L"] + row, "n": state["n"] + 1}

    learner = Learner(init=init, act=act, feed=feed, n_arms=K, probs=probs, commit=commit,
                      feedback="full", shared=("L",) if declare_shared else ())
    return Algorithm("shared-hedge", learner,
                     Claim(2 * eta * T, 0.0, "actions", "basic composition"),
                     T, K, {"eta": eta}, default_attacks=("first-round",))


# ------------------------------------- releases with a declared noise law
def noisy_releases(T: int = 8, noise: str = "gaussian", scale: float = 1.0,
                   epsilon: float = 1.0, delta: float = 0.0, declared=None,
                   history_free: bool = True, bandit: bool = False,
                   mechanism: bool = False) -> Algorithm:
    """Two arms, full information.  Each round releases one value about
    u_t = ℓ_t(arm 1) ∈ [0, 1] and plays arm 2 iff the sum of past releases
    is positive (a function of past releases only, so the action terms
    cancel):

    * ``noise="gaussian"``: y_t = u_t + N(0, σ²), σ = ``scale``: each round is
      a Gaussian mechanism of sensitivity 1 (u changes by ≤ 1), so a pair
      that changes one round is (ε, δ)-DP exactly when
      δ(ε) of the Gaussian mechanism with μ = 1/σ is ≤ δ, and no pure ε holds;
    * ``noise="laplace"``: y_t = u_t + Lap(b): (1/b)-DP;
    * ``noise="rr"``: randomized response on v_t = 1{u_t ≥ ½} with
      P(y = v) = e^ε′/(1 + e^ε′), ε′ = ``scale``: ε′-DP.

    ``declared`` is the law the transcript model declares (default: the
    true one).  ``bandit=True`` releases ℓ_t(I_t) instead of ℓ_t(arm 1), so
    the means depend on the actions (``history_free`` then is a wrong
    declaration).  ``mechanism`` names the claim's basis (one Gaussian or
    Laplace mechanism of sensitivity 1) in ``extra``."""
    K = 2
    if noise == "gaussian":
        true_law = Gaussian(scale)
    elif noise == "laplace":
        true_law = Laplace(scale)
    elif noise == "rr":
        true_law = Finite.randomized_response(scale)
    else:
        raise ValueError(noise)
    law = true_law if declared is None else declared

    def init(runs, rng):
        return {"s": np.zeros(runs), "y": np.full(runs, np.nan)}

    def act(state, advice, rng):
        return state, (state["s"] > 0).astype(np.int64)

    def value(row, actions):
        u = row[actions] if bandit else np.full(actions.shape[0], float(row[0]))
        return (u >= 0.5).astype(float) if noise == "rr" else u

    def feed(state, actions, row, rng):
        v = value(np.asarray(row, dtype=float), actions)
        runs = v.shape[0]
        if noise == "gaussian":
            y = v + rng.normal(0.0, scale, runs)
        elif noise == "laplace":
            y = v + rng.laplace(0.0, scale, runs)
        else:
            p_keep = math.exp(scale) / (1 + math.exp(scale))
            y = np.where(rng.random(runs) < p_keep, v, 1.0 - v)
        return {"s": state["s"] + (y - 0.5 if noise == "rr" else y), "y": y}

    def means(actions, losses, aux=None, advice=None):
        M, Tp = actions.shape
        losses = np.asarray(losses, dtype=float)
        u = (losses[np.arange(Tp), actions] if bandit
             else np.broadcast_to(losses[:Tp, 0], (M, Tp)))
        return ((u >= 0.5).astype(float) if noise == "rr" else u).astype(float)

    model = TranscriptModel(released=lambda s: s["y"], means=means, law=law,
                            history_free=history_free)
    learner = Learner(init=init, act=act, feed=feed, n_arms=K, feedback="full", transcript=model)
    extra = {"true_law": true_law}
    if mechanism:
        extra["mechanism"] = {"law": noise, "sensitivity": 1.0, "scale": scale,
                              "compositions": 1, "source": "test: one release of sensitivity 1"}
    return Algorithm(f"noisy-releases-{noise}", learner,
                     Claim(epsilon, delta, "transcript", "test: derived in the docstring"),
                     T, K, {"scale": scale}, default_attacks=("first-round",), extra=extra)
