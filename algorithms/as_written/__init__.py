"""Code as people write it, audited without a rewrite: a class with one
object per run (``objects``), a plain mechanism function (``functions``),
both drawing their randomness however they like (``capture``), called with
their parameters by name (``binding``), their outputs observed as they
return them (``outputs``).  ``as_algorithm`` turns either into an
``Algorithm`` the whole pipeline audits (attacks, evidence, executor,
store) like a vectorised one.

Their claim: ``claim_epsilon``/``claim_delta`` given by the caller
(``--claim-epsilon``), else the class's or function's attributes of those
names, else the ε (and δ) it is built with — for a method of an object
(``mech.randomise``), the object's ``epsilon`` and ``delta``, and its
``sensitivity`` s sets the values' range [0, s].  The claim is about what it
outputs (the arms it plays, what the mechanism returns), neighbours
``one-round`` unless the attributes ``relation`` and ``max_change`` say
otherwise, on the loss class ``loss_range`` (or ``reward_range``,
``input_range``), [0, 1] by default.  What it returns is read as the
doubles it is (``attacks.floats``) unless the attribute ``floating_point``
is False.

May import: numpy, ``algorithms.core``, ``algorithms.errors``,
``algorithms.imported_sources``,
``algorithms.replay`` (whether a function's code replays exactly),
``algorithms.as_written.*``.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import replace
from typing import Optional

import numpy as np

from algorithms import imported_sources
from algorithms.core import Algorithm, Claim
from algorithms.errors import NoClaim, UserCodeError
from .binding import (SPELLINGS, NAMING, bind, call_args, positive_attribute,
                      required_missing)
from algorithms.replay import replay_cells
from algorithms.replay.paths import trace_paths, traced_runs
from .functions import (ONE_VALUE_NAMES, READ_MAX_ROUNDS, SENSITIVITY_NAMES, annotated_number,
                        clamped_range, function_learner, looks_like_mechanism, outputs_of, probe,
                        read_rounds, shape_of, whole_inputs)
from .whole import integer_annotation
from .methods import bound_method_function, method_function, whole_input_method
from .environment import environment_learner, find_environment
from .objects import class_learner, find_methods, probe_stream, whole_stream

LEARNER_HORIZON, LEARNER_ARMS = 1000, 2
MECHANISM_INPUTS = 10
RANGE_ATTRS = ("loss_range", "reward_range", "input_range")
PROBE_VALUES = 0xA11CE
OPTIMISE_CELLS = 64     # a replay this small is cheap enough to optimise the pair over
OPTIMISE_COMPARISONS = 16   # so is a trace of continuous draws with this few comparisons
OPTIMISE_ANSWERS = 64       # the optimiser's variables: T·K inputs at most
CLASS_OPTIMISE_CELLS, CLASS_OPTIMISE_COMPARISONS = 16, 2
# A traced optimiser's evaluation finds every path on both sides, one linear
# program and one run of the code each (~4 ms): it gets the evaluations
# these runs pay for (a few seconds), and is not a default below the least.
OPTIMISE_TRACED_RUNS, OPTIMISE_LEAST_EVALUATIONS = 4000, 60


def is_as_written(obj) -> bool:
    """A class (audited one object per run) or a mechanism function."""
    return inspect.isclass(obj) or (callable(obj) and looks_like_mechanism(obj))


def _attr(obj, name, default=None):
    return getattr(obj, name, default)


def _owner_number(obj, names) -> Optional[tuple]:
    """(name, value) of the first positive number among ``names`` on the
    object a bound method belongs to (a library's mechanism object,
    ``mech.randomise``: ``mech.epsilon``, ``mech.sensitivity``), else None."""
    owner = getattr(obj, "__self__", None) if inspect.ismethod(obj) else None
    if owner is None or inspect.isclass(owner):
        return None
    return positive_attribute(owner, names)


def _range(obj, where: str, given=None, bound=None) -> tuple:
    """(lo, hi, where it comes from): ``given`` (``--input-range``), else
    the code's ``loss_range``/``reward_range``/``input_range`` attribute,
    else [0, 1]."""
    if given is not None:
        lo, hi = (float(x) for x in given)
        return lo, hi, "given"
    for a in RANGE_ATTRS:
        v = _attr(obj, a)
        if v is not None:
            try:
                lo, hi = (float(x) for x in v)
            except (TypeError, ValueError):
                raise ValueError(f"{where}.{a} must be a pair (lo, hi), got {v!r}") from None
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise ValueError(f"{where}.{a} must be finite with lo < hi, got {v!r}")
            return lo, hi, f"its {a} attribute"
    sens = _owner_number(bound, ("sensitivity",))
    if sens is not None:
        # The change one record makes, as the object was built for it.
        return 0.0, sens[1], f"its object's sensitivity ({sens[1]:g})"
    return 0.0, 1.0, "default"


def _driven_by(cls, methods: Optional[str], named: Optional[str], where: str, feedback):
    """(environment, methods): how a class is driven — by the usual
    conventions (``objects.find_methods``; environment None), or as a
    learner drawing its own rewards (``environment``; methods None):
    ``named`` (``--environment``) always; otherwise only where the
    conventions find nothing."""
    driver = methods.strip() if methods and "," not in methods else None
    if named is not None:
        return find_environment(cls, named, driver, where, feedback), None
    try:
        return None, find_methods(cls, methods, where, feedback)
    except ValueError as exc:
        found = find_environment(cls, None, driver, where, feedback)
        if found is None:
            raise exc
        return found, None


def _fit_input(fn, shape, kwargs: dict, T: int, K: int, lo: float, hi: float, where: str):
    """(T, shape, note): the answers a function reads when it is offered the
    default ``T``: its first answer alone when that is all its output was
    seen to depend on (``functions.read_rounds``; a longer prefix is kept
    whole, since code that stops early, as a sparse vector does, reads its
    later answers in few runs), or one plain number when the code fails on
    an array of ``T`` values and runs on one, or is annotated as one
    (``x: float``).  The shorter input must run on the probe's inputs, else
    ``T`` stays."""
    number = annotated_number(fn, shape.input) if K == 1 and shape.size is None else None
    if number is not None:
        # ``bit: int``: the whole-number note says it (``_whole_domain``'s ``one``).
        return 1, replace(shape, scalar=True), (
            None if integer_annotation(fn, shape.input) else
            f"its input is annotated as one number, {shape.input}: {number}, and audited as one")
    if K == 1 and shape.size is None and shape.input in ONE_VALUE_NAMES:
        one = replace(shape, scalar=True)
        # On a plain number, or on a whole one (``bit ^ flip`` fails on a
        # float; ``_whole_domain`` then finds it takes whole numbers).
        for cand in (one, replace(one, integers="int")):
            try:
                probe(fn, cand, kwargs, _probe_inputs(1, 1, lo, hi), where)
                return 1, one, (f"its input is named as one value, {shape.input}, and it runs "
                                f"on one number: audited on one")
            except (UserCodeError, ValueError):
                continue
    if T > READ_MAX_ROUNDS:
        return T, shape, None
    read = read_rounds(fn, shape, kwargs, T, K, lo, hi, where)
    if read is not None and read != {0}:
        return T, shape, None
    tries = ([replace(shape, scalar=True)] if K == 1 and shape.size is None else []) + [shape]
    for cand in tries:
        try:
            probe(fn, cand, kwargs, _probe_inputs(1, K, lo, hi), where)
        except (UserCodeError, ValueError):
            continue
        if read is None:
            how = "one number" if cand.scalar else "one answer"
            return 1, cand, f"it fails on {T} answers and runs on {how}: audited on {how}"
        return 1, cand, f"its output depends on the first answer of the {T} offered: audited on it"
    return T, shape, None


FIT_STREAM = 0xA125         # the runs that decide K and an update's form


def _fit_arms(fn, shape, kwargs: dict, T: int, lo: float, hi: float, where: str):
    """(K, note): ``LEARNER_ARMS`` answers a round where the function fails
    on a vector of ``T`` answers and runs on a (T, K) array (a bandit
    simulated over its whole reward matrix, ``T, K = rewards.shape``), else
    1.  One run on each input decides."""
    def runs_on(k):
        try:
            outputs_of(fn, shape, kwargs, _probe_inputs(T, k, lo, hi)[2], 1,
                       np.random.default_rng(FIT_STREAM), where)
            return True
        except (UserCodeError, ValueError):
            return False

    if runs_on(1) or not runs_on(LEARNER_ARMS):
        return 1, None
    return LEARNER_ARMS, (f"it fails on a vector of {T} answers and runs on a ({T}, "
                          f"{LEARNER_ARMS}) array: audited on rows of {LEARNER_ARMS}, --arms sets "
                          f"another number")


FIT_UPDATE_RUNS, FIT_UPDATE_ROUNDS = 2, 3


def _runs(alg: Algorithm) -> bool:
    """Whether ``alg`` runs its first rounds on the midpoint input without
    its code raising."""
    from algorithms.simulate import simulate
    rounds = min(alg.horizon, FIT_UPDATE_ROUNDS)
    x = alg.midpoint()
    try:
        simulate(alg, x, FIT_UPDATE_RUNS, np.random.default_rng(FIT_STREAM), rounds=rounds)
        return True
    except UserCodeError:
        return False


def _whole_domain(fn, name: str, detect, lo: float, hi: float, path: str, one: bool = False):
    """(kind, lo, hi, note): code taking whole numbers or truth values —
    its input ``name`` of ``fn`` so annotated (``bit: int``,
    ``flags: list[bool]``), or so observed (``detect()``, one of
    ``whole.whole_number_code``'s reasons: randomized response returning
    its bit) — is audited on them (``whole``): kind "int" or "bool", the
    range's whole ends; else (None, lo, hi, None).  An input annotated as
    a float is audited over the reals.  ``one``: the code is audited on
    one number (said with the annotation)."""
    kind = integer_annotation(fn, name)
    if kind is not None:
        why = f"its input is annotated {name}: {kind}" + (", one number" if one else "")
    elif annotated_number(fn, name) is not None:      # x: float
        return None, lo, hi, None
    else:
        why = detect()
        if why is None:
            return None, lo, hi, None
        kind = "int"
    low, high = (0, 1) if kind == "bool" else (math.ceil(lo), math.floor(hi))
    if high <= low or kind == "bool" and (lo, hi) != (0.0, 1.0):
        raise ValueError(f"{path}: its input {name} is annotated {kind}, and the input range "
                         f"[{lo:g}, {hi:g}] " + ("is not [0, 1]" if kind == "bool" else
                                                  "holds fewer than two whole numbers") +
                         ": give --input-range LO,HI")
    values = ("the truth values False and True" if kind == "bool" else
              f"the whole numbers {low}, {high}" if high == low + 1 else
              f"the whole numbers {low} to {high}")
    return (kind, float(low), float(high),
            f"{why}: audited on {values} (each value rounded to the nearest before the code "
            f"sees it; annotate it {name}: float to audit it over the reals)")


def _stream_value_name(cls, m) -> Optional[str]:
    """The parameter of a stream class's update method that takes the
    round's value (after ``self``, and the round's index where it takes
    one)."""
    try:
        names = list(inspect.signature(getattr(cls, m.update)).parameters)
    except (TypeError, ValueError, AttributeError):
        return None
    names = names[1 + bool(m.update_round):]
    return names[0] if names else None


def _input_note(read_note, range_from: str, *more) -> Optional[str]:
    """What the summary says about the input beyond its size and range."""
    parts = [read_note] if read_note else []
    parts += [m for m in more if m]
    if range_from == "given":
        parts.append("range given with --input-range")
    elif range_from != "default":
        parts.append(f"range from {range_from}")
    return "; ".join(parts) or None


def _probe_inputs(T: int, K: int, lo: float, hi: float) -> list:
    rand = lo + (hi - lo) * np.random.default_rng(PROBE_VALUES).random((T, K))
    return [np.full((T, K), lo), np.full((T, K), hi), rand]


def _whole_input(cls, methods: Optional[str], where: str, feedback) -> Optional[str]:
    """The method over the whole input a class is audited through: the one
    ``--methods`` names if it reads like ``m(a, n_samples)``, else, for a
    class with no learner or stream methods, the first of
    ``methods.WHOLE`` that does."""
    if methods is not None:
        return None if "," in methods else whole_input_method(cls, methods.strip())
    try:
        find_methods(cls, None, where, feedback)
        return None
    except ValueError:
        if find_environment(cls, None, None, where, feedback) is not None:
            return None
        return whole_input_method(cls)


def as_algorithm(obj, path: str, horizon=None, arms=None, experts=None, epsilon=None,
                 delta=None, params: Optional[dict] = None, claim_epsilon=None,
                 claim_delta=None, names: Optional[dict] = None,
                 methods: Optional[str] = None, feedback: Optional[str] = None,
                 input_range=None, environment: Optional[str] = None,
                 relation: Optional[str] = None, max_change=None) -> Algorithm:
    """The ``Algorithm`` auditing ``obj`` (a class or a mechanism function
    at ``path``, ``package.module:attribute``) as written.  ``names`` words
    errors after the caller's flags (``algorithms.registry.NAMING``).
    ``input_range`` (lo, hi) overrides the code's own range attributes;
    ``environment`` names the method or constructor parameter through which
    a class draws its own rewards (``environment``); ``relation`` and
    ``max_change`` the neighbouring relation, over the code's own
    ``relation`` and ``max_change`` attributes."""
    names = names or NAMING["cli"]
    params = dict(params or {})
    attr = path.partition(":")[2] or path
    # ``from random import choices`` in the code's module: routed like
    # random.choices (here for the probes and the replay; every process
    # making runs adopts it again through capture.Streams).
    imported_sources.adopt_code(obj)
    bound = None        # the bound method of an object: its ε and sensitivity are the claim's
    if callable(obj) and not (inspect.isclass(obj) or inspect.isroutine(obj)) \
            and inspect.ismethod(getattr(obj, "__call__", None)):
        obj = obj.__call__          # an object called as the mechanism: ``mech(x)``
    if inspect.ismethod(obj) and not inspect.isclass(obj.__self__):
        bound, obj = obj, bound_method_function(obj)         # module:instance.m
    elif inspect.isclass(obj):
        whole = _whole_input(obj, methods, attr, feedback)
        if whole is not None:                    # m(self, a, n_samples): a function per call
            fn, rest = method_function(obj, whole, path, epsilon, delta, params, claim_epsilon,
                                       claim_delta, names)
            return as_algorithm(fn, path, horizon, arms, experts, epsilon, delta, rest,
                                claim_epsilon, claim_delta, names, input_range=input_range)
    is_class = inspect.isclass(obj)
    if environment is not None and not is_class:
        raise ValueError(f"{names['environment']} applies to a class; {path} is a function")
    env, m = _driven_by(obj, methods, environment, attr, feedback) if is_class else (None, None)
    shape = None if is_class else shape_of(obj, attr)
    skip = () if is_class else tuple(x for x in (shape.input, shape.rng, shape.size) if x)
    if env is not None and env.param:
        skip = (env.hook,)
    b = bind(obj, seed=is_class, skip=skip)
    if b.positional:
        b.names = {}
    if m is not None and not m.advice and "N" in b.names and "K" not in b.names:
        # A learner that takes no advice names its actions experts
        # (``PrivateHedge(n_experts, horizon)``): they are its K arms.
        b.names["K"] = b.names.pop("N")
    if not is_class:
        # A function's input carries its own length: a parameter spelled like
        # a size is the function's own (a sparse vector's threshold T, its
        # cutoff N), with its default or --param, never the horizon.
        for slot in ("T", "K", "N"):
            if slot in b.names:
                b.own.append(b.names.pop(slot))
    # Which slot values the code receives: flags, else its own defaults.
    for k in params:
        if k in b.names.values() or k == b.seed:
            slot = next((s for s, n in b.names.items() if n == k), None)
            label = names["param_name"].format(name=k)
            if slot is None:
                raise ValueError(f"{label}: the tool passes each run's seed itself")
            raise ValueError(f"{label}: {k} is set with {names[slot]}, not as a parameter")
        if k not in b.own and not b.takes_any:
            raise ValueError(f"{names['param_name'].format(name=k)}: {path} does not accept "
                             f"it (its parameters: {', '.join(b.own) or 'none'})")
    mechanism = not is_class
    if m is not None:
        mechanism = m.kind == "stream"
    elif methods and not is_class:
        raise ValueError(f"--methods applies to a class; {path} is a function")

    def value(slot, flag, fallback):
        if flag is not None:
            return flag
        d = b.default(slot)
        return fallback if d is inspect.Parameter.empty or d is None else d

    T = int(value("T", horizon, MECHANISM_INPUTS if mechanism else LEARNER_HORIZON))
    K = int(value("K", arms, 1 if mechanism else LEARNER_ARMS))
    N = value("N", experts, None)
    eps = epsilon if epsilon is not None else claim_epsilon
    dlt = delta if delta is not None else claim_delta
    pass_values = {"T": T, "K": K}
    if N is not None:
        pass_values["N"] = int(N)
    if "epsilon" in b.names:
        if eps is None:
            d = b.default("epsilon")
            if d is inspect.Parameter.empty and _attr(obj, "claim_epsilon") is not None:
                # No default, but the code states the ε it claims: run it at that ε.
                d = _attr(obj, "claim_epsilon")
            if d is inspect.Parameter.empty:
                flags = names["set"].format(flag=names["epsilon"], value="E")
                claim = names["claim_epsilon"]
                raise ValueError(f"{path}: it needs epsilon: pass {flags}" + (
                    f" or {names['set'].format(flag=claim, value='E')}" if claim else ""))
            eps = d
        pass_values["epsilon"] = eps
    if "delta" in b.names:
        if dlt is None:
            d = b.default("delta")
            dlt = 0.0 if d is inspect.Parameter.empty else d
        pass_values["delta"] = dlt
    if m is not None and m.advice and N is None:
        raise ValueError(f"{path}.{m.select} takes expert advice: give the number of experts "
                         f"with {names['set'].format(flag=names['N'], value='N')}")
    if experts is not None and "N" not in b.names and not (m is not None and m.advice):
        raise ValueError(f"{names['N']} does not apply to {path} (it takes no expert advice)")
    lo, hi, range_from = _range(obj, attr, input_range, bound)
    sensitivity_note = None
    sens = next((n for n in SENSITIVITY_NAMES if n in b.own and n not in params
                 and b.params[n].default is inspect.Parameter.empty), None)
    if sens is not None:
        # ``laplace_mechanism(value, sensitivity, epsilon)``: the most one
        # value changes between neighbours, as the caller of such a
        # function passes it.
        params = {**params, sens: hi - lo}
        sensitivity_note = (f"{sens} = {hi - lo:g}, the most one value changes between "
                            f"neighbours; --param {sens}=S sets another")
    missing = required_missing(b, params)
    if missing:
        raise ValueError(f"{path} needs {missing[0]!r}: pass "
                         f"{names['param'].format(name=missing[0], value='VALUE')}")
    args, kwargs = call_args(b, {s: v for s, v in pass_values.items() if s in b.names}, params)
    if args:
        raise ValueError(f"{path}: positional-only parameters are not supported for code "
                         f"audited as written")
    read_note = None
    if not is_class and arms is None and K == 1:
        # A function of a whole matrix (``T, K = rewards.shape``) gets one.
        K, read_note = _fit_arms(obj, shape, kwargs, T, lo, hi, attr)
    if not is_class and horizon is None and read_note is None:
        # A function offered more answers than it reads is audited on those it reads.
        T, shape, read_note = _fit_input(obj, shape, kwargs, T, K, lo, hi, attr)
    clamp_step = None
    if not is_class and range_from == "default":
        # Values are clamped to the domain the code means them to lie in:
        # the pairs explore all of it.  A change of one value stays at most
        # the default width: a clamp bounds what the code accepts, not what
        # one record may change (Mironov's snapping mechanism clamps to
        # [−B, B] and is ε-DP for changes of 1); --input-range LO,HI makes
        # the whole width the change.
        clamped = clamped_range(obj, shape, kwargs, T, K, lo, hi, attr)
        if clamped is not None:
            clamp_step = hi - lo
            (lo, hi), found = clamped
            ends = [w for w, f in ((f"at least {lo:g}", found[0]), (f"at most {hi:g}", found[1]))
                    if f]
            range_from = (f"the code's own clamp, which takes each value as "
                          f"{' and '.join(ends)}; neighbours differ in one value by at most "
                          f"{clamp_step:g} (--input-range {lo:g},{hi:g} lets it change across "
                          f"the whole range)")
    whole_note = None
    if not is_class:
        kind, lo, hi, whole_note = _whole_domain(
            obj, shape.input, lambda: whole_inputs(obj, shape, kwargs, T, K, lo, hi, attr),
            lo, hi, path, one=shape.scalar)
        shape = replace(shape, integers=kind)
    elif m is not None and m.kind == "stream" and K == 1:
        name = _stream_value_name(obj, m)
        if name is not None:
            kind, lo, hi, whole_note = _whole_domain(
                getattr(obj, m.update), name,
                lambda: whole_stream(obj, kwargs, b.seed, b.seed_is_generator, m, T, lo, hi,
                                     attr), lo, hi, path)
            m = replace(m, whole=kind)
    # The claim: the caller's, else the code's attributes, else what it is built with.
    declared_eps, declared_delta = _attr(obj, "claim_epsilon"), _attr(obj, "claim_delta")
    c_eps = claim_epsilon if claim_epsilon is not None else (
        declared_eps if declared_eps is not None else eps)
    c_delta = claim_delta if claim_delta is not None else (
        declared_delta if declared_delta is not None else dlt)
    owner_eps = _owner_number(bound, ("claim_epsilon",) + SPELLINGS["epsilon"])
    from_owner = c_eps is None and owner_eps is not None
    if from_owner:
        # A bound method of an object built with its ε (``mech.randomise``).
        c_eps = owner_eps[1]
        if c_delta is None:
            owner_delta = _owner_number(bound, ("claim_delta",) + SPELLINGS["delta"])
            c_delta = owner_delta[1] if owner_delta is not None else None
    if c_eps is None:
        claim = names["claim_epsilon"]
        raise NoClaim(f"{path} declares no privacy claim: pass "
                         f"{names['set'].format(flag=claim or names['epsilon'], value='E')} "
                         f"(or give it a claim_epsilon attribute)")
    source = ("the claim given to the audit" if claim_epsilon is not None else
              _attr(obj, "claim_source") or
              f"{attr}.claim_epsilon" if _attr(obj, "claim_epsilon") is not None else
              f"the ε of the object it belongs to ({owner_eps[0]} = {owner_eps[1]:g})"
              if from_owner else
              f"the ε {attr} is built with")
    inputs = _probe_inputs(T, K, lo, hi)
    if env is not None:
        learner = environment_learner(obj, kwargs, b.seed, b.seed_is_generator, env, K,
                                      (lo, hi), attr)
        how, output, form = env.describe(), "the arms it plays", None
    elif is_class:
        if m.kind == "stream":
            form = probe_stream(obj, kwargs, b.seed, b.seed_is_generator, m, inputs, (lo, hi),
                                attr)
        else:
            form = None
        learner = class_learner(obj, kwargs, b.seed, b.seed_is_generator, m, K, (lo, hi), attr,
                                form=form)
        how = m.describe()
        output = ("what it releases each round" if m.kind == "stream" else
                  "the experts it chooses" if m.kind == "full" else "the arms it plays")
    else:
        form = probe(obj, shape, kwargs, inputs, attr)
        learner = function_learner(obj, shape, kwargs, form, attr)
        how = f"{shape.describe()}; output: {form.describe()}"
        output = "what the function returns"
    relation = relation or _attr(obj, "relation", "one-round")
    max_change = max_change if max_change is not None else _attr(obj, "max_change", clamp_step)
    if relation == "bounded-all" and max_change is None:
        # Claim's own message names its field; the user names an attribute or a flag.
        raise ValueError(f"{path}: relation 'bounded-all' needs the most each value may "
                         f"change between neighbours: pass {names['max_change']} D or set "
                         f"{attr}.max_change = D (a number > 0)")
    try:
        claim = Claim(float(c_eps), float(c_delta or 0.0), "actions", source, output=output,
                      relation=relation, max_change=max_change)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    shown = {k: v for k, v in pass_values.items() if k in ("epsilon", "delta")}
    shown.update(params)
    labels = None
    if form is not None:
        step = form if not hasattr(form, "step") else form.step
        labels = [step.label(c) for c in range(step.n_codes)]
    # One Python call a run (and round): the search's pilot and the default
    # budget are sized for that (a batched function is as cheap as a
    # vectorised learner).
    per_run = is_class or shape.size is None
    extra = {"as_written": "class" if is_class else "function", "driven_by": how,
             "code_labels": labels, "per_run_calls": per_run,
             # a function's whole output observed at its last round
             "final_output": getattr(form, "layout", None) == "final",
             "input_note": _input_note(read_note, range_from, sensitivity_note, whole_note,
                                       _attr(obj, "built_note") if is_class else None),
             "environment": env.hook if env is not None else None,
             # what the code's inputs are rounded to before it reads them
             "whole_inputs": (m.whole if is_class and m is not None else
                              None if is_class else shape.integers)}
    if is_class and mechanism:
        # A stream class reads one input a round and releases a value: its
        # inputs are not query answers (audit.engine.words).
        extra["inputs_word"] = "input"
    # Its outputs are read as doubles (attacks.floats) unless the code says
    # it is a model of a mechanism over the reals (``floating_point = False``).
    declared = _attr(obj, "floating_point", None)
    if declared is not None:
        extra["floating_point"] = bool(declared)
    alg = Algorithm(attr, learner, claim, T, K, shown, n_experts=int(N) if N else None,
                    loss_range=(lo, hi), extra=extra)
    if m is not None and m.scalar_fallback and not _runs(alg):
        # update(loss) failing on a row: the played arm's loss, as a bandit
        # that remembers its arm takes it.
        one = replace(m, kind="bandit", update_arm=False, scalar_fallback=False)
        alg.learner = class_learner(obj, kwargs, b.seed, b.seed_is_generator, one, K, (lo, hi),
                                    attr)
        if _runs(alg):
            extra["driven_by"] = one.describe() + (" (it fails on a row: the played arm's "
                                                   "value)")
            alg.claim = replace(alg.claim, output="the arms it plays")
        else:
            alg.learner = learner
    small = T * K <= OPTIMISE_ANSWERS
    cells = replay_cells(alg) if small else None
    compared = trace_paths(alg) if small and cells is None else None
    # A class's run is T calls, not one: its optimiser gets smaller replays
    # (a class re-drawing six noisy argmaxes, 2^6 paths, took 17 minutes).
    most_cells, most_compared = ((CLASS_OPTIMISE_CELLS, CLASS_OPTIMISE_COMPARISONS) if is_class
                                 else (OPTIMISE_CELLS, OPTIMISE_COMPARISONS))
    evaluations = None
    if compared is not None and compared <= most_compared:
        # A noisy argmax over ten answers has 9 comparisons but 10 paths,
        # 91 traced runs a side: 900 evaluations would take six minutes.
        runs = traced_runs(alg)
        evaluations = OPTIMISE_TRACED_RUNS // (2 * runs) if runs else 0
        alg.extra["optimise_evaluations"] = max(evaluations, 1)
    if (cells is not None and cells <= most_cells
            or evaluations is not None and evaluations >= OPTIMISE_LEAST_EVALUATIONS):
        # A function or class whose code replays exactly, and cheaply (the
        # optimiser replays it for every pair it tries), also gets its pair
        # optimised:
        # the exact ε maximised over the claim's relation, not only at the
        # search's pairs.  Only where it applies, so that the attacks an
        # audit prints to reproduce it all run.
        alg.default_attacks = ("optimised",)
    return alg
