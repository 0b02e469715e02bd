"""The committed report gallery: one audit report per registered algorithm.

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


def build_gallery(out_dir: str = "reports", trials: int = 200_000, seed: int = 0,
                  jobs: int = 2, names=None) -> list[dict]:
    """Audit every registered algorithm (or ``names``) and write
    ``out_dir/<name>/report.{html,md}``, ``result.json`` and figures, then
    ``out_dir/README.md`` indexing them.  Returns one row per algorithm."""
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
        print(f"[{i}/{len(names)}] {name}: auditing ({', '.join(attacks) or 'no default attacks'}; "
              f"{trials} runs per side, seed {seed}, {jobs} job(s)) …", flush=True)
        command = reproduce_command(name, {}, attacks, trials, 0.95, seed)
        result = audit_algorithm(alg, trials=trials, seed=seed, jobs=jobs, command=command)
        result.regret = regret_curve(alg, runs=200, seed=seed)
        doc = result.as_dict()
        paths = write_report(doc, os.path.join(out_dir, name))
        dt = time.perf_counter() - t0
        size = os.path.getsize(paths["html"])
        print(f"[{i}/{len(names)}] {name}: {doc['verdict']} (ε_lb = "
              f"{fmt(doc['epsilon_lower_bound'])} vs claimed ε = {fmt(doc['claim']['epsilon'])}) "
              f"in {dt:.1f} s; report.html {size / 1e6:.2f} MB", flush=True)
        rows.append({"name": name, "doc": doc, "seconds": dt, "summary": REGISTRY[name].summary})
    total = time.perf_counter() - start
    _write_index(out_dir, rows, trials, seed, total)
    print(f"gallery: {len(rows)} report(s) in {out_dir}/ in {total:.0f} s; index "
          f"{os.path.join(out_dir, README)}", flush=True)
    return rows


def _write_index(out_dir: str, rows: list, trials: int, seed: int, total: float) -> None:
    from audit import __version__
    today = datetime.date.today().isoformat()
    lines = [
        "# Audit reports of the built-in algorithms", "",
        "One report per registered algorithm, each audited against its own privacy claim at its "
        "registered default parameters, with its default attacks and every white-box mode that "
        "applies. A *violation* means the measured privacy loss exceeds the claim (the `mutant-*` "
        "entries are deliberately broken implementations the auditor must catch; `exp3` has no "
        "privacy proof and App. G.1 of Asi–Raman–Talwar shows the claim fails). *Consistent* means "
        "no evidence against the claim at this budget — not a proof of privacy. Each claim is "
        "about the output its theorem names; where the proof goes through a wider object (noisy "
        "losses, tree nodes), the exact bound on that *intermediate object* is in its own column: "
        "it says whether the proof's route can hold, and never decides the verdict. What each "
        "row means for its paper is in [docs/findings.md](../docs/findings.md).", "",
        "| algorithm | what it is | claim | ε lower bound | verdict | intermediate object | "
        "report |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d, name = r["doc"], r["name"]
        verdict = "**VIOLATION**" if d["verdict"] == "violation" else "consistent"
        lines.append(f"| `{name}` | {_md(r['summary'])} | {_md(_claim_cell(d['claim']))} | "
                     f"{fmt(d['epsilon_lower_bound'])} | {verdict} | {_intermediate_cell(d)} | "
                     f"[report.md]({name}/report.md) · [report.html]({name}/report.html) |")
    lines += [
        "",
        f"Generated {today} by `audit` {__version__} with {fmt(trials)} runs per side, 95% "
        f"confidence, seed {seed} ({total:.0f} s in total). Each folder also holds `result.json` "
        f"(re-render with `audit report <name>/result.json --out DIR`) and the figures as PNG files.",
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
