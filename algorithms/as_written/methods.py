"""A class whose mechanism is one method over the whole input, audited as
written: ``m(self, a, n_samples)`` as DP testers' benchmarks write their
mechanisms (built once with ε and its parameters, then asked for samples),
or a bound method named by path (``module:instance.m``).

The class becomes a plain mechanism function (``algorithms.as_written.
functions``) with the method's signature: each call builds a fresh object
with the constructor arguments the audit bound (ε, δ, ``--param`` values
the constructor names) and calls the method — so each run's randomness is
its own (numpy's global state and unseeded generators are captured per
call), and the exact replay sees the constructor's generators too.  The
object's attributes (``claim_epsilon``, ``relation``, ``max_change``,
``loss_range``) are the function's.

May import: the standard library, ``algorithms.as_written.binding`` and
``algorithms.as_written.functions``.
"""
from __future__ import annotations

import inspect
from typing import Optional

from .binding import bind, call_args, required_missing
from .functions import RNG_NAMES, SIZE_NAMES, looks_like_mechanism

WHOLE = ("m", "mechanism", "sample", "run", "__call__")
CLAIM_ATTRS = ("claim_epsilon", "claim_delta", "relation", "max_change", "loss_range",
               "reward_range", "input_range")


def _without_self(fn) -> Optional[inspect.Signature]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    return sig.replace(parameters=params[1:]) if params else None


def whole_input_method(cls, named: Optional[str] = None) -> Optional[str]:
    """The method of ``cls`` that is a mechanism over the whole input: the
    one ``named``, else the first of ``WHOLE`` it has, when it reads like
    ``f(x, n_samples)`` or ``f(x, rng)`` — its input first and a size or
    generator parameter (a stream's ``release(value)`` has neither)."""
    for name in ([named] if named else WHOLE):
        fn = getattr(cls, name, None)
        sig = _without_self(fn) if callable(fn) else None
        if sig is None:
            continue

        def stub(*args, **kwargs):
            return None
        stub.__signature__ = sig
        names = set(sig.parameters)
        if looks_like_mechanism(stub) and names & set(SIZE_NAMES + RNG_NAMES):
            return name
    return None


def method_function(cls, name: str, path: str, epsilon, delta, params: dict, claim_epsilon,
                    claim_delta, names: dict):
    """(the function, the parameters left for it, ε and δ for the claim):
    ``cls``'s method ``name`` as a plain function that builds a fresh
    object per call with the constructor's bound arguments."""
    b = bind(cls, seed=True)
    method_sig = _without_self(getattr(cls, name))
    own = [n for n in params if n in b.own and n not in method_sig.parameters]
    ctor_params = {n: params[n] for n in own}
    rest = {n: v for n, v in params.items() if n not in ctor_params}
    values = {}
    eps = epsilon if epsilon is not None else claim_epsilon
    if "epsilon" in b.names:
        if eps is None:
            d = b.default("epsilon")
            if d is inspect.Parameter.empty or d is None:
                flag = names["set"].format(flag=names["epsilon"], value="E")
                raise ValueError(f"{path}: its constructor needs epsilon: pass {flag}")
            eps = d
        values["epsilon"] = eps
    dlt = delta if delta is not None else claim_delta
    if "delta" in b.names:
        if dlt is None:
            d = b.default("delta")
            dlt = 0.0 if d is inspect.Parameter.empty or d is None else d
        values["delta"] = dlt
    missing = [m for m in required_missing(b, ctor_params) if m != b.seed]
    if missing:
        raise ValueError(f"{path}: its constructor needs {missing[0]!r}: pass "
                         f"{names['param'].format(name=missing[0], value='VALUE')}")
    args, kwargs = call_args(b, values, ctor_params)
    if args:
        raise ValueError(f"{path}: positional-only constructor parameters are not supported")

    def mechanism(*a, **kw):
        return getattr(cls(**kwargs), name)(*a, **kw)

    mechanism.__signature__ = method_sig
    mechanism.__name__ = mechanism.__qualname__ = f"{cls.__name__}.{name}"
    mechanism.audited_code = cls        # whose modules' imported sources are routed
    for attr in CLAIM_ATTRS:
        if getattr(cls, attr, None) is not None:
            setattr(mechanism, attr, getattr(cls, attr))
    if getattr(mechanism, "claim_epsilon", None) is None and eps is not None:
        mechanism.claim_epsilon = eps
        mechanism.claim_source = f"the ε {cls.__name__} is built with"
    if getattr(mechanism, "claim_delta", None) is None and dlt is not None:
        mechanism.claim_delta = dlt
    return mechanism, rest


def bound_method_function(method):
    """A bound method named by path (``module:instance.m``) as a plain
    function carrying its object's claim attributes."""
    def mechanism(*a, **kw):
        return method(*a, **kw)
    mechanism.__signature__ = inspect.signature(method)
    mechanism.audited_code = method
    owner = method.__self__
    mechanism.__name__ = mechanism.__qualname__ = (f"{type(owner).__name__}."
                                                   f"{method.__name__}")
    for attr in CLAIM_ATTRS:
        v = getattr(method, attr, None)
        v = getattr(owner, attr, None) if v is None else v
        if v is not None:
            setattr(mechanism, attr, v)
    return mechanism
