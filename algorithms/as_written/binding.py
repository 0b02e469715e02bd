"""Passing the tool's sizes and privacy parameters to a user's callable by
the names it declares.

A factory, a class's constructor or a mechanism function is called with
what it asks for: the horizon, the number of arms (or experts, or the
dimension), ε, δ and, for code as written, a seed, under any of the
documented spellings (``SPELLINGS``), plus the user's ``--param`` values.
Nothing is passed by position unless the callable names none of these
(the old ``make(T, K, N, epsilon, delta, **params)`` form, still accepted
with other names for its first five parameters).

May import: the standard library only.
"""
from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass, field
from typing import Optional

# The tool's slots and the parameter names that receive them, first match
# wins (so a factory taking both ``horizon`` and ``T`` gets the horizon as
# ``horizon`` and keeps ``T`` as a parameter of its own).
SPELLINGS = {
    "T": ("horizon", "T", "n_rounds", "num_rounds", "rounds", "time_horizon", "n_steps",
          "num_steps"),
    "K": ("n_arms", "K", "k", "num_arms", "arms", "nb_arms", "n_actions", "num_actions",
          "dimension", "dim", "d"),
    "N": ("n_experts", "N", "num_experts", "experts"),
    "epsilon": ("epsilon", "eps", "privacy_epsilon"),
    "delta": ("delta", "privacy_delta"),
}
SEED_SPELLINGS = ("seed", "random_state", "rng", "random_seed", "generator")
# Seed parameters that receive a numpy Generator rather than an integer.
GENERATOR_NAMES = ("rng", "generator")
SLOTS = ("T", "K", "N", "epsilon", "delta")

# How each input is named in a message, by where it came from: the command
# line, a suite entry (audit.toml) or a Python call (assert_private).
NAMING = {
    "cli": {"T": "--horizon", "K": "--arms", "N": "--experts", "epsilon": "--epsilon",
            "delta": "--delta", "claim_epsilon": "--claim-epsilon",
            "claim_delta": "--claim-delta", "set": "{flag} {value}",
            "param": "--param {name}={value}", "param_name": "--param {name}",
            "methods": "--methods", "feedback": "--feedback", "input_range": "--input-range",
            "environment": "--environment", "relation": "--relation",
            "max_change": "--max-change"},
    # `audit regret` has no claim flags.
    "cli-regret": {"T": "--horizon", "K": "--arms", "N": "--experts", "epsilon": "--epsilon",
                   "delta": "--delta", "claim_epsilon": None, "claim_delta": None,
                   "set": "{flag} {value}", "param": "--param {name}={value}",
                   "param_name": "--param {name}", "methods": "--methods",
                   "feedback": "--feedback", "input_range": "--input-range",
                   "environment": "--environment", "relation": "--relation",
                   "max_change": "--max-change"},
    "suite": {"T": "horizon", "K": "arms", "N": "experts", "epsilon": "epsilon",
              "delta": "delta", "claim_epsilon": "claim_epsilon", "claim_delta": "claim_delta",
              "set": "{flag} = {value}", "param": "params.{name} = {value!r}",
              "param_name": "params.{name}", "methods": "methods", "feedback": "feedback",
              "input_range": "input_range",
              "environment": "environment", "relation": "relation", "max_change": "max_change"},
    "python": {"T": "horizon", "K": "arms", "N": "experts", "epsilon": "epsilon",
               "delta": "delta", "claim_epsilon": "claim_epsilon", "claim_delta": "claim_delta",
               "set": "{flag}={value}", "param": "{name}={value!r}", "param_name": "{name}",
               "methods": "methods", "feedback": "feedback", "input_range": "input_range",
               "environment": "environment", "relation": "relation", "max_change": "max_change"},
}


@dataclass
class Binding:
    """Which parameter of a callable receives each slot: ``names[slot]``
    (absent: the callable does not take it), ``positional`` (the old form:
    the first five parameters are T, K, N, epsilon, delta whatever their
    names), the seed parameter and its kind, the parameters left for
    ``--param`` (``own``), and whether it takes ``**kwargs``."""

    names: dict = field(default_factory=dict)
    positional: bool = False
    seed: Optional[str] = None
    own: list = field(default_factory=list)
    takes_any: bool = False
    params: dict = field(default_factory=dict)      # name -> inspect.Parameter

    def takes(self, slot: str) -> bool:
        return self.positional or slot in self.names

    def default(self, slot: str):
        """The callable's own default for a slot (``inspect.Parameter.empty``
        when it has none or does not take it)."""
        p = self.params.get(self.names.get(slot, ""))
        return p.default if p is not None else inspect.Parameter.empty

    @property
    def seed_is_generator(self) -> bool:
        return self.seed in GENERATOR_NAMES


