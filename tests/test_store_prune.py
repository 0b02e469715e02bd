"""Store housekeeping: ``Store.info``/``Store.prune``, ``audit store info`` and
``audit store prune``, the automatic retention after ``audit run``
($AUDIT_STORE_KEEP), and the history name of a user's algorithm."""
import json
import sqlite3

import pytest

from audit.cli.main import main
from audit.execution.store import ORPHAN_AGE, Store, StoreError, keep_from_env

SMALL = ["--trials", "1000", "--jobs", "1", "--quiet", "--mode", "black-box"]


def _history(store: Store, name: str, fingerprint: str, created: float) -> None:
    """A history row (only the columns prune and info read are meaningful)."""
    store._db.execute(
        "INSERT INTO audits (created, source, name, algorithm, params, tool_version, "
        "epsilon_lower_bound, verdict, trials, seed, fingerprint, result) "
        "VALUES (?, 'run', ?, ?, '{}', 'test', 0.0, 'consistent', 10, 0, ?, '{}')",
        (created, name, name, fingerprint))


def _chunks(store: Store, fingerprint: str, n: int = 3, created: float = None) -> None:
    for i in range(n):
        store.put_chunk(fingerprint, "s", i, 1, list(range(1000)))
    if created is not None:
        store._db.execute("UPDATE chunks SET created = ? WHERE fingerprint = ?",
                          (created, fingerprint))


def _fingerprints(store: Store) -> set:
    return {r[0] for r in store._db.execute("SELECT DISTINCT fingerprint FROM chunks")}


@pytest.fixture
def populated(tmp_path):
    """Audit "a" with fingerprints a1 (oldest) .. a4 (newest), audit "b" with
    b1, a fingerprint "shared" recorded as the newest of "c" and the oldest of
    "a", an unfinished fingerprint and a stale unfinished one."""
    path = str(tmp_path / "s.sqlite")
    store = Store(path)
    now = 1_000_000.0
    for k in range(1, 5):
        _history(store, "a", f"a{k}", now + k)
        _chunks(store, f"a{k}")
    _history(store, "a", "a4", now + 10)             # a4 audited twice: one fingerprint
    _history(store, "b", "b1", now + 1)
    _chunks(store, "b1")
    _history(store, "a", "shared", now)
    _history(store, "c", "shared", now + 5)
    _chunks(store, "shared")
    _chunks(store, "running", created=now + 50)
    _chunks(store, "stale", created=now - 2 * ORPHAN_AGE)
    yield store, now + 60
    store.close()


def test_prune_keeps_the_newest_n_fingerprints_per_audit_name_and_every_history_row(populated):
    store, now = populated
    rows = store._db.execute("SELECT COUNT(*) FROM audits").fetchone()[0]
    done = store.prune(2, now=now)
    assert _fingerprints(store) == {"a3", "a4", "b1", "shared", "running"}
    assert done["fingerprints_removed"] == 2 and done["unfinished_removed"] == 1
    assert done["chunks_removed"] == 9 and done["fingerprints_kept"] == 5
    assert store._db.execute("SELECT COUNT(*) FROM audits").fetchone()[0] == rows
    assert store.integrity() == "ok"
    # Pruning again removes nothing.
    assert store.prune(2, now=now)["chunks_removed"] == 0


def test_prune_keep_zero_drops_every_finished_audits_chunks(populated):
    store, now = populated
    store.prune(0, now=now)
    assert _fingerprints(store) == {"running"}


def test_prune_reports_size_and_vacuums(tmp_path):
    path = str(tmp_path / "big.sqlite")
    with Store(path) as store:
        for k in range(5):
            _history(store, "x", f"f{k}", 100.0 + k)
            for i in range(40):
                store.put_chunk(f"f{k}", "s", i, 1, bytes(range(256)) * 64 + bytes([k, i]))
        done = store.prune(1)
    assert done["chunks_removed"] == 160
    assert done["bytes_after"] < done["bytes_before"] / 2, done


def test_info_counts(populated):
    store, _ = populated
    info = store.info()
    assert info["audits"] == 8 and info["audit_names"] == 3
    assert info["fingerprints"] == 8 and info["unfinished_fingerprints"] == 2
    assert info["chunks"] == 24 and info["bytes"] > 0


def test_keep_from_env(monkeypatch):
    monkeypatch.delenv("AUDIT_STORE_KEEP", raising=False)
    assert keep_from_env() == 3
    monkeypatch.setenv("AUDIT_STORE_KEEP", "0")
    assert keep_from_env() == 0
    for bad in ("-1", "many", "1.5"):
        monkeypatch.setenv("AUDIT_STORE_KEEP", bad)
        with pytest.raises(StoreError, match="AUDIT_STORE_KEEP must be a non-negative integer"):
            keep_from_env()


def test_store_info_and_prune_commands(populated, capsys):
    store, _ = populated
    path = store.path
    assert main(["store", "info", "--store", path]) == 0
    out = capsys.readouterr().out
    assert "audits in history: 8" in out and "chunks:" in out and "24" in out
    assert "fingerprints:      8 (2 without a finished audit)" in out
    assert main(["store", "prune", "--keep", "1", "--store", path]) == 0
    out = capsys.readouterr().out
    # With the real clock the fixture's unfinished fingerprints are both stale.
    assert "removed: 15 chunk(s) of 3 older fingerprint(s) and 2 stale" in out, out
    assert "before" in out and "after" in out
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(DISTINCT fingerprint) FROM chunks").fetchone()[0] == 3


@pytest.mark.parametrize("args,word", [
    (["store", "prune", "--keep", "-1"], "--keep"),
    (["store", "prune", "--keep", "x"], "--keep"),
    (["store", "info", "--store", "/nonexistent/s.sqlite"], "no such file"),
    (["store"], "info, prune"),
])
def test_store_command_errors_are_one_line(args, word, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and word in err, err


def test_run_prunes_the_store_to_audit_store_keep(tmp_path, monkeypatch, capsys):
    path = str(tmp_path / "auto.sqlite")
    args = ["run", "private-exp3", "--attack", "canary", *SMALL, "--store", path]
    monkeypatch.setenv("AUDIT_STORE_KEEP", "0")            # never prune
    for seed in ("1", "2", "3"):
        assert main([*args, "--seed", seed]) == 0
    with Store(path) as s:
        assert s.info()["fingerprints"] == 3
    monkeypatch.setenv("AUDIT_STORE_KEEP", "2")
    assert main([*args, "--seed", "4"]) == 0
    with Store(path) as s:
        info = s.info()
        assert info["fingerprints"] == 2 and info["audits"] == 4
        newest = {r["fingerprint"] for r in s.history(limit=2)}
        assert _fingerprints(s) == newest
    monkeypatch.setenv("AUDIT_STORE_KEEP", "nope")
    capsys.readouterr()
    assert main([*args, "--seed", "5", "--store", str(tmp_path / "never.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "AUDIT_STORE_KEEP" in err
    assert not (tmp_path / "never.sqlite").exists()


def test_user_algorithm_is_recorded_and_found_under_its_import_path(tmp_path, capsys):
    path = str(tmp_path / "u.sqlite")
    algo = "tests.user_algos:noisy_greedy"
    assert main(["run", algo, "--horizon", "20", "--claim-epsilon", "1000", *SMALL,
                 "--store", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"VERDICT: consistent — {algo}:"), out
    assert main(["history", algo, "--store", path, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["audits"]
    assert len(rows) == 1 and rows[0]["name"] == algo
    assert main(["history", "--store", path]) == 0
    assert algo in capsys.readouterr().out
