"""The durable store: every completed chunk of every audit, and the history of
finished audits, in one embedded SQLite file (WAL mode).

Chunks are keyed by (audit fingerprint, stream, chunk index).  Beside them,
what an audit derived from its chunks (a trained witness, each piece of
evidence's result, the declaration checks) is kept under the same
fingerprint (``get_derived``/``put_derived``), so a rerun whose chunks are
all stored neither loads nor recomputes them; it is pruned with them.  The fingerprint
covers everything that determines the counts (see ``audit_fingerprint``), the
stream names the random-stream family, run count and chunk size of one
``run_chunks`` call, and the index picks the chunk.  A chunk is written in one
short transaction once it has completed, with ``INSERT OR IGNORE``: a chunk
that was started but never committed (Ctrl-C, SIGKILL, a dead worker) is
simply computed again, and a chunk is never counted twice.  Chunk i always
draws from the same stream, so a recomputed chunk is bit-for-bit the chunk
that was lost.

The default location is ``$AUDIT_STORE``, else
``$XDG_CACHE_HOME/privacy-audit/store.sqlite`` (``~/.cache/...`` without
XDG_CACHE_HOME); ``--store PATH`` overrides and ``--no-store`` disables.

Retention (``Store.prune``, ``audit store prune``): the chunks of the newest
N fingerprints of every audit name are kept (a fingerprint is kept if it is
among the newest N of any name it was recorded under); every history row is
kept.  Chunks of a fingerprint with no finished audit (an interrupted run
that a rerun resumes, or an audit running right now) are kept until they
are a week old.  After every ``audit run``/``audit check`` that writes to
the store it is pruned to ``$AUDIT_STORE_KEEP`` (default 3; 0 = never), so
a cached store stays bounded.

May import: the standard library and numpy; ``audit`` for its version; ``audit.jsondoc``
(the JSON text of the result documents it keeps).
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import pickle
import sqlite3
import subprocess
import sys
import time
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np

from audit import jsondoc

SCHEMA_VERSION = 1
STORE_ENV = "AUDIT_STORE"
KEEP_ENV = "AUDIT_STORE_KEEP"
DEFAULT_KEEP = 3
# Chunks of a fingerprint with no finished audit are kept this long (seconds).
ORPHAN_AGE = 7 * 24 * 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    fingerprint TEXT NOT NULL,
    stream      TEXT NOT NULL,
    chunk       INTEGER NOT NULL,
    runs        INTEGER NOT NULL,
    result      BLOB NOT NULL,     -- zlib(pickle(chunk result))
    created     REAL NOT NULL,
    PRIMARY KEY (fingerprint, stream, chunk)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS derived (
    fingerprint TEXT NOT NULL,
    key         TEXT NOT NULL,     -- what was derived, e.g. a piece of evidence's result
    value       BLOB NOT NULL,     -- zlib(pickle(value))
    created     REAL NOT NULL,
    PRIMARY KEY (fingerprint, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audits (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    created             REAL NOT NULL,
    source              TEXT NOT NULL,
    name                TEXT NOT NULL,
    algorithm           TEXT NOT NULL,
    params              TEXT NOT NULL,
    tool_version        TEXT NOT NULL,
    git_commit          TEXT,
    git_dirty           INTEGER,
    claim_epsilon       REAL,
    claim_delta         REAL,
    epsilon_lower_bound REAL NOT NULL,
    verdict             TEXT NOT NULL,
    trials              INTEGER NOT NULL,
    seed                INTEGER NOT NULL,
    runtime_seconds     REAL,
    fingerprint         TEXT,
    result              TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audits_by_algorithm ON audits (algorithm, created);
"""


class StoreError(ValueError):
    """The store cannot be used: one line, exit code 2."""


def default_path() -> str:
    env = os.environ.get(STORE_ENV)
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "privacy-audit", "store.sqlite")


def keep_from_env() -> int:
    """The automatic retention: ``$AUDIT_STORE_KEEP`` (fingerprints kept per
    audit name, 0 = never prune), else ``DEFAULT_KEEP``."""
    text = os.environ.get(KEEP_ENV, "").strip()
    if not text:
        return DEFAULT_KEEP
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise StoreError(f"{KEEP_ENV} must be a non-negative integer (0 = never prune), "
                         f"got {text!r}")
    return value


