"""``audit check``: the CI gate over a suite of audits declared in TOML.

A suite lives in ``audit.toml`` (``[[audit]]`` tables) or in ``pyproject.toml``
under ``[tool.audit]`` (``[[tool.audit.audit]]``).  Top-level keys:
``alpha`` (family-wise false-alarm probability, default 0.05, split evenly
across the entries by Bonferroni), ``trials``, ``seed``, ``jobs``.  Every key
and value is checked before anything runs (``SuiteError``: one line naming
the file, the entry and the key, and what is allowed).

Each entry's outcome is ok, FAIL (its expectation was not met) or ERROR (its
audit raised: bad input, a user's algorithm that raised or broke the
interface, or an internal error of the tool); an error does not stop the
other entries.  ``audit.cli.check.cmd_check`` turns the outcomes into the
exit code.

May import: ``algorithms``, ``attacks``, ``audit.engine``, ``audit.cli.common``.
"""
from __future__ import annotations

import math
import os
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Optional

from algorithms import REGISTRY, build
from algorithms.core import Claim
from algorithms.errors import UserCodeError

SUITE_KEYS = {"alpha", "trials", "seed", "jobs", "audit"}
ENTRY_KEYS = {"name", "algorithm", "epsilon", "delta", "horizon", "arms", "experts", "params",
              "claim_epsilon", "claim_delta", "claim_per_round_epsilon", "trials", "attacks",
              "modes", "seed", "expect", "methods", "feedback", "coupled",
              "runs", "input_range", "environment", "backend", "stop_early", "relation",
              "max_change"}


class SuiteError(ValueError):
    """A malformed suite: one line naming the file and the key."""


@dataclass
class Entry:
    name: str
    spec: dict
    expect: str


@dataclass
class Outcome:
    """What one entry's audit gave: a ``result``, or an ``error`` (one line)
    with its ``error_type`` (the exception's class) and ``error_kind``:
    "input" (bad input or a user's algorithm) or "internal" (this tool)."""

    entry: Entry
    result: object
    seconds: float
    error: Optional[str] = None
    error_type: Optional[str] = None
    error_kind: Optional[str] = None
    command: Optional[str] = None

    @property
    def verdict(self) -> str:
        return "error" if self.result is None else self.result.verdict

    @property
    def ok(self) -> bool:
        return self.error is None and self.verdict == self.entry.expect

    @property
    def failed(self) -> bool:
        """The audit ran and its expectation was not met."""
        return self.error is None and not self.ok

    @property
    def message(self) -> str:
        if self.error is not None:
            return f"ERROR: {self.error}"
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


