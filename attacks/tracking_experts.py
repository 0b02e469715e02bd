"""Neighbouring pairs and events for the algorithms of Asi, Raman & Saha
(tracking the best expert): ``tbe-lazy``, ``tbe-svt``, ``tbe-adaptive`` and
their variants.  All pairs change one whole loss row in [0, 1]^N (the
paper's loss class; Definition 2.1's neighbours differ at one time point).
"""
from __future__ import annotations

import numpy as np

from algorithms.simulate import simulate
from .base import Attack, Scenario, at_least_two, horizon_prefix, refuse_losses
from .events import (ActionAt, ActionRun, CoordinateAbove, SwitchAt, Union, events_after,
                     pilot_thresholds)

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
    needs = ("a learner that takes one loss per expert (or arm), at least 2 of them, 0 and 1 "
             "in its loss range, and a horizon of at least 8")

    def scenarios(self, alg):
        if alg.horizon < DECISION:
            raise ValueError(f"attack {self.name} needs a horizon >= {DECISION}; "
                             f"{alg.name} has T = {alg.horizon}")
        n = at_least_two(self.name, alg)
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
    needs = ("a learner that takes one loss per expert (or arm), at least 2 of them, and 0 "
             "and 1 in its loss range")

    def scenarios(self, alg):
        n = at_least_two(self.name, alg)
        a = np.zeros((alg.horizon, n))
        a[0, :] = 1.0
        a[0, 1] = 0.0
        b = a.copy()
        b[0, 0], b[0, 1] = 0.0, 1.0
        rounds = horizon_prefix(alg, 17)
        return [Scenario(self.name, alg, a, b, _action_events(rounds, n), rounds)]


class ExpertRun(Attack):
    """Round 1 swapped, (1, 0, 1, …) vs (0, 1, 1, …), every later loss 0 (the
    pair of ``tbe-first-round``), with the run events "expert i at every
    round 2..k" for every k of a 16-round prefix.  For a learner that keeps
    a weight per expert and updates it multiplicatively (Algorithm 3), the
    changed row moves ln(w(1)/w(2)) by 2η and every later round of a run of
    expert 2 selects the histories where the noise at round 1 pushed the
    same way — far into the tail of the noise, where a Laplace mechanism
    attains its full ℓ₁-sensitivity ratio.  So the run's log-ratio grows
    with k well past that of any single round (Asi, Raman & Saha,
    Theorem B.2's Laplace(1/ε) per coordinate: up to Nε = 2ε)."""

    name = "tbe-expert-run"
    summary = ("round 1: (1, 0, 1, ...) vs (0, 1, 1, ...), later losses 0; events: expert i at "
               "every round 2..k (k up to 16)")
    needs = ("a learner that takes one loss per expert (or arm), at least 2 of them, 0 and 1 "
             "in its loss range, and a horizon of at least 2")
    PREFIX = 16

    def scenarios(self, alg):
        n = at_least_two(self.name, alg)
        rounds = horizon_prefix(alg, self.PREFIX)
        if rounds < 2:
            raise ValueError(f"attack {self.name} needs a horizon >= 2; {alg.name} has "
                             f"T = {alg.horizon}")
        a = np.zeros((alg.horizon, n))
        a[0, :] = 1.0
        a[0, 1] = 0.0
        b = a.copy()
        b[0, 0], b[0, 1] = 0.0, 1.0
        events = Union((ActionRun(1, tuple(range(1, rounds)), tuple(range(n))),
                        ActionAt(tuple(range(rounds)), n), SwitchAt(tuple(range(1, rounds)))))
        return [Scenario(self.name, alg, a, b, events, rounds,
                         notes=["the run events are joint over rounds 2..k: a single round's "
                                "action shows little of the change"])]


class FullRow(Attack):
    """The whole first loss row 0 vs 1 (ℓ1 distance N, allowed by the loss
    class [0, 1]^N): the pair that shows Laplace(1/ε) per coordinate is only
    Nε-DP for the released noisy losses."""

    name = "tbe-full-row"
    summary = "every expert's loss at round 1: 0 vs 1 (l1 distance N), all other losses 0"
    needs = "a learner that takes one loss per expert (or arm), with 0 and 1 in its loss range"

    def _pair(self, alg):
        a = np.zeros((alg.horizon, alg.n_arms))
        b = a.copy()
        b[0, :] = 1.0
        return a, b

    def applies(self, alg):
        """``scenarios``' checks without the pilot of its point events."""
        refuse_losses(self.name, alg, *self._pair(alg))

    def scenarios(self, alg):
        n = alg.n_arms
        a, b = self._pair(alg)
        rounds = horizon_prefix(alg, 4)
        pr = tuple(range(1, rounds)) if alg.learner.point is not None else ()
        return [Scenario(self.name, alg, a, b,
                         _action_events(rounds, n, alg, (a, b), pr[:2]), rounds,
                         notes=["the changed row differs in all N coordinates"])]


# Pilot stream of the SVT attack (first word 0x5EED like every attack pilot:
# disjoint from every audit stream, whose first word is the audit's seed).
SVT_PILOT = 0x5B7E
SVT_PILOT_RUNS = 400


def _svt_losses(T: int, n: int, lock: int) -> np.ndarray:
    """Expert 1 good (loss 0, expert 2 loss 1) for rounds 1 … lock − 1, then
    bad (1, 0) from round ``lock`` on; other experts always 1."""
    a = np.ones((T, n))
    a[:lock - 1, 0] = 0.0
    a[lock - 1:, 1] = 0.0
    return a


