"""The outcome of one audit: ``AuditResult`` (the verdict, the plain-text
summary, and the ``audit-result/1`` document).

May import: ``algorithms``, ``audit.engine.models`` (for the summary of
its checks); results are any ``audit.engine.evidence`` result objects.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from algorithms.core import Algorithm, Claim
from audit import __version__
from audit.engine.models import failed

SCHEMA = "audit-result/1"


@dataclass
class AuditResult:
    algorithm: Algorithm
    claim: Claim
    trials: int
    confidence: float
    seed: int
    results: list
    runtime_seconds: float
    command: str
    claim_overridden: bool = False
    n_tests: int = 0
    regret: Optional[dict] = None
    # Not part of the document: how the chunks were obtained.
    fingerprint: Optional[str] = None
    chunks_reused: int = 0
    chunks_computed: int = 0
    # Declaration checks run before any white-box mode (audit.engine.models),
    # and the reasons white-box modes were refused, one per algorithm.
    declaration_checks: tuple = ()
    refused: tuple = ()
    # One-line notes on what the audit could read of the claim's output, and
    # where the strongest evidence was found when that is at swept
    # parameters (``audit.engine.audit.strongest_evidence``).
    notes: tuple = ()
    strongest: Optional[dict] = None

    @property
    def epsilon_lower_bound(self) -> float:
        return max((r.per_record_lower_bound for r in self.results), default=0.0)

    @property
    def max_detectable_epsilon(self) -> float:
        """What the black-box budget could show at most (white-box results are
        not limited by it)."""
        return max((r.ceiling for r in self.results if r.ceiling is not None), default=0.0)

    @property
    def violation(self) -> bool:
        return any(r.violation for r in self.results)

    @property
    def verdict(self) -> str:
        return "violation" if self.violation else "consistent"

    def as_dict(self) -> dict:
        alg = self.algorithm
        return {
            "schema": SCHEMA, "tool_version": __version__,
            "algorithm": {"name": alg.name, "params": alg.params, "horizon": alg.horizon,
                          "arms": alg.n_arms, "experts": alg.n_experts,
                          "loss_range": list(alg.loss_range)},
            "claim": {**self.claim.as_dict(), "overridden": self.claim_overridden},
            "budget": {"trials": self.trials, "confidence": self.confidence, "seed": self.seed},
            "attacks": [r.as_dict() for r in self.results],
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "max_detectable_epsilon": self.max_detectable_epsilon,
            "verdict": self.verdict,
            "declaration_checks": [c.as_dict() for c in self.declaration_checks],
            "white_box_refused": list(self.refused),
            "runtime_seconds": self.runtime_seconds,
            "reproduce": self.command,
            "regret": self.regret,
            "notes": list(self.notes),
            "strongest_evidence": self.strongest,
        }

    def summary(self) -> str:
        c = self.claim
        delta = f", δ = {c.delta:g}" if c.delta else ""
        lo, hi = self.algorithm.loss_range
        losses = "" if (lo, hi) == (0.0, 1.0) else f", losses in [{lo:g}, {hi:g}]"
        lines = [f"audit of {self.algorithm.name}  (T = {self.algorithm.horizon}, "
                 f"K = {self.algorithm.n_arms}"
                 + (f", N = {self.algorithm.n_experts}" if self.algorithm.n_experts else "")
                 + losses + ")",
                 f"  claim: ε = {c.epsilon:g}{delta}, scope {c.scope} — {c.source}",
                 f"  the claim is about: {c.about}",
                 f"  budget: {self.trials} runs per side, {self.confidence:.0%} confidence "
                 f"(Bonferroni over {self.n_tests} bound(s)), seed {self.seed}"]
        if self.declaration_checks:
            bad = failed(list(self.declaration_checks))
            names = sorted({c.check for c in self.declaration_checks})
            lines.append(f"  declaration checks: {len(self.declaration_checks) - len(bad)} of "
                         f"{len(self.declaration_checks)} passed ({', '.join(names)})")
            for c in bad:
                lines.append(f"    FAILED {c.line()}")
            for reason in self.refused:
                lines.append(f"    → white-box modes not used: {reason}; the black-box audit "
                             f"decides")
        lines += [f"  note: {n}" for n in self.notes]
        for r in self.results:
            lines += r.summary_lines(self.confidence)
        lines.append(f"  ε lower bound: {self.epsilon_lower_bound:.6g}   "
                     f"(largest the black-box budget could show: {self.max_detectable_epsilon:.2f})")
        if self.violation:
            exact = any(r.violation and r.exact for r in self.results)
            how = ("exactly, for the draws the code was observed to make — a certificate "
                   "with no statistical error" if exact
                   else f"with {self.confidence:.0%} confidence")
            lines.append(f"  VERDICT: VIOLATION — the measured privacy loss exceeds the claim "
                         f"({how})")
        else:
            lines.append("  VERDICT: consistent — no evidence against the claim at this budget "
                         "(this is not a proof of privacy)")
        lines.append(f"  reproduce: {self.command}")
        if self.strongest:
            at = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                           for k, v in self.strongest["parameters"].items())
            lines.append(f"  strongest evidence at {at} (a corner of the claim's range): "
                         f"{self.strongest['reproduce']}")
        return "\n".join(lines)
