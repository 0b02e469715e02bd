"""Registered algorithms, and loading and building a user's own given as
``package.module:attribute`` (an ``Algorithm`` or a factory)."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional

from .agarwal_singh import ENTRIES as AGARWAL_SINGH
from .core import Algorithm
from .dp_testers import ENTRIES as DP_TESTERS
from .entry import Entry
from .private_bandits import catalog as arat
from .private_bandits import mutants
from .projection_free import ENTRIES as PROJECTION_FREE
from .tracking_experts import ENTRIES as TRACKING_EXPERTS

REGISTRY: dict[str, Entry] = {e.name: e for e in [
    Entry("exp3", arat.make_exp3, "EXP3 with mixing (Alg 3); no proof, App. G.1 counterexample",
          horizon=100_000, epsilon=None),
    Entry("private-exp3", arat.make_private_exp3, "Alg 1 around EXP3 (Cor E.1)"),
    Entry("private-ftpl", arat.make_private_ftpl, "Alg 1 around FTPL + geometric resampling (Cor E.3)"),
    Entry("private-htinf", arat.make_private_htinf, "Alg 1 around HTINF, alpha=2 (Cor 3.2)"),
    Entry("private-experts", arat.make_private_experts,
          "Alg 5 around Alg 1 around HTINF (Thm 4.2 / Cor 4.3)", experts=4),
    Entry("ldp-exp4", arat.make_ldp_exp4, "Local-DP EXP4 (Alg 6, Thm 4.4)", experts=4),
    # T = 10^4: below T ≈ 7 400 Theorem 4.5's γ caps at 1 and the actions are uniform.
    Entry("private-batched-exp4", arat.make_private_batched_exp4,
          "Private batched EXP4 (Alg 2, Thm 4.5)", horizon=10_000, experts=4, delta=1e-6),
    Entry("mutant-batch-sum", mutants.make_mutant_batch_sum,
          "BROKEN Alg 1 around EXP3: batch sum instead of mean (true eps = tau*eps)", epsilon=0.25),
    Entry("mutant-noise-tau", mutants.make_mutant_noise_tau,
          "BROKEN Alg 1 around FTPL: noise 1/(tau^2 eps) (true eps = tau*eps)", epsilon=0.25),
    Entry("mutant-overlap", mutants.make_mutant_overlap,
          "BROKEN Alg 5 around Alg 1 with overlapping batches (true eps = 2 eps)",
          experts=4, epsilon=0.25),
    Entry("mutant-ldp-after", mutants.make_mutant_ldp_after,
          "BROKEN Alg 6: noise after importance weighting (true eps = eps*K/gamma)", experts=4),
    Entry("mutant-exp4-noise", mutants.make_mutant_exp4_noise,
          "BROKEN Alg 2: noise scale missing K/gamma", experts=4, delta=1e-6),
    *AGARWAL_SINGH, *TRACKING_EXPERTS, *PROJECTION_FREE, *DP_TESTERS,
]}


def load_user_object(path: str):
    """Import ``package.module:attribute``; errors say what went wrong in one line."""
    module_name, _, attr = path.partition(":")
    if ":" not in path:  # not an import path: a misspelt registered name?
        from .suggest import unknown_algorithm
        raise ValueError(unknown_algorithm(path, REGISTRY))
    if not module_name or not attr:
        raise ValueError(f"algorithm {path!r}: expected a registered name "
                         f"({', '.join(REGISTRY)}) or package.module:attribute")
    # Like `python -m`, look in the working directory first: a user audits
    # their own module from their project folder.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is bad input
        raise ValueError(f"algorithm {path!r}: cannot import module {module_name!r} "
                         f"({type(exc).__name__}: {exc})") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ValueError(f"algorithm {path!r}: module {module_name!r} has no attribute "
                         f"{attr!r}") from None


# How each input is named in a message, by where it came from: the command
# line, a suite entry (audit.toml) or a Python call (assert_private).
NAMING = {
    "cli": {"T": "--horizon", "K": "--arms", "N": "--experts", "epsilon": "--epsilon",
            "delta": "--delta", "claim_epsilon": "--claim-epsilon",
            "claim_delta": "--claim-delta", "set": "{flag} {value}",
            "param": "--param {name}={value}", "param_name": "--param {name}"},
    # `audit regret` has no claim flags.
    "cli-regret": {"T": "--horizon", "K": "--arms", "N": "--experts", "epsilon": "--epsilon",
                   "delta": "--delta", "claim_epsilon": None, "claim_delta": None,
                   "set": "{flag} {value}", "param": "--param {name}={value}",
                   "param_name": "--param {name}"},
    "suite": {"T": "horizon", "K": "arms", "N": "experts", "epsilon": "epsilon",
              "delta": "delta", "claim_epsilon": "claim_epsilon", "claim_delta": "claim_delta",
              "set": "{flag} = {value}", "param": "params.{name} = {value!r}",
              "param_name": "params.{name}"},
    "python": {"T": "horizon", "K": "arms", "N": "experts", "epsilon": "epsilon",
               "delta": "delta", "claim_epsilon": "claim_epsilon", "claim_delta": "claim_delta",
               "set": "{flag}={value}", "param": "{name}={value!r}", "param_name": "{name}"},
}
SLOTS = ("T", "K", "N", "epsilon", "delta")


def build(name: str, horizon=None, arms=None, experts=None, epsilon=None, delta=None,
          params: Optional[dict] = None, claim_epsilon=None, claim_delta=None,
          naming: str = "cli") -> Algorithm:
    """Build a registered algorithm, or a user's ``package.module:attribute``:
    either an ``Algorithm`` or a factory ``f(T, K, N, epsilon, delta,
    **params)``.

    A user factory gets ε = ``epsilon``, else ``claim_epsilon``; with neither,
    its own default for that parameter applies, and without one it is an
    error.  δ likewise (``delta``, else ``claim_delta``, else its default,
    else 0).  ``params`` must be parameters it names, or, for a factory taking
    ``**params``, ones it reports in ``Algorithm.params``.  Its exceptions
    become ``UserCodeError`` (function = the attribute's name).  ``naming``
    ("cli", "cli-regret", "suite", "python") words the messages after the
    caller's flags or keys."""
    params = dict(params or {})
    names = NAMING[naming]
    entry = REGISTRY.get(name)
    if entry is None:
        obj = load_user_object(name)
        if isinstance(obj, Algorithm):
            return obj
        if not callable(obj):
            raise ValueError(f"algorithm {name!r} is neither an Algorithm nor a factory "
                             "returning one")
        return _build_user(name, obj, horizon, arms, experts,
                           epsilon if epsilon is not None else claim_epsilon,
                           delta if delta is not None else claim_delta, params, names)
    kwargs = {"T": entry.horizon if horizon is None else horizon,
              "K": entry.arms if arms is None else arms}
    if entry.experts is not None:
        kwargs["N"] = entry.experts if experts is None else experts
    elif experts is not None:
        raise ValueError(f"{names['N']} does not apply to {name} (it takes no expert advice)")
    if epsilon is not None or entry.epsilon is not None:
        kwargs["epsilon"] = entry.epsilon if epsilon is None else epsilon
    if delta is not None or entry.delta:
        kwargs["delta"] = entry.delta if delta is None else delta
    try:
        return entry.factory(**kwargs, **params)
    except TypeError as exc:
        import inspect
        allowed = [p for p in inspect.signature(entry.factory).parameters
                   if p not in SLOTS]
        bad = [p for p in params if p not in allowed]
        if bad:
            raise ValueError(f"unknown parameter {bad[0]!r} for {name}; allowed: "
                             f"{', '.join(allowed)}") from None
        _blame_word_param(exc, params, names)
        raise
    except ValueError as exc:
        _blame_word_param(exc, params, names)
        raise


def _blame_word_param(exc: Exception, params: dict, names: dict) -> None:
    """A factory rejected its arguments: if a word-valued parameter (``--param
    tau=abc``) is the cause, raise a ``ValueError`` that names it."""
    words = {k: v for k, v in params.items() if isinstance(v, str)}
    if not words:
        return
    msg = str(exc)
    culprit = next((k for k, v in words.items() if k in msg or v in msg), None)
    if culprit is None and isinstance(exc, TypeError) and len(words) == 1:
        culprit = next(iter(words))
    if culprit is not None:
        label = names["param"].format(name=culprit, value=words[culprit])
        raise ValueError(f"{label}: {type(exc).__name__}: {msg}" if isinstance(exc, TypeError)
                         else f"{label}: {msg}") from None


def _build_user(name, factory, horizon, arms, experts, epsilon, delta, params,
                names) -> Algorithm:
    import inspect
    from .errors import UserCodeError, user_call
    attr = name.partition(":")[2]
    values = [horizon or 1000, arms or 2, experts, epsilon, delta]
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # some callables have none: call as documented
        sig = None
    kinds = inspect.Parameter
    if sig is None or any(p.kind == kinds.VAR_POSITIONAL for p in sig.parameters.values()):
        args, kwargs = values[:4] + [0.0 if delta is None else delta], {}
        named, takes_any = [], True
    else:
        positional = [p for p in sig.parameters.values()
                      if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
        if len(positional) < len(SLOTS):
            raise ValueError(f"algorithm {name!r}: a factory must take (T, K, N, epsilon, delta, "
                             f"**params); {attr}{sig} does not")
        slots = positional[:len(SLOTS)]
        named = [p.name for p in positional[len(SLOTS):]] + [
            p.name for p in sig.parameters.values() if p.kind == kinds.KEYWORD_ONLY]
        takes_any = any(p.kind == kinds.VAR_KEYWORD for p in sig.parameters.values())
        slot_of = {p.name: s for p, s in zip(slots, SLOTS)} | {s: s for s in SLOTS}
        for k in params:
            if k in slot_of:
                raise ValueError(f"{names['param_name'].format(name=k)}: {k} is set with "
                                 f"{names[slot_of[k]]}, not as a parameter")
            if not takes_any and k not in named:
                raise ValueError(f"{names['param_name'].format(name=k)}: {name} does not "
                                 f"accept it (its parameters: {', '.join(named) or 'none'})")
        if values[3] is None:
            if slots[3].default is inspect.Parameter.empty:
                claim = names["claim_epsilon"]
                raise ValueError(
                    f"{name}: its factory needs epsilon: pass "
                    f"{names['set'].format(flag=names['epsilon'], value='E')} (the ε it is "
                    f"built with)" + (f" or {names['set'].format(flag=claim, value='E')}"
                                      if claim else ""))
            values[3] = slots[3].default
        if values[4] is None:
            values[4] = 0.0 if slots[4].default is inspect.Parameter.empty else slots[4].default
        # By keyword where the signature allows, so the names are its own.
        args = [v for p, v in zip(slots, values) if p.kind == kinds.POSITIONAL_ONLY]
        kwargs = {p.name: v for p, v in zip(slots, values) if p.kind != kinds.POSITIONAL_ONLY}
    try:
        with user_call(attr):
            alg = factory(*args, **kwargs, **params)
    except UserCodeError as exc:
        if isinstance(exc.__cause__, (ValueError, TypeError)):
            _blame_word_param(exc.__cause__, params, names)
        raise
    if not isinstance(alg, Algorithm):
        raise ValueError(f"algorithm {name!r}: factory returned {type(alg).__name__}, "
                         "not an Algorithm")
    if takes_any and sig is not None:
        used = set(named) | set(alg.params or {})
        unused = [k for k in params if k not in used]
        if unused:
            listed = sorted(used - set(SLOTS) - {p.name for p in slots})
            raise ValueError(f"{names['param_name'].format(name=unused[0])}: {name} does not "
                             f"use it (its parameters: {', '.join(listed) or 'none'})")
    return alg
