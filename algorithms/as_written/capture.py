"""Per-run randomness for code audited as written: numpy's global
functions, Python's ``random`` and unseeded generators, each run seeded
from its own stream.

Code as people write it draws from ``np.random.laplace(...)``,
``random.random()``, or a generator it builds (``np.random.default_rng()``,
``np.random.RandomState()``, ``random.Random()``), seeded or not.  The
tool's runs must nevertheless be reproducible for any number of workers
and independent of one another.  So, while the tool calls into one run's
code, those global sources are routed to that run's own state:

* numpy's module-level functions (``np.random.rand``, ``np.random.seed``,
  every method of the hidden global ``RandomState``) go to a
  ``RandomState`` of the run's own;
* Python's module-level ``random`` functions go to a ``random.Random`` of
  the run's own;
* ``np.random.default_rng()``, ``np.random.RandomState()`` and
  ``random.Random()`` called without a seed are seeded from the run's
  stream (the k-th such call of a run gets the k-th seed), so an object
  that builds an unseeded generator is reproducible too.

Each run's states come from ``SeedSequence([word, kind, k])`` with
``word`` drawn by the tool from the chunk's generator: a run's draws
depend only on its chunk and its place in it.  States are built lazily,
at a run's first draw from that source.  The routing is installed around
each batch of calls (``Streams.active``) and removed after (counted, so
nested and concurrent batches in threads are safe); which run is current
is per thread.  Outside a batch the global sources behave as usual.

A global function or constructor the code's module imported by name
(``from random import choices``, ``from numpy.random import laplace``) is
routed too, in that module (``algorithms.imported_sources``).

Libraries that hold numpy's hidden global state as an object
(``scipy.stats.laplace.rvs()``, ``check_random_state(None)`` in scipy and
scikit-learn) get a stand-in whose draws are the current run's, as
``np.random.laplace`` is.  What the code prints to stdout while it runs is
discarded.

Not captured: a generator built from OS entropy in another way
(``np.random.Generator(np.random.PCG64())``, ``random.SystemRandom``,
``os.urandom``), or a source imported by name in a module the audited code
does not live in.  The audit's reproducibility
check (the same seed twice must give the same outputs) finds such code; it
is audited black-box, its runs made one after another in one process, and
the result says no seed reproduces it.

May import: numpy, the standard library, ``algorithms.imported_sources``
and ``algorithms.user_output``.
"""
from __future__ import annotations

import random as _random
import sys
import threading
from contextlib import contextmanager

import numpy as np

from algorithms import imported_sources, user_output

_LOCAL = threading.local()
LOCAL = _LOCAL      # which run is current: ``LOCAL.run = i`` (the hot loops set it)
_LOCK = threading.Lock()
_INSTALLED = {"count": 0, "saved": None}

_NP_KIND, _PY_KIND, _FRESH_KIND = 1, 2, 3


def _current():
    """(streams, run) of this thread, or (None, -1) outside a batch."""
    return getattr(_LOCAL, "streams", None), getattr(_LOCAL, "run", -1)


