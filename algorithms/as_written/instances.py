"""A learner already built in the user's module (``agent = DPUCB(5, eps=1)``,
audited as ``mymod:agent``): one fresh copy of it per run.

``copies_of(agent)`` is a class the rest of ``algorithms.as_written``
audits like any other: constructing it returns a deep copy of the object
as the module built it (the copy taken when the audit loads it, so runs
never share state), with every random generator the object holds
(``numpy.random.Generator``, ``RandomState``, ``random.Random``) replaced
by one seeded from the run's seed — otherwise every copy would draw the
same numbers and the runs would be copies of one another.  Draws from
numpy's or Python's global state are captured per run as for any class.

An object whose constructor drew random numbers (its noise drawn in
``__init__``) is refused with one line naming its class: every copy would
hold the same draws (``construction``).

What the object was built with is its own: its number of arms and horizon
are read from its attributes (``n_arms``, ``k``, ``horizon``, …; the
audit's defaults where it has none), and its ε and δ (``epsilon``,
``eps``, ``delta``) are the claim unless the caller gives one.  Flags that
would build it anew (``--epsilon``, ``--arms``, ``--param``) are refused by
the caller with one line naming the class to audit instead.

May import: numpy, ``algorithms.as_written.binding``, ``capture`` and ``construction``.
"""
from __future__ import annotations

import copy
import inspect
from typing import Optional

import numpy as np

from .binding import SPELLINGS, positive_attribute
from .construction import drew_at_construction
from .capture import _ORIGINAL_RANDOM, _ORIGINAL_RANDOMSTATE

HELD_STREAM = 0x0B1EC7
# Attributes copied from the object onto the class of its copies, where
# the audit reads them (its range and any claim it states).
STATED = ("loss_range", "reward_range", "input_range", "relation", "max_change",
          "floating_point", "claim_epsilon", "claim_delta", "claim_source")


def is_instance(obj) -> bool:
    """Whether ``obj`` is an object of a user's class (not a class, a
    function, a module, nor a builtin value)."""
    if inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj):
        return False
    module = getattr(type(obj), "__module__", "") or ""
    return module.partition(".")[0] not in ("builtins", "numpy", "scipy", "functools",
                                            "algorithms", "audit")


def arms_of(obj) -> Optional[tuple]:
    """(where, K): the object's number of arms — an attribute so named
    (``n_arms``, ``k``, …), else the one length that every 1-D numeric
    array it holds shares (``self.sums = np.zeros(n_arms)``), at least 2 —
    or None."""
    named = positive_attribute(obj, SPELLINGS["K"])
    if named is not None and float(named[1]).is_integer():
        return f"{named[0]} = {int(named[1])}", int(named[1])
    lengths = {len(v) for v in vars(obj).values()
               if isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iuf"}
    if len(lengths) == 1 and min(lengths) >= 2:
        return "the length of its arrays", lengths.pop()
    return None


def reseed(obj, seed: int) -> None:
    """Replace every generator ``obj`` holds in an attribute by one seeded
    from ``seed`` (each attribute its own stream)."""
    for k, (name, v) in enumerate(sorted(vars(obj).items())):
        ss = np.random.SeedSequence([HELD_STREAM, int(seed), k])
        # The classes as numpy and Python define them: while runs are made,
        # ``capture`` stands subclasses in for the constructors.
        if isinstance(v, np.random.Generator):
            setattr(obj, name, np.random.Generator(type(v.bit_generator)(ss)))
        elif isinstance(v, _ORIGINAL_RANDOMSTATE):
            setattr(obj, name, _ORIGINAL_RANDOMSTATE(np.random.MT19937(ss)))
        elif isinstance(v, _ORIGINAL_RANDOM):
            fresh = _ORIGINAL_RANDOM.__new__(type(v))
            _ORIGINAL_RANDOM.__init__(fresh, int(ss.generate_state(2, np.uint64)[0]))
            setattr(obj, name, fresh)


def copies_of(obj, where: str):
    """The class whose construction ``cls(seed=…)`` returns a fresh copy of
    ``obj`` re-seeded from the seed (``reseed``); its signature gives the
    object's horizon and arms as defaults (what ``binding`` reads), and it
    carries the object's stated attributes and its ε and δ as the claim."""
    cls = type(obj)
    drew = drew_at_construction(obj)
    if drew is not None:
        raise ValueError(f"{where} drew random numbers while the module built it ({drew}): "
                         f"every copy of it would hold those same draws, so its runs "
                         f"would not be independent runs of the mechanism; audit its class "
                         f"instead ({cls.__module__}:{cls.__qualname__})")
    try:
        template = copy.deepcopy(obj)
    except Exception as exc:  # noqa: BLE001 - the user's object
        raise ValueError(f"{where} is an object that cannot be copied for each run "
                         f"({type(exc).__name__}: {exc}); audit its class instead") from None
    T = positive_attribute(obj, SPELLINGS["T"])
    K = arms_of(obj)

    def __new__(klass, horizon=None, n_arms=None, seed=None):
        fresh = copy.deepcopy(template)
        if seed is not None:
            reseed(fresh, seed)
        return fresh

    def __init__(self, horizon=None, n_arms=None, seed=None):    # not called: a copy is returned
        pass

    params = [inspect.Parameter("seed", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)]
    for slot, found in (("n_arms", K), ("horizon", T)):
        if found is not None:
            params.insert(0, inspect.Parameter(slot, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                               default=int(found[1])))
    sig = inspect.Signature(params)
    body = {"__new__": __new__, "__init__": __init__, "__signature__": sig,
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}
    for a in STATED:
        if hasattr(obj, a):
            body[a] = getattr(obj, a)
    name = where.partition(":")[2] or where
    eps = positive_attribute(obj, ("claim_epsilon",) + SPELLINGS["epsilon"])
    if eps is not None and "claim_epsilon" not in body:
        body["claim_epsilon"] = float(eps[1])
        body["claim_source"] = f"the ε {name} was built with ({name}.{eps[0]} = {eps[1]:g})"
        dlt = positive_attribute(obj, SPELLINGS["delta"])     # none: δ = 0
        if dlt is not None and "claim_delta" not in body:
            body["claim_delta"] = dlt[1]
    said = [f"its arms from {K[0]}" if K else None,
            f"its horizon from {T[0]} = {T[1]:g}" if T else None]
    body["built_note"] = ("one fresh copy per run of the object the module built, the "
                          "generators it holds re-seeded from the run's seed"
                          + "".join(f"; {w}" for w in said if w))
    return type(cls.__name__, (cls,), body)
