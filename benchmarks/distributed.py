"""Throughput of a canary audit on 1 and 2 local workers and on a 2-worker
Dask LocalCluster (loopback, processes), and the cost of the durable store
per chunk.

    python benchmarks/distributed.py [--trials 10000000] [--epsilon 0.1] [--algorithm private-exp3]

The audit is the black-box canary (``--mode black-box``): 2 sides × trials
runs in chunks of 10 000.  Pools and the cluster are warmed up first, so the
figures are steady-state throughput.  Every engine must give the same ε_lb;
the script checks it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

# This file is named like the package it benchmarks: keep its own folder off
# the import path so that `import distributed` finds Dask's.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

from algorithms import build  # noqa: E402
from audit.engine import audit_algorithm  # noqa: E402
from audit.execution.runs import DEFAULT_CHUNK, chunk_sizes  # noqa: E402
from audit.execution.executor import Executor
from audit.execution.store import Store  # noqa: E402


def timed_audit(alg, trials, executor, seed=0):
    start = time.perf_counter()
    r = audit_algorithm(alg, ["canary"], trials=trials, seed=seed, modes=["black-box"],
                        executor=executor)
    return time.perf_counter() - start, r


def store_micro(path, result, n=2000):
    """ms per chunk written (one transaction each) and read back."""
    store = Store(path)
    start = time.perf_counter()
    for i in range(n):
        store.put_chunk("bench", "s", i, DEFAULT_CHUNK, result)
    put = (time.perf_counter() - start) / n
    start = time.perf_counter()
    got = store.load_chunks("bench", "s")
    load = (time.perf_counter() - start) / n
    assert len(got) == n
    store.close()
    return put * 1e3, load * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10_000_000)
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--algorithm", default="private-exp3")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs per engine")
    args = ap.parse_args()
    alg = build(args.algorithm, epsilon=args.epsilon)
    runs = 2 * args.trials
    chunks = 2 * len(chunk_sizes(args.trials))
    print(f"canary audit of {alg.name} (ε = {args.epsilon:g}, T = {alg.horizon}), black-box, {args.trials} runs per "
          f"side = {runs} runs in {chunks} chunks of {DEFAULT_CHUNK}; best of {args.repeat}")
    rows, eps = [], set()

    def bench(label, executor):
        timed_audit(alg, 20 * DEFAULT_CHUNK, executor, seed=99)     # warm-up
        best = min(timed_audit(alg, args.trials, executor) for _ in range(args.repeat))
        seconds, r = best[0], best[1]
        eps.add(r.epsilon_lower_bound)
        rows.append((label, seconds, runs / seconds))

    bench("local, 1 worker (--jobs 1)", Executor(jobs=1))
    bench("local, 2 workers (--jobs 2)", Executor(jobs=2))
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("(Dask not installed: pip install '.[dask]' for the LocalCluster figure)")
    else:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster, \
                Client(cluster.scheduler_address, set_as_default=False) as client:
            client.wait_for_workers(2)
            from audit.execution.cluster import prepare_workers
            prepare_workers(client)       # as `audit --scheduler` does when it connects
            bench("Dask LocalCluster, 2 workers", Executor(client=client))
    base = rows[0][2]
    print(f"{'engine':32s} {'seconds':>8s} {'runs/s':>12s} {'speed-up':>9s}")
    for label, seconds, rate in rows:
        print(f"{label:32s} {seconds:8.2f} {rate:12.3g} {rate / base:8.2f}x")
    print(f"ε_lb identical on every engine: {len(eps) == 1} ({sorted(eps)})")

    with tempfile.TemporaryDirectory() as d:
        # A real black-box chunk result: the event counts of both halves.
        r = audit_algorithm(alg, ["canary"], trials=DEFAULT_CHUNK, seed=0, modes=["black-box"],
                            executor=Executor(store=Store(os.path.join(d, "probe.sqlite"))))
        probe = Store(os.path.join(d, "probe.sqlite"))
        [(fp,)] = probe._db.execute("SELECT DISTINCT fingerprint FROM chunks").fetchall()
        [(stream,)] = probe._db.execute("SELECT stream FROM chunks LIMIT 1").fetchall()
        sample = probe.load_chunks(fp, stream)[0][1]
        probe.close()
        size = len(__import__("pickle").dumps(sample, protocol=4))
        put, load = store_micro(os.path.join(d, "micro.sqlite"), sample)
        print(f"store, per chunk ({size} B of counts): write {put:.3f} ms (one WAL transaction), "
              f"resume read {load:.4f} ms")
        # End to end: the same audit on 1 worker, without and with a fresh store.
        plain = min(timed_audit(alg, args.trials, Executor(jobs=1))[0] for _ in range(args.repeat))
        stored = []
        for k in range(args.repeat):
            st = Store(os.path.join(d, f"e2e{k}.sqlite"))
            stored.append(timed_audit(alg, args.trials, Executor(jobs=1, store=st))[0])
            st.close()
        with_store = min(stored)
        st = Store(os.path.join(d, "e2e0.sqlite"))
        resumed = timed_audit(alg, args.trials, Executor(jobs=1, store=st))[0]
        st.close()
        print(f"end to end, 1 worker: {plain:.2f} s without a store, {with_store:.2f} s with "
              f"a fresh store ({1e3 * (with_store - plain) / chunks:+.2f} ms per chunk, "
              f"{100 * (with_store / plain - 1):+.1f}%); rerun resumed from the store: "
              f"{resumed:.2f} s")
    del r


if __name__ == "__main__":
    main()