def _runs(spec: dict) -> Optional[bool]:
    """An entry's choice of runs for its black-box tests: True (coupled),
    False (independent) or None (the default); ``runs`` and the older
    ``coupled = true`` both say it."""
    runs = spec.get("runs")
    coupled = spec.get("coupled")
    if runs is not None and coupled is not None and (runs == "coupled") != coupled:
        raise SuiteError(f"entry {spec.get('name') or spec.get('algorithm')!r}: keys 'runs' and "
                         f"'coupled' disagree; give one")
    if runs is not None:
        return runs == "coupled"
    return coupled


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _check_value(where: str, key: str, value) -> None:
    """One key of the suite or of an entry: its type and range."""
    def bad(allowed):
        raise SuiteError(f"{where}: key {key!r} must be {allowed}, got {value!r}")

    if key in ("trials", "jobs", "horizon", "arms", "experts"):
        if not _is_int(value) or value < 1:
            bad("a positive integer")
    elif key == "seed":
        if not _is_int(value) or value < 0:
            bad("a non-negative integer")
    elif key == "alpha":
        if not _is_number(value) or not 0 < value < 1:
            bad("a number in (0, 1)")
    elif key in ("epsilon", "claim_epsilon", "claim_per_round_epsilon", "max_change"):
        if not _is_number(value) or value <= 0:
            bad("a finite number > 0")
    elif key in ("delta", "claim_delta"):
        if not _is_number(value) or not 0 <= value < 1:
            bad("a number in [0, 1)")
    elif key in ("name", "algorithm", "methods", "environment"):
        if not isinstance(value, str) or not value:
            bad("a non-empty string")
    elif key == "feedback":
        if value not in ("loss", "reward"):
            bad('"loss" or "reward"')
    elif key == "relation":
        if value not in ("one-round", "bounded-all"):
            bad('"one-round" or "bounded-all"')
    elif key == "input_range":
        if not (isinstance(value, list) and len(value) == 2 and all(map(_is_number, value))
                and value[0] < value[1]):
            bad("[lo, hi] with finite numbers lo < hi")
    elif key in ("coupled", "stop_early"):
        if not isinstance(value, bool):
            bad("true or false")
    elif key == "runs":
        if value not in ("coupled", "independent"):
            bad('"coupled" or "independent"')
    elif key == "backend":
        if value not in ("numpy", "jax"):
            bad('"numpy" or "jax"')
    elif key == "expect":
        if value not in ("consistent", "violation"):
            bad('"consistent" or "violation"')
    elif key == "params":
        if not isinstance(value, dict):
            bad("a table (params = { name = value })")
        for k, v in value.items():
            if not (_is_number(v) or isinstance(v, (str, bool))):
                raise SuiteError(f"{where}: params.{k} must be a number, a string or a "
                                 f"boolean, got {v!r}")
    elif key in ("attacks", "modes"):
        from algorithms.suggest import did_you_mean
        from attacks import ATTACKS
        from audit.engine.evidence import MODES
        known = list(ATTACKS) if key == "attacks" else list(MODES)
        if not (isinstance(value, list) and value and all(isinstance(x, str) for x in value)):
            bad(f"a non-empty array of strings (omit the key for the default) from: "
                f"{', '.join(known)}")
        for x in value:
            if x not in known:
                raise SuiteError(f"{where}: key {key!r}: unknown {key[:-1]} {x!r}"
                                 f"{did_you_mean(x, known)} (choose from: {', '.join(known)})")


def parse_suite(path: str, doc: dict) -> tuple[dict, list[Entry]]:
    for key in doc:
        if key not in SUITE_KEYS:
            raise SuiteError(f"{path}: unknown key {key!r} (allowed: {', '.join(sorted(SUITE_KEYS))})")
        if key != "audit":
            _check_value(path, key, doc[key])
    entries = doc.get("audit")
    if not isinstance(entries, list) or not entries:
        raise SuiteError(f"{path}: key 'audit' must be a non-empty array of tables ([[audit]])")
    alpha = doc.get("alpha", 0.05)
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
        for key, value in e.items():
            _check_value(where, key, value)
        expect = e.get("expect", "consistent")
        name = e.get("name", e["algorithm"])
        where = f"{path}: audit[{i}] ({name})"
        if name in seen:
            raise SuiteError(f"{where}: duplicate name {name!r} (set key 'name')")
        seen.add(name)
        try:
            _claim(e, _build(e))
        except (ValueError, UserCodeError) as exc:
            msg = str(exc)
            if msg.startswith(f"{name}: "):  # already in `where`
                msg = msg[len(name) + 2:]
            user = isinstance(exc, UserCodeError)
            raise SuiteError(f"{where}: {'your ' if user else ''}{msg}") from None
        out.append(Entry(name, e, expect))
    settings = {"alpha": float(alpha), "trials": doc.get("trials", 100_000),
                "seed": doc.get("seed", 0), "jobs": doc.get("jobs")}
    return settings, out


def _build(spec: dict):
    return build(spec["algorithm"], horizon=spec.get("horizon"), arms=spec.get("arms"),
                 experts=spec.get("experts"), epsilon=spec.get("epsilon"),
                 delta=spec.get("delta"), params=spec.get("params"),
                 claim_epsilon=spec.get("claim_epsilon"), claim_delta=spec.get("claim_delta"),
                 naming="suite", methods=spec.get("methods"), feedback=spec.get("feedback"),
                 input_range=spec.get("input_range"), environment=spec.get("environment"),
                 relation=spec.get("relation"), max_change=spec.get("max_change"))


