"""Black-box evidence: run both sides of a neighbouring pair, pick an event
on a selection half, bound its probabilities on the held-out half, and turn
the two bounds into a lower confidence bound on ε.

The events are the scenario's own family and, when the scenario asks for it
(``wants_witness``), a learned witness: a classifier's score over whole
trajectories (``audit.engine.witness``), trained in the evidence's pilot
stage on runs of its own streams, so that it is fixed before the audit's
runs and competes in selection like any hand-written event.  Where the
claim covers the values released besides the actions (scope "transcript")
and the learner exposes them, the same pilot stage fixes events on those
releases (``attacks.values.release_family``), which the witness reads too.

May import: ``algorithms`` (its ``simulate``), ``attacks.events``, ``attacks.values``,
``audit.engine.bounds``, ``audit.engine.features``, ``audit.engine.witness``,
``audit.engine.sampling``, ``audit.engine.unions``, ``audit.engine.evidence.base``,
``audit.engine.words``.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from algorithms.claim_curves import profile_of
from algorithms.core import Claim
from algorithms.simulate import released_key, simulate
from attacks.events import Union, release_rounds_of
from attacks.floats import FloatGrain, reads_doubles, reads_grids
from attacks.values import (JOINT_ROUNDS, ValueEvents, hinted_rounds, release_family,
                            releasing_rounds)
from audit.engine.bounds import (EventTest, epsilon_lower_bound, max_detectable_epsilon,
                                 one_sided_bounds, select_and_test)
from audit.engine.evidence.base import Evidence, EvidenceResult
from audit.engine.features import for_pair
from audit.engine.sampling import Request
from audit.engine.unions import with_ranked_unions
from audit.engine.words import FLOAT_NOTE, code_labels, event_label, final_output
from audit.engine.witness import TRAINING_STREAMS, features_task, train, training_runs

# Attacks whose scenarios get a learned witness unless they say otherwise:
# the neighbour search builds pairs no one wrote events for.
LEARNED_BY_DEFAULT = ("search",)


def _grain_families(families) -> list:
    """The floating-point grain families among ``families`` and the parts
    of their unions, however nested."""
    out = []
    for f in families:
        if isinstance(f, FloatGrain):
            out.append(f)
        out += _grain_families(getattr(f, "parts", ()))
    return out




def wants_witness(scenario) -> bool:
    """Whether the black-box test of ``scenario`` adds a learned witness:
    as the scenario says (``Scenario.learned``), else for the search attack
    and for algorithms that declare no attacks.

    Why not always: the witness costs a fit (≈ 1 s for 40 000 runs × a few
    hundred features) and a score per counted run; on the search's three
    pairs it adds ≈ 3 s (≈ 13%) to ``audit run private-exp3 --trials 200000
    --jobs 2`` and ≈ 6 s (≈ 20%) to ``exp3``, on every pair ≈ 8 s (35%) to
    private-exp3.  The hand-written attacks' events are tailored to their
    pairs (the canary's is optimal: the witness matched it, never beat it);
    where no one tailored events to the pair, the witness is what can see a
    leak spread over several rounds."""
    learned = getattr(scenario, "learned", None)
    if learned is not None:
        return bool(learned)
    attack = scenario.label.split(":")[0]
    return attack in LEARNED_BY_DEFAULT or not scenario.algorithm.default_attacks


@dataclass(repr=False)
class EventTestResult(EvidenceResult):
    attack: str
    label: str
    claim: Claim                 # the claim this pair is judged against (group-scaled)
    group_size: int
    test: EventTest
    trials: int
    n_selection: int
    n_holdout: int
    alpha: float
    max_detectable_epsilon: float
    pair: str
    rounds: int
    notes: list = field(default_factory=list)
    curve: dict = field(default_factory=dict)    # ε_lb as the held-out budget grows
    witness: Optional[dict] = None               # the learned witness, when one competed
    # The chosen event as shown (output codes as the mechanism names them,
    # ``audit.engine.words``); ``test.event`` is the family's own label.
    event_text: Optional[str] = None
    # Both inputs in full where they are short (a mechanism's answers): the
    # report shows them as vectors rather than the rounds that differ.
    inputs: Optional[dict] = None
    kind = "black-box"
    shares = 2          # one numerator lower bound, one denominator upper bound
    exact = False
    informational = False
    # Why this bound is known to have erred, or None: it lies above the
    # pair's exact ε over every output (``audit.engine.audit.
    # supersede_above_exact``), so it decides nothing.
    superseded = None

    @property
    def epsilon_lower_bound(self) -> float:
        return self.test.epsilon_lower_bound

    @property
    def per_record_lower_bound(self) -> float:
        """ε_lb for one changed record: group privacy (pure ε) turns k·ε ≥ ε_lb
        into ε ≥ ε_lb/k."""
        return self.epsilon_lower_bound / self.group_size

    @property
    def ceiling(self) -> float:
        return self.max_detectable_epsilon / self.group_size

    @property
    def violation(self) -> bool:
        if self.superseded:
            return False
        if self.epsilon_lower_bound > self.claim.epsilon:
            return True
        if self.claim.curve is None:    # ε_lb at the claim's δ says it all
            return False
        prof = self.profile
        return bool(prof and prof.get("above_claim"))

    def profile_bounds(self) -> Optional[tuple]:
        """(P(S) lower, Q(S) upper): the two bounds this test paid for, from
        which the certified profile follows at no further α."""
        return self.test.numerator.lower, self.test.denominator.upper

    @functools.cached_property
    def profile(self) -> Optional[dict]:
        """The chosen event's certified privacy profile
        (``algorithms.claim_curves.profile_of``): δ_lb(ε) on a grid, the
        trade-off point and μ_lb, and against a curve claim whether δ_lb
        rises above it; None where the test's bounds are not two
        Clopper–Pearson bounds."""
        bounds = self.profile_bounds()
        if bounds is None:
            return None
        c = self.claim
        kind, value = c.curve if c.curve is not None else (None, None)
        return profile_of(*bounds, kind, value, top=c.epsilon)

    @property
    def shown_event(self) -> str:
        return self.event_text or self.test.event

    @property
    def learned_event(self) -> bool:
        """Whether the chosen event is one of the learned witness's."""
        return bool(self.witness) and self.witness["chosen"]

    def _repr_fields(self) -> dict:
        t = self.test
        return {"event": t.event, "direction": t.direction,
                "counts": f"{t.numerator.count}/{t.numerator.trials} vs "
                          f"{t.denominator.count}/{t.denominator.trials}",
                "alpha": self.alpha}

    def summary_lines(self, confidence: float) -> list[str]:
        t, r = self.test, self
        group = f" [group of {r.group_size}: claim {r.claim.epsilon:g}]" if r.group_size > 1 else ""
        lines = [f"  {r.label:30s} ε_lb = {r.epsilon_lower_bound:.4f}{group}   "
                 f"event {self.shown_event} ({t.direction}): "
                 f"{t.numerator.count}/{t.numerator.trials} vs "
                 f"{t.denominator.count}/{t.denominator.trials}"]
        lines += [f"  {'':30s} note: {note}" for note in r.notes]
        line = profile_line(r)
        if line:
            lines.append(f"  {'':30s} {line}")
        if r.witness:
            w = r.witness
            what = "the chosen event is learned" if w["chosen"] else "a hand-written event won"
            lines.append(f"  {'':30s} learned witness ({w['classifier']} on {w['features']} "
                         f"trajectory features, trained on {w['training_runs_per_side'][0]}+"
                         f"{w['training_runs_per_side'][1]} independent runs, {w['events']} "
                         f"events): {what}")
        return lines

    def as_dict(self) -> dict:
        t = self.test
        return {
            "name": self.attack, "scenario": self.label, "mode": "black-box",
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "per_record_epsilon_lower_bound": self.per_record_lower_bound,
            "claim": self.claim.as_dict(), "group_size": self.group_size,
            "verdict": "violation" if self.violation else "consistent",
            "event": self.shown_event, "direction": t.direction,
            "counts": {"numerator": t.numerator.count, "denominator": t.denominator.count,
                       "trials_per_side": t.numerator.trials,
                       "selection_runs_per_side": self.n_selection},
            "bounds": {"numerator_lower": t.numerator.lower,
                       "denominator_upper": t.denominator.upper,
                       "alpha_each": self.alpha, "bounds_used": self.shares},
            "max_detectable_epsilon": self.max_detectable_epsilon,
            "pair": self.pair, "rounds_simulated": self.rounds, "notes": self.notes,
            **({"inputs": self.inputs} if self.inputs else {}),
            "estimates": self._estimates(),
            "privacy_profile": self.profile,
            **self._claim_curve(),
            "epsilon_vs_runs": self.curve,
            "learned_witness": self.witness,
        }

    def _claim_curve(self) -> dict:
        """Where the test certifies one point only (the coupled bet): the
        claim's δ(ε) (its curve, or the one every (ε, δ)-DP mechanism lies
        under) and that point, for the report."""
        c = self.claim
        # (A composed claim of thousands of nats has no profile worth drawing.)
        if self.profile_bounds() is not None or (c.curve is None and c.epsilon > 20):
            return {}
        grid = np.linspace(0.0, max(2 * c.epsilon, 1.2 * self.epsilon_lower_bound, 0.5), 121)
        return {"claim_curve": {"epsilon": grid.tolist(),
                                "claim_delta": np.asarray(c.delta_at(grid)).tolist(),
                                "point": {"epsilon": self.epsilon_lower_bound,
                                          "delta": c.delta,
                                          "above": self.epsilon_lower_bound > c.epsilon}}}

    def _estimates(self) -> dict:
        """The chosen event's probability on each side with its two-sided
        interval at the same per-bound α (for the report's figure)."""
        out = {}
        for side, b in (("numerator", self.test.numerator), ("denominator", self.test.denominator)):
            full = one_sided_bounds(b.count, b.trials, self.alpha)
            out[side] = {"p_hat": b.count / b.trials if b.trials else 0.0,
                         "lower": full.lower, "upper": full.upper}
        return out


def profile_line(r) -> Optional[str]:
    """The certified profile in one line, against a curve claim (None for
    other claims, whose ε_lb already says it)."""
    prof, c = r.profile, r.claim
    if prof is None or c.curve is None:
        return None
    where = (f"δ_lb(ε = {prof['at_epsilon']:.3g}) exceeds the claim's δ(ε) by "
             f"{prof['largest_gap']:.3g}" if prof["largest_gap"] > 0
             else "δ_lb(ε) below the claim's δ(ε) at every ε")
    mu = prof["mu_lower"]
    return (f"certified profile vs {c.words}: {where}; μ_lb = {mu:.4g}"
            + (" > μ" if c.curve[0] == "gdp" and mu > c.curve[1] else ""))


def _count_task(scenario, losses, events=None):
    """Counts of every event of ``events`` (default: the scenario's family;
    the evidence passes it with the learned witness, if any) on the even
    runs of a chunk (selection half) and on the odd runs (held-out half)."""
    events = scenario.events if events is None else events
    wanted = tuple(getattr(events, "point_rounds", ()))
    releases = release_rounds_of(events)

    def task(runs, rng):
        tr = simulate(scenario.algorithm, losses, runs, rng, advice=scenario.advice,
                      rounds=scenario.rounds, point_rounds=wanted, release_rounds=releases)
        obs = tr.observed()
        halves = []
        for half in (slice(0, None, 2), slice(1, None, 2)):
            pts = {r: x[half] for r, x in obs.items()} if obs else None
            acts = tr.actions[half]
            halves += [events.count(acts, pts), acts.shape[0]]
        return tuple(halves)
    return task


def _budget_curve(test, labels, parts_a, parts_b, alpha, delta, points: int = 40,
                  members=None) -> dict:
    """ε_lb of the chosen event on growing prefixes of the held-out chunks, so
    a reader sees whether more budget would help.  (Each point is a valid bound
    on its own; the curve is for reading, the verdict uses the full budget.)"""
    e = labels.index(test.event)
    m = members[e] if members is not None else [e]      # a union: the sum of its members
    num, den = (parts_a, parts_b) if test.direction == "l>l'" else (parts_b, parts_a)
    x = np.cumsum([p[2][m].sum() for p in num])
    y = np.cumsum([p[2][m].sum() for p in den])
    n = np.cumsum([p[3] for p in num])
    keep = np.unique(np.linspace(0, len(n) - 1, min(points, len(n))).astype(int))
    eps = []
    for k in keep:
        lo = one_sided_bounds(int(x[k]), int(n[k]), alpha).lower
        hi = one_sided_bounds(int(y[k]), int(n[k]), alpha).upper
        eps.append(epsilon_lower_bound(lo, hi, delta))
    return {"runs_per_side": (2 * n[keep]).tolist(), "epsilon_lower_bound": eps}


def short_inputs(scenario, most: int = 64) -> Optional[dict]:
    """Both sides' inputs (the simulated rounds), when a mechanism reads at
    most ``most`` values: its pair is best read as two short vectors."""
    if not scenario.algorithm.learner.reads_first:
        return None
    a = np.asarray(scenario.losses_a[:scenario.rounds], dtype=float)
    b = np.asarray(scenario.losses_b[:scenario.rounds], dtype=float)
    if a.size > most:
        return None
    return {"l": a.tolist(), "l_prime": b.tolist()}


def release_window_of(scenario, claim) -> tuple:
    """The rounds whose released values the black-box test of ``scenario``
    reads: those around its changed round at which it releases
    (``attacks.values.releasing_rounds``) when ``claim`` covers the released
    values (scope "transcript") and the learner exposes them
    (``Learner.released_of``); else none.  A mechanism
    over a stream releases its numbers as points, which every family reads
    already."""
    alg = scenario.algorithm
    learner = alg.learner
    if claim is None or claim.scope != "transcript" or learner.reads_first \
            or learner.whole is not None or learner.released_of is None:
        return ()
    rows = scenario.differing_rounds()
    if rows.size == 0:
        return ()
    return releasing_rounds(alg, scenario.losses_a, scenario.advice,
                            scenario.rounds or alg.horizon, int(rows[0]))


def _pilot_task(alg, losses, advice, rounds, features, releases, joint):
    """``task(runs, rng)`` of the pilot stage: the runs' trajectory features
    (with a witness), their released values at ``releases`` and their
    actions at the ``joint`` rounds (for the release events)."""
    points = features.point_rounds if features is not None else ()

    def task(runs, rng):
        tr = simulate(alg, losses, runs, rng, advice=advice, rounds=rounds,
                      point_rounds=points, release_rounds=releases)
        X = features(tr.actions, tr.points) if features is not None else None
        rel = {t: np.asarray(v, dtype=float) for t, v in (tr.released or {}).items()}
        acts = {r: tr.actions[:, r].copy() for r in joint if r < tr.actions.shape[1]}
        return X, rel, acts
    return task


# Statistics of released numbers the learned witness reads (two features each).
WITNESS_VALUES = 48
# Run-rounds a side of a pilot that only fixes release events.
RELEASE_PILOT_WORK = 4_000_000


class EventTestEvidence(Evidence):
    """Each side of the pair gets its own stream family ``[seed, index, side]``
    cut into fixed chunks, so the counts are the same for any number of
    workers.  Selection uses only the selection half; the held-out half is
    touched once, for the one chosen (event, direction).

    With a learned witness (``learned``; default ``wants_witness``), the
    pilot stage first samples ``training_runs(trials)`` runs per side from
    the training streams ``[seed, index, 3]`` and ``[seed, index, 4]``
    (``audit.engine.witness``) and trains a logistic classifier on their
    trajectory features; its events are counted with the scenario's own,
    still at 2 α shares per pair.

    Where the claim covers released values (scope "transcript") and the
    learner exposes them, the same pilot stage records them and fixes the
    release events of ``attacks.values`` (tails, differences and sums of
    two releases, releases joint with actions) from those runs; the witness
    reads the same statistics.  ``hints`` are pairs of releases a
    declaration check measured a defect on (noise shared by two releases):
    their difference and sum are among the events whatever their distance.
    Still 2 α shares per pair."""

    kind = "black-box"
    shares = EventTestResult.shares

    def __init__(self, scenario, index: int, claim, learned: Optional[bool] = None,
                 hints=()):
        super().__init__(scenario, index, claim)
        self.learned = wants_witness(scenario) if learned is None else bool(learned)
        self.witness = None
        self._features = None
        self.hints = tuple(hints)
        self.releases = release_window_of(scenario, claim)
        if self.releases and self.hints:
            rounds = scenario.rounds or scenario.algorithm.horizon
            extra = [r for r in hinted_rounds(self._change(), self.hints) if r < rounds]
            self.releases = tuple(sorted(set(self.releases) | set(extra)))
        self.values: list = []          # release event families, fixed in the pilot stage
        self._pilot_runs = 0

    @property
    def pilot_phase(self) -> str:
        what = "witness training" if self.learned else "release events pilot"
        return f"{what} {self.scenario.label}"

    @property
    def events(self):
        """The family the black-box runs count.  The witness's events come
        first: selection breaks exact ties towards the later event, so a
        hand-written event that does as well (and reads more easily) wins."""
        sc = self.scenario
        parts = ([self.witness] if self.witness is not None else []) + list(self.values)
        return sc.events if not parts else Union(tuple(parts) + (sc.events,))

    def _change(self) -> int:
        rows = self.scenario.differing_rounds()
        return int(rows[0]) if rows.size else 0

    def _joint_rounds(self) -> tuple:
        c = self._change()
        return tuple(range(c, c + JOINT_ROUNDS)) if self.releases else ()

    def pilot_requests(self, trials: int) -> list[Request]:
        if not self.learned and not self.releases:
            return []
        sc = self.scenario
        learner = sc.algorithm.learner
        if self.learned:
            self._features = for_pair(sc.losses_a, sc.losses_b, sc.rounds, learner.n_arms,
                                      plays_points=learner.point is not None,
                                      point_rounds=getattr(sc.events, "point_rounds", ()))
            # The witness reads what the hand-written value events read (a
            # number with the code prefix released before it).
            stats = list(dict.fromkeys(s for part in getattr(sc.events, "parts", (sc.events,))
                                       if isinstance(part, ValueEvents) for s in part.stats))
            if stats:
                self._features = dataclasses.replace(self._features,
                                                     values=tuple(stats[:WITNESS_VALUES]))
        n = training_runs(trials)
        if not self.learned:
            # Release events alone: thresholds need fewer runs than a
            # classifier; a long prefix gets at most RELEASE_PILOT_WORK
            # run-rounds a side (never fewer than 2 000 runs).
            n = min(n, max(2000, RELEASE_PILOT_WORK // max(1, sc.rounds or 1)))
        self._pilot_runs = n
        if not self.releases:
            return [Request(features_task(sc.algorithm, losses, sc.advice, sc.rounds,
                                          self._features),
                            n, (self.index, stream), "witness-training", keep=False)
                    for stream, losses in zip(TRAINING_STREAMS, (sc.losses_a, sc.losses_b))]
        base = None if self._features is None else dataclasses.replace(self._features,
                                                                        values=())
        return [Request(_pilot_task(sc.algorithm, losses, sc.advice, sc.rounds, base,
                                    self.releases, self._joint_rounds()),
                        n, (self.index, stream), "witness-training", keep=False)
                for stream, losses in zip(TRAINING_STREAMS, (sc.losses_a, sc.losses_b))]

    def prepared(self, samples: list[list]) -> None:
        if not self.releases:
            X_a, X_b = (np.concatenate(parts) for parts in samples)
            self.witness = train(self._features, X_a, X_b)
            return
        rel, acts, X = [], [], []
        for parts in samples:
            rounds = sorted({t for p in parts for t in p[1]})
            rel.append({t: np.concatenate([p[1][t] for p in parts]) for t in rounds})
            acts.append({r: np.concatenate([p[2][r] for p in parts]) for r in parts[0][2]})
            X.append(np.concatenate([p[0] for p in parts]) if self.learned else None)
        sc = self.scenario
        self.values = release_family(self._change(), rel, acts, sc.algorithm.learner.n_arms,
                                     self.hints, floats=reads_doubles(sc.algorithm),
                                     grids=reads_grids(sc.algorithm))
        if not self.learned:
            return
        stats = list(dict.fromkeys(list(self._features.values) +
                                   [s for fam in self.values for s in getattr(fam, "stats", ())]))
        f = dataclasses.replace(self._features, values=tuple(stats[:WITNESS_VALUES]))
        blocks = []
        for x, r, a in zip(X, rel, acts):
            obs = {released_key(t): v for t, v in r.items()}
            blocks.append(np.hstack([x, f.value_block(a, obs, x.shape[0])]))
        self.witness = train(f, *blocks)

    def _float_note(self, events) -> list:
        """FLOAT_NOTE where one of ``events`` (labels) reads the grain of
        the doubles the code outputs."""
        grain = {label for f in _grain_families([self.events, *(self.values or ())])
                 for label in f.fine_labels}
        return [FLOAT_NOTE] if any(e in grain for e in events) else []

    def _values_note(self) -> list:
        if not self.values:
            return []
        n = sum(len(f.labels) for f in self.values)
        rounds = sorted({t for f in self.values for t in f.release_rounds})
        grains = [f for f in self.values if isinstance(f, FloatGrain)]
        grain = ("" if not grains else ", their floating-point grain"
                 if any(f.fine_labels for f in grains) else ", the grids they lie on")
        hinted = (f"; {len(self.hints)} pair(s) of releases a declaration check measured a "
                  f"defect on among them" if self.hints else "")
        return [f"the claim covers the released values: {n} events on the releases of rounds "
                f"{rounds[0] + 1}..{rounds[-1] + 1} (tails, differences and sums of two "
                f"releases, releases joint with actions{grain}), thresholds from {self._pilot_runs} "
                f"pilot runs a side on streams [seed, pair, 3/4]{hinted}"]

    def pilot_state(self):
        """The trained witness (its features, weights and thresholds): kept
        in the store, so a rerun of the audit neither simulates its training
        runs nor fits it again."""
        return self.witness

    def restore(self, state) -> None:
        self.witness = state

    def requests(self, trials: int) -> list[Request]:
        sc, events = self.scenario, self.events
        # Chunks counted with a witness (or release events) are stored under
        # its digest, so a resumed audit never mixes counts of two families.
        tag = "black-box" if self.witness is None else f"black-box+witness-{self.witness.digest}"
        if self.values:
            h = hashlib.sha256("\n".join(l for f in self.values for l in f.labels).encode())
            tag += f"+values-{h.hexdigest()[:16]}"
        return [Request(_count_task(sc, losses, events), trials, (self.index, side), tag)
                for side, losses in enumerate((sc.losses_a, sc.losses_b))]

    def conclude(self, samples: list[list], alpha: float) -> EventTestResult:
        sc, claim = self.scenario, self.claim
        labels = self.events.labels
        sides = []
        for parts in samples:
            sides.append((np.sum([p[0] for p in parts], axis=0), sum(p[1] for p in parts),
                          np.sum([p[2] for p in parts], axis=0), sum(p[3] for p in parts)))
        (sa, n_sel, ha, n_hold), (sb, n_sel_b, hb, n_hold_b) = sides
        assert n_sel == n_sel_b and n_hold == n_hold_b
        # Unions of disjoint outputs ranked on the selection half (no α).
        labels, sa, sb, ha, hb, members = with_ranked_unions(self.events, labels, sa, sb, ha,
                                                             hb)
        test = select_and_test(sa, sb, n_sel, ha, hb, n_hold, labels, alpha, delta=claim.delta)
        curve = _budget_curve(test, labels, samples[0], samples[1], alpha, claim.delta,
                              members=members)
        witness = None
        if self.witness is not None:
            witness = {**self.witness.describe(), "chosen": self.witness.owns(test.event)}
        float_note = self._float_note([test.event])
        return EventTestResult(
            attack=sc.label.split(":")[0], label=sc.label, claim=claim,
            group_size=sc.group_size, test=test, trials=n_sel + n_hold, n_selection=n_sel,
            n_holdout=n_hold, alpha=alpha,
            max_detectable_epsilon=max_detectable_epsilon(n_hold, alpha, claim.delta),
            pair=sc.describe_pair(), rounds=sc.rounds,
            notes=list(sc.notes) + self._values_note() + float_note, curve=curve,
            witness=witness, event_text=event_label(test.event, code_labels(sc.algorithm),
                                   final_output(sc.algorithm)),
            inputs=short_inputs(sc))
