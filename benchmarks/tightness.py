"""Tightness of the black-box canary audit: ε_lb/ε for a correct Algorithm 1
at ε = 1 with 10⁶ runs per side and at ε = 0.1 with 10⁷ runs per side, at 95%
confidence, with wall time (black-box mode only: the white-box modes are exact
and would report ε itself).  The best published black-box tester reaches
0.968·ε at ε = 0.1 with 2·10⁸ samples per side at 90% confidence.

    python benchmarks/tightness.py [--jobs 2] [--algorithm private-exp3]
"""
from __future__ import annotations

import argparse
import os
import time

from algorithms import build
from audit.engine import audit_algorithm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--algorithm", default="private-exp3")
    ap.add_argument("--cases", default="1:1000000,0.1:10000000",
                    help="comma-separated epsilon:trials pairs")
    args = ap.parse_args()
    print(f"{'ε':>6s} {'runs/side':>10s} {'ε_lb':>8s} {'ε_lb/ε':>7s} {'wall s':>7s}  event")
    for case in args.cases.split(","):
        eps, trials = case.split(":")
        eps, trials = float(eps), int(trials)
        alg = build(args.algorithm, epsilon=eps)
        start = time.perf_counter()
        r = audit_algorithm(alg, ["canary"], trials=trials, confidence=0.95, seed=0, jobs=args.jobs,
                            modes=["black-box"])
        wall = time.perf_counter() - start
        t = r.results[0].test
        print(f"{eps:6g} {trials:10d} {r.epsilon_lower_bound:8.4f} {r.epsilon_lower_bound / eps:7.4f} "
              f"{wall:7.1f}  {t.event} ({t.direction}) {t.numerator.count}/{t.numerator.trials} "
              f"vs {t.denominator.count}/{t.denominator.trials}")


if __name__ == "__main__":
    main()
