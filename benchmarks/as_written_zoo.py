"""Code as people write it, audited as a new user would: ``audit run
tests.as_written_zoo:NAME`` with nothing but the horizon of a learner — the
default attacks, the default budget (for code run one call per run, fitted
to ``--time``, 60 s by default, from the code's measured speed), on the
machine's workers.  For each entry of ``tests/as_written_zoo.py``: how it
is driven, the domain it was audited on, the runs a side chosen, the
largest ε lower bound and whether it is exact, the best exact (white-box)
figure, which is over the reals, the true ε of the code in doubles, the
verdict, whether a floating-point event decided it
against the expected one, and the wall seconds; then the detection rate
(violations found among the buggy entries) and the false alarms (among
the correct ones).

    python benchmarks/as_written_zoo.py
    python benchmarks/as_written_zoo.py --only ETC --time 30
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests import as_written_zoo as Z  # noqa: E402


def _fmt(x) -> str:
    return "∞" if x == math.inf else f"{x:.3g}"


def _num(x) -> float:
    """A figure of the result document (∞ is written as a word)."""
    return float(x) if not isinstance(x, str) else (math.inf if "inf" in x.lower() else float(x))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated substrings of the names to run")
    ap.add_argument("--time", type=float, help="--time given to each audit (default: none)")
    args = ap.parse_args()
    only = [w for w in (args.only or "").split(",") if w]
    print(f"{'entry':24s} {'runs/side':>9s} {'ε_lb':>8s} {'exact':5s} {'reals':>7s} "
          f"{'true ε':>7s} {'verdict':11s} {'expected':11s} {'float':5s} {'s':>5s}")
    found = bugs = alarms = correct = 0
    for name, flags, expected in Z.CASES:
        if only and not any(w in name for w in only):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            cmd = [sys.executable, "-m", "audit.cli", "run", f"tests.as_written_zoo:{name}",
                   *flags, "--quiet", "--no-store", "--json", out]
            if args.time:
                cmd += ["--time", str(args.time)]
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            secs = time.perf_counter() - start
            if not os.path.exists(out):
                bugs += expected == "violation"
                correct += expected != "violation"
                print(f"{name:24s} failed (exit {proc.returncode}): "
                      f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
                continue
            with open(out) as f:
                doc = json.load(f)
        verdict = doc["verdict"]
        eps = _num(doc["epsilon_lower_bound"])
        exact = any(a["mode"] != "black-box" and (_num(a["epsilon_lower_bound"]) == eps or
                                                 abs(_num(a["epsilon_lower_bound"]) - eps) < 1e-9)
                    for a in doc["attacks"])
        # The best exact figure (over the reals: a trace or replay), and
        # whether a floating-point grain event decided.
        white = [_num(a["epsilon_lower_bound"]) for a in doc["attacks"]
                 if a["mode"] != "black-box"]
        reals = _fmt(max(white)) if white else ""
        grain = any("multiple of 2^" in str(a.get("event", "")) and
                    abs(_num(a["epsilon_lower_bound"]) - eps) < 1e-9 for a in doc["attacks"])
        if expected == "violation":
            bugs += 1
            found += verdict == "violation"
        else:
            correct += 1
            alarms += verdict == "violation"
        print(f"{name:24s} {doc['budget']['trials']:>9,} {_fmt(eps):>8s} {'yes' if exact else '':5s} "
              f"{reals:>7s} {_fmt(Z.TRUE_EPSILON[name]):>7s} {verdict:11s} {expected:11s} "
              f"{'yes' if grain else '':5s} {secs:5.0f}")
    print(f"detected {found} of {bugs} buggy entries; {alarms} false alarms among "
          f"{correct} correct ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
