"""One audit from start to verdict, and the ``audit-result/1`` document."""
from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from typing import Optional, Sequence

from algorithms.core import Algorithm, Claim
from attacks import ATTACKS
from . import __version__
from .blackbox import ScenarioResult, run_scenarios
from .contract import check_interface
from .declarations import check_declarations, failed, refusal_reason
from .simulate import Executor
from .whitebox_run import WHITE_MODES, applicable_modes, run_whitebox

MODES = ("black-box",) + WHITE_MODES

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
    # Declaration checks run before any white-box mode (audit.declarations),
    # and the reasons white-box modes were refused, one per algorithm.
    declaration_checks: tuple = ()
    refused: tuple = ()

    @property
    def epsilon_lower_bound(self) -> float:
        return max((r.per_record_lower_bound for r in self.results), default=0.0)

    @property
    def max_detectable_epsilon(self) -> float:
        """What the black-box budget could show at most (white-box results are
        not limited by it)."""
        return max((r.max_detectable_epsilon / r.group_size for r in self.results
                    if isinstance(r, ScenarioResult)), default=0.0)

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
            "declaration_checks": [c.as_dict() for c in self.declaration_checks],
            "white_box_refused": list(self.refused),
            "runtime_seconds": self.runtime_seconds,
            "reproduce": self.command,
            "regret": self.regret,
        }

    def summary(self) -> str:
        c = self.claim
        delta = f", δ = {c.delta:g}" if c.delta else ""
        lines = [f"audit of {self.algorithm.name}  (T = {self.algorithm.horizon}, "
                 f"K = {self.algorithm.n_arms}"
                 + (f", N = {self.algorithm.n_experts}" if self.algorithm.n_experts else "") + ")",
                 f"  claim: ε = {c.epsilon:g}{delta}, scope {c.scope} — {c.source}",
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
        for r in self.results:
            if not isinstance(r, ScenarioResult):
                verdict = ("information only" if r.informational
                           else "VIOLATION" if r.violation else "ok")
                exact = "exact" if r.exact else f"{self.confidence:.0%}"
                head = f"  {r.attack + ' [white-box ' + r.kind + ']':30s} "
                if r.informational:
                    lines.append(head + f"max ε_t = {r.epsilon_lower_bound:.6g}: {verdict} "
                                        f"(no per-round claim to compare with)")
                else:
                    lines.append(head + f"ε_lb = {r.epsilon_lower_bound:.6g} ({exact}) vs "
                                        f"{r.claim_label} {r.claim_value:.6g}: {verdict}")
                lines.append(f"  {'':30s} {r.event}")
                for note in r.notes:
                    lines.append(f"  {'':30s} note: {note}")
                continue
            t = r.test
            group = f" [group of {r.group_size}: claim {r.claim.epsilon:g}]" if r.group_size > 1 else ""
            lines.append(f"  {r.label:30s} ε_lb = {r.epsilon_lower_bound:.4f}{group}   "
                         f"event {t.event!s} ({t.direction}): "
                         f"{t.numerator.count}/{t.numerator.trials} vs "
                         f"{t.denominator.count}/{t.denominator.trials}")
            for note in r.notes:
                lines.append(f"  {'':30s} note: {note}")
        lines.append(f"  ε lower bound: {self.epsilon_lower_bound:.6g}   "
                     f"(largest the black-box budget could show: {self.max_detectable_epsilon:.2f})")
        if self.violation:
            exact = any(r.violation and not isinstance(r, ScenarioResult) and r.exact
                        for r in self.results)
            how = ("exactly — a certificate with no statistical error" if exact
                   else f"with {self.confidence:.0%} confidence")
            lines.append(f"  VERDICT: VIOLATION — the measured privacy loss exceeds the claim "
                         f"({how})")
        else:
            lines.append("  VERDICT: consistent — no evidence against the claim at this budget "
                         "(this is not a proof of privacy)")
        lines.append(f"  reproduce: {self.command}")
        return "\n".join(lines)


def attack_names(alg: Algorithm, attacks: Optional[Sequence[str]]) -> list[str]:
    """The attacks an audit runs: those asked for, else the algorithm's own."""
    return list(attacks) if attacks else list(alg.default_attacks)


def scenarios_for(alg: Algorithm, attacks: Optional[Sequence[str]]):
    names = attack_names(alg, attacks)
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


def reproduce_command(alg_name, args_echo: dict, attacks, trials, confidence, seed,
                      modes=None) -> str:
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
    for m in modes or ():
        parts += ["--mode", m]
    parts += ["--trials", str(trials), "--confidence", f"{confidence:g}", "--seed", str(seed)]
    return shlex.join(parts)


def audit_algorithm(alg: Algorithm, attacks: Optional[Sequence[str]] = None,
                    trials: int = 200_000, confidence: float = 0.95, seed: int = 0,
                    jobs: int = 1, claim: Optional[Claim] = None, show_progress: bool = False,
                    command: Optional[str] = None, modes: Optional[Sequence[str]] = None,
                    executor: Optional[Executor] = None, progress=None) -> AuditResult:
    """Audit ``alg`` against ``claim`` (its own by default): black-box on every
    attack's pairs, plus the white-box modes wherever the algorithm supports
    them (``modes`` restricts both).

    ``executor`` (default: ``jobs`` local processes, nothing kept) may send
    the chunks to a Dask cluster and keep completed chunks in a store, keyed
    by this audit's fingerprint; the result is the same either way.
    ``progress`` (``audit.progress.Reporter``; default: one on stderr if
    ``show_progress``, else the one in effect) reports every phase."""
    from .progress import Reporter, active
    if progress is None:
        progress = Reporter() if show_progress else active()
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if trials < 2:
        raise ValueError(f"trials must be >= 2 (half select, half test), got {trials}")
    overridden = claim is not None
    claim = claim or alg.claim
    if claim is None:
        raise ValueError(f"{alg.name} declares no privacy claim; give --claim-epsilon")
    for m in modes or ():
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; choose from: {', '.join(MODES)}")
    wanted = set(modes or MODES)
    scenarios, names = scenarios_for(alg, attacks)
    for sc in scenarios:
        sc.check()
    # The interface contract, once per algorithm run (a conversion around
    # the canary is another algorithm), before any simulation.
    seen = set()
    for sc in scenarios:
        if id(sc.algorithm) not in seen:
            seen.add(id(sc.algorithm))
            check_interface(sc.algorithm, sc.losses_a, sc.advice)
    white = [[m for m in applicable_modes(sc) if m in wanted] for sc in scenarios]
    # Declarations are checked, never trusted: a failed check switches the
    # white-box modes off for every scenario running that algorithm.
    checks, refused = [], {}
    with progress.phase("declaration pilots", sum(map(bool, white)), "scenarios") as phase:
        for i, (sc, ms) in enumerate(zip(scenarios, white)):
            if ms and id(sc.algorithm) not in refused:
                found = check_declarations(sc, seed, i)
                checks += found
                if failed(found):
                    refused[id(sc.algorithm)] = found
            if ms:
                phase.update(1)
    white = [[] if id(sc.algorithm) in refused else ms for sc, ms in zip(scenarios, white)]
    black = scenarios if "black-box" in wanted else []
    if not black and not any(white):
        if refused:
            raise ValueError("the selected white-box modes were refused: "
                             + refusal_reason(next(iter(refused.values())), detail=True)
                             + "; run the black-box mode instead")
        raise ValueError(f"no selected mode applies to {alg.name} with these attacks "
                         f"(white-box needs an algorithm whose action or noise distributions "
                         f"are exposed)")
    # Bonferroni over everything that can err: 2 directions × 2 bounds per
    # black-box pair, one DKW band per direction of each loss distribution;
    # exact results cannot err.
    n_tests = 4 * len(black) + 2 * sum("pld" in w for w in white)
    alpha = (1.0 - confidence) / n_tests if n_tests else 1.0 - confidence
    fingerprint = None
    if executor is not None and executor.store is not None:
        from .store import audit_fingerprint
        fingerprint = audit_fingerprint(alg, claim, names, trials, confidence, seed, modes)
    ex = (executor or Executor(jobs=jobs)).for_audit(fingerprint)
    start = time.perf_counter()
    results = run_scenarios(black, claim, trials, confidence, seed, jobs=ex.jobs,
                            alpha=alpha, executor=ex, progress=progress) if black else []
    for i, (sc, ms) in enumerate(zip(scenarios, white)):
        if ms:
            results += run_whitebox(sc, claim.scaled_for_group(sc.group_size), ms, alpha,
                                    trials, seed, ex.jobs, i, executor=ex, progress=progress)
    elapsed = time.perf_counter() - start
    command = command or reproduce_command(alg.name, {}, names, trials, confidence, seed, modes)
    return AuditResult(alg, claim, trials, confidence, seed, results, elapsed, command, overridden,
                       n_tests, fingerprint=fingerprint, chunks_reused=ex.reused,
                       chunks_computed=ex.computed, declaration_checks=tuple(checks),
                       refused=tuple(refusal_reason(found) for found in refused.values()))
