"""Black-box evidence: run both sides of a neighbouring pair, pick an event
on a selection half, bound its probabilities on the held-out half, and turn
the two bounds into a lower confidence bound on ε.

May import: ``algorithms``, ``audit.execution.runs``, ``audit.engine.bounds``,
``audit.engine.sampling``, ``audit.engine.evidence.base``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from algorithms.core import Claim
from audit.engine.bounds import (EventTest, epsilon_lower_bound, max_detectable_epsilon,
                                 one_sided_bounds, select_and_test)
from audit.engine.evidence.base import Evidence, EvidenceResult
from audit.engine.sampling import Request
from audit.execution.runs import simulate


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
    kind = "black-box"
    shares = 2          # one numerator lower bound, one denominator upper bound
    exact = False
    informational = False

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
        return self.epsilon_lower_bound > self.claim.epsilon

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
                 f"event {t.event!s} ({t.direction}): "
                 f"{t.numerator.count}/{t.numerator.trials} vs "
                 f"{t.denominator.count}/{t.denominator.trials}"]
        lines += [f"  {'':30s} note: {note}" for note in r.notes]
        return lines

    def as_dict(self) -> dict:
        t = self.test
        return {
            "name": self.attack, "scenario": self.label, "mode": "black-box",
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "per_record_epsilon_lower_bound": self.per_record_lower_bound,
            "claim": self.claim.as_dict(), "group_size": self.group_size,
            "verdict": "violation" if self.violation else "consistent",
            "event": t.event, "direction": t.direction,
            "counts": {"numerator": t.numerator.count, "denominator": t.denominator.count,
                       "trials_per_side": t.numerator.trials,
                       "selection_runs_per_side": self.n_selection},
            "bounds": {"numerator_lower": t.numerator.lower,
                       "denominator_upper": t.denominator.upper,
                       "alpha_each": self.alpha, "bounds_used": self.shares},
            "max_detectable_epsilon": self.max_detectable_epsilon,
            "pair": self.pair, "rounds_simulated": self.rounds, "notes": self.notes,
            "estimates": self._estimates(),
            "epsilon_vs_runs": self.curve,
        }

    def _estimates(self) -> dict:
        """The chosen event's probability on each side with its two-sided
        interval at the same per-bound α (for the report's figure)."""
        out = {}
        for side, b in (("numerator", self.test.numerator), ("denominator", self.test.denominator)):
            full = one_sided_bounds(b.count, b.trials, self.alpha)
            out[side] = {"p_hat": b.count / b.trials if b.trials else 0.0,
                         "lower": full.lower, "upper": full.upper}
        return out


def _count_task(scenario, losses):
    """Counts of every event of the scenario's family on the even runs of a
    chunk (selection half) and on the odd runs (held-out half)."""
    events = scenario.events
    wanted = tuple(getattr(events, "point_rounds", ()))

    def task(runs, rng):
        tr = simulate(scenario.algorithm, losses, runs, rng, advice=scenario.advice,
                      rounds=scenario.rounds, point_rounds=wanted)
        halves = []
        for half in (slice(0, None, 2), slice(1, None, 2)):
            pts = {r: x[half] for r, x in tr.points.items()} if tr.points else None
            acts = tr.actions[half]
            halves += [events.count(acts, pts), acts.shape[0]]
        return tuple(halves)
    return task


def _budget_curve(test, labels, parts_a, parts_b, alpha, delta, points: int = 40) -> dict:
    """ε_lb of the chosen event on growing prefixes of the held-out chunks, so
    a reader sees whether more budget would help.  (Each point is a valid bound
    on its own; the curve is for reading, the verdict uses the full budget.)"""
    e = labels.index(test.event)
    num, den = (parts_a, parts_b) if test.direction == "l>l'" else (parts_b, parts_a)
    x = np.cumsum([p[2][e] for p in num])
    y = np.cumsum([p[2][e] for p in den])
    n = np.cumsum([p[3] for p in num])
    keep = np.unique(np.linspace(0, len(n) - 1, min(points, len(n))).astype(int))
    eps = []
    for k in keep:
        lo = one_sided_bounds(int(x[k]), int(n[k]), alpha).lower
        hi = one_sided_bounds(int(y[k]), int(n[k]), alpha).upper
        eps.append(epsilon_lower_bound(lo, hi, delta))
    return {"runs_per_side": (2 * n[keep]).tolist(), "epsilon_lower_bound": eps}


class EventTestEvidence(Evidence):
    """Each side of the pair gets its own stream family ``[seed, index, side]``
    cut into fixed chunks, so the counts are the same for any number of
    workers.  Selection uses only the selection half; the held-out half is
    touched once, for the one chosen (event, direction)."""

    kind = "black-box"
    shares = EventTestResult.shares

    def requests(self, trials: int) -> list[Request]:
        sc = self.scenario
        return [Request(_count_task(sc, losses), trials, (self.index, side), "black-box")
                for side, losses in enumerate((sc.losses_a, sc.losses_b))]

    def conclude(self, samples: list[list], alpha: float) -> EventTestResult:
        sc, claim = self.scenario, self.claim
        sides = []
        for parts in samples:
            sides.append((np.sum([p[0] for p in parts], axis=0), sum(p[1] for p in parts),
                          np.sum([p[2] for p in parts], axis=0), sum(p[3] for p in parts)))
        (sa, n_sel, ha, n_hold), (sb, n_sel_b, hb, n_hold_b) = sides
        assert n_sel == n_sel_b and n_hold == n_hold_b
        test = select_and_test(sa, sb, n_sel, ha, hb, n_hold, sc.events.labels, alpha,
                               delta=claim.delta)
        curve = _budget_curve(test, sc.events.labels, samples[0], samples[1], alpha, claim.delta)
        return EventTestResult(
            attack=sc.label.split(":")[0], label=sc.label, claim=claim,
            group_size=sc.group_size, test=test, trials=n_sel + n_hold, n_selection=n_sel,
            n_holdout=n_hold, alpha=alpha,
            max_detectable_epsilon=max_detectable_epsilon(n_hold, alpha, claim.delta),
            pair=sc.describe_pair(), rounds=sc.rounds, notes=list(sc.notes), curve=curve)
