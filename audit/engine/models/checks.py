"""What every declared model's verification shares: the outcome of one
check (``DeclarationCheck``), the pilots' random streams, the exact
binomial test against a certified bracket, and how a failed check becomes
the reason a white-box mode is refused.

A check says what it rests on: ``identity`` (the code's own recorded draws
reproduce what it released), ``replay`` (a deterministic re-run of the
code's own functions) or ``statistical`` (a test at level
``false_refusal``).  Deterministic checks have false-refusal probability 0.

Pilot streams are ``SeedSequence([seed, scenario, PILOT_STREAM, k])``,
disjoint from every audit stream (black-box sides 0, 1; loss samples 7, 8);
each model names its own k.

May import: numpy, scipy, ``algorithms`` and ``audit.engine.privacy_loss``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import stats

from audit.engine.privacy_loss import FLOAT_TOL

FALSE_REFUSAL = 1e-6
PILOT_STREAM = 57025
# Deterministic comparisons allow floating-point noise only.
TOL = FLOAT_TOL
# Pilot sizes: runs, and run-rounds at most (a pilot is a small fraction of an audit).
PILOT_RUNS = 2000
PILOT_WORK = 2_000_000
# Identity pilots (a recorded generator): their work (run-rounds, or
# run-answers), their runs (odd: a draw's runs axis is told from its other
# axes by its length), and the tolerances of a declared number against the
# code's own (a scale is the code's to rounding).
IDENTITY_WORK = 2_000_000
IDENTITY_RUNS = (199, 4999)
SCALE_RTOL = 1e-12
VALUE_RTOL = 1e-9


def identity_runs(work_per_run: int) -> int:
    """Runs of an identity pilot whose runs each cost ``work_per_run``."""
    return int(max(IDENTITY_RUNS[0], min(IDENTITY_RUNS[1],
                                         IDENTITY_WORK // max(work_per_run, 1)))) | 1


def declared(alg, key: str, kind):
    """The model ``alg`` declares in ``Algorithm.extra[key]`` if it is a
    ``kind``, else None."""
    model = (getattr(alg, "extra", None) or {}).get(key)
    return model if isinstance(model, kind) else None


@dataclass
class DeclarationCheck:
    """One check's outcome: ``statistic`` against ``threshold`` (``fails_when``
    says which side fails), what was measured and, on failure, what to
    change in the declaration."""

    check: str
    algorithm: str
    scenario: str
    statistic: float
    threshold: float
    fails_when: str               # "above" | "below"
    passed: bool
    what: str
    advice: str = ""
    false_refusal: float = 0.0
    # What a passed check rests on: "identity" (recorded draws reproduce the
    # release), "replay" (a deterministic re-run of the code's functions) or
    # "statistical" (a test at level ``false_refusal``).
    rests_on: str = "replay"
    model: str = ""               # the declared model it verifies (set by the driver)
    # A measured defect the black-box evidence can read: two releases
    # ((round, coordinate), (round, coordinate)), 0-based, whose noises are
    # one draw or perfectly correlated (their difference is noise-free).
    defect: Optional[tuple] = None

    @property
    def outcome(self) -> str:
        return "pass" if self.passed else "fail"

    def __repr__(self) -> str:
        return (f"DeclarationCheck({self.check!r}, {self.outcome}, statistic={self.statistic:.4g}, "
                f"threshold={self.threshold:.4g}, scenario={self.scenario!r})")

    def line(self) -> str:
        op = ">" if self.fails_when == "above" else "<"
        head = (f"{self.check} on {self.scenario}: {self.outcome} "
                f"(statistic {self.statistic:.4g}, fails when {op} {self.threshold:.4g})")
        return head + (f" — {self.what}" + (f"; {self.advice}" if self.advice else "")
                       if not self.passed else "")

    def as_dict(self) -> dict:
        return {"check": self.check, "algorithm": self.algorithm, "scenario": self.scenario,
                "statistic": self.statistic, "threshold": self.threshold,
                "fails_when": self.fails_when, "outcome": self.outcome, "what": self.what,
                "advice": self.advice, "false_refusal_probability": self.false_refusal,
                "rests_on": self.rests_on, "model": self.model,
                **({"defect": [list(x) for x in self.defect]} if self.defect else {})}


def pilot_rng(seed: int, index: int, k: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, index, PILOT_STREAM, k]))


def sides_of(sc):
    return ((sc.losses_a, "ℓ"), (sc.losses_b, "ℓ′")), sc.rounds


def bracket_pvalue(count: int, n: int, lo: float, hi: float) -> float:
    """p-value of ``count`` successes in ``n`` against "the probability lies
    in [lo, hi]": two one-sided exact binomial tests at the nearer end,
    doubled."""
    p_high = float(stats.binom.sf(count - 1, n, hi)) if hi < 1 else 1.0
    p_low = float(stats.binom.cdf(count, n, lo)) if lo > 0 else 1.0
    return min(1.0, 2.0 * min(p_high, p_low))


def failed(checks: list[DeclarationCheck]) -> list[DeclarationCheck]:
    return [c for c in checks if not c.passed]


def refusal_reason(checks: list[DeclarationCheck], algorithm: Optional[str] = None,
                   detail: bool = False) -> str:
    """Why white-box modes are refused: the first failed check, with what it
    measured and what to change when ``detail``."""
    bad = failed(checks)
    if not bad:
        return ""
    first = bad[0]
    head = f"declaration check {first.check} failed for {algorithm or first.algorithm}"
    return f"{head} ({first.what}); {first.advice}" if detail else head
