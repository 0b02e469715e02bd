"""Simulation throughput (run-rounds per second) of every registered
algorithm, on one core and with joblib workers, next to the compiled C EXP3
loop ``benchmarks/exp3_ref.c`` when gcc is there to build it.

    python benchmarks/throughput.py [--runs 100000] [--horizon 1000] [--jobs 2]

``--as-written`` measures code audited as written instead: the ε-greedy
class of ``benchmarks/epsgreedy_class.py`` (one object per run,
``select_arm``/``update``, Python's ``random``) called directly in a plain
loop (the code's own cost), through the tool's class adapter, and a
vectorised port of the same learner, all on one core.

    python benchmarks/throughput.py --as-written [--runs 20000] [--horizon 100]

``--backend jax`` measures the learners written for both backends through
the tool's simulation on JAX (whatever device JAX finds), chunks of
``--chunk`` runs, beside numpy on one core of the same machine:

    python benchmarks/throughput.py --backend jax [--only exp3 private-exp3] \
        [--runs 10000000] [--chunk 1000000] [--horizon 1000]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from algorithms import REGISTRY, build
from algorithms.simulate import simulate
from attacks.instances import default_advice
from audit.execution.executor import run_chunks


def measure(alg, runs, jobs):
    T, K = alg.horizon, alg.n_arms
    losses = np.ones((T, K))  # the C reference's setting: every loss is 1
    advice = default_advice(T, alg.n_experts, K) if alg.n_experts else None

    def task(n, rng):
        return simulate(alg, losses, n, rng, advice=advice).total_loss.sum()

    start = time.perf_counter()
    run_chunks(task, runs, seed=0, jobs=jobs)
    return runs * T / (time.perf_counter() - start)


def on_device(names, runs, horizon, chunk) -> None:
    """Run-rounds per second on JAX (chunks of ``chunk`` runs, the first
    compiled beforehand) and on numpy (one core, chunks of 10⁴)."""
    from algorithms.backend import check_backend, device_name, on_backend
    check_backend("jax")
    print(f"JAX on {device_name()}; numpy on one core of this machine (T = {horizon})")
    print(f"{'algorithm':22s} {'numpy':>14s} {'jax':>14s} {'ratio':>8s}   (run-rounds/s)")
    for name in names:
        alg = build(name, horizon=horizon)
        dev = on_backend(alg, "jax")
        T, K = alg.horizon, alg.n_arms
        losses = np.ones((T, K))
        advice = default_advice(T, alg.n_experts, K) if alg.n_experts else None

        def task(a):
            def run(n, rng):
                return float(simulate(a, losses, n, rng, advice=advice).total_loss.sum())
            return run
        run_chunks(task(dev), min(chunk, runs), seed=1, jobs=1, chunk=chunk)   # compile
        start = time.perf_counter()
        run_chunks(task(dev), runs, seed=0, jobs=1, chunk=chunk)
        jx = runs * T / (time.perf_counter() - start)
        n_np = min(runs, 100_000)
        start = time.perf_counter()
        run_chunks(task(alg), n_np, seed=0, jobs=1)
        nump = n_np * T / (time.perf_counter() - start)
        print(f"{name:22s} {nump:14,.0f} {jx:14,.0f} {jx / nump:7.1f}x")


def c_reference(runs, horizon):
    src = Path(__file__).resolve().parent / "exp3_ref.c"
    if not src.exists() or shutil.which("gcc") is None:
        return None
    exe = Path(tempfile.mkdtemp()) / "exp3_ref"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(src), "-lm"], check=True)
    out = subprocess.run([str(exe), str(runs // 5), str(horizon)], capture_output=True, text=True).stdout
    numbers = [float(x) for x in out.replace(",", " ").split() if x.replace(".", "", 1).replace("e+", "", 1).isdigit()]
    return out.strip(), numbers


def as_written(runs: int, horizon: int) -> None:
    """The ε-greedy class three ways (module docstring), one core."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from epsgreedy_class import EpsilonGreedy
    K, eps = 2, 1.0
    losses = np.full((horizon, K), 0.5)

    start = time.perf_counter()       # the class's own cost: a plain loop
    for i in range(runs):
        b = EpsilonGreedy(K, eps, seed=i)
        for t in range(horizon):
            a = b.select_arm()
            b.update(a, 1.0 - losses[t, a])
    plain = runs * horizon / (time.perf_counter() - start)

    alg = build("epsgreedy_class:EpsilonGreedy", horizon=horizon, arms=K, epsilon=eps)
    start = time.perf_counter()
    simulate(alg, losses, runs, np.random.default_rng(0))
    adapted = runs * horizon / (time.perf_counter() - start)

    start = time.perf_counter()
    _vectorised_epsgreedy(losses, runs * 10, eps, np.random.default_rng(0))
    vectorised = runs * 10 * horizon / (time.perf_counter() - start)
    print(f"ε-greedy class (K = {K}, T = {horizon}, {runs} runs), run-rounds/s on one core:")
    print(f"  the class called directly in a plain loop  {plain:12,.0f}")
    print(f"  through the class adapter (audit run)       {adapted:12,.0f}   "
          f"(overhead {1e6 / adapted - 1e6 / plain:.2f} µs a run-round)")
    print(f"  a vectorised port of the same learner       {vectorised:12,.0f}   "
          f"({vectorised / adapted:.0f}x the adapter)")


