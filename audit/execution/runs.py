"""Runs of an algorithm as units of work: a chunk of runs with its own
random stream, and batches of chunks, which every executor ships.  The
simulation itself (``simulate``, ``Trace``) lives in
``algorithms.simulate``; it is re-exported here for older callers.

May import: numpy and ``algorithms``.  Nothing else in ``audit``.
"""
from __future__ import annotations

import numpy as np

from algorithms.simulate import Trace, simulate  # noqa: F401 - re-exported

DEFAULT_CHUNK = 10000


def chunk_sizes(n: int, chunk: int = DEFAULT_CHUNK) -> list[int]:
    full, rest = divmod(n, chunk)
    return [chunk] * full + ([rest] if rest else [])


def run_chunk(task, size, ss):
    return task(size, np.random.default_rng(ss))


def run_batch(task, items):
    """Several chunks in one dispatched call, so that the task (which can
    carry loss sequences and advice) is shipped once per batch, not per chunk."""
    return [(i, run_chunk(task, size, ss)) for i, size, ss in items]


def batches(todo: list, workers: int, most: int = 32) -> list:
    """Cut the chunks to run into consecutive batches: about eight per worker,
    at most ``most`` chunks each (an interruption loses at most a batch per
    worker, and progress stays smooth)."""
    size = max(1, min(most, -(-len(todo) // (8 * max(1, workers)))))
    return [todo[k:k + size] for k in range(0, len(todo), size)]


