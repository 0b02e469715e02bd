"""Algorithm 1 (non-private → private conversion) and Algorithm 5 (bandit →
bandit with expert advice) of Asi, Raman & Talwar (ICML 2025).

Both are wrappers: they take any base ``Learner`` and return a new one.
"""
from __future__ import annotations

import numpy as np

from ..backend import one_hot, xp_of
from ..core import Learner, TranscriptModel, sample_categorical


def private_batched(base: Learner, tau: int, epsilon: float, horizon: int,
                    noise_scale: float | None = None, aggregate: str = "mean",
                    overlap: bool = False) -> Learner:
    """Algorithm 1: play the base learner's action for a batch of τ rounds,
    then pass it the batch-average loss plus Lap(1/(τε)) noise (line 11).

    Lemma 3.3: ε-DP for every base learner, because the base learner sees only
    the noisy batch averages (sensitivity 1/τ each, one batch per changed
    round) and the actions are post-processing of them.

    Rounds left over when τ does not divide the horizon are played with the
    last action and never fed back (the box only feeds complete batches).

    ``noise_scale``, ``aggregate`` and ``overlap`` exist only so that
    deliberately broken variants (mutants) can be built from the same code;
    the defaults are the paper's.  ``overlap=True`` is the off-by-one bug of
    starting each batch's window one round early, so the last loss of batch j
    is also counted in batch j + 1 (fed twice).
    """
    scale = 1.0 / (tau * epsilon) if noise_scale is None else float(noise_scale)
    if aggregate not in ("mean", "sum"):
        raise ValueError("aggregate must be 'mean' or 'sum'")
    divisor = float(tau) if aggregate == "mean" else 1.0
    last_batch_start = (horizon // tau - 1) * tau  # start of the last complete batch

    def init(runs, rng):
        xp = xp_of(rng)
        return {"base": base.init(runs, rng), "t": 0,
                "action": xp.zeros(runs, dtype=np.int64), "acc": xp.zeros(runs),
                "noisy": xp.full(runs, np.nan)}

    def act(state, advice, rng):
        t = state["t"]
        state = dict(state)
        if t % tau == 0 and t <= last_batch_start:  # line 4: a batch begins
            state["base"], state["action"] = base.act(state["base"], None, rng)
        return state, state["action"]

    def feed(state, actions, losses, rng):
        state = dict(state)
        t = state["t"] + 1
        state["t"] = t
        xp = xp_of(state["acc"])
        if t > last_batch_start + tau:  # leftover round: never fed back
            state["noisy"] = xp.full(actions.shape[0], np.nan)
            return state
        acc = state["acc"] + losses
        if t % tau == 0:  # line 9: the batch ends
            noisy = acc / divisor + rng.laplace(0.0, scale, acc.shape[0])
            state["base"] = base.feed(state["base"], state["action"], noisy, rng)
            state["noisy"] = noisy
            acc = losses.copy() if overlap else xp.zeros_like(acc)
        else:
            state["noisy"] = xp.full(acc.shape[0], np.nan)
        state["acc"] = acc
        return state

    def probs(state, advice=None):
        t = state["t"]
        if t % tau == 0 and t <= last_batch_start:
            return base.probs(state["base"], None)
        return one_hot(xp_of(state["acc"]), state["action"], base.n_arms)

    n_batches = horizon // tau

    def means(actions, losses, aux=None, advice=None):
        # Release j is aggregate(ℓ_s(I_s) over batch j); I_s is constant in a batch.
        T = actions.shape[1]
        nb = min(n_batches, T // tau)  # a simulated prefix holds fewer batches
        played = losses[np.arange(T), actions][:, : nb * tau]
        sums = played.reshape(actions.shape[0], nb, tau).sum(axis=2)
        if overlap and nb > 1:
            sums[:, 1:] += played[:, tau - 1:(nb - 1) * tau:tau]
        return sums / divisor

    model = TranscriptModel(released=lambda s: s["noisy"], means=means, scale=scale)
    return Learner(init=init, act=act, feed=feed, n_arms=base.n_arms,
                   probs=probs if base.probs is not None else None, transcript=model)


def experts_from_bandit(base: Learner, n_actions: int) -> Learner:
    """Algorithm 5: a bandit learner over the N experts becomes a bandit with
    expert advice learner over K actions.  Each round the base learner picks
    an expert J_t, the played action is I_t^{J_t} ~ μ_t^{J_t}, and its loss is
    passed back as the loss of J_t (lines 7–9).

    The box draws I_t^j for every expert j, but only I_t^{J_t} is ever used;
    drawing just that one is the same law and O(1) instead of O(N) per run.
    """

    def init(runs, rng):
        return {"base": base.init(runs, rng), "expert": xp_of(rng).zeros(runs, dtype=np.int64)}

    def act(state, advice, rng):
        bstate, J = base.act(state["base"], None, rng)
        actions = sample_categorical(advice[J], rng.random(J.shape[0]))
        return {"base": bstate, "expert": J}, actions

    def feed(state, actions, losses, rng):
        return {"base": base.feed(state["base"], state["expert"], losses, rng),
                "expert": state["expert"]}

    def probs(state, advice):
        return base.probs(state["base"], None) @ advice

    # The base learner is fed ℓ_t(I_t) for the played action I_t, so its
    # releases are the same functions of the played actions as for a bandit.
    model = None
    if base.transcript is not None:
        model = base.transcript._replace(released=lambda s: base.transcript.released(s["base"]))
    return Learner(init=init, act=act, feed=feed, n_arms=n_actions,
                   probs=probs if base.probs is not None else None, transcript=model)
