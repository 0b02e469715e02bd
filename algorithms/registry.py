"""Registered algorithms, and loading and building a user's own given as
``package.module:attribute`` (an ``Algorithm`` or a factory)."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional

from .agarwal_singh import ENTRIES as AGARWAL_SINGH
from .core import Algorithm
from .dp_ftrl import ENTRIES as DP_FTRL
from .dp_testers import ENTRIES as DP_TESTERS
from .entry import Entry, on_both
from .private_bandits import catalog as arat
from .private_bandits import mutants
from .projection_free import ENTRIES as PROJECTION_FREE
from .tracking_experts import ENTRIES as TRACKING_EXPERTS

# The learners of Asi, Raman & Talwar and the testers' mechanisms are
# written against an array namespace and run on JAX too (--backend jax).
REGISTRY: dict[str, Entry] = {e.name: e for e in [*on_both([
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
          "BROKEN Alg 2: noise scale missing K/gamma", experts=4, delta=1e-6)]),
    *AGARWAL_SINGH, *TRACKING_EXPERTS, *PROJECTION_FREE, *on_both(DP_TESTERS), *DP_FTRL,
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
    from .as_written.construction import watching
    try:
        with watching():        # which objects the module's constructors made draw
            module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is bad input
        raise ValueError(f"algorithm {path!r}: cannot import module {module_name!r} "
                         f"({type(exc).__name__}: {exc})") from None
    obj, where = module, module_name
    for part in attr.split("."):        # module:instance.method
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"algorithm {path!r}: {where!r} has no attribute "
                             f"{part!r}") from None
        where = f"{where}.{part}" if where != module_name else f"{module_name}:{part}"
    return obj


from .as_written.binding import NAMING, SLOTS  # noqa: E402,F401 (re-exported)



def build(name: str, horizon=None, arms=None, experts=None, epsilon=None, delta=None,
          params: Optional[dict] = None, claim_epsilon=None, claim_delta=None,
          naming: str = "cli", methods: Optional[str] = None,
          feedback: Optional[str] = None, input_range=None,
          environment: Optional[str] = None, relation: Optional[str] = None,
          max_change=None) -> Algorithm:
    """``_build`` (below), and what the neighbour search needs to sweep the
    parameters the claim quantifies over (``algorithms.claim_ranges``):
    ``extra["claim_ranges"]`` (a registered algorithm's from
    ``claim_ranges.RANGES``; a factory's own, checked; a class's or
    function's ``claim_ranges`` attribute) and ``extra["rebuild_at"]``, the
    same build with the same flags at other values."""
    from .claim_ranges import RANGES, parse_ranges
    alg = _build(name, horizon, arms, experts, epsilon, delta, params, claim_epsilon,
                 claim_delta, naming, methods, feedback, input_range, environment, relation,
                 max_change)
    if not isinstance(alg.extra, dict):
        return alg
    flags = {"horizon": horizon, "arms": arms, "experts": experts, "epsilon": epsilon,
             "delta": delta, "params": dict(params or {}), "claim_epsilon": claim_epsilon,
             "claim_delta": claim_delta, "naming": naming, "methods": methods,
             "feedback": feedback, "input_range": input_range, "environment": environment,
             "relation": relation, "max_change": max_change}
    declared = alg.extra.get("claim_ranges")
    fixed = False
    if declared is None and name in REGISTRY:
        declared = RANGES.get(name)
    elif name not in REGISTRY:
        obj = load_user_object(name)
        # One object (an Algorithm, or a learner the module built): its
        # parameters are its own, nothing to rebuild at other ones.
        from .as_written.instances import is_instance
        fixed = isinstance(obj, Algorithm) or (not callable(obj) and is_instance(obj))
        if declared is None and not fixed:
            declared = getattr(obj, "claim_ranges", None)
    if declared is not None and not fixed:
        alg.extra["claim_ranges"] = parse_ranges(declared, f"{name}: claim_ranges")
        alg.extra.setdefault("rebuild_at", Rebuild(name, **flags))
    return alg


def _drivable_instance(obj, methods, feedback, name) -> bool:
    """Whether ``obj`` is an object of a user's class that the audit can
    drive as a learner or a stream mechanism."""
    from .as_written.instances import is_instance
    from .as_written.objects import find_methods
    if not is_instance(obj):
        return False
    try:
        find_methods(type(obj), methods, name, feedback)
        return True
    except ValueError:
        return False


def _built_already(name, obj, names, epsilon, delta, arms, params) -> None:
    """Refuse the flags that would build an object anew: its ε, δ,
    parameters and (where it says) arms are its own."""
    from .as_written.instances import arms_of
    cls = type(obj)
    given = [f for f, v in ((names["epsilon"], epsilon), (names["delta"], delta)) if v is not None]
    given += [names["param_name"].format(name=k) for k in params or {}]
    own = arms_of(obj)
    if arms is not None and own is not None and arms != own[1]:
        given.append(f"{names['K']} {arms} (it has {own[1]}: {own[0]})")
    if given:
        raise ValueError(f"{given[0]}: {name} is an object the module built already, with its "
                         f"own ε, δ, parameters and arms; audit its class "
                         f"({cls.__module__}:{cls.__qualname__}) to build it with others, or give "
                         f"{names['claim_epsilon'] or 'a claim'} to judge it against another claim")


class Rebuild:
    """``algorithms.build`` of one algorithm with the flags it was built
    with, some of them changed: ``Rebuild(name, **flags)(horizon=2)``.
    ``horizon``, ``arms`` and ``experts`` are flags; any other change is a
    parameter (``--param``)."""

    def __init__(self, name: str, **flags):
        self.name, self.flags = name, flags

    def __call__(self, **changes):
        flags = dict(self.flags)
        params = dict(flags.pop("params", None) or {})
        for k, v in changes.items():
            if k in ("horizon", "arms", "experts"):
                flags[k] = v
            else:
                params[k] = v
        return build(self.name, params=params, **flags)


def _build(name: str, horizon=None, arms=None, experts=None, epsilon=None, delta=None,
           params: Optional[dict] = None, claim_epsilon=None, claim_delta=None,
           naming: str = "cli", methods: Optional[str] = None,
           feedback: Optional[str] = None, input_range=None,
           environment: Optional[str] = None, relation: Optional[str] = None,
           max_change=None) -> Algorithm:
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
        from .as_written.methods import whole_input_method
        if not callable(obj) and whole_input_method(type(obj)):
            obj = getattr(obj, whole_input_method(type(obj)))     # an instance: its m(a, n)
        elif not callable(obj) and _drivable_instance(obj, methods, feedback, name):
            # A learner built in the module (``agent = DPUCB(5, eps=1)``): a
            # fresh copy of it per run.
            from .as_written.instances import copies_of
            _built_already(name, obj, names, epsilon, delta, arms, params)
            obj = copies_of(obj, name)
        if not callable(obj):
            raise ValueError(f"algorithm {name!r} is neither an Algorithm, a factory returning "
                             "one, a class nor a mechanism function")
        from .as_written import as_algorithm, is_as_written
        if is_as_written(obj) and not _input_given(obj, name, params):
            from .errors import ReturnedAnAlgorithm
            try:
                return as_algorithm(obj, name, horizon, arms, experts, epsilon, delta, params,
                                    claim_epsilon, claim_delta, names, methods, feedback,
                                    input_range, environment, relation, max_change)
            except ReturnedAnAlgorithm:
                pass        # a factory whose parameters read like a mechanism's
        _only_as_written(names, f"{name} is a factory", methods=methods, feedback=feedback,
                         input_range=input_range, environment=environment, relation=relation,
                         max_change=max_change)
        return _build_user(name, obj, horizon, arms, experts, epsilon, delta, params, names,
                           claim_epsilon, claim_delta)
    _only_as_written(names, f"{name} is registered (its loss class is part of its claim)",
                     methods=methods, feedback=feedback, input_range=input_range,
                     environment=environment, relation=relation, max_change=max_change)
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
        alg = entry.factory(**kwargs, **params)
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
    alg.extra.setdefault("row_draws", entry.row_draws)
    alg.extra.setdefault("backends", entry.backends)
    return alg


def _input_given(obj, name: str, params: dict) -> bool:
    """Whether ``--param`` sets what a mechanism function would take as its
    input: then the callable is a factory (``make(rate, epsilon)``)."""
    import inspect
    if inspect.isclass(obj):
        return False
    from .as_written.functions import shape_of
    try:
        return shape_of(obj, name).input in params
    except ValueError:
        return False


def _only_as_written(names: dict, what: str, **given) -> None:
    """``ValueError`` naming the first of ``given`` (flags that drive code
    audited as written) that is set, for an algorithm that is not such code."""
    for flag, v in given.items():
        if v is not None:
            raise ValueError(f"{names[flag]} applies to code audited as written; {what}")


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
                names, claim_epsilon=None, claim_delta=None) -> Algorithm:
    """Call a user's factory with the slots it names (``as_written.binding``:
    ``make(epsilon=1.0, T=1000, K=2)`` gets each by its name, the old
    ``make(T, K, N, epsilon, delta, **params)`` too), its own defaults where
    no flag is given, and ``params``."""
    import inspect
    from .as_written.binding import SLOTS, bind, call_args, required_missing
    from .errors import UserCodeError, user_call
    attr = name.partition(":")[2]
    b = bind(factory)
    flags = {"T": horizon, "K": arms, "N": experts,
             "epsilon": epsilon if epsilon is not None else claim_epsilon,
             "delta": delta if delta is not None else claim_delta}
    given = {"T": horizon, "K": arms, "N": experts}
    for slot, v in given.items():
        if v is not None and not b.takes(slot):
            raise ValueError(f"{names[slot]} does not apply to {name}: its factory "
                             f"{attr}{inspect.signature(factory)} takes no "
                             f"{ {'T': 'horizon', 'K': 'number of arms', 'N': 'experts'}[slot]}")
    slot_of = {n: s for s, n in b.names.items()} | ({s: s for s in SLOTS} if b.positional
                                                     else {})
    for k in params:
        if k in slot_of:
            raise ValueError(f"{names['param_name'].format(name=k)}: {k} is set with "
                             f"{names[slot_of[k]]}, not as a parameter")
        if not b.takes_any and k not in b.own:
            raise ValueError(f"{names['param_name'].format(name=k)}: {name} does not "
                             f"accept it (its parameters: {', '.join(b.own) or 'none'})")
    fallback = {"T": 1000, "K": 2, "N": None, "epsilon": None, "delta": 0.0}
    values = {}
    for slot in SLOTS:
        if not b.takes(slot):
            continue
        v = flags[slot]
        if v is None:
            d = b.default(slot)
            v = fallback[slot] if d is inspect.Parameter.empty else d
        values[slot] = v
    if b.takes("epsilon") and values.get("epsilon") is None and \
            b.default("epsilon") is inspect.Parameter.empty:
        claim = names["claim_epsilon"]
        raise ValueError(
            f"{name}: its factory needs epsilon: pass "
            f"{names['set'].format(flag=names['epsilon'], value='E')} (the ε it is "
            f"built with)" + (f" or {names['set'].format(flag=claim, value='E')}"
                              if claim else ""))
    if delta is not None and not b.takes("delta"):
        raise ValueError(f"{names['delta']} does not apply to {name}: its factory takes no "
                         f"delta")
    if epsilon is not None and not b.takes("epsilon"):
        raise ValueError(f"{names['epsilon']} does not apply to {name}: its factory takes no "
                         f"epsilon (audit against another claim with "
                         f"{names['claim_epsilon'] or 'a claim override'})")
    missing = required_missing(b, params)
    if missing:
        raise ValueError(f"{name} needs {missing[0]!r}: pass "
                         f"{names['param'].format(name=missing[0], value='VALUE')}")
    args, kwargs = call_args(b, values, params)
    try:
        with user_call(attr):
            alg = factory(*args, **kwargs)
    except UserCodeError as exc:
        if isinstance(exc.__cause__, (ValueError, TypeError)):
            _blame_word_param(exc.__cause__, params, names)
        raise
    if not isinstance(alg, Algorithm):
        raise ValueError(f"algorithm {name!r}: factory returned {type(alg).__name__}, "
                         "not an Algorithm")
    if b.takes_any and b.params:
        used = set(b.own) | set(alg.params or {})
        unused = [k for k in params if k not in used]
        if unused:
            listed = sorted(used - set(SLOTS) - set(b.names.values()))
            raise ValueError(f"{names['param_name'].format(name=unused[0])}: {name} does not "
                             f"use it (its parameters: {', '.join(listed) or 'none'})")
    return alg
