"""The default budget of an audit: how many runs a side it spends.

A vectorised learner costs microseconds a run and gets ``DEFAULT_TRIALS``.
Code run as written — one Python call per run (and round) — costs what the
user's code costs, often a hundred times more, and at that budget an audit
of a small class would take many minutes.  Its default budget is fitted to
a time instead (``--time``, ``DEFAULT_SECONDS``): the code's speed is
measured on a few runs of the midpoint input (``run_seconds``), and the runs
a side are those that the audit's expected work fits in that time on
``WORKERS`` workers, rounded down to a step of about 1.5 (``STEPS``) —
the same figure for any ``--jobs`` (more workers end sooner), and the same
on machines of about the same speed.  The figure chosen is printed in the
reproducing command, so the audit is repeated exactly (``--trials``)
whatever the machine.  Only power rests on this: every bound is valid at
any number of runs.

May import: ``algorithms``, ``audit.engine.reproducibility``.
"""
from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np

from algorithms.core import Algorithm
from algorithms.simulate import simulate
from audit.engine.reproducibility import RUNS as CHECK_SIMULATION_RUNS

DEFAULT_TRIALS = 200_000
DEFAULT_SECONDS = 60.0
# From 200 runs a side: code at tens of milliseconds a run fits no more in
# a minute, and 200 runs still certify a gross leak (an output one input
# never gives: up to ε ≈ 4 on coupled runs).
# Steps of about 1.5 (1-1.5-2-3-5-7): rounding down to 1-2-5 left up to
# 60 % of the minute unspent (a Hedge bug caught at 30 000 runs got 20 000).
STEPS = (200, 300, 500, 700, 1_000, 1_500, 2_000, 3_000, 5_000, 7_000, 10_000, 15_000,
         20_000, 30_000, 50_000, 70_000, 100_000, 150_000, 200_000)
WORKERS = 2
SPEED_RUNS = 64             # runs timed on the midpoint input
WARMUP_RUNS = 8             # … after these, untimed
SPEED_STREAM = 0x5BEED
# Runs of the audit's work per run a side asked for, over all workers: two
# sides, the search's two pairs, the witness's training runs (a tenth) and
# the search's pilot, which code run as written scales to the budget —
# measured on three classes run as written (a fused step, predict(t)/
# observe_loss(t, ·), a learner drawing its own rewards; T = 10-20): 8.0-9.3
# runs' time each at 200 000 runs a side on 2 workers, 11.7 at 17 000 (the
# witness then trains on as many runs as the test uses).
RUNS_PER_TRIAL = 12.0
# The fixed part: building, probing, the replay and the report.
FIXED_SECONDS = 6.0
# Runs of the check that the code draws from the generator it is given
# (``audit.engine.reproducibility``: three simulations, once per algorithm,
# in one process).
CHECK_RUNS = 3 * CHECK_SIMULATION_RUNS
# The search's pilot: its full size for code run as written
# (attacks.search.PER_RUN_CODE_ROW_ROUNDS row-rounds) costs, a row-round in
# one process, PILOT_SLOWDOWN rounds of the code's time — the search's own
# work (small batches per candidate, windows followed) is a multiple of a
# fast round's — or, for slow code, SLOW_PILOT_SLOWDOWN rounds plus
# PILOT_OVERHEAD seconds, whichever is less: measured 29.5 s for 85 000
# row-rounds of a class whose round costs 52 µs (347 µs a row-round, one
# process: both forms), and 31.6 s for 20 312 of one whose round costs
# 2.2 ms (3.1 ms a row-round in one process, where 6.7 rounds would say
# 14.7 ms).  It gets at most PILOT_TIME of the time.
PILOT_ROW_ROUNDS = 500_000
PILOT_SLOWDOWN = 6.7
SLOW_PILOT_SLOWDOWN, PILOT_OVERHEAD = 1.26, 281e-6
PILOT_TIME = 0.3
MIN_PILOT_SHARE = 1 / 32


def per_run_code(alg: Algorithm) -> bool:
    return bool(isinstance(alg.extra, dict) and alg.extra.get("per_run_calls"))


def run_seconds(alg: Algorithm) -> float:
    """Wall seconds one run of ``alg`` over its horizon takes, measured on
    ``SPEED_RUNS`` runs of the midpoint input after ``WARMUP_RUNS`` (kept
    in ``alg.extra``)."""
    kept = alg.extra.get("run_seconds") if isinstance(alg.extra, dict) else None
    if kept is not None:
        return kept
    losses = alg.midpoint()
    # a few runs first, untimed: the first calls of user code pay for
    # imports and caches (a Hedge class timed 1.6 times its steady cost)
    simulate(alg, losses, WARMUP_RUNS, np.random.default_rng(SPEED_STREAM))
    start = time.perf_counter()
    simulate(alg, losses, SPEED_RUNS, np.random.default_rng(SPEED_STREAM))
    seconds = (time.perf_counter() - start) / SPEED_RUNS
    if isinstance(alg.extra, dict):
        alg.extra["run_seconds"] = seconds
    return seconds


