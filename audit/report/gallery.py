"""The committed report gallery: one audit report per registered algorithm
and mechanism, indexed in ``README.md`` (learners and mechanisms apart).

Regenerate with ``audit gallery --out reports`` (or
``python -m audit.report.gallery --out reports``).  Every algorithm is built with its
registered defaults and audited with its default attacks and every white-box
mode that applies, at the given budget and seed, so the gallery is
reproducible run for run.

May import: ``algorithms``, ``audit.engine``, ``audit.report``.
"""
from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import time

from audit.report.figures import fmt

README = "README.md"


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _claim_cell(claim: dict) -> str:
    if claim.get("curve"):
        return f"{claim['curve']['claim']}; about {claim.get('output') or claim.get('scope', '?')}"
    s = f"ε = {fmt(claim['epsilon'])}"
    if claim.get("delta"):
        s += f", δ = {fmt(claim['delta'])}"
    if claim.get("per_round_epsilon") is not None:
        s += f" (ε_t = {fmt(claim['per_round_epsilon'])} per round)"
    return s + f"; about {claim.get('output') or claim.get('scope', '?')}"


def _intermediate_cell(doc: dict) -> str:
    """The largest ε lower bound on the proof's intermediate object (released
    values the claim is not about), or "-": reported, never a verdict."""
    vals = [a.get("epsilon_lower_bound") or 0.0 for a in doc.get("attacks", [])
            if a.get("intermediate_object")]
    if not vals:
        return "-"
    exact = any(a.get("exact") for a in doc.get("attacks", []) if a.get("intermediate_object"))
    return fmt(max(vals)) + (" (exact)" if exact else "")


def _kind(alg) -> str:
    return "mechanism" if alg.learner.reads_first else "learner"


