"""The result of white-box evidence (per-round curve, worst-output search,
privacy-loss distribution, state-model recursion) and what the kinds share:
which apply to a scenario, the floating-point margin of exact comparisons,
curve thinning.

May import: ``algorithms``, ``audit.engine.privacy_loss``,
``audit.engine.models.scalar_state.recursion``, ``audit.engine.evidence.base``,
``algorithms.replay``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from algorithms.noisy_max_model import NoisyMaxModel
from algorithms.sparse_vector_model import ParallelSparseVectors, SparseVectorModel
from audit.engine.evidence.base import EvidenceResult
from audit.engine.privacy_loss import scope_of
from audit.engine.models.scalar_state.recursion import state_model_of
from algorithms.replay import replay_applies
from algorithms.replay.confirm import PER_CELL, words as confirm_words

WHITE_MODES = ("per-round", "search", "pld", "recursion", "integral", "replay")
# What a white-box figure can rest on, in words (the result document and
# the report): the bases of the declaration checks it needs.
REST_WORDS = {
    "identity": "recorded-draw identity (the code's own draws reproduce what it released)",
    "replay": "deterministic replay of the code's own functions",
    "statistical": "a statistical check of the declaration",
    "reexecution": confirm_words(""),
    "trace": ("a trace of the code's own continuous draws (what each output is as an affine "
              "function of them or its rounding onto a grid, and the comparisons that decide "
              "it), confirmed by re-executing "
              "the unmodified code on plain values at draws from the noise laws and inside every "
              "path; exact for the ideal continuous laws the code names, in real arithmetic: "
              "which doubles the code's rounding can reach is not modelled (the black-box "
              "floating-point events read that)"),
}
REST_SHORT = {"identity": "recorded-draw identity", "replay": "deterministic replay",
              "statistical": "statistical check",
              "reexecution": f"replay, confirmed by re-execution at {PER_CELL:,} points per cell",
              "trace": "trace of continuous draws (real arithmetic), confirmed by re-execution"}
# Exact losses are sums of floating-point terms; a loss that equals the claim
# in exact arithmetic (a correct Algorithm 1 attains L = ε) must not read as
# a violation because of rounding.
REL_TOL = 1e-9


def exceeds(value: float, claim: float) -> bool:
    return value > claim * (1 + REL_TOL) + 1e-12


def downsample(x: np.ndarray, n: int = 2000) -> list:
    """Curves for the document and figures: at most n points, keeping maxima."""
    x = np.asarray(x, dtype=float)
    if x.size <= n:
        return x.tolist()
    edges = np.linspace(0, x.size, n + 1).astype(int)
    return np.maximum.reduceat(x, edges[:-1]).tolist()


@dataclass(repr=False)
class WhiteBoxResult(EvidenceResult):
    attack: str
    kind: str                     # per-round | search | pld | recursion
    scope: str
    epsilon_lower_bound: float
    claim_value: float            # the number it is compared with
    claim_label: str
    event: str
    exact: bool                   # True: no statistical error at all
    details: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    counts_toward_total: bool = True  # per-round ε_t is not an ε for the whole run
    # Shown for information only, never a verdict (a per-round curve without
    # a per-round claim: a conditional ratio can approach 2ε for an ε-DP algorithm).
    informational: bool = False
    alpha: float = 0.0            # level of each fallible bound (pld's DKW bands)
    shares: int = 0               # fallible bounds used: 2 for pld, 0 for exact kinds
    ceiling: Optional[float] = None
    # pld on a transcript: the pair's exact worst case over all its outputs
    # (privacy_loss.PairWorstCase), None where it is not computable.
    pair_worst_case: Optional[object] = None
    # Evidence about a wider object than the claim's output (the released
    # noisy values when the claim is about the actions): the proof's
    # intermediate object.  Reported, never a verdict, never part of ε_lb —
    # an intermediate object that leaks more says the proof's route fails,
    # not that the output does.
    intermediate: bool = False
    # What the figures rest on (``audit.engine.models.RESTS_ON`` keys, most
    # exact first): set by the audit from the declaration checks that passed.
    rests_on: tuple = ()
    # A curve claim (μ-GDP, ρ-zCDP) whose δ(ε) the certified lower band
    # exceeds somewhere (pld): a violation whatever ε_lb at its one δ says.
    curve_refuted: bool = False
    # The pair in words and, for a mechanism of few answers, both inputs
    # (set by the audit from the scenario, as a black-box result has them).
    pair: Optional[str] = None
    inputs: Optional[dict] = None

    @property
    def label(self) -> str:
        extra = ", intermediate object" if self.intermediate else ""
        return f"{self.attack} [white-box {self.kind}{extra}]"

    @property
    def violation(self) -> bool:
        return (not self.informational and not self.intermediate
                and (exceeds(self.epsilon_lower_bound, self.claim_value) or self.curve_refuted))

    @property
    def per_record_lower_bound(self) -> float:
        return (self.epsilon_lower_bound if self.counts_toward_total and not self.intermediate
                else 0.0)

    @property
    def verdict(self) -> str:
        if self.informational:
            return "information"
        if self.intermediate:
            return "intermediate"
        return "violation" if self.violation else "consistent"

    def _repr_fields(self) -> dict:
        fields = {"kind": self.kind, "scope": self.scope, "compared_with": self.claim_label}
        if self.shares:
            fields["alpha"] = self.alpha
        if self.pair_worst_case is not None:
            fields["pair_worst_case"] = (self.pair_worst_case.epsilon, self.pair_worst_case.delta)
        return fields

    def summary_lines(self, confidence: float) -> list[str]:
        verdict = ("information only" if self.informational
                   else "VIOLATION" if self.violation else "ok")
        exact = "exact" if self.exact else f"{100 * confidence:.6g}%"
        head = f"  {self.label:30s} "
        if self.informational:
            lines = [head + f"max ε_t = {self.epsilon_lower_bound:.6g}: {verdict} "
                            f"(no per-round claim to compare with)"]
        elif self.intermediate:
            above = ("above" if exceeds(self.epsilon_lower_bound, self.claim_value)
                     else "not above")
            lines = [head + f"ε_lb = {self.epsilon_lower_bound:.6g} ({exact}) on the proof's "
                            f"intermediate object ({self.scope}), {above} {self.claim_label} "
                            f"{self.claim_value:.6g}: not a verdict (the claim is about the "
                            f"actions)"]
        else:
            lines = [head + f"ε_lb = {self.epsilon_lower_bound:.6g} ({exact}) vs "
                            f"{self.claim_label} {self.claim_value:.6g}: {verdict}"]
        if self.pair_worst_case is not None:
            lines[0] += f"; {self.pair_worst_case.line()}"
        lines.append(f"  {'':30s} {self.event}")
        if self.exact and self.rests_on:
            lines.append(f"  {'':30s} exact for the draws the code was observed to make "
                         f"({' and '.join(REST_SHORT[b] for b in self.rests_on)})")
        lines += [f"  {'':30s} note: {note}" for note in self.notes]
        return lines

    def as_dict(self) -> dict:
        verdict = self.verdict
        return {"name": self.attack, "scenario": f"{self.attack}:{self.kind}", "mode": "white-box",
                "kind": self.kind, "scope": self.scope,
                "epsilon_lower_bound": self.epsilon_lower_bound,
                "claim_compared": {"value": self.claim_value, "what": self.claim_label},
                "verdict": verdict, "intermediate_object": self.intermediate,
                "event": self.event, "exact": self.exact,
                **({"pair": self.pair} if self.pair else {}),
                **({"inputs": self.inputs} if self.inputs else {}),
                "rests_on": [{"basis": b, "meaning": REST_WORDS[b], "short": REST_SHORT[b]}
                             for b in self.rests_on],
                **({"exact_means": "exact for the draws the code was observed to make"}
                   if self.exact else {}),
                **({"pair_worst_case": self.pair_worst_case.as_dict()
                    if self.pair_worst_case is not None else None}
                   if self.kind == "pld" else {}),
                "counts": self.details.get("counts"), "bounds": self.details.get("bounds"),
                "details": {k: v for k, v in self.details.items() if k not in ("counts", "bounds")},
                "notes": self.notes}


# The declarations whose exact evaluation is the integral mode (key in
# ``Algorithm.extra`` → type).
INTEGRAL_DECLARATIONS = {"sparse_vector": SparseVectorModel,
                         "parallel_sparse_vectors": ParallelSparseVectors,
                         "noisy_max": NoisyMaxModel}


def integral_declaration(alg):
    """The ``Algorithm.extra`` key of the model the integral mode rests on
    (a sparse vector, two in parallel, report-noisy-max), or None."""
    extra = getattr(alg, "extra", None) or {}
    for key, kind in INTEGRAL_DECLARATIONS.items():
        if isinstance(extra.get(key), kind):
            return key
    return None


def applicable_modes(scenario) -> list[str]:
    """The white-box kinds a scenario supports: at action scope (``probs`` +
    ``commit``) per-round (given a history), search and pld; at transcript
    scope pld (against a claim about the actions only, a transcript loss
    does not bound the actions' ε from below: ``pld`` reports it as the
    proof's intermediate object, never a verdict); and recursion where the
    algorithm declares a scalar state model and its claim is about the
    actions or the transcript (an action event is a transcript event); and
    integral where it declares a sparse vector, two in parallel or
    report-noisy-max and its claim is about its output (the codes and
    numbers it releases); and replay where the code of a stream mechanism
    can be replayed exactly (``algorithms.replay.replay_applies``: uniform draws
    it only compares), whatever it declares.  The neighbour search's pairs get them like every
    other attack's."""
    alg = scenario.algorithm
    if scenario.group_size != 1:
        return []
    scope = scope_of(alg)
    claim_scope = alg.claim.scope if alg.claim is not None else None
    modes = []
    if scope == "actions":
        modes = (["per-round"] if scenario.history is not None else []) + ["search", "pld"]
    elif scope == "transcript":
        law = alg.learner.transcript.noise
        # A finite law is bounded from its releases per true value, which
        # needs the true values fixed by the losses (history-free).
        modes = ["pld"] if law.kind != "finite" or alg.learner.transcript.history_free else []
    if state_model_of(alg) is not None and claim_scope in (None, "actions", "transcript"):
        modes.append("recursion")
    if integral_declaration(alg) is not None and claim_scope in (None, "actions"):
        modes.append("integral")
    if replay_applies(alg):
        modes.append("replay")
    return modes
