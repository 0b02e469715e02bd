"""Running chunks on an existing Dask cluster (the optional ``[dask]`` extra).

``audit run ... --scheduler tcp://HOST:PORT`` (or ``$AUDIT_SCHEDULER``)
connects a ``distributed.Client`` and sends each chunk as one task; the task
function is scattered to the workers once.  Results are collected as they
complete and handed back by chunk index, so counts do not depend on which
worker ran what.  A worker that dies mid-chunk loses nothing that was
counted: the scheduler reruns its task elsewhere, and the chunk's result is
taken once, from the one future that completes.

May import: ``audit.execution.runs`` and ``.store``; ``distributed`` (the
``[dask]`` extra) only when a cluster is used.
"""
from __future__ import annotations

import os

from .runs import batches, run_batch

SCHEDULER_ENV = "AUDIT_SCHEDULER"
TIMEOUT_ENV = "AUDIT_CONNECT_TIMEOUT"
INSTALL_HINT = "pip install 'bandit-privacy-audit[dask]'"


class ClusterError(ValueError):
    """Cannot use the cluster: one line, exit code 2."""


def _import_client():
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError(f"--scheduler needs Dask distributed, which is not installed: "
                           f"{INSTALL_HINT}") from None
    return Client


def _worker_versions():
    import numpy

    import audit
    from audit.execution.store import tool_code_digest
    return audit.__version__, numpy.__version__, tool_code_digest()


def _relax_malloc() -> bool:
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which
    pins glibc's mmap threshold at 128 KiB: every chunk's short-lived numpy
    arrays are then mapped and unmapped afresh, and a simulation chunk takes
    about 1.7 times as long.  Give the allocator back its usual room."""
    import ctypes
    import ctypes.util
    import sys
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20)
                    and libc.mallopt(m_trim_threshold, 64 << 20))
    except (OSError, AttributeError):   # not glibc
        return False


def prepare_workers(client) -> None:
    """Tune the workers for many short numpy-heavy tasks (see _relax_malloc)."""
    client.run(_relax_malloc)


def connect(address: str, timeout: float | None = None):
    """A ``distributed.Client`` on ``address``, with at least one worker, every
    worker running the same tool code and numpy version as we do (the counts
    depend on both)."""
    Client = _import_client()
    if timeout is None:
        timeout = float(os.environ.get(TIMEOUT_ENV, "10"))
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClusterError(f"--scheduler {address}: cannot connect ({msg})") from None
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (TimeoutError, OSError):
            raise ClusterError(f"--scheduler {address}: no worker joined within {timeout:g} s "
                               f"(start some with: dask worker {address})") from None
        ours = _worker_versions()
        for worker, versions in client.run(_worker_versions).items():
            if tuple(versions) != ours:
                same = tuple(versions[:2]) == ours[:2]
                raise ClusterError(
                    f"--scheduler {address}: worker {worker} runs audit {versions[0]} with numpy "
                    f"{versions[1]}{' but other source files' if same else ''}, this process "
                    f"audit {ours[0]} with numpy {ours[1]}; results would not be reproducible "
                    f"(install the same code and versions on the workers)")
        prepare_workers(client)
    except BaseException:
        client.close()
        raise
    return client


def run_on_cluster(client, task, chunks, finished, window: int | None = None,
                   retries: int = 3) -> None:
    """Run ``task(size, default_rng(ss))`` for every ``(index, size, ss)`` in
    ``chunks`` on the cluster (consecutive chunks batched into one Dask task),
    calling ``finished(index, result)`` as batches complete.  At most
    ``window`` tasks are in flight.

    When a worker dies, the scheduler normally reruns its task elsewhere; but
    if it also held a copy of the scattered task, the scheduler may cancel the
    batch instead ("already forgotten").  Such a batch is submitted again, with
    the task scattered afresh, up to ``retries`` times: nothing of it was
    counted, and its chunks draw from the same streams, so the result is the
    same."""
    from distributed import as_completed
    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker


    threads = sum(client.nthreads().values()) or 1
    if window is None:
        window = max(8, 4 * threads)
    remote = {}
    pending = batches(list(chunks), threads)
    tag = os.urandom(6).hex()
    groups, attempts = {}, {}

    def submit(group):
        if "task" not in remote:
            [remote["task"]] = client.scatter([task], broadcast=True, hash=False)
        n = attempts.get(group[0][0], 0)
        fut = client.submit(run_batch, remote["task"], group, pure=False,
                            key=f"audit-chunks-{group[0][0]}-{len(group)}-{n}-{tag}")
        groups[fut.key] = group
        return fut

    ac = as_completed([submit(g) for g in pending[:window]], loop=client.loop)
    pending = pending[window:]
    try:
        for fut in ac:
            group = groups.pop(fut.key)
            try:
                out = fut.result()
            except (FutureCancelledError, KilledWorker):
                first = group[0][0]
                attempts[first] = attempts.get(first, 0) + 1
                if attempts[first] > retries:
                    raise
                remote.pop("task", None)        # its replicas may have died too
                ac.add(submit(group))
                continue
            for i, res in out:
                finished(i, res)
            fut.release()
            if pending:
                ac.add(submit(pending.pop(0)))
    except BaseException:
        live = list(getattr(ac, "futures", ()))
        if live:
            client.cancel(live)
        raise
