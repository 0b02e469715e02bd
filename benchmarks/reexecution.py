"""What confirming a replay by re-execution costs: for each mechanism, the
time of its two output laws traced alone, and traced then confirmed by
re-executing the unmodified code at the points of every cell
(``algorithms.replay.confirm``), with the cells and the runs re-executed.

The mechanisms: randomized response as people write it (a function on
Python's ``random``), k-ary randomized response on numpy's global state,
the exponential mechanism by ``rng.choice(p=…)``, a two-armed bandit class
(T = 3), and the registered vectorised mechanisms whose exact evidence is
the replay (the truncated geometric, RAPPOR, one-time RAPPOR), each on one
neighbouring pair.

    python benchmarks/reexecution.py
    python benchmarks/reexecution.py --only "RR,geometric"
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from algorithms import build  # noqa: E402
from algorithms.replay import pair_epsilon, replay_scope  # noqa: E402
from algorithms.replay.law import replay_law  # noqa: E402

M = "tests.as_written_algos"
ONE, ZERO = np.array([[1.0]]), np.array([[0.0]])
BANDIT_A = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
BANDIT_B = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])

# name: (what build takes, its keywords, the pair)
CASES = {
    "RR, random.random()": (f"{M}:global_randomized_response", {"horizon": 1}, (ONE, ZERO)),
    "k-ary RR, np.random.randint": (f"{M}:k_randomized_response", {"horizon": 1}, (ZERO, ONE)),
    "exponential mechanism, choice(p=…)": (f"{M}:exponential_mechanism", {"horizon": 3},
                                           (np.array([[1.0], [0.0], [0.0]]),
                                            np.array([[0.0], [1.0], [1.0]]))),
    "sticky coin class, T = 3": (f"{M}:StickyCoin", {"horizon": 3, "epsilon": 1.0},
                                 (BANDIT_A, BANDIT_B)),
    "truncated geometric": ("truncated-geometric", {}, (np.array([[3.0]]), np.array([[4.0]]))),
    "RAPPOR": ("rappor", {}, (np.array([[3.0]]), np.array([[4.0]]))),
    "one-time RAPPOR": ("one-time-rappor", {}, (np.array([[3.0]]), np.array([[4.0]]))),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated parts of the case names to run "
                    "(default: all)")
    only = [w.strip() for w in ap.parse_args().only.split(",") if w.strip()]
    print(f"{'mechanism':36s} {'pair ε':>9s} {'cells':>6s} {'re-executed':>12s} "
          f"{'traced s':>9s} {'confirmed s':>12s} {'added s':>8s}")
    for name, (what, kw, (a, b)) in CASES.items():
        if only and not any(w in name for w in only):
            continue
        alg = build(what, **kw)
        scope = replay_scope(alg)
        t0 = time.perf_counter()
        for x in (a, b):
            replay_law(alg, np.asarray(x, dtype=float), scope, confirm=False)
        traced = time.perf_counter() - t0
        t0 = time.perf_counter()
        la, lb = (replay_law(alg, np.asarray(x, dtype=float), scope, confirm=True)
                  for x in (a, b))
        both = time.perf_counter() - t0
        eps = pair_epsilon(la, lb).epsilon
        print(f"{name:36s} {eps:9.6f} {la.cells:6d} {la.reexecuted + lb.reexecuted:12,d} "
              f"{traced:9.2f} {both:12.2f} {both - traced:8.2f}")


if __name__ == "__main__":
    main()
