"""The threshold canary: a base learner chosen by the auditor that
turns Algorithm 1's single noisy release into a visible action."""
from __future__ import annotations

import dataclasses

import numpy as np

from algorithms.core import Algorithm, Learner
from .base import Attack, Scenario, batch_size, loss_extremes
from .events import standard_events


def threshold_canary(n_arms: int, threshold: float) -> Learner:
    """Plays arm 1 until its first feedback, then arm 2 forever iff that
    feedback was ≥ ``threshold`` (arm 1 otherwise)."""

    def init(runs, rng):
        return {"fed": False, "switch": np.zeros(runs, dtype=bool)}

    def act(state, advice, rng):
        return state, state["switch"].astype(np.int64)

    def feed(state, actions, losses, rng):
        if state["fed"]:
            return state
        return {"fed": True, "switch": losses >= threshold}

    return Learner(init=init, act=act, feed=feed, n_arms=n_arms)


class Canary(Attack):
    name = "canary"
    summary = ("replace the base learner of a conversion (Alg 1 / Alg 5) by the threshold "
               "canary; l_1(arm 1) = 1 vs 0")
    needs = ("a conversion whose claim holds for every base learner (Algorithm 1 / 5: it can "
             "be rebuilt around another base learner, Algorithm.rebuild, and has a batch size "
             "τ), with a horizon of at least τ + 1 rounds")

    def _audited(self, alg: Algorithm) -> tuple[Algorithm, int, float]:
        """(the conversion around the canary, τ, the canary's threshold c)."""
        tau = batch_size(alg)
        if alg.rebuild is None or tau is None:
            raise ValueError(f"attack canary applies only to conversions that hold for every "
                             f"base learner (Algorithm 1 / 5); {alg.name} is not one")
        if min(alg.horizon, 2 * tau) <= tau:
            raise ValueError(f"attack canary needs a horizon of at least τ + 1 = {tau + 1} rounds")
        lo, hi = loss_extremes(alg)
        # Side ℓ: arm 1's batch-1 mean is lo + (hi − lo)/τ = c; side ℓ′: lo.
        c = lo + (hi - lo) / tau
        audited = alg.rebuild(threshold_canary(alg.base_arms, c))
        if audited.loss_range != alg.loss_range:   # the same conversion: the same loss class
            audited = dataclasses.replace(audited, loss_range=alg.loss_range)
        # The conversion's draws, and the canary draws none (tests/test_blocks.py).
        audited.extra.setdefault("row_draws", alg.extra.get("row_draws", False))
        # The canary is written against an array namespace too: the
        # conversion's backends are the audited one's.
        audited.extra.setdefault("backends", alg.extra.get("backends", ("numpy",)))
        return audited, tau, c

    def white_box_runs(self, alg: Algorithm) -> list[tuple[Algorithm, bool]]:
        return [(self._audited(alg)[0], False)]

    def scenarios(self, alg: Algorithm) -> list[Scenario]:
        audited, tau, c = self._audited(alg)
        lo, hi = loss_extremes(alg)
        rounds = min(alg.horizon, 2 * tau)
        K = alg.n_arms
        a = np.full((alg.horizon, K), lo)
        b = a.copy()
        a[0, 0] = hi
        advice = None
        if alg.needs_advice:
            # Expert j recommends arm min(j, 1) deterministically: expert 2's
            # choice (the canary's switch) is visible as arm 2.
            N = alg.n_experts
            one_hot = np.zeros((N, K))
            one_hot[np.arange(N), np.minimum(np.arange(N), 1)] = 1.0
            advice = np.broadcast_to(one_hot, (alg.horizon, N, K)).copy()
        level = "1/τ" if (lo, hi) == (0.0, 1.0) else f"{lo:g} + ({hi:g} − {lo:g})/τ"
        notes = [
            f"The base learner of {alg.name} was replaced by the threshold canary "
            f"(plays arm 1 in batch 1, then arm 2 forever iff its noisy feedback ≥ {level} = {c:g}).",
            "This is legitimate: the conversion's privacy claim (Lemma 3.3 / Theorem 4.2) holds "
            "for every base learner, so the auditor may choose the most revealing one.",
            f"For a correct conversion P[I_(τ+1) = 2] is 1/2 on ℓ and e^(−ε)/2 on ℓ′, so "
            f"ε_lb approaches ε = {alg.claim.epsilon:g} as the budget grows.",
        ]
        return [Scenario("canary", audited, a, b, standard_events(rounds, K, focus=(tau,)),
                         rounds, advice=advice, notes=notes)]