def _first_restarts(alg, losses, rounds: int, runs: int, side: int, after: int) -> np.ndarray:
    """First round (1-based) ≥ ``after`` at which Algorithm 2's sparse
    vector fires in a pilot of ``runs`` runs (0: not within ``rounds``),
    read from the learner's ``restarted`` flag after each round's feed."""
    rng = np.random.default_rng(np.random.SeedSequence([0x5EED, SVT_PILOT, side]))
    first = np.zeros(runs, dtype=np.int64)

    def watch(k, state):      # the state after round k's feed (1-based), k ≥ 1
        nonlocal first
        fired = np.asarray(state.get("restarted", np.zeros(runs, dtype=bool)))
        first = np.where((first == 0) & fired & (k >= max(after, 1)), k, first)

    simulate(alg, losses, runs, rng, rounds=rounds, watch=watch)
    return first


class SVTRestart(Attack):
    """Algorithm 2's sparse vector at work.  Expert 1 is the better expert
    for rounds 1 … L − 1 and the worse one from round L on (L a power of
    two), so the instance of Algorithm 1 decides for expert 1 at t = L (its
    window [L/2, L − 1] is all in expert 1's favour) and keeps it until
    t = 2L: the played experts' regret over windows starting at L grows by 1
    a round until AboveThreshold fires and restarts.  L is the smallest
    power of two (≥ 16) at which a pilot (independent streams) sees the
    sparse vector fire before 2L in at least half of its runs.  Two pairs,
    each changing one row (1, 0, 1, …) vs (0, 1, 1, …):

    * ``query``: round L, the first round of the run-up.  Expert 1 is played
      there on both sides and expert 2 is the window minimum, so every query
      whose window holds round L moves by 2 (the played loss by 1, the
      minimum by 1): the regret query is 2-sensitive, while Lemma 2.4's
      noise is calibrated for 1 (``tbe-svt``); Algorithm 1 reads round L only
      at t = 2L, by a margin of about L, so nearly all the difference is the
      sparse vector's;
    * ``boundary``: the pilot's median restart round r.  In the box
      (t_{i+1} = t) the loss of r is read by the halting AboveThreshold, by
      the new one and by the new Algorithm 1, which decides at r + 1 from
      the window [r, r] alone.

    Events: the standard family after the change (actions, switches, joint
    actions, arm counts) over a prefix reaching past the pilot's 90th
    percentile restart round."""

    name = "tbe-svt-restart"
    summary = ("Alg 2's sparse vector (tbe-svt*): a regret run-up to a restart; pairs at its "
               "first round (every query moves by 2) and at the median restart round")
    needs = ("Asi, Raman & Saha's Algorithm 2 (tbe-svt*: a sparse vector restarting Algorithm 1, "
             "threshold_scale in Algorithm.params), at least 2 experts and a horizon of at "
             "least 40")

    def _check(self, alg) -> None:
        if "threshold_scale" not in alg.params:
            raise ValueError(f"attack {self.name} applies to Algorithm 2 (tbe-svt*), "
                             f"not {alg.name}")
        at_least_two(self.name, alg)
        if alg.horizon < 40:
            raise ValueError(f"attack {self.name} needs a horizon >= 40; {alg.name} has "
                             f"T = {alg.horizon}")

    def applies(self, alg):
        """``scenarios``' checks without its pilot of the restart rounds."""
        self._check(alg)
        # Both sides hold the same values (one row's first two swapped).
        refuse_losses(self.name, alg, _svt_losses(alg.horizon, alg.n_arms, 16))

    def scenarios(self, alg):
        self._check(alg)
        T, n = alg.horizon, alg.n_arms
        lock, first, losses = 16, None, None
        while True:
            losses = _svt_losses(T, n, lock)
            rounds = min(T, 2 * lock)
            first = _first_restarts(alg, losses, rounds, SVT_PILOT_RUNS, 0, lock)
            fired = first[(first >= lock)]
            if fired.size >= SVT_PILOT_RUNS / 2 or 4 * lock > T:
                break
            lock *= 2
        notes = []
        fired = first[first >= lock]
        if fired.size:
            r_med = int(np.median(fired))
            r_hi = int(np.quantile(fired, 0.9))
            notes.append(f"pilot ({SVT_PILOT_RUNS} runs, independent streams): the sparse vector "
                         f"fires at or after round {lock} in {fired.size} runs, median round "
                         f"{r_med}, 90% by round {r_hi}")
        else:
            r_med, r_hi = min(T - 1, lock + 2), min(T - 1, 2 * lock - 1)
            notes.append(f"pilot ({SVT_PILOT_RUNS} runs): the sparse vector never fires in "
                         f"rounds {lock}..{min(T, 2 * lock)} at threshold_scale = "
                         f"{alg.params['threshold_scale']:g}: the pairs test Algorithm 1 only")
        rounds = horizon_prefix(alg, max(r_hi, r_med + 1) + 4)
        out = []
        for label, changed in (("query", lock), ("boundary", max(r_med, lock))):
            changed = min(changed, rounds - 1)
            b = losses.copy()
            b[changed - 1, 0], b[changed - 1, 1] = losses[changed - 1, 1], losses[changed - 1, 0]
            focus = sorted({changed, changed + 1, r_med - 1, r_med, r_med + 1, r_med + 2} &
                           set(range(changed, rounds)))
            events = events_after(changed - 1, rounds, n, focus=focus)
            out.append(Scenario(f"{self.name}:{label}", alg, losses, b, events, rounds,
                                notes=notes + [f"round {changed} changes (lock-in until round "
                                               f"{lock - 1}, run-up from round {lock})"]))
        return out


FAMILY_ATTACKS: tuple = (FirstRoundSwap(), WindowTail(), FullRow(), SVTRestart(), ExpertRun())
