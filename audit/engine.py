"""One audit from start to verdict, and the ``audit-result/1`` document."""
from __future__ import annotations

import math
import shlex
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from algorithms.core import Algorithm, Claim
from attacks import ATTACKS
from . import __version__
from .blackbox import ScenarioResult, run_scenarios

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

    @property
    def epsilon_lower_bound(self) -> float:
        return max((r.per_record_lower_bound for r in self.results), default=0.0)

    @property
    def max_detectable_epsilon(self) -> float:
        return max((r.max_detectable_epsilon / r.group_size for r in self.results), default=0.0)

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
                          "arms": alg.n_arms, "experts": alg.n_experts},
            "claim": {**self.claim.as_dict(), "overridden": self.claim_overridden},
            "budget": {"trials": self.trials, "confidence": self.confidence, "seed": self.seed},
            "attacks": [r.as_dict() for r in self.results],
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "max_detectable_epsilon": self.max_detectable_epsilon,
            "verdict": self.verdict,
            "runtime_seconds": self.runtime_seconds,
            "reproduce": self.command,
        }

    def summary(self) -> str:
        c = self.claim
        delta = f", δ = {c.delta:g}" if c.delta else ""
        lines = [f"audit of {self.algorithm.name}  (T = {self.algorithm.horizon}, "
                 f"K = {self.algorithm.n_arms}"
                 + (f", N = {self.algorithm.n_experts}" if self.algorithm.n_experts else "") + ")",
                 f"  claim: ε = {c.epsilon:g}{delta}, scope {c.scope} — {c.source}",
                 f"  budget: {self.trials} runs per side, {self.confidence:.0%} confidence "
                 f"(Bonferroni over {len(self.results)} pair(s) × 2 directions × 2 bounds), "
                 f"seed {self.seed}"]
        for r in self.results:
            t = r.test
            group = f" [group of {r.group_size}: claim {r.claim.epsilon:g}]" if r.group_size > 1 else ""
            lines.append(f"  {r.label:30s} ε_lb = {r.epsilon_lower_bound:.4f}{group}   "
                         f"event {t.event!s} ({t.direction}): "
                         f"{t.numerator.count}/{t.numerator.trials} vs "
                         f"{t.denominator.count}/{t.denominator.trials}")
            for note in r.notes:
                lines.append(f"  {'':30s} note: {note}")
        lines.append(f"  ε lower bound: {self.epsilon_lower_bound:.4f}   "
                     f"(largest this budget could show: {self.max_detectable_epsilon:.2f})")
        if self.violation:
            lines.append(f"  VERDICT: VIOLATION — the measured ε lower bound exceeds the claimed "
                         f"ε = {c.epsilon:g} with {self.confidence:.0%} confidence")
        else:
            lines.append("  VERDICT: consistent — no evidence against the claim at this budget "
                         "(this is not a proof of privacy)")
        lines.append(f"  reproduce: {self.command}")
        return "\n".join(lines)


def scenarios_for(alg: Algorithm, attack_names: Optional[Sequence[str]]):
    names = list(attack_names) if attack_names else list(alg.default_attacks)
    if not names:
        raise ValueError(f"{alg.name} names no default attacks; choose with --attack "
                         f"({', '.join(ATTACKS)})")
    out = []
    for name in names:
        attack = ATTACKS.get(name)
        if attack is None:
            raise ValueError(f"unknown attack {name!r}; choose from: {', '.join(ATTACKS)}")
        out.extend(attack.scenarios(alg))
    return out, names


def reproduce_command(alg_name, args_echo: dict, attacks, trials, confidence, seed) -> str:
    parts = ["audit", "run", alg_name]
    for flag, value in args_echo.items():
        if value is None:
            continue
        if flag == "--param":
            for k, v in value:
                parts += ["--param", f"{k}={v}"]
        else:
            parts += [flag, str(value)]
    for a in attacks:
        parts += ["--attack", a]
    parts += ["--trials", str(trials), "--confidence", f"{confidence:g}", "--seed", str(seed)]
    return shlex.join(parts)


def audit_algorithm(alg: Algorithm, attacks: Optional[Sequence[str]] = None,
                    trials: int = 200_000, confidence: float = 0.95, seed: int = 0,
                    jobs: int = 1, claim: Optional[Claim] = None, show_progress: bool = False,
                    command: Optional[str] = None) -> AuditResult:
    """Black-box audit of ``alg`` against ``claim`` (its own by default)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if trials < 2:
        raise ValueError(f"trials must be >= 2 (half select, half test), got {trials}")
    overridden = claim is not None
    claim = claim or alg.claim
    if claim is None:
        raise ValueError(f"{alg.name} declares no privacy claim; give --claim-epsilon")
    scenarios, names = scenarios_for(alg, attacks)
    start = time.perf_counter()
    results = run_scenarios(scenarios, claim, trials, confidence, seed, jobs=jobs,
                            show_progress=show_progress)
    elapsed = time.perf_counter() - start
    command = command or reproduce_command(alg.name, {}, names, trials, confidence, seed)
    return AuditResult(alg, claim, trials, confidence, seed, results, elapsed, command, overridden)
