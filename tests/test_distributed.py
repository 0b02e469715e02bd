"""Running the chunks on a Dask cluster (the optional [dask] extra): the same
counts and ε_lb as local runs, a dead worker's chunk recomputed once, and
one-line errors for a missing extra or an unreachable scheduler."""
from __future__ import annotations

import json
import os
import signal
import sys
import time

import numpy as np
import pytest

from audit.cli.main import main
from audit.execution.executor import Executor, run_chunks
from audit.execution.store import Store

SKIP_REASON = "the optional Dask extra is not installed (pip install '.[dask]')"

RUN = ["run", "private-exp3", "--attack", "canary", "--trials", "60000", "--seed", "4",
       "--quiet"]


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed", reason=SKIP_REASON)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as c:
        yield c


@pytest.fixture
def client(cluster):
    distributed = pytest.importorskip("distributed", reason=SKIP_REASON)
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


def _run(tmp_path, name, *extra) -> dict:
    out = tmp_path / f"{name}.json"
    assert main([*RUN, "--json", str(out), *extra]) == 0
    doc = json.loads(out.read_text())
    doc.pop("runtime_seconds")
    return doc


def test_cluster_gives_bit_for_bit_the_local_result(tmp_path, cluster):
    one = _run(tmp_path, "one", "--jobs", "1", "--no-store")
    two = _run(tmp_path, "two", "--jobs", "2", "--no-store")
    dask = _run(tmp_path, "dask", "--no-store", "--scheduler", cluster.scheduler_address)
    assert one == two == dask
    canary = dask["attacks"][0]
    # coupled runs (the default): held-out blocks of four fifths of 60 000
    assert canary["mode"] == "black-box" and canary["counts"]["trials_per_side"] == 48000


# The chunk counts below are each side's own chunks: independent runs.
INDEPENDENT = ("--runs", "independent")


def test_scheduler_from_the_environment_and_resume_across_engines(tmp_path, cluster,
                                                                  monkeypatch, capsys):
    store = str(tmp_path / "s.sqlite")
    monkeypatch.setenv("AUDIT_SCHEDULER", cluster.scheduler_address)
    on_cluster = _run(tmp_path, "dask", "--store", store, *INDEPENDENT)
    with Store(store) as s:
        assert s.count_chunks() == 2 * 6 + 2 * 12   # black-box sides + both loss directions
    monkeypatch.delenv("AUDIT_SCHEDULER")
    capsys.readouterr()
    local = _run(tmp_path, "local", "--store", store, "--jobs", "1", *INDEPENDENT)
    assert "resumed: 36 of 36 chunks" in capsys.readouterr().out
    assert local == on_cluster == _run(tmp_path, "fresh", "--no-store", "--jobs", "2", *INDEPENDENT)


def test_a_worker_dying_mid_chunk_has_its_chunk_recomputed_once(tmp_path, client):
    marker = str(tmp_path / "killed")
    n, chunk, seed = 16_000, 1000, [2, 0, 1]

    def fragile(runs, rng):
        value = rng.random(runs).sum()
        if round(value) % 4 == 0 and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)      # the worker process dies mid-chunk
        return value, runs

    reference = run_chunks(lambda r, g: (g.random(r).sum(), r), n, seed, chunk=chunk)
    assert any(round(v) % 4 == 0 for v, _ in reference)
    store = Store(str(tmp_path / "s.sqlite"))
    ex = Executor(client=client, store=store, fingerprint="fp")
    got = run_chunks(fragile, n, seed, chunk=chunk, executor=ex)
    assert os.path.exists(marker)
    assert got == reference and sum(r for _, r in got) == n
    assert store.count_chunks("fp") == len(reference) == ex.computed
    client.wait_for_workers(2, timeout=60)    # the nanny restarts the dead worker


def test_unreachable_scheduler_is_a_one_line_error(monkeypatch, capsys):
    pytest.importorskip("distributed", reason=SKIP_REASON)
    monkeypatch.setenv("AUDIT_CONNECT_TIMEOUT", "1")
    assert main([*RUN, "--no-store", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("audit: error: --scheduler tcp://127.0.0.1:9: cannot connect")
    assert err.count("\n") == 1


def test_missing_extra_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)     # import distributed fails
    assert main([*RUN, "--no-store", "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install 'bandit-privacy-audit[dask]'" in err


def test_run_chunks_on_the_cluster_returns_chunk_order(client):
    def task(runs, rng):
        return np.array([runs, rng.integers(1 << 30)])

    local = run_chunks(task, 25_500, [1, 2, 3], chunk=1000)
    remote = run_chunks(task, 25_500, [1, 2, 3], chunk=1000, executor=Executor(client=client))
    assert all(np.array_equal(a, b) for a, b in zip(local, remote)) and len(local) == 26


def test_a_batch_the_scheduler_cancels_is_submitted_again(tmp_path, client):
    """The scheduler may cancel a batch when a worker dies ("already
    forgotten") instead of rerunning it; run_chunks submits it again and
    still counts every chunk once."""
    marker = str(tmp_path / "cancelled")
    n, chunk, seed = 8_000, 1000, [4, 0, 0]

    def cancelled_once(runs, rng):
        value = rng.random(runs).sum()
        if not os.path.exists(marker):
            open(marker, "w").close()
            from distributed import Future, get_client, get_worker
            key = get_worker().get_current_task()
            get_client().cancel([Future(key)], force=True)
            time.sleep(2)                     # cancelled while running
        return value, runs

    reference = run_chunks(lambda r, g: (g.random(r).sum(), r), n, seed, chunk=chunk)
    store = Store(str(tmp_path / "s.sqlite"))
    ex = Executor(client=client, store=store, fingerprint="fp")
    got = run_chunks(cancelled_once, n, seed, chunk=chunk, executor=ex)
    assert os.path.exists(marker)
    assert got == reference and store.count_chunks("fp") == len(reference) == ex.computed