def size_on_disk(path: str) -> int:
    """Bytes of the store file and its WAL and shared-memory files."""
    return sum(os.path.getsize(p) for p in (path, path + "-wal", path + "-shm")
               if os.path.exists(p))


def _decode(blob: bytes):
    # zlib streams start with 0x78; a bare pickle (protocol >= 2) with 0x80.
    return pickle.loads(blob if blob[:1] == b"\x80" else zlib.decompress(blob))


class Store:
    """One connection to the store file; cheap to open, safe to share the file
    between processes (each process opens its own ``Store``)."""

    def __init__(self, path: str, create_dirs: bool = False, readonly: bool = False):
        self.path = path
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            if create_dirs:
                os.makedirs(parent, exist_ok=True)
            else:
                raise StoreError(f"--store: directory {parent} does not exist")
        try:
            if readonly:
                self._db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True,
                                           timeout=60, isolation_level=None)
            else:
                self._db = sqlite3.connect(path, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 60000")
            if not readonly:
                mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise StoreError(f"store {path}: cannot switch to WAL mode (got {mode})")
                self._db.execute("PRAGMA synchronous = NORMAL")
                self._db.executescript(_SCHEMA)
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)",
                                 (str(SCHEMA_VERSION),))
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"store {path}: {exc}") from None
        if row is None or row[0] != str(SCHEMA_VERSION):
            raise StoreError(f"store {path}: schema version {row and row[0]!r}, this tool "
                             f"writes {SCHEMA_VERSION}; use another --store")

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- chunks ------------------------------------------------------------
    def load_chunks(self, fingerprint: str, stream: str) -> dict[int, tuple[int, object]]:
        """{chunk index: (runs, result)} for the chunks already completed."""
        try:
            rows = self._db.execute("SELECT chunk, runs, result FROM chunks "
                                    "WHERE fingerprint = ? AND stream = ?",
                                    (fingerprint, stream)).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None
        return {i: (runs, _decode(blob)) for i, runs, blob in rows}

    def put_chunk(self, fingerprint: str, stream: str, index: int, runs: int, result) -> None:
        """One transaction per completed chunk; a second write of the same
        chunk (another process, a retried worker) is ignored."""
        blob = zlib.compress(pickle.dumps(result, protocol=4), 1)
        try:
            self._db.execute("INSERT OR IGNORE INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                             (fingerprint, stream, int(index), int(runs), blob, time.time()))
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None

    # -- what an audit derived from its chunks -------------------------------
    def get_derived(self, fingerprint: str, key: str):
        """A value derived from an audit's chunks and kept beside them (a
        trained witness, a piece of evidence's result, the declaration
        checks), or None.  Keyed by the audit's fingerprint, which covers
        the tool's own code, so a value is never read back by other code."""
        try:
            row = self._db.execute("SELECT value FROM derived WHERE fingerprint = ? AND key = ?",
                                   (fingerprint, key)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None
        if row is None:
            return None
        try:
            return _decode(row[0])
        except Exception:  # noqa: BLE001 - an unreadable value is recomputed
            return None

    def put_derived(self, fingerprint: str, key: str, value) -> None:
        """Keep ``value``; one that cannot be pickled is simply not kept (it
        is recomputed on a rerun)."""
        try:
            blob = zlib.compress(pickle.dumps(value, protocol=4), 1)
        except (pickle.PicklingError, TypeError, AttributeError):
            return
        try:
            self._db.execute("INSERT OR REPLACE INTO derived VALUES (?, ?, ?, ?)",
                             (fingerprint, key, blob, time.time()))
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None

    def count_chunks(self, fingerprint: Optional[str] = None) -> int:
        if fingerprint is None:
            return self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM chunks WHERE fingerprint = ?",
                                (fingerprint,)).fetchone()[0]

    # -- history -----------------------------------------------------------
    def record_audit(self, result, fingerprint: Optional[str], source: str = "run",
                     name: Optional[str] = None, git: Optional[tuple] = None) -> int:
        """Append one finished audit (``result`` is an ``AuditResult``)."""
        doc = result.as_dict()
        commit, dirty = git if git is not None else git_commit_of(result.algorithm)
        claim = doc["claim"]
        try:
            cur = self._db.execute(
                "INSERT INTO audits (created, source, name, algorithm, params, tool_version, "
                "git_commit, git_dirty, claim_epsilon, claim_delta, epsilon_lower_bound, verdict, "
                "trials, seed, runtime_seconds, fingerprint, result) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (time.time(), source, name or doc["algorithm"]["name"], doc["algorithm"]["name"],
                 jsondoc.dumps(doc["algorithm"]["params"], sort_keys=True),
                 doc["tool_version"], commit, None if dirty is None else int(dirty),
                 claim.get("epsilon"), claim.get("delta"), float(doc["epsilon_lower_bound"]),
                 doc["verdict"], int(doc["budget"]["trials"]), int(doc["budget"]["seed"]),
                 doc["runtime_seconds"], fingerprint,
                 jsondoc.dumps(doc)))
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None
        return cur.lastrowid

    def history(self, algorithm: Optional[str] = None, limit: Optional[int] = None) -> list[dict]:
        """Past audits, newest first."""
        sql = ("SELECT id, created, source, name, algorithm, params, tool_version, git_commit, "
               "git_dirty, claim_epsilon, claim_delta, epsilon_lower_bound, verdict, trials, seed, "
               "runtime_seconds, fingerprint FROM audits")
        args: list = []
        if algorithm:
            sql += " WHERE algorithm = ? OR name = ?"
            args += [algorithm, algorithm]
        sql += " ORDER BY created DESC, id DESC"
        if limit:
            sql += " LIMIT ?"
            args.append(int(limit))
        try:
            rows = self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None
        keys = ("id", "time", "source", "name", "algorithm", "params", "tool_version",
                "git_commit", "git_dirty", "claim_epsilon", "claim_delta",
                "epsilon_lower_bound", "verdict", "trials", "seed", "runtime_seconds",
                "fingerprint")
        out = []
        for row in rows:
            d = dict(zip(keys, row))
            d["params"] = jsondoc.loads(d["params"])
            d["git_dirty"] = None if d["git_dirty"] is None else bool(d["git_dirty"])
            d["time"] = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(d["time"]))
            out.append(d)
        return out

    def result_document(self, audit_id: int) -> Optional[dict]:
        row = self._db.execute("SELECT result FROM audits WHERE id = ?", (audit_id,)).fetchone()
        return jsondoc.loads(row[0]) if row else None

    # -- housekeeping ------------------------------------------------------
    def info(self) -> dict:
        """Path, size on disk, history rows, audit names, fingerprints with
        chunks (and how many of them have no finished audit), chunks."""
        q = self._db.execute
        try:
            audits = q("SELECT COUNT(*) FROM audits").fetchone()[0]
            names = q("SELECT COUNT(DISTINCT name) FROM audits").fetchone()[0]
            fps = q("SELECT COUNT(DISTINCT fingerprint) FROM chunks").fetchone()[0]
            orphans = q("SELECT COUNT(DISTINCT fingerprint) FROM chunks WHERE fingerprint NOT IN "
                        "(SELECT fingerprint FROM audits WHERE fingerprint IS NOT NULL)"
                        ).fetchone()[0]
            chunks = q("SELECT COUNT(*) FROM chunks").fetchone()[0]
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None
        return {"path": os.path.abspath(self.path), "bytes": size_on_disk(self.path),
                "audits": audits, "audit_names": names, "fingerprints": fps,
                "unfinished_fingerprints": orphans, "chunks": chunks}

    def prune(self, keep: int = DEFAULT_KEEP, orphan_age: float = ORPHAN_AGE,
              now: Optional[float] = None, vacuum: bool = True) -> dict:
        """Delete the chunks of every fingerprint that is not among the newest
        ``keep`` fingerprints (by its latest history row) of any audit name,
        and of fingerprints with no finished audit whose newest chunk is
        older than ``orphan_age`` seconds.  History rows are never deleted.
        VACUUM afterwards (when something was removed and ``vacuum``).
        Returns what was removed and the size on disk before and after."""
        if keep < 0:
            raise StoreError(f"--keep must be a non-negative integer, got {keep}")
        now = time.time() if now is None else now
        before = size_on_disk(self.path)
        q = self._db.execute
        try:
            latest = q("SELECT name, fingerprint, MAX(created) FROM audits "
                       "WHERE fingerprint IS NOT NULL GROUP BY name, fingerprint").fetchall()
            stored = dict(q("SELECT fingerprint, MAX(created) FROM (SELECT fingerprint, created "
                            "FROM chunks UNION ALL SELECT fingerprint, created FROM derived) "
                            "GROUP BY fingerprint").fetchall())
        except sqlite3.Error as exc:
            raise StoreError(f"store {self.path}: {exc}") from None
        by_name: dict[str, list] = {}
        for name, fp, created in latest:
            by_name.setdefault(name, []).append((created, fp))
        kept, recorded = set(), set()
        for rows in by_name.values():
            rows.sort(reverse=True)
            recorded.update(fp for _, fp in rows)
            kept.update(fp for _, fp in rows[:keep])
        drop = [fp for fp in stored if fp in recorded and fp not in kept]
        stale = [fp for fp in stored if fp not in recorded and now - stored[fp] > orphan_age]
        removed = 0
        try:
            q("BEGIN IMMEDIATE")
            for fp in drop + stale:
                removed += q("DELETE FROM chunks WHERE fingerprint = ?", (fp,)).rowcount
                q("DELETE FROM derived WHERE fingerprint = ?", (fp,))
            q("COMMIT")
            if removed and vacuum:
                q("VACUUM")
                q("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                q("ROLLBACK")
            raise StoreError(f"store {self.path}: {exc}") from None
        return {"keep": keep, "fingerprints_removed": len(drop), "unfinished_removed": len(stale),
                "chunks_removed": removed, "fingerprints_kept": len(stored) - len(drop) - len(stale),
                "bytes_before": before, "bytes_after": size_on_disk(self.path)}

    def integrity(self) -> str:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0]