def build_gallery(out_dir: str = "reports", trials: int = 200_000, seed: int = 0,
                  jobs: int = 2, names=None, executor=None, log=print) -> list[dict]:
    """Audit every registered algorithm and mechanism (or ``names``) and
    write ``out_dir/<name>/report.{html,md}``, ``result.json`` and figures,
    then ``out_dir/README.md`` indexing them: learners and mechanisms in a
    table each, the index saying how many of the registered entries it
    covers.  An audit that fails is listed with its error and the others
    still run.  ``executor`` (with a store) keeps completed chunks, so an
    interrupted regeneration resumes.  Returns one row per entry."""
    from algorithms import build
    from algorithms.registry import REGISTRY
    from audit.engine import audit_algorithm, reproduce_command
    from audit.engine.regret import regret_curve
    from audit.engine.scenarios import attack_names
    from audit.report.render import write_report

    names = list(names) if names else list(REGISTRY)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown algorithm(s) {', '.join(unknown)}; choose from: "
                         f"{', '.join(REGISTRY)}")
    os.makedirs(out_dir, exist_ok=True)
    # A from-scratch regeneration: no figure or result of an earlier run may
    # survive in a registered algorithm's folder.
    for name in REGISTRY:
        if name in names and os.path.isdir(os.path.join(out_dir, name)):
            shutil.rmtree(os.path.join(out_dir, name))
    start = time.perf_counter()
    rows = []
    for i, name in enumerate(names, 1):
        t0 = time.perf_counter()
        alg = build(name)
        # What the audit below runs: the algorithm's attacks and the search.
        attacks = attack_names(alg, None)
        log(f"[{i}/{len(names)}] {name}: auditing ({', '.join(attacks) or 'no default attacks'}; "
            f"{trials} runs per side, seed {seed}) …", flush=True)
        command = reproduce_command(name, {}, attacks, trials, 0.95, seed)
        row = {"name": name, "kind": _kind(alg), "summary": REGISTRY[name].summary,
               "true_epsilon": (alg.extra or {}).get("true_epsilon"), "doc": None,
               "error": None}
        try:
            result = audit_algorithm(alg, trials=trials, seed=seed, jobs=jobs, command=command,
                                     executor=executor)
            result.regret = regret_curve(alg, runs=200, seed=seed)
            doc = result.as_dict()
            paths = write_report(doc, os.path.join(out_dir, name))
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - one failed audit must not stop the gallery
            row["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            row["seconds"] = time.perf_counter() - t0
            log(f"[{i}/{len(names)}] {name}: ERROR {row['error']}", flush=True)
            rows.append(row)
            continue
        dt = time.perf_counter() - t0
        size = os.path.getsize(paths["html"])
        log(f"[{i}/{len(names)}] {name}: {doc['verdict']} (ε_lb = "
            f"{fmt(doc['epsilon_lower_bound'])} vs claimed ε = {fmt(doc['claim']['epsilon'])}) "
            f"in {dt:.1f} s; report.html {size / 1e6:.2f} MB", flush=True)
        row.update(doc=doc, seconds=dt)
        rows.append(row)
    total = time.perf_counter() - start
    _write_index(out_dir, rows, trials, seed, total, len(REGISTRY))
    failed = [r["name"] for r in rows if r["error"]]
    log(f"gallery: {len(rows) - len(failed)} report(s) in {out_dir}/ in {total:.0f} s"
        + (f"; {len(failed)} failed: {', '.join(failed)}" if failed else "")
        + f"; index {os.path.join(out_dir, README)}", flush=True)
    return rows


def _table(rows: list, mechanisms: bool) -> list[str]:
    head = ("| mechanism | what it is | claim | ε lower bound | verdict | true ε | report |"
            if mechanisms else
            "| algorithm | what it is | claim | ε lower bound | verdict | intermediate object | "
            "report |")
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        d, name = r["doc"], r["name"]
        if d is None:
            lines.append(f"| `{name}` | {_md(r['summary'])} | - | - | **ERROR** | "
                         f"{_md(r['error'])} | - |")
            continue
        verdict = "**VIOLATION**" if d["verdict"] == "violation" else "consistent"
        last = (fmt(r["true_epsilon"]) if r.get("true_epsilon") is not None else "-") \
            if mechanisms else _intermediate_cell(d)
        lines.append(f"| `{name}` | {_md(r['summary'])} | {_md(_claim_cell(d['claim']))} | "
                     f"{fmt(d['epsilon_lower_bound'])} | {verdict} | {last} | "
                     f"[report.md]({name}/report.md) |")
    return lines


def _write_index(out_dir: str, rows: list, trials: int, seed: int, total: float,
                 registered: int) -> None:
    from audit import __version__
    today = datetime.date.today().isoformat()
    learners = [r for r in rows if r["kind"] == "learner"]
    mechanisms = [r for r in rows if r["kind"] == "mechanism"]
    done = sum(1 for r in rows if r["doc"] is not None)
    covered = ("every registered entry" if len(rows) == registered
               else f"{len(rows)} of the {registered} registered entries")
    lines = [
        "# Audit reports of the built-in algorithms and mechanisms", "",
        f"{done} reports, one for {covered}: {len(learners)} bandit and online-learning "
        f"algorithms and {len(mechanisms)} mechanisms over a stream of query answers (the DP "
        f"testers' benchmark and continual counters). Each is audited against its own privacy "
        f"claim at its registered default parameters, with its default attacks, the neighbour "
        f"search and every white-box mode that applies. A *violation* means the measured "
        f"privacy loss exceeds the claim; *consistent* means no evidence against the claim at "
        f"this budget — not a proof of privacy. What each row means for its paper is in "
        f"[docs/findings.md](../docs/findings.md).", "",
    ]
    if learners:
        lines += [
            f"## Algorithms ({len(learners)})", "",
            "The `mutant-*` entries are deliberately broken implementations the auditor must "
            "catch; `exp3` has no privacy proof and App. G.1 of Asi–Raman–Talwar shows the claim "
            "fails. Each claim is about the output its theorem names; where the proof goes "
            "through a wider object (noisy losses, tree nodes), the exact bound on that "
            "*intermediate object* is in its own column: it says whether the proof's route can "
            "hold, and never decides the verdict.", "",
            *_table(learners, mechanisms=False), ""]
    if mechanisms:
        lines += [
            f"## Mechanisms ({len(mechanisms)})", "",
            "Mechanisms over a stream of query answers, audited under the neighbouring relation "
            "their claim names (most under `bounded-all`: every answer may change by at most "
            "Δ = 1). *True ε* is the mechanism's exact ε where it is known (its source in the "
            "report's notes); a mechanism whose true ε exceeds its claim is expected to be "
            "refuted.", "",
            *_table(mechanisms, mechanisms=True), ""]
    lines += [
        f"Generated {today} by `audit` {__version__} with {fmt(trials)} runs per side, 95% "
        f"confidence, seed {seed} ({total:.0f} s in total). Each folder holds `report.md` and "
        f"its figures (PNG); the command below also writes `report.html` (the same report with "
        f"the figures embedded, one file to open in a browser) and `result.json` (re-render "
        f"with `audit report <name>/result.json --out DIR`), which the repository does not "
        f"keep.",
        "",
        "Regenerate all of them with:",
        "",
        "```sh",
        "audit gallery --out reports" + (f" --trials {trials}" if trials != 200_000 else "")
        + (f" --seed {seed}" if seed else ""),
        "```",
        "",
    ]
    tmp = os.path.join(out_dir, f".{README}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    os.replace(tmp, os.path.join(out_dir, README))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m audit.report.gallery",
                                description="Regenerate the report gallery of every built-in algorithm.")
    p.add_argument("--out", default="reports", metavar="DIR")
    p.add_argument("--trials", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    if args.trials < 2 or args.jobs < 1:
        p.error("--trials must be >= 2 and --jobs >= 1")
    build_gallery(args.out, trials=args.trials, seed=args.seed, jobs=args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
