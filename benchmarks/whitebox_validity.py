"""False-alarm rate of the white-box modes on correct algorithms.

For each correct algorithm below, audit it with the white-box modes only
(per-round, search, pld: black-box left out, it is validated elsewhere) at
many seeds and count the audits whose verdict is "violation".  A correct
algorithm must never get an exact violation; the statistical part (the DKW
band of pld) may err with probability at most 1 − confidence per audit.

    python benchmarks/whitebox_validity.py --seeds 200 --trials 2000

Prints one row per algorithm: audits, violations, the largest ε_lb/ε seen,
and how many audits had their white-box modes refused by the declaration
checks (a false refusal: each check's probability is ≤ 1e-6).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from joblib import Parallel, delayed  # noqa: E402

from algorithms import build  # noqa: E402
from audit.engine import audit_algorithm  # noqa: E402
from tests.wb_algos import shared_hedge, three_rounds  # noqa: E402

CASES = {
    # name: (factory, attacks or None for the defaults)
    "three-rounds (0.762-DP, claim 1)": (lambda: three_rounds(c=1.2), None),
    "three-rounds (claim = true ε, tight)": (
        lambda: three_rounds(c=1.2, claim_epsilon=three_rounds(c=1.2).extra["true_epsilon"]),
        None),
    "shared-hedge (declared shared)": (lambda: shared_hedge(declare_shared=True), None),
    "private-exp3 (tight at transcript scope)": (lambda: build("private-exp3", horizon=200), None),
    "ldp-exp4": (lambda: build("ldp-exp4", horizon=100), None),
    "private-batched-exp4 (δ = 1e-6)": (lambda: build("private-batched-exp4", horizon=200), None),
    # On [0, 1]^N: on the paper's [−1, 1]^N these two are 2ε-DP, not correct.
    "as-ftrl-experts-unit": (lambda: build("as-ftrl-experts-unit", horizon=32), None),
    "as-bandit-exp2-unit": (lambda: build("as-bandit-exp2-unit", horizon=100), None),
    "tbe-adaptive-fixed": (lambda: build("tbe-adaptive-fixed", horizon=50), None),
    "pfb-laplace-derived": (lambda: build("pfb-laplace-derived"), None),
}
WHITE = ["per-round", "search", "pld"]


def one(name, seed, trials, confidence):
    make, attacks = CASES[name]
    alg = make()
    r = audit_algorithm(alg, attacks, trials=trials, confidence=confidence, seed=seed,
                        modes=WHITE)
    white = [x for x in r.results if hasattr(x, "kind")]
    ratio = max((x.epsilon_lower_bound / r.claim.epsilon for x in white
                 if not x.informational), default=0.0)
    exact = any(x.violation and x.exact for x in white)
    return r.verdict == "violation", exact, ratio, bool(r.refused)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=200)
    p.add_argument("--trials", type=int, default=2000)
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    print(f"white-box false alarms: {args.seeds} seeds per algorithm, {args.trials} runs per "
          f"side, {args.confidence:.0%} confidence, modes {', '.join(WHITE)}")
    print(f"{'algorithm':44s} {'audits':>6s} {'violations':>10s} {'exact':>5s} "
          f"{'max ε_lb/ε':>10s} {'refused':>7s} {'time':>7s}")
    total = bad = 0
    for name in CASES:
        start = time.perf_counter()
        out = Parallel(n_jobs=args.jobs)(delayed(one)(name, s, args.trials, args.confidence)
                                         for s in range(args.seeds))
        v = sum(o[0] for o in out)
        total += len(out)
        bad += v
        print(f"{name:44s} {len(out):6d} {v:10d} {sum(o[1] for o in out):5d} "
              f"{max(o[2] for o in out):10.6f} {sum(o[3] for o in out):7d} "
              f"{time.perf_counter() - start:6.1f}s")
    print(f"overall: {bad} violation(s) in {total} audits of correct algorithms "
          f"(allowed by the confidence level: at most {1 - args.confidence:.0%} per audit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
