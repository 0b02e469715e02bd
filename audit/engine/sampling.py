"""Sampling for evidence: a ``Request`` says what to run (a task on a chunk
of runs), how many runs, and on which random stream; the ``Sampler`` runs
requests through the one executor, with one progress phase per piece of
evidence.

Every kind of evidence samples only through here, so every kind gets the
same chunking, the same streams for any ``--jobs``, Dask and resume.  The
stream of a request is ``SeedSequence([seed, scenario index, stream])``;
streams 0 and 1 are the two sides of a black-box pair, 7 and 8 the two
directions of a loss distribution, and the declaration pilots use their own
family (``audit.engine.models``), so no two users share a stream.  An audit
of some pairs only (``--pair``) draws from ``[seed, PAIRS, labels, scenario
index, stream]`` (``pairs_namespace``), so a pair picked from another audit
and rerun alone never retests the runs that picked it.

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
    # Chunks hold whole multiples of this many runs (coupled runs' blocks)
    # whatever the sampler makes of ``chunk``.
    block: int = 1
    # A sequential test: after the runs of a prefix reaching each of
    # ``looks`` (in runs, rounded up to whole chunks), ``stop(results so
    # far)`` may end the request there (``run_chunks``).  At most
    # ``len(looks)`` looks happen before the last chunk, whatever the chunks.
    looks: tuple = ()
    stop: Optional[Callable[[list], bool]] = None


# The first entry of a --pair audit's streams: no other stream family
# starts its entropy after the seed with this word (scenario indices are
# small, the models' pilot families are listed in audit.engine.models).
PAIRS = 0x70616972   # "pair"


def pairs_namespace(labels) -> tuple:
    """The stream prefix of an audit keeping the pairs ``labels`` (any order,
    repeats counted once): ``(PAIRS, h)`` with ``h`` the first 8 bytes of the
    sha256 of the sorted labels, so audits of different label sets draw
    different runs and a rerun of the same labels draws the same ones;
    ``()`` for a whole audit (its streams as before)."""
    if not labels:
        return ()
    import hashlib
    text = "\n".join(sorted(set(labels))).encode()
    return (PAIRS, int.from_bytes(hashlib.sha256(text).digest()[:8], "big"))


@dataclass
class Sampler:
    """Runs requests for one audit: its seed, executor and progress reporter,
    and the stream prefix ``namespace`` after the seed (``pairs_namespace``)."""

    seed: int
    executor: Executor
    progress: Optional[Reporter] = None
    namespace: tuple = ()
    # Chunks this many times the requests' own (whole blocks of coupled
    # runs stay whole): a GPU wants each call to run many more runs.
    chunk_scale: int = 1
    # At most this many runs a chunk (whole blocks kept): code run one Python
    # call per run is slow, and small chunks spread a small budget over every
    # worker and report progress often.  Fixed by the code, never by the
    # number of workers (chunks fix the streams).
    chunk_cap: Optional[int] = None

    def chunk_of(self, r: Request) -> int:
        """The runs a chunk of ``r`` holds."""
        chunk = r.chunk * self.chunk_scale
        if self.chunk_cap:
            chunk = max(r.block, min(chunk, self.chunk_cap) // r.block * r.block)
        return chunk

    def sample(self, phase: str, requests: list[Request], unit: str = "runs",
               then: Optional[Callable[[list[list]], object]] = None):
        """The chunk results of every request, in request order, under one
        progress phase named ``phase``; with ``then``, ``then(results)``,
        computed inside the same phase (so the work that turns the runs into
        a result shows as part of it, not as a silent gap).  A phase with no
        runs counts one step."""
        reporter = self.progress or active()
        total = sum(r.runs for r in requests)
        if not total and then is None:
            return []
        with reporter.phase(phase, total or 1, unit if total else "step") as ph:
            out = self._run(requests, ph)
            if then is None:
                return out
            value = then(out)
            if not total:
                ph.update(1)
            return value

    def _run(self, requests: list[Request], ph) -> list[list]:
        out, base = [], 0
        for r in requests:
            ex = self.executor if r.keep else replace(self.executor, store=None,
                                                       reused=0, computed=0)
            chunk = self.chunk_of(r)
            out.append(run_chunks(r.task, r.runs, [self.seed, *self.namespace, *r.stream],
                                  jobs=ex.jobs, chunk=chunk,
                                  executor=ex, tag=r.tag,
                                  progress=lambda done, base=base: ph.to(base + done),
                                  looks=[-(-runs // chunk) for runs in r.looks], stop=r.stop))
            if ex is not self.executor:
                self.executor.computed += ex.computed
            base += r.runs
        return out

    # -- what the audit derives from its runs, kept beside its chunks --------
    def kept(self, key: str):
        """A value an earlier run of this audit derived and kept (same
        fingerprint: same algorithm, claim, attacks, budget, seed and tool
        code), or None; always None without a store."""
        ex = self.executor
        return ex.store.get_derived(ex.fingerprint, key) if ex.keeps_chunks else None

    def keep(self, key: str, value) -> None:
        ex = self.executor
        if ex.keeps_chunks:
            ex.store.put_derived(ex.fingerprint, key, value)

    def count_stored(self, requests: list[Request]) -> None:
        """Count the chunks of ``requests`` as came from the store (a result
        derived from them was read back instead of the chunks themselves)."""
        from audit.execution.runs import chunk_sizes
        self.executor.reused += sum(len(chunk_sizes(r.runs, self.chunk_of(r)))
                                    for r in requests if r.keep)

    def prepared(self, phase: str, requests: list[Request], prepare: Callable[[list[list]], object],
                 unit: str = "runs", key: str = ""):
        """``prepare(results)`` of a pilot's ``requests`` (e.g. a trained
        witness), computed under one progress phase — or read back, where an
        earlier run of the same audit kept it under ``key``, without running
        the pilot again.  ``prepare`` must be a deterministic function of the
        results and return something picklable."""
        value = self.kept(key) if key else None
        if value is not None:
            return value
        value = self.sample(phase, requests, unit, then=prepare)
        if key:
            self.keep(key, value)
        return value