def _claim(spec: dict, alg) -> Optional[Claim]:
    return Claim.override(alg.claim, spec.get("claim_epsilon"), spec.get("claim_delta"),
                          "suite claim override", spec.get("claim_per_round_epsilon"))


def scaled_trials(settings: dict, entries: list[Entry], scale: float) -> list[int]:
    """Runs per side of every entry under ``--scale``; never fewer than 2 (half
    select, half test), and never silently raised to 2."""
    out = []
    for i, e in enumerate(entries):
        base = e.spec.get("trials", settings["trials"])
        n = int(base * scale)
        if n < 2:
            raise SuiteError(f"--scale {scale:g}: audit[{i}] ({e.name}) would get {n} runs per "
                             f"side ({base} x {scale:g}); every audit needs at least 2, so "
                             f"--scale must be >= {2 / base:.3g} for this suite")
        out.append(n)
    return out


def _error_outcome(e: Entry, exc: BaseException, seconds: float, command) -> Outcome:
    """An entry whose audit raised: one line, and whose fault it is."""
    from audit.cli.common import internal_error_line, one_line, user_function_in_traceback
    algo = e.spec["algorithm"]
    fn = None if isinstance(exc, (UserCodeError, ValueError)) else user_function_in_traceback(
        exc, algo)
    if isinstance(exc, UserCodeError) and algo not in REGISTRY:
        line, kind = f"{algo}: your {one_line(exc)}", "input"
    elif isinstance(exc, ValueError) and not isinstance(exc, UserCodeError):
        line, kind = one_line(exc), "input"
    elif fn is not None:
        line, kind = f"{algo}: your {fn}() raised {type(exc).__name__}: {one_line(exc)}", "input"
    else:
        what = f"{e.spec['algorithm']} (built in)" if isinstance(exc, UserCodeError) else ""
        line, kind = "internal error: " + internal_error_line(exc, what=what), "internal"
    return Outcome(e, None, seconds, error=line, error_type=type(exc).__name__,
                   error_kind=kind, command=command)


def run_suite(settings: dict, entries: list[Entry], jobs: int, scale: float = 1.0,
              log=print, executor=None) -> list[Outcome]:
    """Run every entry; an entry whose audit raises becomes an error outcome
    and the others still run.  With an ``executor`` that has a store,
    completed chunks are kept (a rerun resumes) and every audit is recorded
    in the history (source "check", under the entry's name)."""
    from audit.engine import audit_algorithm, reproduce_command
    from audit.engine.scenarios import attack_names
    per_entry = settings["alpha"] / len(entries)
    confidence = 1.0 - per_entry
    all_trials = scaled_trials(settings, entries, scale)
    outcomes = []
    for e, trials in zip(entries, all_trials):
        spec = e.spec
        seed = spec.get("seed", settings["seed"])
        start = time.perf_counter()
        command = None
        try:
            alg = _build(spec)
            echo = {"--epsilon": spec.get("epsilon"), "--delta": spec.get("delta"),
                    "--horizon": spec.get("horizon"), "--arms": spec.get("arms"),
                    "--experts": spec.get("experts"),
                    "--param": list(spec.get("params", {}).items()) or None,
                    "--claim-epsilon": spec.get("claim_epsilon"),
                    "--claim-delta": spec.get("claim_delta"),
                    "--claim-per-round-epsilon": spec.get("claim_per_round_epsilon"),
                    "--methods": spec.get("methods"), "--feedback": spec.get("feedback"),
                    "--environment": spec.get("environment"),
                    "--input-range": ("{:g},{:g}".format(*spec["input_range"])
                                      if spec.get("input_range") else None),
                    "--relation": spec.get("relation"),
                    "--max-change": spec.get("max_change")}
            modes = spec.get("modes")
            attacks = attack_names(alg, spec.get("attacks"),
                                   search=not modes or "black-box" in modes)
            coupled = _runs(spec)
            backend = spec.get("backend", "numpy")
            stop_early = spec.get("stop_early")
            command = reproduce_command(spec["algorithm"], echo, attacks, trials, confidence,
                                        seed, spec.get("modes"), coupled=coupled,
                                        backend=backend, stop_early=stop_early)
            result = audit_algorithm(alg, attacks, trials=trials, confidence=confidence,
                                     seed=seed, jobs=jobs, claim=_claim(spec, alg),
                                     command=command, modes=spec.get("modes"),
                                     executor=executor, coupled=coupled, backend=backend,
                                     stop_early=stop_early)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - reported as this entry's error
            outcome = _error_outcome(e, exc, time.perf_counter() - start, command)
            outcomes.append(outcome)
            log(f"  {e.name:24s} ERROR      {outcome.error}")
            continue
        outcome = Outcome(e, result, time.perf_counter() - start, command=command)
        if executor is not None and executor.store is not None:
            executor.store.record_audit(result, result.fingerprint, source="check", name=e.name)
        outcomes.append(outcome)
        total = result.chunks_reused + result.chunks_computed
        stored = (f", {result.chunks_reused} of {total} chunks from the store"
                  if result.chunks_reused else "")
        log(f"  {e.name:24s} {outcome.verdict:10s} expected {e.expect:10s} "
            f"{'ok' if outcome.ok else 'FAIL'}  ({outcome.seconds:.1f} s{stored})")
    return outcomes