class Streams:
    """The random states of ``len(words)`` runs (module docstring) of
    ``code`` (the function or class run), whose modules' imported sources
    are adopted here, in whichever process the runs are made."""

    def __init__(self, words, code=None):
        if code is not None:
            imported_sources.adopt_code(code)
        self.words = [int(w) for w in words]
        self._np: dict = {}
        self._py: dict = {}
        self._fresh: dict = {}

    def seed_sequence(self, run: int, kind: int, k: int = 0) -> np.random.SeedSequence:
        return np.random.SeedSequence([self.words[run], kind, k])

    def numpy_state(self, run: int) -> np.random.RandomState:
        """The run's global numpy state: until the code seeds it, a
        ``RandomState`` on a PCG64 stream of the run's own (building an
        MT19937 costs a millisecond; PCG64 tens of microseconds)."""
        rs = self._np.get(run)
        if rs is None:
            rs = _ORIGINAL_RANDOMSTATE(np.random.PCG64(self.seed_sequence(run, _NP_KIND)))
            self._np[run] = rs
        return rs

    def seed_numpy(self, run: int, seed=None) -> None:
        """``np.random.seed(seed)`` in run ``run``: its state becomes what
        that call gives in a plain process (MT19937, legacy seeding); no
        seed: one from the run's stream."""
        if seed is None:
            seed = np.random.MT19937(self.fresh(run))
        self._np[run] = _ORIGINAL_RANDOMSTATE(seed)

    def python_state(self, run: int) -> _random.Random:
        r = self._py.get(run)
        if r is None:
            seed = int(self.seed_sequence(run, _PY_KIND).generate_state(2, np.uint64)[0])
            r = _ORIGINAL_RANDOM(seed)
            self._py[run] = r
        return r

    def fresh(self, run: int) -> np.random.SeedSequence:
        """The next seed of this run for a generator built without one."""
        k = self._fresh.get(run, 0)
        self._fresh[run] = k + 1
        return self.seed_sequence(run, _FRESH_KIND, k)

    @contextmanager
    def active(self):
        """Route the global sources to this object's runs for the calls made
        inside; ``set_run(i)`` (yielded) makes run i current."""
        install()
        old = _current() + (getattr(_LOCAL, "np_states", None),
                            getattr(_LOCAL, "py_states", None))
        # the routers read a run's states straight from these (their hot path)
        _LOCAL.streams, _LOCAL.np_states, _LOCAL.py_states = self, self._np, self._py
        try:
            yield _set_run
        finally:
            _LOCAL.streams, _LOCAL.run, _LOCAL.np_states, _LOCAL.py_states = old
            uninstall()


def _set_run(i: int) -> None:
    _LOCAL.run = i


# --------------------------------------------------------------- routing
_ORIGINAL_RANDOM = _random.Random
_ORIGINAL_RANDOMSTATE = np.random.RandomState
_ORIGINAL_DEFAULT_RNG = np.random.default_rng


def _state_of(local, kind: str):
    """The current run's numpy or Python state where it exists, else None."""
    try:
        return getattr(local, kind)[local.run]
    except (AttributeError, KeyError, TypeError):
        return None


def _numpy_router(name, original):
    method = getattr(_ORIGINAL_RANDOMSTATE, name, None) if name != "seed" else None

    def routed(*args, **kwargs):
        if method is not None:
            # a run whose state exists: one lookup (millions of calls)
            state = _state_of(_LOCAL, "np_states")
            if state is not None:
                return method(state, *args, **kwargs)
        streams, run = _current()
        if streams is None or run < 0:
            return original(*args, **kwargs)
        if name == "seed":
            return streams.seed_numpy(run, *args, **kwargs)
        return getattr(streams.numpy_state(run), name)(*args, **kwargs)
    routed.__name__ = name
    routed.__doc__ = original.__doc__
    return routed


def _python_router(name, original):
    method = getattr(_ORIGINAL_RANDOM, name, None)

    def routed(*args, **kwargs):
        if method is not None:
            state = _state_of(_LOCAL, "py_states")
            if state is not None:
                return method(state, *args, **kwargs)
        streams, run = _current()
        if streams is None or run < 0:
            return original(*args, **kwargs)
        return getattr(streams.python_state(run), name)(*args, **kwargs)
    routed.__name__ = name
    routed.__doc__ = original.__doc__
    return routed


def _default_rng(seed=None):
    streams, run = _current()
    if seed is None and streams is not None and run >= 0:
        seed = streams.fresh(run)
    return _ORIGINAL_DEFAULT_RNG(seed)


class _RandomState(_ORIGINAL_RANDOMSTATE):
    """``np.random.RandomState()`` without a seed, seeded from the run."""

    def __init__(self, seed=None):
        streams, run = _current()
        if seed is None and streams is not None and run >= 0:
            seed = np.random.MT19937(streams.fresh(run))
        super().__init__(seed)


