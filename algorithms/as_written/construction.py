"""Which objects drew random numbers while the user's module built them.

A learner built in the module (``agent = PreDrawETC()``) is audited one
fresh copy per run (``instances.copies_of``).  If its constructor already
drew its noise (``self.noise = rng.laplace(…)`` in ``__init__``), every
copy holds those same draws: the runs are not independent runs of the
mechanism but of one fixed outcome of its noise, and comparing two inputs
on them can show any ε — a false violation.  Two ways to see it:

* a generator the object holds (``self.rng``, also in its lists and
  dicts) that has drawn: a numpy ``Generator`` or ``RandomState`` keeps the
  ``SeedSequence`` it was built from, and its state differs from the state
  that sequence builds (``advanced``);
* while the audit imports a user's module, a profile hook
  (``sys.setprofile``, this thread only) keeps the stack of ``__init__``
  calls under way and marks the objects being initialised when one of
  them draws from numpy's global generator (its state differs between the
  call of a user's ``__init__`` and its return, other than by seeding it) or from Python's
  ``random`` (a call of its methods other than seeding and state ones).

A generator seeded the legacy way (``RandomState(5)``) keeps no sequence,
and only the first import of a module is watched; draws from a generator
the object does not hold (a module-level one) made outside the hook's
view are not attributed.

May import: numpy, the standard library.
"""
from __future__ import annotations

import random
import sys
from contextlib import contextmanager

import numpy as np

_SOURCES = (np.random.Generator, np.random.RandomState, random.Random)
_RANDOM_FILE = random.__file__
# Methods of a generator that draw nothing.
NOT_DRAWS = frozenset({"spawn", "seed", "getstate", "setstate", "get_state", "set_state",
                       "__reduce__", "__getstate__", "__setstate__", "__deepcopy__",
                       "__copy__", "jumped", "__init__", "__init_subclass__", "__new__"})
SEEDED_AT = 624         # MT19937's position right after seeding, before any draw
_LIBRARY = tuple(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix}))
# id(object) -> (the object, kept so its id is not reused; "Class.__init__")
_DREW: dict = {}


def advanced(gen) -> bool:
    """Whether a numpy generator has drawn since it was built from its
    seed sequence (False where it keeps none: not known)."""
    bg = gen.bit_generator if isinstance(gen, np.random.Generator) else \
        getattr(gen, "_bit_generator", None)
    seq = getattr(bg, "seed_seq", None)
    if seq is None:
        return False
    try:
        # states compared by their repr, as ``replay.tracer.generator_states`` does
        return repr(type(bg)(seq).state) != repr(bg.state)
    except Exception:  # noqa: BLE001 - a bit generator built some other way: not known
        return False


def _global_token():
    _, keys, pos, *_ = np.random.get_state()
    return pos, keys.tobytes()


def _users(code) -> bool:
    """Code outside the interpreter's and its packages' folders."""
    f = code.co_filename
    return not (f.startswith(_LIBRARY) or f.startswith("<"))


@contextmanager
def watching():
    """Mark the objects whose ``__init__`` drew random numbers while the
    body runs (module docstring)."""
    stack: list = []

    def mark():
        for _, obj, _ in stack:
            if obj is not None and id(obj) not in _DREW:
                _DREW[id(obj)] = (obj, f"{type(obj).__qualname__}.__init__")

    def hook(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_name == "__init__" and code.co_argcount:
                stack.append((frame, frame.f_locals.get(code.co_varnames[0]),
                              _global_token() if _users(code) else None))
            elif stack and code.co_filename == _RANDOM_FILE and code.co_name not in NOT_DRAWS \
                    and not isinstance(frame.f_locals.get("self"), random.SystemRandom):
                mark()          # (OS entropy seeding a generator, as numpy's SeedSequence does, is no draw)
        elif event == "return":
            if stack and stack[-1][0] is frame:
                now = _global_token() if stack[-1][2] is not None else None
                # numpy's global generator drew inside this __init__ (seeding
                # alone leaves its position at the key's end: no draw)
                if now is not None and now != stack[-1][2] and now[0] != SEEDED_AT:
                    mark()
                stack.pop()
        elif event == "c_call" and stack:
            if isinstance(getattr(arg, "__self__", None), _SOURCES) and \
                    getattr(arg, "__name__", "") not in NOT_DRAWS:
                mark()

    if sys.getprofile() is not None:
        # a profiler is running (cProfile's is no Python function to chain
        # or to restore with ``sys.setprofile``): the held generators are
        # still checked
        yield
        return
    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(None)


def drew_at_construction(obj) -> str | None:
    """What drew random numbers before the audit: ``obj``'s constructor, or
    that of an object among its attributes (and their lists, tuples and
    dicts), or a generator it holds there; None where nothing was seen to."""
    seen = _DREW.get(id(obj))
    if seen is not None and seen[0] is obj:
        return f"{seen[1]} drew them"
    held = []
    for name, v in sorted(getattr(obj, "__dict__", {}).items()):
        items = list(v.values()) if isinstance(v, dict) else \
            list(v) if isinstance(v, (list, tuple)) else [v]
        held += [(name, x) for x in items]
    for name, v in held:
        seen = _DREW.get(id(v))
        if seen is not None and seen[0] is v:
            return f"{seen[1]} drew them"
        if isinstance(v, (np.random.Generator, np.random.RandomState)) and advanced(v):
            return f"its generator .{name} had drawn from its seed"
    return None