def _vectorised_epsgreedy(losses, runs, eps, rng):
    T, K = losses.shape
    counts, values = np.zeros((runs, K)), np.zeros((runs, K))
    idx = np.arange(runs)
    for t in range(T):
        explore = rng.random(runs) <= 0.1
        a = np.where(explore, rng.integers(0, K, runs), values.argmax(axis=1))
        noisy = 1.0 - losses[t, a] + rng.laplace(0.0, 1.0 / eps, runs)
        counts[idx, a] += 1
        values[idx, a] += (noisy - values[idx, a]) / counts[idx, a]
    return values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--horizon", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--as-written", action="store_true",
                    help="measure the ε-greedy class audited as written instead")
    ap.add_argument("--backend", choices=("numpy", "jax"), default="numpy",
                    help="jax: the tool's simulation on JAX beside numpy on one core")
    ap.add_argument("--chunk", type=int, default=1_000_000,
                    help="runs a call on JAX (default %(default)s)")
    args = ap.parse_args()
    if args.backend == "jax":
        on_device(args.only or ["exp3", "private-exp3"], args.runs, args.horizon, args.chunk)
        return
    if args.as_written:
        as_written(min(args.runs, 20_000), min(args.horizon, 100))
        return
    # Start the worker pool once (loky keeps it), so the figures are steady-state
    # throughput rather than process start-up, which a long audit pays once.
    run_chunks(lambda n, rng: rng.random(n).sum(), 4 * args.jobs, seed=0, jobs=args.jobs, chunk=1)
    ref = c_reference(args.runs, args.horizon)
    if ref:
        print(f"C reference (exp3_ref.c, K=2, {args.runs // 5} runs): {ref[0]}")
    print(f"{'algorithm':22s} {'1 core':>12s} {f'{args.jobs} jobs':>12s} {'speed-up':>9s}   (M run-rounds/s, T={args.horizon})")
    for name in args.only or REGISTRY:
        alg = build(name, horizon=args.horizon)
        runs = args.runs if name in ("exp3", "private-exp3", "private-batched-exp4", "ldp-exp4") else args.runs // 5
        one = measure(alg, runs, 1)
        many = measure(alg, runs, args.jobs)
        print(f"{name:22s} {one / 1e6:12.2f} {many / 1e6:12.2f} {many / one:8.2f}x   ({runs} runs)")


if __name__ == "__main__":
    main()
