"""Black-box audit: run both sides of every neighbouring pair,
pick an event on a selection half, bound its probabilities on the held-out
half, and turn the bounds into a lower confidence bound on ε."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from algorithms.core import Claim
from .estimate import EventTest, max_detectable_epsilon, select_and_test
from .simulate import run_chunks, simulate


@dataclass
class ScenarioResult:
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

    @property
    def epsilon_lower_bound(self) -> float:
        return self.test.epsilon_lower_bound

    @property
    def per_record_lower_bound(self) -> float:
        """ε_lb for one changed record: group privacy (pure ε) turns k·ε ≥ ε_lb
        into ε ≥ ε_lb/k."""
        return self.epsilon_lower_bound / self.group_size

    @property
    def violation(self) -> bool:
        return self.epsilon_lower_bound > self.claim.epsilon

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
                       "alpha_each": self.alpha},
            "max_detectable_epsilon": self.max_detectable_epsilon,
            "pair": self.pair, "rounds_simulated": self.rounds, "notes": self.notes,
            "estimates": self._estimates(),
            "epsilon_vs_runs": self.curve,
        }

    def _estimates(self) -> dict:
        """The chosen event's probability on each side with its two-sided
        interval at the same per-bound α (for the report's figure)."""
        from .estimate import one_sided_bounds
        out = {}
        for side, b in (("numerator", self.test.numerator), ("denominator", self.test.denominator)):
            full = one_sided_bounds(b.count, b.trials, self.alpha)
            out[side] = {"p_hat": b.count / b.trials if b.trials else 0.0,
                         "lower": full.lower, "upper": full.upper}
        return out


def _count_task(scenario, losses):
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
    from .estimate import epsilon_lower_bound, one_sided_bounds
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


def run_scenarios(scenarios, claim: Claim, trials: int, confidence: float, seed: int,
                  jobs: int = 1, show_progress: bool = False,
                  alpha: Optional[float] = None, executor=None,
                  progress=None) -> list[ScenarioResult]:
    """Every (scenario, side) gets its own stream family
    ``SeedSequence([seed, scenario index, side])`` cut into fixed chunks, so the
    counts are the same for any number of workers.

    Multiplicity: α = (1 − confidence)/(scenarios × 2 directions × 2 bounds),
    Bonferroni, so that all reported bounds hold simultaneously with
    probability ≥ confidence.  Selection uses only the
    selection half; the held-out half is touched once per scenario.

    ``executor`` (``audit.simulate.Executor``) says where chunks run and
    whether completed chunks are kept; its fingerprint covers the scenario
    list, so the stream key ``[seed, i, side]`` names a chunk family.

    ``progress`` (an ``audit.progress.Reporter``; default: a bar or lines on
    stderr if ``show_progress``, else the one in effect) gets one phase per
    pair; it only counts finished runs."""
    from .progress import Reporter, active
    if alpha is None:
        alpha = (1.0 - confidence) / (len(scenarios) * 2 * 2)
    if progress is None:
        progress = Reporter() if show_progress else active()
    results = []
    for i, sc in enumerate(scenarios):
        sc.check()
        sides = []
        with progress.phase(f"black-box {sc.label}", 2 * trials) as phase:
            for side, losses in enumerate((sc.losses_a, sc.losses_b)):
                base = side * trials
                parts = run_chunks(_count_task(sc, losses), trials, [seed, i, side], jobs=jobs,
                                   progress=lambda done, base=base: phase.to(base + done),
                                   executor=executor, tag="black-box")
                sel = np.sum([p[0] for p in parts], axis=0)
                hold = np.sum([p[2] for p in parts], axis=0)
                sides.append((sel, sum(p[1] for p in parts), hold, sum(p[3] for p in parts),
                              parts))
        (sa, n_sel, ha, n_hold, parts_a), (sb, n_sel_b, hb, n_hold_b, parts_b) = sides
        assert n_sel == n_sel_b and n_hold == n_hold_b
        scaled = claim.scaled_for_group(sc.group_size)
        test = select_and_test(sa, sb, n_sel, ha, hb, n_hold, sc.events.labels, alpha,
                               delta=scaled.delta)
        curve = _budget_curve(test, sc.events.labels, parts_a, parts_b, alpha, scaled.delta)
        results.append(ScenarioResult(
            attack=sc.label.split(":")[0], label=sc.label, claim=scaled, group_size=sc.group_size,
            test=test, trials=trials, n_selection=n_sel, n_holdout=n_hold, alpha=alpha,
            max_detectable_epsilon=max_detectable_epsilon(n_hold, alpha, scaled.delta),
            pair=sc.describe_pair(), rounds=sc.rounds, notes=list(sc.notes), curve=curve))
    return results
