"""Sampling for evidence: a ``Request`` says what to run (a task on a chunk
of runs), how many runs, and on which random stream; the ``Sampler`` runs
requests through the one executor, with one progress phase per piece of
evidence.

Every kind of evidence samples only through here, so every kind gets the
same chunking, the same streams for any ``--jobs``, Dask and resume.  The
stream of a request is ``SeedSequence([seed, scenario index, stream])``;
streams 0 and 1 are the two sides of a black-box pair, 7 and 8 the two
directions of a loss distribution, and the declaration pilots use their own
family (``audit.engine.models``), so no two users share a stream.

May import: ``audit.execution``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

import numpy as np

from audit.execution.executor import Executor, run_chunks
from audit.execution.progress import Reporter, active
from audit.execution.runs import DEFAULT_CHUNK


@dataclass(frozen=True)
class Request:
    """``task(runs, rng)`` applied to ``runs`` runs in chunks of ``chunk``,
    chunk i drawing from ``SeedSequence([seed, *stream]).spawn(...)[i]``;
    ``tag`` names the chunk family in the store; ``keep=False`` keeps its
    chunks out of the store (cheap pilots with bulky results, such as a
    witness's training features, which a resumed audit recomputes
    bit-for-bit from the same streams)."""

    task: Callable[[int, np.random.Generator], object]
    runs: int
    stream: tuple
    tag: str
    chunk: int = DEFAULT_CHUNK
    keep: bool = True


@dataclass
class Sampler:
    """Runs requests for one audit: its seed, executor and progress reporter."""

    seed: int
    executor: Executor
    progress: Optional[Reporter] = None

    def sample(self, phase: str, requests: list[Request], unit: str = "runs") -> list[list]:
        """The chunk results of every request, in request order, under one
        progress phase named ``phase``."""
        reporter = self.progress or active()
        out = []
        with reporter.phase(phase, sum(r.runs for r in requests), unit) as ph:
            base = 0
            for r in requests:
                ex = self.executor if r.keep else replace(self.executor, store=None,
                                                           reused=0, computed=0)
                out.append(run_chunks(r.task, r.runs, [self.seed, *r.stream],
                                      jobs=ex.jobs, chunk=r.chunk, executor=ex, tag=r.tag,
                                      progress=lambda done, base=base: ph.to(base + done)))
                if ex is not self.executor:
                    self.executor.computed += ex.computed
                base += r.runs
        return out