def fitted_trials(alg: Algorithm, seconds: Optional[float]) -> int:
    """Runs a side for an audit of ``alg`` that ends in about ``seconds``
    (``DEFAULT_SECONDS``) on ``WORKERS`` workers: ``DEFAULT_TRIALS`` for
    vectorised code or where that fits, else fewer, one of ``STEPS``."""
    if not per_run_code(alg) and seconds is None:
        return DEFAULT_TRIALS
    seconds = DEFAULT_SECONDS if seconds is None else float(seconds)
    run = run_seconds(alg)
    # The pilot's share first (``attacks.search.pilot_share`` reads it).
    rnd = run / max(1, alg.horizon)
    full_pilot = PILOT_ROW_ROUNDS * min(PILOT_SLOWDOWN * rnd,
                                        SLOW_PILOT_SLOWDOWN * rnd + PILOT_OVERHEAD)
    if not alg.learner.reads_first:
        # A learner's search pilot runs its batches on every worker
        # (``attacks.search``'s ``pmap``); a stream mechanism's in one process.
        full_pilot /= WORKERS
    share = 1.0 if full_pilot <= 0 else min(1.0, max(MIN_PILOT_SHARE,
                                                     PILOT_TIME * seconds / full_pilot))
    # A power of two (1/4, 1/8, …): the command that reproduces an audit
    # whose pilot this caps gives it (``--pilot-share``), and reads easily.
    share = 2.0 ** math.floor(math.log2(share))
    if isinstance(alg.extra, dict):
        alg.extra["pilot_share"] = share
    per = run * RUNS_PER_TRIAL / WORKERS
    fixed = FIXED_SECONDS + CHECK_RUNS * run + share * full_pilot
    trials = _step(seconds - fixed, per)
    if isinstance(alg.extra, dict):
        alg.extra["fitted_seconds"] = fixed + per * trials
        alg.extra["fitted_fixed"] = fixed
    return trials


def _step(room: float, per: float) -> int:
    """The largest of ``STEPS`` whose runs, ``per`` seconds each, fit in
    ``room`` seconds (the smallest if none does)."""
    n = max(room, 0.0) / per if per > 0 else DEFAULT_TRIALS
    return max([s for s in STEPS if s <= n] or [STEPS[0]])


def refitted_trials(alg: Algorithm, seconds: Optional[float], scenarios, trials: int) -> int:
    """Runs a side once the pairs are chosen, for an audit whose budget
    ``fitted_trials`` fitted to ``seconds``: that figure assumed every pair
    simulates the whole horizon, but the neighbour search simulates a pair
    only up to the end of its window — 25 rounds of a horizon of 1 000 —,
    so the runs of such pairs cost far less.  Each pair shorter than the
    horizon is timed on ``SPEED_RUNS`` runs of its own losses (one
    process), and the runs a side are those the pairs' measured cost fits
    in the time left after the fixed part, never fewer than ``trials``
    (the pilots already ran at that budget's share)."""
    if not per_run_code(alg) or not isinstance(alg.extra, dict) \
            or "fitted_fixed" not in alg.extra or not scenarios:
        return trials
    def whole(sc):      # the runs the first fit assumed
        return sc.rounds >= alg.horizon and sc.algorithm is alg

    if all(map(whole, scenarios)):
        return trials
    run = run_seconds(alg)
    cost = 0.0
    for sc in scenarios:
        if whole(sc):
            cost += run
            continue
        start = time.perf_counter()
        simulate(sc.algorithm, sc.losses_a, SPEED_RUNS, np.random.default_rng(SPEED_STREAM),
                 advice=sc.advice, rounds=sc.rounds)
        cost += (time.perf_counter() - start) / SPEED_RUNS
    # RUNS_PER_TRIAL is the work of two whole-horizon pairs: half of it a pair.
    per = cost * RUNS_PER_TRIAL / 2 / WORKERS
    seconds = DEFAULT_SECONDS if seconds is None else float(seconds)
    fitted = max(trials, _step(seconds - alg.extra["fitted_fixed"], per))
    if fitted != trials:
        alg.extra["fitted_seconds"] = alg.extra["fitted_fixed"] + per * fitted
    return fitted


def over_time(alg: Algorithm, seconds: Optional[float], trials: int) -> Optional[str]:
    """A warning where ``fitted_trials`` chose ``trials``, the smallest
    budget, and even that is expected to take far longer than the time
    aimed at (half as long again), naming the code's speed; None
    otherwise."""
    target = DEFAULT_SECONDS if seconds is None else float(seconds)
    need = alg.extra.get("fitted_seconds") if isinstance(alg.extra, dict) else None
    if trials != STEPS[0] or need is None or need <= 1.5 * target:
        return None
    run = run_seconds(alg)
    return (f"{alg.name} takes about {run * 1e3:.3g} ms a run: even the smallest budget "
            f"({STEPS[0]:,} runs a side) is expected to take about {need:.0f} s, more than the "
            f"{target:g} s aimed at (--time); give --time or --trials to say how long it may "
            f"take")
