"""``audit check``: the CI gate over a suite of audits declared in TOML.

A suite lives in ``audit.toml`` (``[[audit]]`` tables) or in ``pyproject.toml``
under ``[tool.audit]`` (``[[tool.audit.audit]]``).  Top-level keys:
``alpha`` (family-wise false-alarm probability, default 0.05, split evenly
across the entries by Bonferroni), ``trials``, ``seed``, ``jobs``.
"""
from __future__ import annotations

import os
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Optional

from algorithms import build
from algorithms.core import Claim

SUITE_KEYS = {"alpha", "trials", "seed", "jobs", "audit"}
ENTRY_KEYS = {"name", "algorithm", "epsilon", "delta", "horizon", "arms", "experts", "params",
              "claim_epsilon", "claim_delta", "trials", "attacks", "modes", "seed", "expect"}


class SuiteError(ValueError):
    """A malformed suite: one line naming the file and the key."""


@dataclass
class Entry:
    name: str
    spec: dict
    expect: str


@dataclass
class Outcome:
    entry: Entry
    result: object
    seconds: float

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def ok(self) -> bool:
        return self.verdict == self.entry.expect

    @property
    def message(self) -> str:
        if self.ok:
            return "as expected"
        if self.verdict == "violation":
            return "UNEXPECTED VIOLATION: the implementation leaks more than it claims"
        return "EXPECTED VIOLATION NOT REPRODUCED: the known bug was not detected at this budget"


def find_config(path: Optional[str]) -> tuple[str, dict]:
    candidates = [path] if path else ["audit.toml", "pyproject.toml"]
    for c in candidates:
        if not os.path.exists(c):
            if path:
                raise SuiteError(f"{c}: no such file")
            continue
        try:
            with open(c, "rb") as fh:
                doc = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise SuiteError(f"{c}: malformed TOML ({exc})") from None
        if os.path.basename(c) == "pyproject.toml":
            if "audit" not in doc.get("tool", {}):
                if path:
                    raise SuiteError(f"{c}: no [tool.audit] table")
                continue
            return c, doc["tool"]["audit"]
        return c, doc
    raise SuiteError("no suite found: write audit.toml or [tool.audit] in pyproject.toml, "
                     "or pass --config FILE")


def parse_suite(path: str, doc: dict) -> tuple[dict, list[Entry]]:
    for key in doc:
        if key not in SUITE_KEYS:
            raise SuiteError(f"{path}: unknown key {key!r} (allowed: {', '.join(sorted(SUITE_KEYS))})")
    entries = doc.get("audit")
    if not isinstance(entries, list) or not entries:
        raise SuiteError(f"{path}: key 'audit' must be a non-empty array of tables ([[audit]])")
    alpha = doc.get("alpha", 0.05)
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise SuiteError(f"{path}: key 'alpha' must be a number in (0, 1), got {alpha!r}")
    out, seen = [], set()
    for i, e in enumerate(entries):
        where = f"{path}: audit[{i}]"
        if not isinstance(e, dict):
            raise SuiteError(f"{where} must be a table")
        for key in e:
            if key not in ENTRY_KEYS:
                raise SuiteError(f"{where}: unknown key {key!r} (allowed: {', '.join(sorted(ENTRY_KEYS))})")
        if "algorithm" not in e:
            raise SuiteError(f"{where}: key 'algorithm' is required")
        expect = e.get("expect", "consistent")
        if expect not in ("consistent", "violation"):
            raise SuiteError(f"{where}: key 'expect' must be \"consistent\" or \"violation\", got {expect!r}")
        name = e.get("name", e["algorithm"])
        if name in seen:
            raise SuiteError(f"{where}: duplicate name {name!r} (set key 'name')")
        seen.add(name)
        if "params" in e and not isinstance(e["params"], dict):
            raise SuiteError(f"{where}: key 'params' must be a table")
        for key in ("attacks", "modes"):
            if key in e and not (isinstance(e[key], list) and all(isinstance(x, str) for x in e[key])):
                raise SuiteError(f"{where}: key {key!r} must be an array of strings")
        try:
            _build(e)
        except ValueError as exc:
            raise SuiteError(f"{where}: {exc}") from None
        out.append(Entry(name, e, expect))
    settings = {"alpha": float(alpha), "trials": doc.get("trials", 100_000),
                "seed": doc.get("seed", 0), "jobs": doc.get("jobs")}
    return settings, out


