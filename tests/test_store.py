"""The durable store: resume after Ctrl-C, SIGTERM and SIGKILL (with no
worker process left behind), no double counting, concurrent writers,
fingerprints, `audit history`."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from algorithms import build
from audit.cli.main import main
from audit.engine import audit_algorithm
from audit.execution.runs import DEFAULT_CHUNK, chunk_sizes
from audit.execution.executor import Executor, run_chunks
from audit.execution.store import Store, audit_fingerprint, default_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _doc(path) -> dict:
    with open(path) as fh:
        doc = json.load(fh)
    doc.pop("runtime_seconds")
    return doc


def _default_sigint():
    # A parallel test worker may ignore SIGINT, and an ignored signal stays
    # ignored across exec: give the child the default, as a terminal would,
    # so that Python turns Ctrl-C into KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args, **kw):
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.Popen([sys.executable, "-m", "audit.cli", *args], cwd=kw.get("cwd", ROOT),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)


def _chunk_rows(path) -> int:
    if not os.path.exists(path):
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:  # not created yet
        return 0


def _task(runs, rng):
    return rng.integers(0, 10**6, size=4), runs


# -- fingerprints -----------------------------------------------------------

def test_fingerprint_covers_everything_that_determines_the_counts():
    alg = build("private-exp3", epsilon=1.0)
    base = dict(claim=alg.claim, attacks=["canary"], trials=1000, confidence=0.95, seed=0,
                modes=None)
    fp = audit_fingerprint(alg, **base)
    assert fp == audit_fingerprint(build("private-exp3", epsilon=1.0), **base)
    variants = [
        (build("private-exp3", epsilon=0.5), base),
        (build("private-exp3", epsilon=1.0, horizon=2000), base),
        (build("private-exp3", epsilon=1.0, params={"tau": 3}), base),
        (alg, {**base, "claim": alg.claim.__class__(2.0, 0.0, "transcript", "x")}),
        (alg, {**base, "attacks": ["first-round"]}),
        (alg, {**base, "trials": 1001}),
        (alg, {**base, "confidence": 0.9}),
        (alg, {**base, "seed": 1}),
        (alg, {**base, "modes": ["black-box"]}),
        (alg, {**base, "coupled": True}),
    ]
    prints = {audit_fingerprint(a, **kw) for a, kw in variants}
    assert len(prints) == len(variants) and fp not in prints


def test_default_store_location(monkeypatch, tmp_path):
    monkeypatch.delenv("AUDIT_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_path() == str(tmp_path / "privacy-audit" / "store.sqlite")
    monkeypatch.setenv("AUDIT_STORE", str(tmp_path / "elsewhere.sqlite"))
    assert default_path() == str(tmp_path / "elsewhere.sqlite")


def test_tests_never_use_the_real_cache():
    assert os.environ["AUDIT_STORE"] == default_path()
    home_cache = os.path.join(os.path.expanduser("~"), ".cache")
    assert not default_path().startswith(home_cache)


# -- run_chunks with a store ------------------------------------------------

def test_interrupted_run_chunks_resumes_bit_for_bit(tmp_path):
    n, chunk, seed = 23_000, 1000, [5, 0, 1]
    reference = run_chunks(_task, n, seed, chunk=chunk)
    store = Store(str(tmp_path / "s.sqlite"))
    ex = Executor(store=store, fingerprint="fp")

    class Stop(Exception):
        pass

    def stop_after_7(done):
        if done >= 7 * chunk:
            raise Stop

    with pytest.raises(Stop):
        run_chunks(_task, n, seed, chunk=chunk, executor=ex, progress=stop_after_7)
    assert store.count_chunks("fp") == 7
    ex = Executor(store=store, fingerprint="fp")
    resumed = run_chunks(_task, n, seed, chunk=chunk, executor=ex)
    assert (ex.reused, ex.computed) == (7, 16)
    assert len(resumed) == len(chunk_sizes(n, chunk)) == store.count_chunks("fp")
    for a, b in zip(reference, resumed):
        assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    # another stream, or another fingerprint, shares nothing
    ex2 = Executor(store=store, fingerprint="other")
    run_chunks(_task, n, seed, chunk=chunk, executor=ex2)
    assert ex2.reused == 0


def test_a_chunk_is_never_counted_twice(tmp_path):
    store = Store(str(tmp_path / "s.sqlite"))
    store.put_chunk("fp", "s", 0, 10, ("first",))
    store.put_chunk("fp", "s", 0, 10, ("second",))       # a retried worker's late copy
    assert store.load_chunks("fp", "s") == {0: (10, ("first",))}
    assert store.count_chunks() == 1


def test_local_worker_dying_mid_chunk_is_recomputed_once(tmp_path):
    marker = str(tmp_path / "killed")
    n, chunk, seed = 12_000, 1000, [9, 1, 0]

    def fragile(runs, rng):
        value = rng.random(runs).sum()
        if round(value) % 5 == 0 and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)      # the worker dies mid-chunk
        return value, runs

    reference = run_chunks(lambda r, g: (g.random(r).sum(), r), n, seed, chunk=chunk)
    assert any(round(v) % 5 == 0 for v, _ in reference)
    store = Store(str(tmp_path / "s.sqlite"))
    ex = Executor(jobs=2, store=store, fingerprint="fp")
    got = run_chunks(fragile, n, seed, chunk=chunk, executor=ex)
    assert os.path.exists(marker)
    assert got == reference
    assert sum(r for _, r in got) == n
    assert store.count_chunks("fp") == len(reference) == ex.computed


# -- the command line: resume after SIGKILL and Ctrl-C -----------------------

# Independent runs: the chunk counts below are each side's own chunks.
RUN = ["run", "private-exp3", "--attack", "canary", "--trials", "600000", "--seed", "3",
       "--jobs", "1", "--quiet", "--runs", "independent"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    d = tmp_path_factory.mktemp("ref")
    p = _cli(*RUN, "--store", str(d / "ref.sqlite"), "--json", str(d / "ref.json"))
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    return _doc(d / "ref.json")


def _interrupt_then_resume(tmp_path, sig):
    store = str(tmp_path / "s.sqlite")
    out = str(tmp_path / "r.json")
    p = _cli(*RUN, "--store", store, "--json", out)
    deadline = time.time() + 120
    while _chunk_rows(store) < 10:
        assert p.poll() is None, "the audit finished before it could be interrupted"
        assert time.time() < deadline
        time.sleep(0.05)
    os.kill(p.pid, sig)
    _, err = p.communicate(timeout=60)
    code = p.returncode
    assert not os.path.exists(out)
    kept = _chunk_rows(store)
    # 60 chunks per side; the loss distribution: 120 chunks of 5000 in each direction
    total = 2 * 60 + 2 * 120
    assert 10 <= kept < total
    p = _cli(*RUN, "--store", store, "--json", out)
    stdout, err2 = p.communicate(timeout=300)
    assert p.returncode == 0, err2
    assert f"resumed: {kept} of {total} chunks came from the store" in stdout
    assert _chunk_rows(store) == total
    with Store(store) as s:
        assert s.integrity() == "ok"
    return code, err, _doc(out)


def test_resume_after_sigkill_equals_uninterrupted_run(tmp_path, uninterrupted):
    _, _, doc = _interrupt_then_resume(tmp_path, signal.SIGKILL)
    assert doc == uninterrupted


def test_resume_after_ctrl_c_equals_uninterrupted_run(tmp_path, uninterrupted):
    code, err, doc = _interrupt_then_resume(tmp_path, signal.SIGINT)
    assert code == 130
    assert err.count("audit: interrupted") == 1 and err.count("\n") == 1, err
    assert "rerun the same command to resume" in err and "Traceback" not in err
    assert doc == uninterrupted


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, their children, ...), from /proc."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    # "pid (comm) state ppid ...": comm may hold spaces or ")"
                    parent[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):   # it exited meanwhile
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in parent.items() if p in frontier} - found
        found |= frontier
    return found


def _running(pid: int) -> bool:
    """``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="lists processes through /proc")
