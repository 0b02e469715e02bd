"""Neighbouring pairs and events for the algorithms of Asi, Raman & Saha
(tracking the best expert): ``tbe-lazy``, ``tbe-svt``, ``tbe-adaptive`` and
their variants.  All pairs change one whole loss row in [0, 1]^N (the
paper's loss class; Definition 2.1's neighbours differ at one time point).
"""
from __future__ import annotations

import numpy as np

from .base import Attack, Scenario, horizon_prefix
from .events import ActionAt, CoordinateAbove, SwitchAt, Union, pilot_thresholds

# Algorithm 1's decision at t = 8 reads the window [4, 7] (1-based).
DECISION = 8
WINDOW = (4, 7)


def _action_events(rounds: int, n: int, point_alg=None, pair=None, point_rounds=()):
    """The chosen expert at every simulated round, every switch time, and for
    learners that play a distribution x_t, thresholds on its coordinates
    (from an independent pilot, so they are fixed before the audit's runs)."""
    parts = [ActionAt(tuple(range(rounds)), n)]
    if rounds > 1:
        parts.append(SwitchAt(tuple(range(1, rounds))))
    if point_alg is not None and point_alg.learner.point is not None and point_rounds:
        coords = tuple(range(min(n, 2)))
        th = pilot_thresholds(point_alg, pair, point_rounds, coords)
        parts.append(CoordinateAbove(tuple(point_rounds), coords, th))
    return Union(tuple(parts))


class WindowTail(Attack):
    """Report-noisy-max in its tail: over the window [4, 7] expert 1 has loss
    1 and expert 2 loss 0 at three rounds, and at the changed round (1, 0, …)
    vs (0, 1, …), so S_2 − S_1 = −4 vs −2 (other experts: loss 1).  Expert 1
    is then chosen at t = 8 with probability P[Z_1 − Z_2 < −4] vs
    P[Z_1 − Z_2 < −2]: about ln 2.0 ≈ 0.71 apart with Laplace(2/ε) at ε = 1,
    but ln 4.9 ≈ 1.6 with Laplace(1/ε) (a missing factor 2 in the noise).
    Two scenarios: the change at the window's last round (7, batch-edge-like)
    and at its first round 4 = 2^2 (a decision round whose own window is
    [2, 3]: the power-of-two boundary)."""

    name = "tbe-window-tail"
    summary = ("tail report-noisy-max pair: over the window [4, 7] expert sums differ by 4 vs 2; "
               "change at round 7 (window edge) and at round 4 (power-of-two boundary)")

    def scenarios(self, alg):
        if alg.horizon < DECISION:
            raise ValueError(f"attack {self.name} needs a horizon >= {DECISION}; "
                             f"{alg.name} has T = {alg.horizon}")
        n = alg.n_arms
        rounds = horizon_prefix(alg, DECISION + 1)
        out = []
        for label, changed in (("edge", WINDOW[1]), ("boundary", WINDOW[0])):
            a = np.zeros((alg.horizon, n))
            a[WINDOW[0] - 1:WINDOW[1], :] = 1.0
            a[WINDOW[0] - 1:WINDOW[1], 1] = 0.0
            b = a.copy()
            b[changed - 1, 0], b[changed - 1, 1] = 0.0, 1.0
            out.append(Scenario(f"{self.name}:{label}", alg, a, b,
                                _action_events(rounds, n), rounds,
                                notes=[f"round {changed} changes inside the window "
                                       f"[{WINDOW[0]}, {WINDOW[1]}] read at t = {DECISION}"]))
        return out


class FirstRoundSwap(Attack):
    """Round 1 is the whole first window (read at t = 2): (1, 0, 1, …) vs
    (0, 1, 1, …) moves S_2 − S_1 from −1 to +1, the tie at which the
    argmin flips with the largest probability ratio near the middle.  A short
    prefix (17 rounds: the decisions at 2, 4, 8, 16) keeps Algorithm 2, whose
    round t costs O(t) queries, cheap."""

    name = "tbe-first-round"
    summary = "round 1: (1, 0, 1, ...) vs (0, 1, 1, ...), other losses 0; 17 rounds"

    def scenarios(self, alg):
        n = alg.n_arms
        a = np.zeros((alg.horizon, n))
        a[0, :] = 1.0
        a[0, 1] = 0.0
        b = a.copy()
        b[0, 0], b[0, 1] = 0.0, 1.0
        rounds = horizon_prefix(alg, 17)
        return [Scenario(self.name, alg, a, b, _action_events(rounds, n), rounds)]


class FullRow(Attack):
    """The whole first loss row 0 vs 1 (ℓ1 distance N, allowed by the loss
    class [0, 1]^N): the pair that shows Laplace(1/ε) per coordinate is only
    Nε-DP for the released noisy losses."""

    name = "tbe-full-row"
    summary = "every expert's loss at round 1: 0 vs 1 (l1 distance N), all other losses 0"

    def scenarios(self, alg):
        n = alg.n_arms
        a = np.zeros((alg.horizon, n))
        b = a.copy()
        b[0, :] = 1.0
        rounds = horizon_prefix(alg, 4)
        pr = tuple(range(1, rounds)) if alg.learner.point is not None else ()
        return [Scenario(self.name, alg, a, b,
                         _action_events(rounds, n, alg, (a, b), pr[:2]), rounds,
                         notes=["the changed row differs in all N coordinates"])]


class SVTRestart(Attack):
    """A change at the round where Algorithm 2's AboveThreshold is driven to
    fire.  Expert 1 has loss 1 and expert 2 loss 0 from round 1 on, while the
    first instance of Algorithm 1 plays j_0 = expert 1 until its decision at
    t = 2, so the regret of the played experts grows by 1 a round and the
    sparse vector halts; the changed round r is the last of that run-up:
    (1, 0, …) vs (0, 1, …), which moves every query at round r by 2 (the
    played loss by 1 and the window minimum by 1).  With the literal restart
    (t_{i+1} = r) that same loss is also the first window of the new
    Algorithm 1, decided at r + 1, and enters the new AboveThreshold's
    queries.  Restarts need thresholds an audit prefix can reach: run with
    ``--param threshold_scale=...`` (privacy does not depend on the
    threshold)."""

    name = "tbe-svt-restart"
    summary = ("SVT restart boundary (tbe-svt*): regret grows by 1 a round until the sparse "
               "vector fires; the last round of the run-up changes (1,0) vs (0,1)")

    def scenarios(self, alg):
        if "threshold_scale" not in alg.params:
            raise ValueError(f"attack {self.name} applies to Algorithm 2 (tbe-svt*), "
                             f"not {alg.name}")
        n = alg.n_arms
        r = min(alg.horizon - 1, 6)
        a = np.zeros((alg.horizon, n))
        a[:r, 0] = 1.0
        a[:r, 2:] = 1.0
        b = a.copy()
        b[r - 1, 0], b[r - 1, 1] = 0.0, 1.0
        rounds = horizon_prefix(alg, r + 3)
        notes = [f"round {r} changes; the restarted Algorithm 1 decides at round {r + 1}"]
        if alg.params["threshold_scale"] >= 0.1:
            notes.append("with these thresholds the sparse vector essentially never fires in "
                         f"{rounds} rounds; lower --param threshold_scale to test restarts")
        return [Scenario(self.name, alg, a, b, _action_events(rounds, n), rounds, notes=notes)]


FAMILY_ATTACKS: tuple = (FirstRoundSwap(), WindowTail(), FullRow(), SVTRestart())
