"""Power and validity of the default audit on the bug zoo (``tests/bug_zoo.py``).

Power: every bug of the zoo (and the registered algorithms of the same
kinds) audited exactly as ``audit run NAME`` would — default attacks (none:
the neighbour search alone), every mode that applies, 200 000 runs a side,
95% confidence — with its kind, its true ε (derived in the zoo's
docstrings), the audit's ε lower bound, whether the claim is refuted
("caught"), where the strongest evidence was found and the wall time; then
the correct twins the same way (a "caught" there is a false alarm).

Validity (``--validity``): each correct twin's default scenarios (the
search's finalists: fixed by its seed-independent pilot) audited at
``--seeds`` seeds (default 200) at ``--validity-trials`` runs a side
(default 2 000), with the new events, followed windows and swept corners
on; the rate of ε_lb > claim per twin and overall, with a two-sided 95%
Clopper–Pearson interval (the guarantee: ≤ 1 − confidence = 0.05 per
audit).

    python benchmarks/bug_zoo.py [--trials 200000] [--jobs 2] [--seed 0]
                                 [--only NAME,NAME] [--validity [--seeds 200]]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scipy import stats  # noqa: E402

from algorithms import build  # noqa: E402
from audit.engine import audit_algorithm  # noqa: E402
from tests import bug_zoo  # noqa: E402


def _eps(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.4g}"


def _where(r) -> str:
    if r.strongest:
        return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in r.strongest["parameters"].items())
    best = max(r.results, key=lambda x: x.per_record_lower_bound, default=None)
    return "-" if best is None else best.label.split(":")[0]


def power(args) -> None:
    rows = [(n, f"tests.bug_zoo:{f.__name__}", kind, true)
            for n, f, kind, true in bug_zoo.ZOO]
    rows += [(n, n, kind, true) for n, kind, true in bug_zoo.REGISTERED]
    correct = [(n, f"tests.bug_zoo:{f.__name__}", kind, true)
               for n, f, kind, true in bug_zoo.CORRECT]
    if args.only:
        wanted = set(args.only.split(","))
        rows = [r for r in rows if r[0] in wanted]
        correct = [r for r in correct if r[0] in wanted]
    print(f"trials {args.trials} per side, seed {args.seed}, jobs {args.jobs}, default audit "
          f"(default attacks, every mode that applies)", flush=True)
    head = (f"{'bug':26s} {'kind':11s} {'claim':>6s} {'true ε':>7s} {'ε_lb':>8s} "
            f"{'caught':>6s} {'wall s':>7s}  strongest evidence at")
    for title, todo in (("bugs", rows), ("correct twins (a catch is a false alarm)", correct)):
        print(f"\n{title}")
        print(head)
        print("-" * len(head))
        caught = 0
        total = 0.0
        for name, path, kind, true in todo:
            alg = build(path)
            start = time.perf_counter()
            r = audit_algorithm(alg, trials=args.trials, seed=args.seed, jobs=args.jobs)
            wall = time.perf_counter() - start
            total += wall
            caught += r.violation
            print(f"{name:26s} {kind:11s} {alg.claim.epsilon:6g} {_eps(true):>7s} "
                  f"{r.epsilon_lower_bound:8.4f} {'yes' if r.violation else 'no':>6s} "
                  f"{wall:7.1f}  {_where(r)}", flush=True)
        print(f"caught {caught} of {len(todo)}; {total:.0f} s in all")


def validity(args) -> None:
    from attacks import ATTACKS
    from audit.engine.audit import audit_scenarios
    search = ATTACKS["search"]
    n = args.seeds
    print(f"validity: {n} seeds per correct twin, {args.validity_trials} runs per side, "
          f"95% confidence")
    total, over = 0, 0
    for name, factory, kind, true in bug_zoo.CORRECT:
        if args.only and name not in args.only.split(","):
            continue
        alg = factory()
        scenarios = search.scenarios(alg)
        start = time.perf_counter()
        hits = 0
        for s in range(n):
            found = audit_scenarios(scenarios, alg.claim, trials=args.validity_trials, seed=s,
                                    jobs=args.jobs)
            hits += max(x.epsilon_lower_bound for x in found) > alg.claim.epsilon
        total += n
        over += hits
        lo, hi = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
        print(f"{name:26s} {kind:11s} pairs {len(scenarios)}  ε_lb > ε in {hits}/{n} "
              f"= {hits / n:.3f} (95% CI [{lo:.3f}, {hi:.3f}])  {time.perf_counter() - start:.0f} s",
              flush=True)
    lo, hi = stats.binomtest(over, total).proportion_ci(0.95, method="exact")
    print(f"all: {over}/{total} = {over / max(total, 1):.4f} (95% CI [{lo:.4f}, {hi:.4f}]); "
          f"the guarantee: ≤ 0.05 per audit")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=200_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated names")
    ap.add_argument("--validity", action="store_true")
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--validity-trials", type=int, default=2000)
    args = ap.parse_args()
    if args.validity:
        validity(args)
    else:
        power(args)


if __name__ == "__main__":
    main()
