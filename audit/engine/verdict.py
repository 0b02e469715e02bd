"""The outcome of one audit: ``AuditResult`` (the verdict, the plain-text
summary, and the ``audit-result/1`` document).

The summary is concise by default: what was audited and against which
claim, one line per attack (its best evidence), the evidence on the proof's
intermediate object in one line, the verdict with the evidence that decides
it, and the reproduce command.  ``summary(verbose=True)`` (``audit run -v``)
adds every pair and mode with its notes, the declaration checks and the
learned witnesses.

May import: ``algorithms``, ``audit.engine.models`` (for the summary of
its checks), ``audit.engine.words``; results are any
``audit.engine.evidence`` result objects.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from algorithms.core import Algorithm, Claim
from audit import __version__
from audit.engine.models import failed
from audit.engine.words import FLOAT_NOTE, NO_TRACE, describe, relation_text, setting

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
    # Why no seed reproduces this audit (code drawing randomness the audit
    # cannot seed), or None: its bounds hold, its figures are not repeatable.
    not_reproducible: Optional[str] = None
    # The backend the black-box tests ran on ({"name", "device"[,
    # "pairs_on_numpy"]}); None: numpy.
    backend: Optional[dict] = None

    @property
    def epsilon_lower_bound(self) -> float:
        return max((r.per_record_lower_bound for r in self.results
                    if not getattr(r, "superseded", None)), default=0.0)

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
                          "loss_range": list(alg.loss_range), **describe(alg)},
            "claim": {**self.claim.as_dict(), "overridden": self.claim_overridden,
                      "neighbours": relation_text(alg, self.claim)},
            "budget": {"trials": self.trials, "confidence": self.confidence, "seed": self.seed},
            "backend": self.backend or {"name": "numpy"},
            "attacks": [r.as_dict() for r in self.results],
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "max_detectable_epsilon": self.max_detectable_epsilon,
            "verdict": self.verdict,
            "declaration_checks": [c.as_dict() for c in self.declaration_checks],
            "white_box_refused": list(self.refused),
            "runtime_seconds": self.runtime_seconds,
            "reproduce": self.command,
            "reproducible": self.not_reproducible is None,
            **({"not_reproducible": self.not_reproducible} if self.not_reproducible else {}),
            "regret": self.regret,
            "notes": list(self.notes),
            "strongest_evidence": self.strongest,
        }

    def summary(self, verbose: bool = False) -> str:
        """The plain-text summary ``audit run`` prints: concise, or with
        every pair, mode and note (``verbose``)."""
        return self._verbose_summary() if verbose else self._concise_summary()

    # -- concise ----------------------------------------------------------
    def _concise_summary(self) -> str:
        alg, c = self.algorithm, self.claim
        lines = self._head()
        if self.declaration_checks and failed(list(self.declaration_checks)):
            bad = failed(list(self.declaration_checks))
            lines.append(f"  declaration checks: {len(bad)} of {len(self.declaration_checks)} "
                         f"FAILED ({bad[0].line()}); white-box modes not used, the black-box "
                         f"audit decides")
        groups: dict[str, list] = {}
        for r in self.results:
            groups.setdefault(_attack_of(r), []).append(r)
        width = max([len(_attack_title(name, rs)) for name, rs in groups.items()] + [10])
        side = [r for r in self.results if getattr(r, "intermediate", False)]
        info = [r for r in self.results if r.informational]
        for name, rs in groups.items():
            lines.append(f"  {_attack_title(name, rs):{width}s}  {_attack_line(rs)}")
        if side:
            lines.append("  " + _intermediate_line(side, self.confidence, c.output))
        if info:
            top = max(info, key=lambda r: r.epsilon_lower_bound)
            lines.append(f"  per-round ε_t up to {top.epsilon_lower_bound:.4g} ({top.attack}, "
                         f"white-box): information only, no per-round claim to compare with")
        ceiling = self.max_detectable_epsilon
        # (A curve claim is refuted along its curve too, where a smaller ε
        # suffices: the ceiling at its one δ says little.)
        if (not self.violation and any(r.kind == "black-box" for r in self.results)
                and ceiling < c.epsilon and c.curve is None):
            lines.append(f"  note: at this budget black-box evidence can show at most "
                         f"ε = {ceiling:.3g}, below the claim: raise --trials")
        lines += self._untraced_lines()
        # What the audit could not read of the claim's output: one line each.
        lines += [f"  note: {n}" for n in self.notes]
        lines.append("  " + self._verdict_line())
        lines += self._float_lines()
        lines += self.reproduce_lines()
        lines += self._strongest_lines()
        return "\n".join(lines)

    def _untraced_lines(self) -> list[str]:
        """Why no exact figure, where the replay ran on every pair and gave
        none: the first reason, in one line — the trace's refusal, else
        what the replay said (it stepped aside for its cost, or bounds
        nothing at the claimed δ)."""
        replays = [r for r in self.results if r.kind == "replay"]
        if not replays or any(r.exact for r in self.results):
            return []
        why = next((r.event for r in replays if str(r.event).startswith(NO_TRACE)), None)
        if why is not None:
            return [f"  no exact figure: {why[len(NO_TRACE):]} (-v for every pair)"]
        said = next((str(r.event) for r in replays if r.event), None)
        if said and said.startswith("no exact replay: "):
            said = said[len("no exact replay: "):]
        return [f"  no exact figure: {said} (-v for every pair)"] if said else []

    def _float_lines(self) -> list[str]:
        """Where a floating-point event decides a violation: that the code,
        not its mechanism over the reals, fails, and the exact figure over
        the reals beside it where a white-box mode computed one."""
        best = _deciding(self.results) if self.violation else None
        if best is None or FLOAT_NOTE not in (getattr(best, "notes", None) or ()):
            return []
        exact = [r for r in self.results if r.exact and r.kind != "black-box"
                 and not getattr(r, "intermediate", False) and not r.informational]
        text = ("  in floating point: the deciding event reads which doubles the code outputs "
                "(their least significant bit); rounding lets the two inputs reach different "
                "doubles (Mironov, CCS 2012), so the code fails its claim as it runs")
        if exact:
            top = max(exact, key=lambda r: r.per_record_lower_bound)
            text += (f"; over the reals its exact ε is at least {top.per_record_lower_bound:.4g} "
                     f"(white-box {top.kind}), {'also above' if top.violation else 'within'} "
                     f"the claim")
        text += ("; rounding the output to a grid (Mironov's snapping) removes such a leak, and "
                 "the attribute floating_point = False audits the code as a model over the reals")
        return [text]

    def reproduce_lines(self) -> list[str]:
        """The command that reruns the audit, and where no seed reproduces
        it, why."""
        if not self.not_reproducible:
            return [f"  reproduce: {self.command}"]
        return [f"  not reproducible: {self.not_reproducible}; its runs are still independent, "
                f"so the bounds hold, but the same seed gives other figures",
                f"  rerun (not reproducible: other figures each time): {self.command}"]

    def _strongest_lines(self) -> list[str]:
        """Where the strongest evidence was found, when at swept parameters."""
        if not self.strongest:
            return []
        at = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                       for k, v in self.strongest["parameters"].items())
        return [f"  strongest evidence at {at} (a corner of the claim's range): "
                f"{self.strongest['reproduce']}"]

    def _verdict_line(self) -> str:
        c = self.claim
        if self.violation:
            best = _deciding(self.results)
            how = ("exact: a certificate with no statistical error" if best.exact
                   else f"{percent(self.confidence)} confidence")
            return (f"VERDICT: VIOLATION — {_evidence_name(best)} shows "
                    f"{_bound_text(best)} > {_claim_value(best)} ({how})")
        eps = self.epsilon_lower_bound
        counted = [r for r in self.results if r.per_record_lower_bound == eps
                   and r.per_record_lower_bound > 0]
        where = f" ({_evidence_name(counted[0])})" if counted else ""
        if c.curve is not None:
            return (f"VERDICT: consistent — largest ε lower bound {eps:.4g}{where}, not above "
                    f"ε = {c.epsilon:.4g} at δ = {c.delta:.3g}, and no certified δ(ε) above "
                    f"the claimed {c.words} curve: no evidence against the claim at this "
                    f"budget (not a proof of privacy)")
        return (f"VERDICT: consistent — largest ε lower bound {eps:.4g}{where}, not above the "
                f"claimed ε = {c.epsilon:g}: no evidence against the claim at this budget "
                f"(not a proof of privacy)")

    # -- verbose ----------------------------------------------------------
    def _head(self) -> list[str]:
        alg, c = self.algorithm, self.claim
        delta = f", δ = {c.delta:g}" if c.delta else ""
        per_round = (f" (ε_t = {c.per_round_epsilon:g} a round, composed)"
                     if c.per_round_epsilon is not None else "")
        what = c.output or {"actions": "the actions", "transcript": "the actions and the "
                            "released noisy values", "per-round": "each round's action"}[c.scope]
        figures = (f"{c.words} (its δ(ε) curve; event tests aimed at ε = {c.epsilon:.4g}, "
                   f"δ = {c.delta:.3g})" if c.curve is not None
                   else f"ε = {c.epsilon:g}{delta}{per_round}")
        return [f"audit of {alg.name}  ({setting(alg)})",
                f"  claim: {figures}, about {what} — {c.source}",
                f"  neighbours: {relation_text(alg, c)}",
                f"  budget: {self.trials:,} runs per side, {percent(self.confidence)} confidence "
                f"(Bonferroni over {self.n_tests} bound{'s' if self.n_tests != 1 else ''}), "
                f"seed {self.seed}" if self.n_tests else
                f"  budget: exact evidence only (no statistical bound, nothing to Bonferroni), "
                f"seed {self.seed}"] + self._backend_lines()

    def _backend_lines(self) -> list[str]:
        """Where the black-box tests ran, when not on numpy."""
        b = self.backend
        if not b:
            return []
        left = b.get("pairs_on_numpy")
        more = (f"; on numpy (their learner is numpy-only): {', '.join(left)}" if left else "")
        return [f"  backend: {b['name']} on {b['device']} for the black-box tests{more}"]

    def _verbose_summary(self) -> str:
        lines = self._head()
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
        lines.append("  " + self._verdict_line())
        lines += self._float_lines()
        lines += self.reproduce_lines()
        lines += self._strongest_lines()
        return "\n".join(lines)


# ---------------------------------------------------------------- concise lines

def percent(p: float) -> str:
    """A confidence as a percentage with the digits it needs: 95%, 99.9%."""
    return f"{100 * p:.6g}%"


def _attack_of(r) -> str:
    """The attack a result belongs to (``batch-edge`` for
    ``batch-edge:last-of-batch-1``)."""
    return str(getattr(r, "label", r.attack) if r.kind == "black-box" else r.attack).split(":")[0]


def _pairs(rs) -> int:
    return len({(r.label if r.kind == "black-box" else r.attack) for r in rs})


def _attack_title(name: str, rs) -> str:
    n = _pairs(rs)
    return name if n == 1 else f"{name} ({n} pairs)"


def _counts_toward(r) -> bool:
    return not (r.informational or getattr(r, "intermediate", False)
                or getattr(r, "superseded", None))


def _deciding(rs):
    """The result that decides: the violation by the widest margin (exact
    evidence first on ties), else the largest ε lower bound."""
    viol = [r for r in rs if r.violation]
    if viol:
        return max(viol, key=lambda r: (r.per_record_lower_bound, r.exact,
                                        r.epsilon_lower_bound))
    counted = [r for r in rs if _counts_toward(r)]
    if not counted:
        return None
    return max(counted, key=lambda r: (r.per_record_lower_bound, r.kind == "black-box"))


def _scenario_of(r) -> str:
    label = r.label if r.kind == "black-box" else r.attack
    return label.split(":", 1)[1] if ":" in label else ""


def _evidence_name(r) -> str:
    label = r.label if r.kind == "black-box" else r.attack
    return f"{label}, {'black-box' if r.kind == 'black-box' else 'white-box ' + r.kind}"


def _bound_text(r) -> str:
    if r.kind == "per-round":
        return f"per-round loss ε_t = {r.epsilon_lower_bound:.6g}"
    group = getattr(r, "group_size", 1) or 1
    if group > 1:
        return (f"ε ≥ {r.epsilon_lower_bound:.6g} for a group of {group} rounds "
                f"({r.per_record_lower_bound:.4g} a round)")
    return f"ε ≥ {r.epsilon_lower_bound:.6g}"


def _claim_value(r) -> str:
    if r.kind == "black-box":
        cl = r.claim
        if cl.curve is not None:
            prof = r.profile if r.epsilon_lower_bound <= cl.epsilon else None
            if prof and prof.get("above_claim"):
                return (f"the {cl.words} curve (δ_lb(ε = {prof['at_epsilon']:.3g}) above it "
                        f"by {prof['largest_gap']:.3g}, μ_lb = {prof['mu_lower']:.4g})")
            return f"ε = {cl.epsilon:.6g} (δ = {cl.delta:.3g}), a point of the {cl.words} curve"
        return f"ε = {cl.epsilon:g}" + (f" (δ = {cl.delta:g})" if cl.delta else "")
    return f"{r.claim_label} {r.claim_value:.6g}"


def _counts(r) -> str:
    t = r.test
    num, den = ("ℓ", "ℓ′") if t.direction == "l>l'" else ("ℓ′", "ℓ")
    return (f"{t.numerator.count:,} on {num} vs {t.denominator.count:,} on {den} "
            f"of {t.numerator.trials:,} held-out runs")


def _attack_line(rs) -> str:
    """One attack in one line: its deciding evidence (or its largest bound)."""
    best = _deciding(rs)
    if best is None:
        return "white-box only on the proof's intermediate object (below)"
    value = (f"ε_t = {best.epsilon_lower_bound:<7.4g}" if best.kind == "per-round"
             else f"ε_lb = {best.per_record_lower_bound:<7.4g}")
    where = _scenario_of(best)
    where = f" on {where}" if where and _pairs(rs) > 1 else ""
    if best.kind == "black-box":
        event = best.shown_event
        how = f"black-box{where}: {event}, {_counts(best)}"
        if best.learned_event:
            how += " (learned witness)"
        group = getattr(best, "group_size", 1) or 1
        if group > 1:
            how += f"; a group of {group} rounds, ε_lb per round"
    else:
        # a white-box result that certifies nothing (a refused trace, a
        # replay that stepped aside) is not called exact
        exact = "exact, " if best.exact else ""
        how = f"{exact}white-box {best.kind}{where}: {best.event}"
    flag = f"  > {_claim_value(best)}: VIOLATION" if best.violation else ""
    return f"{value} {how}{flag}"


def _intermediate_line(side, confidence: float, output=None) -> str:
    top = max(side, key=lambda r: r.epsilon_lower_bound)
    above = any(r.epsilon_lower_bound > r.claim_value * (1 + 1e-9) + 1e-12 for r in side)
    n = len({r.attack for r in side})
    exact = "exact" if top.exact else f"{percent(confidence)} confidence"
    return (f"intermediate object: white-box {top.kind} on the released noisy values "
            f"({n} pair{'s' if n > 1 else ''}) gives ε_lb up to {top.epsilon_lower_bound:.4g} "
            f"({exact}), {'above' if above else 'not above'} {top.claim_value:g}: whether the "
            f"proof's route can hold, never a verdict (the claim is about "
            f"{_first_words(output) if output else 'the output'})")


def _first_words(text: str) -> str:
    """An output's words up to their first comma or parenthesis."""
    return re.split(r"[,(]", str(text))[0].strip()