def _build(spec: dict):
    return build(spec["algorithm"], horizon=spec.get("horizon"), arms=spec.get("arms"),
                 experts=spec.get("experts"), epsilon=spec.get("epsilon"),
                 delta=spec.get("delta"), params=spec.get("params"))


def _claim(spec: dict, alg) -> Optional[Claim]:
    return Claim.override(alg.claim, spec.get("claim_epsilon"), spec.get("claim_delta"),
                          "suite claim override")


def run_suite(settings: dict, entries: list[Entry], jobs: int, scale: float = 1.0,
              log=print, executor=None) -> list[Outcome]:
    """Run every entry; with an ``executor`` that has a store, completed chunks
    are kept (a rerun resumes) and every audit is recorded in the history
    (source "check", under the entry's name)."""
    from .engine import attack_names, audit_algorithm, reproduce_command
    per_entry = settings["alpha"] / len(entries)
    confidence = 1.0 - per_entry
    outcomes = []
    for e in entries:
        spec = e.spec
        alg = _build(spec)
        trials = max(2, int(spec.get("trials", settings["trials"]) * scale))
        seed = spec.get("seed", settings["seed"])
        echo = {"--epsilon": spec.get("epsilon"), "--delta": spec.get("delta"),
                "--horizon": spec.get("horizon"), "--arms": spec.get("arms"),
                "--experts": spec.get("experts"),
                "--param": list(spec.get("params", {}).items()) or None,
                "--claim-epsilon": spec.get("claim_epsilon"), "--claim-delta": spec.get("claim_delta")}
        attacks = attack_names(alg, spec.get("attacks"))
        command = reproduce_command(spec["algorithm"], echo, attacks, trials, confidence, seed,
                                    spec.get("modes"))
        start = time.perf_counter()
        result = audit_algorithm(alg, attacks, trials=trials, confidence=confidence, seed=seed,
                                 jobs=jobs, claim=_claim(spec, alg), command=command,
                                 modes=spec.get("modes"), executor=executor)
        outcome = Outcome(e, result, time.perf_counter() - start)
        if executor is not None and executor.store is not None:
            executor.store.record_audit(result, result.fingerprint, source="check", name=e.name)
        outcomes.append(outcome)
        log(f"  {e.name:24s} {outcome.verdict:10s} expected {e.expect:10s} "
            f"{'ok' if outcome.ok else 'FAIL'}  ({outcome.seconds:.1f} s)")
    return outcomes


def table(outcomes: list[Outcome], settings: dict) -> str:
    rows = [("audit", "claim", "ε_lb", "verdict", "expected", "outcome", "time")]
    for o in outcomes:
        c = o.result.claim
        claim = f"ε={c.epsilon:g}" + (f",δ={c.delta:g}" if c.delta else "")
        rows.append((o.entry.name, claim, f"{o.result.epsilon_lower_bound:.4g}", o.verdict,
                     o.entry.expect, "ok" if o.ok else "FAIL", f"{o.seconds:.1f}s"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    n = len(outcomes)
    lines.append(f"family-wise false-alarm probability ≤ {settings['alpha']:g} "
                 f"({settings['alpha'] / n:.3g} per audit, Bonferroni over {n})")
    for o in outcomes:
        if not o.ok:
            lines.append(f"FAIL {o.entry.name}: {o.message}\n       reproduce: {o.result.command}")
    return "\n".join(lines)


def write_junit(outcomes: list[Outcome], path: str) -> None:
    """One <testcase> per audit; a failure's text is the audit summary with the
    command that reproduces it."""
    suite = ET.Element("testsuite", name="privacy-audit", tests=str(len(outcomes)),
                       failures=str(sum(not o.ok for o in outcomes)), errors="0",
                       time=f"{sum(o.seconds for o in outcomes):.3f}")
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname="audit", name=o.entry.name,
                             time=f"{o.seconds:.3f}")
        if not o.ok:
            failure = ET.SubElement(case, "failure", message=o.message, type=o.verdict)
            failure.text = o.result.summary()
        else:
            out = ET.SubElement(case, "system-out")
            out.text = o.result.summary()
    tmp = f"{path}.tmp{os.getpid()}"
    ET.ElementTree(suite).write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, path)