COUNTS = ("T", "K", "N")


def _may_count(p: inspect.Parameter) -> bool:
    """Whether a parameter spelled like a horizon or a count may be one: not
    where its default or annotation says it is a fraction (a sparse
    vector's threshold ``T=0.5``, ``T: float``) — then it is the code's own
    parameter, at its default or set with ``--param``."""
    d = p.default
    if isinstance(d, bool) or isinstance(d, (float, str)) and not (
            isinstance(d, float) and d.is_integer() and d >= 1):
        return False
    ann = p.annotation
    return not (ann is float or ann == "float")


def signature_of(fn) -> Optional[inspect.Signature]:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):      # some builtins have none
        return None


def bind(fn, seed: bool = False, skip: tuple = ()) -> Binding:
    """How ``fn`` receives the slots (``Binding``).  ``seed``: also look for
    a seed parameter (code as written).  ``skip``: parameters the caller
    fills itself (a mechanism's input).  Raises ``ValueError`` for a
    callable without a signature that cannot take them by position."""
    sig = signature_of(fn)
    kinds = inspect.Parameter
    if sig is None:
        return Binding(positional=True, takes_any=True)
    params = {n: p for n, p in sig.parameters.items()
              if n not in skip and p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD)}
    takes_any = any(p.kind == kinds.VAR_KEYWORD for p in sig.parameters.values())
    names = {}
    for slot, spellings in SPELLINGS.items():
        for s in spellings:
            if s in params and s not in names.values() and \
                    (slot not in COUNTS or _may_count(params[s])):
                names[slot] = s
                break
    seed_name = next((s for s in SEED_SPELLINGS if s in params), None) if seed else None
    positional = [p for p in params.values()
                  if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    if not names and not seed and len(positional) >= len(SLOTS):
        # The old form with its own names: the first five by position.
        b = Binding(positional=True, takes_any=takes_any, params=params)
        b.names = {slot: p.name for slot, p in zip(SLOTS, positional)}
        b.own = [p.name for p in params.values() if p.name not in b.names.values()]
        return b
    if not names and not seed and any(p.kind == kinds.VAR_POSITIONAL
                                      for p in sig.parameters.values()):
        return Binding(positional=True, takes_any=True, params=params)
    used = set(names.values()) | ({seed_name} if seed_name else set())
    own = [n for n in params if n not in used]
    return Binding(names=names, seed=seed_name, own=own, takes_any=takes_any, params=params)


def required_missing(b: Binding, given: dict) -> list[str]:
    """Parameters without a default that neither a slot, the seed nor
    ``given`` fills."""
    kinds = inspect.Parameter
    filled = set(b.names.values()) | set(given) | ({b.seed} if b.seed else set())
    return [n for n, p in b.params.items() if p.default is kinds.empty and n not in filled
            and p.kind != kinds.VAR_KEYWORD]


def call_args(b: Binding, values: dict, extra: dict) -> tuple[list, dict]:
    """(args, kwargs) calling the bound callable with ``values`` (slot →
    value, only the slots to pass) and ``extra`` (parameter name → value:
    ``--param`` values and the seed).  Positional-only parameters are passed
    by position in their order, everything else by keyword."""
    kinds = inspect.Parameter
    if b.positional and not b.params:        # no signature, or *args: the documented order
        return [values.get(s) for s in SLOTS], dict(extra)
    by_name = {b.names[s]: v for s, v in values.items() if s in b.names}
    by_name.update(extra)
    args, kwargs = [], {}
    for name, p in b.params.items():
        if name not in by_name:
            if p.kind == kinds.POSITIONAL_ONLY and p.default is kinds.empty:
                break
            continue
        if p.kind == kinds.POSITIONAL_ONLY:
            args.append(by_name.pop(name))
    kwargs.update(by_name)
    return args, kwargs


def positive_attribute(obj, names) -> Optional[tuple]:
    """(name, value) of the first of ``names`` that ``obj`` holds as a
    finite positive number (not a truth value; numpy's numbers too), else
    None: an object's ``epsilon``, ``sensitivity``, ``horizon``."""
    for n in names:
        v = getattr(obj, n, None)
        if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) \
                and v > 0:
            return n, float(v)
    return None