# -- fingerprints ----------------------------------------------------------

def _json_default(obj):
    if isinstance(obj, np.ndarray):
        return {"ndarray": hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest(),
                "shape": list(obj.shape), "dtype": str(obj.dtype)}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    return repr(obj)


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, default=_json_default, separators=(",", ":"))


_TOOL_PACKAGES = ("audit", "algorithms", "attacks")


def _package_dir(name: str) -> Optional[Path]:
    mod = sys.modules.get(name)
    if mod is None:
        import importlib
        mod = importlib.import_module(name)
    f = getattr(mod, "__file__", None)
    return Path(f).parent if f else None


@lru_cache(maxsize=None)
def _digest_files(files: tuple) -> str:
    h = hashlib.sha256()
    for label, path in files:
        h.update(label.encode() + b"\0")
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            h.update(b"<unreadable>")
        h.update(b"\0")
    return h.hexdigest()


def tool_code_digest() -> str:
    """sha256 over the tool's own sources (the engine, algorithms and attacks):
    the version number alone does not change between commits."""
    files = []
    for pkg in _TOOL_PACKAGES:
        d = _package_dir(pkg)
        if d is None:
            continue
        for p in sorted(d.rglob("*.py")):
            files.append((f"{pkg}/{p.relative_to(d).as_posix()}", str(p)))
    return _digest_files(tuple(files))


