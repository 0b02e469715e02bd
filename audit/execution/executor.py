"""Where chunks of runs execute: ``Executor`` (local processes or a Dask
cluster, with an optional store of completed chunks) and ``run_chunks``, the
one function every kind of evidence samples through.

Reproducibility: the runs are cut into chunks of a fixed size; chunk i draws
from ``SeedSequence(seed).spawn(n_chunks)[i]``.  Neither the chunk size nor
the streams depend on the number of workers, so results do not either.

May import: numpy, joblib, ``audit.execution.runs``, ``.store``, ``.cluster``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from .runs import DEFAULT_CHUNK, chunk_sizes, run_batch, run_chunk, batches


@dataclass
class Executor:
    """Where chunks run and where completed chunks are kept.

    ``jobs`` local processes (joblib/loky) or, with ``client`` (a
    ``distributed.Client``), an existing Dask cluster; ``store`` (an
    ``audit.execution.store.Store``) with ``fingerprint`` (the audit's) keeps every
    completed chunk so that a rerun resumes.  ``reused``/``computed`` count
    chunks as they go."""

    jobs: int = 1
    client: object = None
    store: object = None
    fingerprint: Optional[str] = None
    reused: int = 0
    computed: int = 0

    def for_audit(self, fingerprint: Optional[str]) -> "Executor":
        return Executor(self.jobs, self.client, self.store, fingerprint)

    @property
    def keeps_chunks(self) -> bool:
        return self.store is not None and self.fingerprint is not None


def run_chunks(task: Callable[[int, np.random.Generator], object], n: int, seed,
               jobs: int = 1, chunk: int = DEFAULT_CHUNK, progress=None,
               executor: Optional[Executor] = None, tag: str = "chunks",
               looks: Sequence[int] = (), stop: Optional[Callable[[list], bool]] = None) -> list:
    """Apply ``task(runs, rng)`` to every chunk of ``n`` runs; results come back
    in chunk order.  ``progress(done_runs)`` is called as chunks finish.

    With ``stop``, the chunks run in stages ending at the chunk counts
    ``looks``: once the first k chunks are complete (k in ``looks``),
    ``stop(results of those k chunks)`` may end the work there, and only
    those k come back.  The stages depend on the chunks alone, never on the
    workers, so a stopped audit stops at the same chunk on any number.

    With an ``executor`` that keeps chunks, chunks already in its store (same
    audit fingerprint, ``tag``, seed, ``n`` and ``chunk``) are not run again,
    and every chunk is stored as soon as it completes.  Chunk i always draws
    from ``SeedSequence(seed).spawn(...)[i]``, whoever runs it and however
    often, so a resumed or recomputed chunk is bit-for-bit the same."""
    ex = executor or Executor(jobs=jobs)
    sizes = chunk_sizes(n, chunk)
    seeds = np.random.SeedSequence(seed).spawn(len(sizes))
    results: dict[int, object] = {}
    stream = None
    if ex.keeps_chunks:
        from audit.execution.store import stream_key
        stream = stream_key(tag, seed, n, chunk)
        for i, (runs, res) in ex.store.load_chunks(ex.fingerprint, stream).items():
            if i < len(sizes) and runs == sizes[i]:
                results[i] = res
        ex.reused += len(results)
    done = sum(sizes[i] for i in results)
    if progress and done:
        progress(done)

    def finished(i, res):
        nonlocal done
        if stream is not None:
            ex.store.put_chunk(ex.fingerprint, stream, i, sizes[i], res)
        results[i] = res
        ex.computed += 1
        done += sizes[i]
        if progress:
            progress(done)

    ends = sorted({k for k in looks if 0 < k < len(sizes)}) if stop else []
    start = 0
    for end in ends + [len(sizes)]:
        todo = [i for i in range(start, end) if i not in results]
        if ex.client is not None and todo:
            from audit.execution.cluster import run_on_cluster
            run_on_cluster(ex.client, task, [(i, sizes[i], seeds[i]) for i in todo], finished)
            missing = [i for i in todo if i not in results]
            if missing:
                raise RuntimeError(f"the cluster returned no result for chunks {missing}")
        elif ex.jobs == 1 or len(todo) <= 1:
            for i in todo:
                finished(i, run_chunk(task, sizes[i], seeds[i]))
        else:
            _run_local_pool(task, sizes, seeds, todo, ex.jobs, results, finished)
        if end < len(sizes) and stop([results[i] for i in range(end)]):
            return [results[i] for i in range(end)]
        start = end
    return [results[i] for i in range(len(sizes))]


def _run_local_pool(task, sizes, seeds, todo, jobs, results, finished, retries: int = 2):
    """joblib's loky pool, batches in chunk order.  If a worker process dies
    mid-chunk the pool is restarted and only the chunks that had not completed
    run again (at most ``retries`` times)."""
    from joblib import Parallel, delayed
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    for attempt in range(retries + 1):
        todo = [i for i in todo if i not in results]
        if not todo:
            return
        groups = batches(todo, jobs)
        par = Parallel(n_jobs=jobs, return_as="generator", batch_size=1)
        outputs = par(delayed(run_batch)(task, [(i, sizes[i], seeds[i]) for i in g])
                      for g in groups)
        try:
            for out in outputs:
                for i, res in out:
                    finished(i, res)
            return
        except TerminatedWorkerError:
            if attempt == retries:
                raise
        except BaseException:
            # Ctrl-C or SIGTERM (a KeyboardInterrupt), also one that arrives
            # while a finished chunk is being stored: closing the generator
            # now makes joblib abort the pool and kill its workers, rather
            # than whenever the generator is collected.
            _close_quietly(outputs)
            raise


def process_map(jobs: int):
    """``pmap(fn, argument tuples)`` over ``jobs`` local processes (joblib's
    loky pool), the results in the arguments' order as they come; None for
    one job (the caller runs them itself).  Ctrl-C or SIGTERM closes the
    pool, as ``run_chunks`` does."""
    if jobs <= 1:
        return None

    def pmap(fn, items):
        from joblib import Parallel, delayed
        out = Parallel(n_jobs=jobs, return_as="generator", batch_size=1)(
            delayed(fn)(*args) for args in items)
        try:
            yield from out
        except BaseException:
            _close_quietly(out)
            raise
    return pmap


def _close_quietly(outputs) -> None:
    """Close a joblib result generator after Ctrl-C or SIGTERM, so joblib
    aborts the pool and kills its workers now.  joblib warns, on stderr,
    that the results finished or cancelled while it closed were "not used":
    the interruption has its one line, and kept chunks are kept."""
    close = getattr(outputs, "close", None)
    if close is not None:
        import warnings
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=UserWarning, module=r"joblib\.")
            close()