class _Random(_ORIGINAL_RANDOM):
    """``random.Random()`` without a seed, seeded from the run."""

    def __init__(self, x=None):
        streams, run = _current()
        if x is None and streams is not None and run >= 0:
            x = int(streams.fresh(run).generate_state(2, np.uint64)[0])
        super().__init__(x)


class _HiddenState(_ORIGINAL_RANDOMSTATE):
    """Stands in for numpy's hidden global ``RandomState`` where libraries
    hold it as an object: ``scipy.stats.laplace.rvs()`` draws from the
    one each distribution took at import, ``check_random_state(None)``
    (scikit-learn, scipy) returns ``np.random.mtrand._rand``.  Every
    attribute is the current run's state's (outside a batch, the real
    one's), so those draws are the run's own as ``np.random.laplace`` is."""

    def __getattribute__(self, name):
        if name.startswith("__"):
            return object.__getattribute__(self, name)
        streams, run = _current()
        if streams is None or run < 0:
            return getattr(_HIDDEN_NP, name)
        return getattr(streams.numpy_state(run), name)


_HIDDEN_NP = np.random.mtrand._rand
_HIDDEN_PROXY: list = []


def _library_holders() -> list:
    """(object, attribute) where a loaded library holds the hidden state:
    ``np.random.mtrand._rand`` itself, and each ``scipy.stats``
    distribution's ``_random_state`` (taken at import)."""
    out = [(np.random.mtrand, "_rand")]
    stats = sys.modules.get("scipy.stats")
    if stats is not None:
        out += [(obj, "_random_state") for obj in list(vars(stats).values())
                if not isinstance(obj, type)
                and getattr(obj, "__dict__", {}).get("_random_state") is _HIDDEN_NP]
    return out


def _targets() -> list:
    """(module, name, replacement) for every global source routed."""
    out = []
    if not _HIDDEN_PROXY:
        _HIDDEN_PROXY.append(_HiddenState())
    out += [(holder, name, _HIDDEN_PROXY[0]) for holder, name in _library_holders()]
    for name in dir(np.random):
        fn = getattr(np.random, name)
        if getattr(fn, "__self__", None) is _HIDDEN_NP:
            out.append((np.random, name, _numpy_router(name, fn)))
    # Module functions of numpy.random that act on the hidden state too.
    for name, method in (("seed", "seed"), ("ranf", "random_sample"),
                         ("sample", "random_sample")):
        out.append((np.random, name, _numpy_router(method, getattr(np.random, name))))
    hidden_py = _random._inst
    for name in dir(_random):
        fn = getattr(_random, name)
        if getattr(fn, "__self__", None) is hidden_py:
            out.append((_random, name, _python_router(name, fn)))
    out += [(np.random, "default_rng", _default_rng), (np.random, "RandomState", _RandomState),
            (_random, "Random", _Random)]
    # The same sources under the names the code's modules imported them by.
    by_source = {(m, n): r for m, n, r in out}
    out += [(mod, name, by_source[(smod, sname)])
            for mod, name, smod, sname in imported_sources.imported()
            if (smod, sname) in by_source]
    return out


_TARGETS: list = []
_TARGETS_VERSION = [-1]


def install() -> None:
    """Route the global sources (counted: the first call installs)."""
    with _LOCK:
        if _INSTALLED["count"] == 0:
            version = (imported_sources.version(), "scipy.stats" in sys.modules)
            if _TARGETS_VERSION[0] != version:
                _TARGETS[:] = _targets()
                _TARGETS_VERSION[0] = version
            _INSTALLED["saved"] = [(m, n, getattr(m, n)) for m, n, _ in _TARGETS]
            for module, name, replacement in _TARGETS:
                setattr(module, name, replacement)
        _INSTALLED["count"] += 1
    # What the code prints is not the audit's to show (``user_output``).
    user_output.hold()


def uninstall() -> None:
    """Undo ``install`` (the last call restores the originals)."""
    with _LOCK:
        _INSTALLED["count"] -= 1
        if _INSTALLED["count"] == 0:
            for module, name, original in _INSTALLED["saved"]:
                setattr(module, name, original)
            _INSTALLED["saved"] = None
    user_output.release()