def _stdlib_or_site(path: str) -> bool:
    import sysconfig
    roots = {sysconfig.get_path(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {os.path.join(p, "") for p in sys.path if "site-packages" in p}
    path = os.path.abspath(path)
    return any(r and path.startswith(os.path.abspath(r)) for r in roots)


def user_modules(alg) -> list:
    """Modules outside the tool and the Python installation whose code the
    algorithm runs (found through the learner's functions and closures)."""
    found, seen = {}, set()

    def walk(obj, depth):
        if depth > 8 or id(obj) in seen:
            return
        seen.add(id(obj))
        if inspect.isfunction(obj) or inspect.ismethod(obj):
            fn = getattr(obj, "__func__", obj)
            mod = sys.modules.get(fn.__module__ or "")
            if mod is not None:
                found[mod.__name__] = mod
            for cell in fn.__closure__ or ():
                try:
                    walk(cell.cell_contents, depth + 1)
                except ValueError:  # empty cell
                    pass
            for d in fn.__defaults__ or ():
                walk(d, depth + 1)
            if inspect.ismethod(obj):
                walk(obj.__self__, depth + 1)
            return
        if isinstance(obj, (str, bytes, int, float, bool, type(None), np.ndarray, np.generic)):
            return
        if inspect.isclass(obj):        # a class audited as written: its module's code
            mod = sys.modules.get(obj.__module__ or "")
            if mod is not None:
                found[mod.__name__] = mod
            return
        if isinstance(obj, dict):
            for v in list(obj.values())[:64]:
                walk(v, depth + 1)
            return
        if isinstance(obj, (list, tuple)):
            for v in list(obj)[:64]:
                walk(v, depth + 1)
            return
        try:
            import functools
            if isinstance(obj, functools.partial):
                walk(obj.func, depth + 1)
                walk(obj.args, depth + 1)
                walk(obj.keywords, depth + 1)
                return
        except Exception:  # noqa: BLE001
            return
        mod = sys.modules.get(type(obj).__module__ or "")
        if mod is not None:
            found[mod.__name__] = mod
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            for v in list(attrs.values())[:64]:
                walk(v, depth + 1)

    walk(alg.learner, 0)
    walk(alg.rebuild, 0)
    out = []
    for name, mod in sorted(found.items()):
        if name.split(".")[0] in _TOOL_PACKAGES:
            continue
        f = getattr(mod, "__file__", None)
        if not f or not f.endswith(".py") or _stdlib_or_site(f):
            continue
        out.append(mod)
    return out


def code_digest(alg) -> str:
    files = tuple((m.__name__, m.__file__) for m in user_modules(alg))
    return hashlib.sha256((tool_code_digest() + _digest_files(files)).encode()).hexdigest()


def audit_fingerprint(alg, claim, attacks, trials, confidence, seed, modes,
                      witness=None, pairs=None, coupled=None, backend: str = "numpy",
                      stop_early: bool = False) -> str:
    """sha256 of everything that determines an audit's counts: the algorithm
    (name, parameters, T, K, N, the code it runs), the claim it is judged
    against, the attacks (and the pairs kept of them), the budget (trials,
    confidence), the seed, the modes, and the versions of the tool and of
    numpy (the random streams).  Not the number of workers or the scheduler:
    the result does not depend on them."""
    from audit import __version__
    spec = {
        "store_schema": SCHEMA_VERSION,
        "tool_version": __version__,
        "numpy": np.__version__,
        "code": code_digest(alg),
        "algorithm": {"name": alg.name, "params": alg.params, "horizon": alg.horizon,
                      "arms": alg.n_arms, "experts": alg.n_experts},
        "claim": claim.as_dict(),
        "attacks": list(attacks),
        "trials": int(trials),
        "confidence": float(confidence),
        "seed": seed,
        "modes": sorted(modes) if modes else None,
    }
    if witness is not None:   # absent when left to the pairs: older fingerprints still match
        spec["witness"] = bool(witness)
    if coupled:               # absent for independent runs (as before)
        spec["coupled"] = True
    elif coupled is None:     # the default: coupled where they cost no more
        spec["runs"] = "coupled where cheap"
    if stop_early:            # absent where every held-out block is read (as before)
        spec["stop_early"] = True
    if pairs:                 # absent for every pair (as before)
        spec["pairs"] = sorted(set(pairs))
    if backend != "numpy":    # another backend's streams, on its device kind
        from algorithms.backend import device_name, jax_modules
        spec["backend"] = {"name": backend, "device": device_name(),
                           "version": jax_modules()[0].__version__}
    loss_range = tuple(float(v) for v in getattr(alg, "loss_range", (0.0, 1.0)))
    if loss_range != (0.0, 1.0):   # the pairs are built in it; absent on [0, 1] (as before)
        spec["algorithm"]["loss_range"] = list(loss_range)
    return hashlib.sha256(canonical_json(spec).encode()).hexdigest()


def stream_key(tag: str, seed, n: int, chunk: int) -> str:
    """The stream family, run count and chunk size of one ``run_chunks`` call."""
    return canonical_json({"tag": tag, "seed": seed, "n": int(n), "chunk": int(chunk)})


# -- git -------------------------------------------------------------------

def _git(directory: str, *args) -> Optional[str]:
    try:
        r = subprocess.run(["git", "-C", directory, *args], capture_output=True, text=True,
                           timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def git_commit_of(alg) -> tuple[Optional[str], Optional[bool]]:
    """The commit of the audited code: the repository holding a user
    algorithm's module, else the working directory's; (None, None) outside git.
    The flag says whether tracked files differ from that commit."""
    dirs = [os.path.dirname(os.path.abspath(m.__file__)) for m in user_modules(alg)]
    for d in dirs + [os.getcwd()]:
        commit = _git(d, "rev-parse", "HEAD")
        if commit:
            status = _git(d, "status", "--porcelain", "--untracked-files=no")
            return commit, (bool(status) if status is not None else None)
    return None, None
