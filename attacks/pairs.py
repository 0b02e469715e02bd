"""Neighbouring loss sequences that need no change to the algorithm.

Losses are written for the loss class [0, 1]^K and placed in the
algorithm's own (``Algorithm.loss_range`` [lo, hi]): 0 stands for lo, 1 for
hi, and values between map affinely, so every pair moves a coordinate
across the whole range the claim allows.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.core import Algorithm
from attacks.instances import default_advice
from .base import (Attack, Scenario, batch_size, horizon_prefix, into_range, loss_extremes,
                   refuse_losses)
from .events import standard_events


def _advice(alg: Algorithm):
    return default_advice(alg.horizon, alg.n_experts, alg.n_arms) if alg.needs_advice else None


def _window(alg: Algorithm, after: int) -> int:
    """How many rounds to simulate so a change at round ``after`` can show:
    three batches past it for batched algorithms, 64 rounds otherwise."""
    tau = batch_size(alg) or 1
    return horizon_prefix(alg, after + max(3 * tau, 64))


class G1(Attack):
    name = "g1"
    summary = "App. G.1 pair (K = 2): l_1 = (1, 0) vs (1, 1), all ones afterwards"
    needs = "a learner with K = 2 arms that takes one loss per arm"

    def _pair(self, alg):
        if alg.n_arms != 2:
            raise ValueError(f"attack g1 needs K = 2 arms; {alg.name} has K = {alg.n_arms}")
        lo, hi = loss_extremes(alg)
        a = np.full((alg.horizon, 2), hi)
        b = a.copy()
        a[0, 1] = lo
        return a, b

    def applies(self, alg):
        refuse_losses(self.name, alg, *self._pair(alg))

    def white_box_runs(self, alg):
        return [(alg, True)]

    def scenarios(self, alg):
        a, b = self._pair(alg)
        rounds = horizon_prefix(alg, 500)
        # The history of App. G.1 / Figure 1: I_t = 2 for odd t, 1 for even t.
        history = (np.arange(alg.horizon) % 2 == 0).astype(np.int64)
        return [Scenario("g1", alg, a, b, standard_events(rounds, 2, focus=range(8)), rounds,
                         advice=_advice(alg), history=history,
                         history_label="alternate 2,1,2,1,… (App. G.1)",
                         notes=[f"black-box events over the first {rounds} rounds"])]


class FirstRound(Attack):
    name = "first-round"
    summary = "change the loss of arm 1 at round 1 (1 vs 0), all other losses 0"
    needs = "a learner that takes one loss per arm (any K, any loss range)"

    def scenarios(self, alg):
        lo, hi = loss_extremes(alg)
        a = np.full((alg.horizon, alg.n_arms), lo)
        b = a.copy()
        a[0, 0] = hi
        rounds = _window(alg, 1)
        tau = batch_size(alg) or 1
        return [Scenario("first-round", alg, a, b,
                         standard_events(rounds, alg.n_arms, focus=(0, 1, tau, tau + 1)), rounds,
                         advice=_advice(alg))]


class BatchEdge(Attack):
    name = "batch-edge"
    summary = ("batched algorithms: every arm's loss 1 vs 0 at the last round of batch 1, "
               "and separately at the first round of batch 2")
    needs = ("a batched learner (a batch size τ in Algorithm.params) that takes one loss per "
             "arm, with a horizon of at least τ rounds")

    def scenarios(self, alg):
        tau = batch_size(alg)
        if tau is None:
            raise ValueError(f"attack batch-edge applies to batched algorithms; {alg.name} has no τ")
        if tau - 1 >= alg.horizon:
            raise ValueError(f"attack batch-edge needs a horizon of at least τ = {tau} rounds; "
                             f"{alg.name} has T = {alg.horizon}")
        out = []
        for label, t in (("batch-edge:last-of-batch-1", tau - 1), ("batch-edge:first-of-batch-2", tau)):
            if t >= alg.horizon:
                continue
            lo, hi = loss_extremes(alg)
            a = np.full((alg.horizon, alg.n_arms), lo)
            b = a.copy()
            a[t, :] = hi
            rounds = _window(alg, t + 1)
            focus = (t, t + 1, tau, 2 * tau, 2 * tau + 1)
            out.append(Scenario(label, alg, a, b, standard_events(rounds, alg.n_arms, focus=focus),
                                rounds, advice=_advice(alg)))
        return out


class Lemma51(Attack):
    name = "lemma51"
    summary = ("Section 5.2 instance (arm 1 loss 1/2, arm 2 loss 1) with arm 2's loss set to 0 "
               "for k = ceil(1/eps) rounds after round tau (group privacy)")
    needs = ("a learner with K = 2 arms that takes one loss per arm, a claim (its ε sets the "
             "k = ⌈1/ε⌉ ≤ 8 changed rounds) and a horizon beyond round τ (its batch size, else "
             "T/4)")

    def _group(self, alg):
        """(τ, k): the round after which arm 2's loss changes, at k rounds."""
        if alg.n_arms != 2:
            raise ValueError(f"attack lemma51 needs K = 2 arms; {alg.name} has K = {alg.n_arms}")
        if alg.claim is None:
            raise ValueError(f"attack lemma51 needs a claim (its ε sets k); {alg.name} has none")
        tau = batch_size(alg) or max(1, alg.horizon // 4)
        k = min(math.ceil(1.0 / alg.claim.epsilon), 8, alg.horizon - tau)
        if k < 1:
            raise ValueError(f"attack lemma51 needs a horizon beyond τ = {tau}")
        return tau, k

    def white_box_runs(self, alg):
        return [(alg, False)] if self._group(alg)[1] == 1 else []

    def scenarios(self, alg):
        tau, k = self._group(alg)
        a = into_range(alg, np.tile([0.5, 1.0], (alg.horizon, 1)))
        b = a.copy()
        b[tau:tau + k, 1] = loss_extremes(alg)[0]
        rounds = _window(alg, tau + k)
        windows = ((tau, rounds),) if rounds - tau <= 512 else ((tau, tau + 512),)
        return [Scenario("lemma51", alg, a, b,
                         standard_events(rounds, 2, focus=(tau + k, tau + k + 1), windows=windows),
                         rounds, advice=_advice(alg), group_size=k,
                         notes=[f"ℓ and ℓ′ differ at {k} rounds ({tau + 1}..{tau + k}); the claim "
                                f"is scaled by group privacy to ({k}ε, {k}e^(({k}−1)ε)δ)"])]


class RareArm(Attack):
    name = "rare-arm"
    summary = ("arm 1 always loss 0, the others 1; the loss of arm K changes (0 vs 1) at a "
               "late round, when it is played with probability near the mixing floor γ/K")
    needs = "a learner that takes one loss per arm (any K; with expert advice, any N)"

    def scenarios(self, alg):
        tau = batch_size(alg) or 1
        t = min(2 * tau, alg.horizon - 1) if tau > 1 else min(alg.horizon // 2, 200)
        K = alg.n_arms
        lo, hi = loss_extremes(alg)
        a = np.full((alg.horizon, K), hi)
        a[:, 0] = lo
        b = a.copy()
        a[t, K - 1] = lo
        advice = None
        if alg.needs_advice:
            # Expert j always recommends arm j mod K: inverse-probability
            # weights 1/Q_t(I_t) reach K/γ on the arms nobody should play.
            one_hot = np.zeros((alg.n_experts, K))
            one_hot[np.arange(alg.n_experts), np.arange(alg.n_experts) % K] = 1.0
            advice = np.broadcast_to(one_hot, (alg.horizon, alg.n_experts, K)).copy()
        rounds = _window(alg, t + 1)
        return [Scenario("rare-arm", alg, a, b,
                         standard_events(rounds, K, focus=(t, t + 1, t + tau)), rounds,
                         advice=advice,
                         notes=[f"the change at round {t + 1} matters only when arm {K} is played, "
                                "which the algorithm has learned to avoid: importance weights are "
                                "largest there"])]
