"""Vectorised simulation of an algorithm on a fixed (oblivious) loss sequence,
and chunked, reproducible, parallel execution of many runs.

Reproducibility: the runs are cut into chunks of a fixed size; chunk i draws
from ``SeedSequence(seed).spawn(n_chunks)[i]``.  Neither the chunk size nor
the streams depend on the number of workers, so results do not either.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from algorithms.core import Algorithm
from algorithms.validate import check_advice, check_losses

DEFAULT_CHUNK = 10000


@dataclass
class Trace:
    """What one chunk of runs did: actions ``(runs, rounds)``, the total loss
    each run incurred and, when asked for, the transcript: the values released
    to an inner learner ``(runs, n_releases[, d])`` and per-round aux data."""

    actions: np.ndarray
    total_loss: np.ndarray
    releases: Optional[np.ndarray] = None
    aux: Optional[np.ndarray] = None
    # {round (0-based): points (runs, d)} for the rounds asked for.
    points: Optional[dict] = None


def simulate(alg: Algorithm, losses: np.ndarray, runs: int, rng: np.random.Generator,
             advice: Optional[np.ndarray] = None, rounds: Optional[int] = None,
             learner=None, record_transcript: bool = False, point_rounds=()) -> Trace:
    """Run ``runs`` independent copies for the first ``rounds`` rounds (all of
    ``losses`` by default).  Simulating a prefix is exact for events on that
    prefix: the first m actions do not depend on what comes after.
    ``point_rounds`` (0-based) are the rounds whose points x_t are recorded."""
    learner = learner or alg.learner
    if alg.check_losses is not None:
        losses = alg.check_losses(losses)
    else:
        losses = check_losses(losses, K=alg.n_arms)
    point_rounds = set(int(r) for r in point_rounds)
    if point_rounds and learner.point is None:
        raise ValueError(f"{alg.name} plays arms, not points: events on x_t do not apply")
    points = {}
    full = learner.feedback == "full"
    if alg.needs_advice:
        if advice is None:
            raise ValueError(f"{alg.name} needs expert advice of shape (T, N={alg.n_experts}, K)")
        advice = check_advice(advice, losses.shape[0], alg.n_experts, alg.n_arms)
    T = losses.shape[0] if rounds is None else rounds
    dtype = np.int16 if learner.n_arms < 2 ** 15 else np.int64
    out = np.empty((T, runs), dtype=dtype)
    total = np.zeros(runs)
    model = learner.transcript if record_transcript else None
    if record_transcript and model is None:
        raise ValueError(f"{alg.name} does not describe its releases (no transcript model)")
    releases, aux = [], []
    state = learner.init(runs, rng)
    for t in range(T):
        state, a = learner.act(state, None if advice is None else advice[t], rng)
        out[t] = a
        if t in point_rounds:
            points[t] = np.array(learner.point(state), dtype=float, copy=True)
        obs = losses[t][a]
        total += obs if learner.incurred is None else learner.incurred(state, losses[t])
        if model is not None and model.aux is not None:
            aux.append(model.aux(state))
        state = learner.feed(state, a, losses[t] if full else obs, rng)
        if model is not None:
            r = model.released(state)
            if not np.all(np.isnan(r)):
                releases.append(r)
    if model is None:
        return Trace(out.T, total, points=points or None)
    rel = np.stack(releases, axis=1) if releases else np.zeros((runs, 0))
    return Trace(out.T, total, rel, np.stack(aux, axis=1) if aux else None, points or None)


def chunk_sizes(n: int, chunk: int = DEFAULT_CHUNK) -> list[int]:
    full, rest = divmod(n, chunk)
    return [chunk] * full + ([rest] if rest else [])


def run_chunks(task: Callable[[int, np.random.Generator], object], n: int, seed: int,
               jobs: int = 1, chunk: int = DEFAULT_CHUNK, progress=None) -> list:
    """Apply ``task(runs, rng)`` to every chunk of ``n`` runs; results come back
    in chunk order.  ``progress(done_runs)`` is called as chunks finish."""
    sizes = chunk_sizes(n, chunk)
    seeds = np.random.SeedSequence(seed).spawn(len(sizes))
    if jobs == 1 or len(sizes) == 1:
        results, done = [], 0
        for size, ss in zip(sizes, seeds):
            results.append(task(size, np.random.default_rng(ss)))
            done += size
            if progress:
                progress(done)
        return results
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=jobs, return_as="generator")
    results, done = [], 0
    for size, res in zip(sizes, par(delayed(task)(s, np.random.default_rng(ss))
                                    for s, ss in zip(sizes, seeds))):
        results.append(res)
        done += size
        if progress:
            progress(done)
    return results
