"""Random sources a user's module imported by name: ``from random import
choices``, ``from numpy.random import laplace, default_rng``.

Such a name is bound in the user's module to the very object numpy's or
Python's module holds (a bound method of the hidden global state, or a
constructor), so patching ``np.random.laplace`` while the code runs does not
reach it.  The modules of the code an audit runs are *adopted* here: each of
their names bound to a source of ``numpy.random`` or ``random`` is recorded
with the source it stands for, so that whoever routes a source
(``algorithms.as_written.capture``: each run its own state;
``algorithms.replay.tracer``: the replay's generator) routes that name too.

Sources are recognised by identity against the objects the two modules held
when this module was first imported (before any routing is installed).

May import: numpy and the standard library.
"""
from __future__ import annotations

import random as _random
import sys
import threading

import numpy as np

_LOCK = threading.Lock()
# id -> (module, name, the object): the object is held, so its id stays its
# own; matching does not read the modules, which may be routed right now.
_SOURCES = {id(getattr(mod, n)): (mod, n, getattr(mod, n))
            for mod in (np.random, _random) for n in dir(mod)
            if not n.startswith("_") and callable(getattr(mod, n))}
_ADOPTED: dict = {}     # module name -> [(name, source module, source name)]
_VERSION = [0]


def adopt(module) -> int:
    """Record ``module``'s names bound to a random source (once per module);
    the number of such names."""
    if module is None or module.__name__ in ("numpy.random", "random"):
        return 0
    known = _ADOPTED.get(module.__name__)
    if known is not None:
        return len(known)
    with _LOCK:
        if module.__name__ in _ADOPTED:
            return len(_ADOPTED[module.__name__])
        found = []
        for name, value in list(vars(module).items()):
            src = _SOURCES.get(id(value))
            if src is not None and src[2] is value and not name.startswith("__"):
                found.append((name, src[0], src[1]))
        _ADOPTED[module.__name__] = found
        if found:
            _VERSION[0] += 1
        return len(found)


def adopt_code(obj) -> int:
    """Adopt the modules ``obj``'s code lives in: a function's globals, a
    class's module and its bases' (outside the standard library and numpy).
    A wrapper the tool built around the code names it in ``audited_code``.
    Called wherever runs of the code are made (``capture.Streams``), so a
    worker process that never built the algorithm adopts them too; once a
    module is adopted this is a dictionary lookup."""
    while getattr(obj, "audited_code", None) is not None:
        obj = obj.audited_code
    mods = []
    if isinstance(obj, type):
        mods = [sys.modules.get(c.__module__) for c in obj.__mro__]
    else:
        fn = getattr(obj, "__func__", obj)
        g = getattr(fn, "__globals__", None)
        mods = [sys.modules.get(g.get("__name__"))] if isinstance(g, dict) else []
        mods.append(sys.modules.get(getattr(fn, "__module__", None) or ""))
    return sum(adopt(m) for m in mods if m is not None
               and not m.__name__.startswith(("numpy", "builtins")))


def imported() -> list:
    """(module, name, source module, source name) of every adopted name."""
    with _LOCK:
        return [(sys.modules[m], n, smod, sname) for m, names in _ADOPTED.items()
                if m in sys.modules for n, smod, sname in names]


def version() -> int:
    """Changes whenever a newly adopted module had such names."""
    return _VERSION[0]
