"""Exact evidence from the trace of the code's own continuous draws: a table
over mechanisms written as people write them (``tests/traced_algos.py``:
functions and classes, half correct, no declaration), and the DP testers'
declared models reproduced from the trace of the same code.

For each mechanism: the structure the trace recognised, the audit's exact ε
(``--mode replay``, default attacks, 2 000 trials: the figure does not
depend on them), the exact ε at the pair that attains the truth where the
audit's pairs do not (the tree counters: the first answer changed), the
true ε, the verdict and the seconds.  ``--testers``: for each declared
model, the audit's figure from its declaration (``integral`` or ``pld``)
and from the trace (``replay``).

    python benchmarks/traced.py
    python benchmarks/traced.py --only "Tree,argmax"
    python benchmarks/traced.py --testers
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from algorithms import build  # noqa: E402
from audit.engine.audit import audit_algorithm  # noqa: E402
from audit.engine.evidence.traced import traced_pair  # noqa: E402
from tests import traced_algos as T  # noqa: E402

TESTERS = {"svt1": "integral", "svt2": "integral", "svt3": "integral", "svt4": "integral",
           "svt5": "integral", "svt6": "integral", "report-noisy-max1": "integral",
           "report-noisy-max2": "integral", "report-noisy-max3": "integral",
           "report-noisy-max4": "integral", "laplace": "pld", "noisy-hist1": "pld",
           "noisy-hist2": "pld"}


def _fmt(x) -> str:
    return "—" if x is None else ("∞" if x == math.inf else f"{x:.6g}")


def _best(res):
    return max(res.results, key=lambda r: r.epsilon_lower_bound)


def table(only) -> None:
    print(f"{'mechanism':32s} {'structure':12s} {'exact ε':>9s} {'worst pair':>10s} "
          f"{'true ε':>7s} {'verdict':11s} {'s':>5s}")
    for name, (h, k, true, _) in T.CASES.items():
        if only and not any(w in name for w in only):
            continue
        kw = {"horizon": h, **({"arms": k} if k > 1 else {})}
        alg = build(f"tests.traced_algos:{name}", **kw)
        t = time.perf_counter()
        res = audit_algorithm(alg, modes=["replay"], trials=2000, seed=0)
        best = _best(res)
        structure = best.details.get("structure", "refused") if best.exact else "refused"
        worst = None
        if name.endswith("TreeCounter"):
            a = np.zeros((h, 1))
            b = a.copy()
            b[0, 0] = 1.0
            worst = traced_pair(alg, a, b, "output").epsilon
        print(f"{name:32s} {structure:12s} {_fmt(best.epsilon_lower_bound if best.exact else None):>9s} "
              f"{_fmt(worst):>10s} {_fmt(true):>7s} {res.verdict:11s} "
              f"{time.perf_counter() - t:5.1f}")


def testers(only) -> None:
    print(f"{'mechanism':20s} {'declared':>10s} {'traced':>10s} {'traced says':s}")
    for name, mode in TESTERS.items():
        if only and not any(w in name for w in only):
            continue
        got = {}
        for m in (mode, "replay"):
            res = audit_algorithm(build(name), modes=[m], trials=4000, seed=0)
            got[m] = _best(res)
        tr = got["replay"]
        why = "" if tr.exact else tr.event[:90]
        print(f"{name:20s} {_fmt(got[mode].epsilon_lower_bound):>10s} "
              f"{_fmt(tr.epsilon_lower_bound if tr.exact else None):>10s} {why}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated parts of the names to run")
    ap.add_argument("--testers", action="store_true",
                    help="the DP testers' declared models against their traces instead")
    args = ap.parse_args()
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    (testers if args.testers else table)(only)


if __name__ == "__main__":
    main()
