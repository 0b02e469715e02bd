"""Exact replay of code as written: the exact ε it reads from the code,
against each mechanism's closed form, the cells it replayed and the time.

The mechanisms are those of ``tests/as_written_algos.py`` (functions called
once per run or batched, a class with one object per run, numpy's global
state, Python's ``random``, a generator built from the seed the audit hands
the code), on one neighbouring pair each whose exact ε has a closed form.
For each it prints the replayed pair ε, the closed form, their difference
(the 2^-53 grid and floating point only), the joint cells the replay
enumerated for one side, the time of the two output laws (traced and
confirmed by re-executing the code), and the time of
an audit in the ``replay`` mode alone (the neighbour search's pilot
included, 2 000 runs a side: the exact figure does not depend on the
budget).

    python benchmarks/replay.py
    python benchmarks/replay.py --only "scaled coin,sticky coin"
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
from algorithms.replay import ReplayRefused, output_law, pair_epsilon  # noqa: E402
from audit.engine import audit_algorithm  # noqa: E402

M = "tests.as_written_algos"
E, H = math.e, math.exp(0.5)
ONE, ZERO = np.array([[1.0]]), np.array([[0.0]])
UTIL_A, UTIL_B = np.array([[1.0], [0.0], [0.0]]), np.array([[0.0], [1.0], [1.0]])
BANDIT_A = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
BANDIT_B = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
LONG_A = np.vstack([BANDIT_A, BANDIT_A[:2]])
LONG_B = np.vstack([BANDIT_B, BANDIT_A[:2]])
STREAM_A, STREAM_B = np.array([[0.0], [1.0], [0.0]]), np.array([[1.0], [1.0], [0.0]])

# name: (attribute, horizon, build's epsilon, pair, closed form, how it is written)
CASES = {
    "k-ary RR": ("k_randomized_response", 1, None, (ZERO, ONE), 1.0,
                 "function, np.random, a drawn integer out"),
    "k-ary RR, lie among all": ("buggy_k_randomized_response", 1, None, (ONE, ZERO),
                                math.log(1 + 4 * E / 3), "function, np.random"),
    "scaled coin": ("scaled_coin", 1, None, (ONE, ZERO), 1.0,
                    "function, random.random() * (e + 1) > e"),
    "exponential mechanism": ("exponential_mechanism", 3, None, (UTIL_A, UTIL_B),
                              math.log(H * (1 + 2 * H) / (H + 2)), "function, rng.choice(p=…)"),
    "exponential mechanism, no 1/2": ("buggy_exponential_mechanism", 3, None, (UTIL_A, UTIL_B),
                                      math.log(E * (1 + 2 * E) / (E + 2)),
                                      "function, rng.choice(p=…)"),
    "seeded RR": ("seeded_randomized_response", 1, None, (ONE, ZERO), 1.0,
                  "function, default_rng(seed)"),
    "batched k-ary RR": ("batched_k_randomized_response", 1, None, (ZERO, ONE), 1.0,
                         "batched, np.random.uniform/randint(size=n)"),
    "batched k-ary RR, lie among all": ("buggy_batched_k_randomized_response", 1, None,
                                        (ONE, ZERO), math.log(1 + 4 * E / 3),
                                        "batched, np.random"),
    "sticky coin (T = 3)": ("StickyCoin", 3, 1.0, (BANDIT_A, BANDIT_B), 1.0,
                            "bandit class, random.Random(seed)"),
    "sticky coin, fair lie (T = 3)": ("BuggyStickyCoin", 3, 1.0, (BANDIT_A, BANDIT_B),
                                      math.log(1 + 2 * E), "bandit class"),
    "sticky coin, fair lie (T = 5)": ("BuggyStickyCoin", 5, 1.0, (LONG_A, LONG_B),
                                      math.log(1 + 2 * E), "bandit class"),
    "RR stream (T = 3)": ("RandomizedResponseStream", 3, 1.0, (STREAM_A, STREAM_B), 1.0,
                          "stream class, np.random.rand"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated parts of the case names to run "
                    "(default: all)")
    only = [w.strip() for w in ap.parse_args().only.split(",") if w.strip()]
    print(f"{'mechanism':34s} {'written as':42s} {'replayed ε':>11s} {'closed form':>11s} "
          f"{'|diff|':>8s} {'cells':>6s} {'laws s':>7s} {'audit s':>8s}")
    for name, (attr, T, eps, (a, b), want, how) in CASES.items():
        if only and not any(w in name for w in only):
            continue
        alg = build(f"{M}:{attr}", horizon=T, epsilon=eps)
        t0 = time.perf_counter()
        try:
            la, lb = output_law(alg, a), output_law(alg, b)
        except ReplayRefused as why:
            print(f"{name:34s} {how:42s} steps aside: {why}")
            continue
        got = pair_epsilon(la, lb).epsilon
        laws = time.perf_counter() - t0
        t0 = time.perf_counter()
        audit_algorithm(alg, trials=2000, modes=["replay"], jobs=1)
        audit = time.perf_counter() - t0
        print(f"{name:34s} {how:42s} {got:11.6f} {want:11.6f} {abs(got - want):8.1e} "
              f"{la.cells:6d} {laws:7.2f} {audit:8.1f}")


if __name__ == "__main__":
    main()