def test_sigterm_stops_the_workers_keeps_the_chunks_and_exits_143(tmp_path):
    """SIGTERM to ``audit run`` with local worker processes: exit 143, one
    line saying it was interrupted, every worker process (and loky's
    helpers) gone, the completed chunks kept so that the same command
    resumes from them."""
    store = str(tmp_path / "s.sqlite")
    args = ["run", "private-exp3", "--attack", "canary", "--mode", "black-box", "--trials",
            "2000000", "--jobs", "2", "--quiet", "--store", store, "--runs", "independent"]
    p = _cli(*args)
    deadline = time.time() + 120
    while _chunk_rows(store) < 1 or not _descendants(p.pid):
        assert p.poll() is None, "the audit finished before it could be terminated"
        assert time.time() < deadline
        time.sleep(0.05)
    workers = _descendants(p.pid)
    os.kill(p.pid, signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert out == ""
    assert err.count("audit: interrupted") == 1 and err.count("\n") == 1, err
    assert err.startswith("audit: interrupted (SIGTERM); completed chunks are kept in "
                          f"{store}: rerun the same command to resume")
    deadline = time.time() + 5
    while any(_running(w) for w in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not [w for w in workers if _running(w)], "worker processes outlived the audit"
    kept = _chunk_rows(store)
    total = 2 * len(chunk_sizes(2_000_000, DEFAULT_CHUNK))   # two sides
    assert 1 <= kept < total
    p = _cli(*args)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert f"resumed: {kept} of {total} chunks came from the store {store}" in out


# -- concurrent writers -------------------------------------------------------

def test_concurrent_audits_share_one_store(tmp_path):
    store = str(tmp_path / "shared.sqlite")
    args = [["--seed", "1"], ["--seed", "1"], ["--seed", "2"]]
    base = ["run", "private-exp3", "--attack", "canary", "--trials", "200000", "--jobs", "1",
            "--quiet", "--store", store, "--runs", "independent"]
    procs = [_cli(*base, *a, "--json", str(tmp_path / f"{i}.json")) for i, a in enumerate(args)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    for i, a in enumerate(args):
        alg = build("private-exp3")
        ref = audit_algorithm(alg, ["canary"], trials=200_000, seed=int(a[1]),
                              coupled=False).as_dict()
        ref.pop("runtime_seconds")
        ref["reproduce"] = _doc(tmp_path / f"{i}.json")["reproduce"]
        assert json.loads(json.dumps(ref, default=float)) == _doc(tmp_path / f"{i}.json")
    with Store(store) as s:
        assert s.integrity() == "ok"
        assert len(s.history("private-exp3")) == 3
        # two audits: 2 × (2 sides × 20 chunks + 2 directions × 40 loss-distribution chunks)
        assert s.count_chunks() == 2 * (40 + 80)


def _hammer(path, worker, n):
    s = Store(path)
    for i in range(n):
        # half the keys are shared by every writer, half are the writer's own
        s.put_chunk("fp", "shared" if i % 2 else f"w{worker}", i, 1, np.arange(50) * i)
    s.close()


def test_many_processes_writing_at_once_do_not_corrupt_the_store(tmp_path):
    path = str(tmp_path / "s.sqlite")
    Store(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(path, w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Store(path) as s:
        assert s.integrity() == "ok"
        assert s.count_chunks() == 4 * 100 + 100
        shared = s.load_chunks("fp", "shared")
        assert sorted(shared) == list(range(1, 200, 2))
        assert all(np.array_equal(v, np.arange(50) * i) for i, (_, v) in shared.items())


# -- history ------------------------------------------------------------------

def test_history_lists_runs_and_checks_newest_first(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "audit.toml").write_text(textwrap.dedent("""
        trials = 4000
        [[audit]]
        name = "suite-exp3"
        algorithm = "private-exp3"
        attacks = ["canary"]
        modes = ["black-box"]
    """))
    subprocess.run([*git, "add", "audit.toml"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    monkeypatch.chdir(repo)
    store = str(tmp_path / "h.sqlite")
    small = ["--trials", "2000", "--jobs", "1", "--quiet", "--mode", "black-box",
             "--store", store]
    assert main(["run", "private-exp3", "--attack", "canary", "--seed", "1", *small]) == 0
    assert main(["run", "mutant-batch-sum", "--attack", "canary", *small]) == 1
    assert main(["check", "--jobs", "1", "--store", store]) == 0
    capsys.readouterr()
    assert main(["history", "--store", store, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["audits"]
    assert doc["schema"] == "audit-history/1"
    assert [(r["source"], r["name"]) for r in rows] == [
        ("check", "suite-exp3"), ("run", "mutant-batch-sum"), ("run", "private-exp3")]
    assert rows[1]["verdict"] == "violation" and rows[2]["verdict"] == "consistent"
    assert all(r["git_commit"] == commit and r["git_dirty"] is False for r in rows)
    assert all(r["tool_version"] and r["claim_epsilon"] > 0 for r in rows)
    assert rows[0]["time"] >= rows[1]["time"] >= rows[2]["time"]
    assert main(["history", "private-exp3", "--store", store, "--json"]) == 0
    names = [r["name"] for r in json.loads(capsys.readouterr().out)["audits"]]
    assert names == ["suite-exp3", "private-exp3"]
    assert main(["history", "--store", store]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split()[:3] == ["when", "source", "audit"]
    assert "mutant-batch-sum" in table and commit[:10] in table and "violation" in table


def test_no_store_keeps_nothing_and_bad_stores_are_one_line_errors(tmp_path, capsys):
    store = tmp_path / "never.sqlite"
    args = ["run", "private-exp3", "--attack", "canary", "--trials", "1000", "--jobs", "1",
            "--quiet", "--mode", "black-box"]
    assert main([*args, "--no-store"]) == 0
    assert main(["history", "--store", str(store)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main([*args, "--store", str(tmp_path / "missing" / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database " * 100)
    assert main([*args, "--store", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a database" in err
    assert main([*args, "--store", str(store), "--no-store"]) == 2
    assert not store.exists()


def test_an_unusable_default_store_is_skipped_with_a_warning(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.delenv("AUDIT_STORE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))       # the cache folder cannot exist
    args = ["run", "private-exp3", "--attack", "canary", "--trials", "1000", "--jobs", "1",
            "--quiet", "--mode", "black-box"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "warning: cannot use the store" in err and "running without it" in err