def store_line(outcomes: list[Outcome], store) -> str:
    """How many chunks of the suite's runs came from the store (empty
    without a store)."""
    if store is None:
        return ""
    done = [o.result for o in outcomes if o.result is not None]
    reused = sum(r.chunks_reused for r in done)
    total = reused + sum(r.chunks_computed for r in done)
    return (f"store: {reused} of {total} chunks came from {store.path}"
            + (" (every audit resumed)" if total and reused == total else ""))


def table(outcomes: list[Outcome], settings: dict) -> str:
    rows = [("audit", "claim", "ε_lb", "verdict", "expected", "outcome", "time")]
    for o in outcomes:
        if o.result is None:
            rows.append((o.entry.name, "-", "-", "ERROR", o.entry.expect, "ERROR",
                         f"{o.seconds:.1f}s"))
            continue
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
        if o.error is not None:
            lines.append(f"ERROR {o.entry.name}: {o.error}"
                         + (f"\n       reproduce: {o.command}" if o.command else ""))
        elif not o.ok:
            lines.append(f"FAIL {o.entry.name}: {o.message}\n       reproduce: {o.result.command}")
    return "\n".join(lines)


def write_junit(outcomes: list[Outcome], path: str) -> None:
    """One <testcase> per audit; a failure's text is the audit summary with the
    command that reproduces it; an entry whose audit raised gets an <error>
    (message: the one-line reason, type: the exception's class)."""
    suite = ET.Element("testsuite", name="privacy-audit", tests=str(len(outcomes)),
                       failures=str(sum(o.failed for o in outcomes)),
                       errors=str(sum(o.error is not None for o in outcomes)),
                       time=f"{sum(o.seconds for o in outcomes):.3f}")
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname="audit", name=o.entry.name,
                             time=f"{o.seconds:.3f}")
        if o.error is not None:
            error = ET.SubElement(case, "error", message=o.error, type=o.error_type)
            error.text = o.error + (f"\nreproduce: {o.command}" if o.command else "")
        elif not o.ok:
            failure = ET.SubElement(case, "failure", message=o.message, type=o.verdict)
            failure.text = o.result.summary()
        else:
            out = ET.SubElement(case, "system-out")
            out.text = o.result.summary()
    tmp = f"{path}.tmp{os.getpid()}"
    ET.ElementTree(suite).write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, path)
