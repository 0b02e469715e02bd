"""Privacy assertions for a project's own pytest suite.

    from audit.testing import assert_private
    def test_my_mechanism_is_private():
        assert_private("mypkg.mech:make", epsilon=1.0, trials=100_000)

The pytest plugin (``audit.pytest_plugin``, registered through the
``pytest11`` entry point) adds ``--audit-scale=F`` to multiply every budget,
e.g. ``pytest --audit-scale 0.1`` for a fast local run, and the marker
``@pytest.mark.privacy_audit`` to select or deselect these tests.

``assert_private`` checks its arguments as ``audit run`` checks its flags
(one ``ValueError`` naming the argument) and, on a violation, prints the
``audit run`` command that reproduces the failure, built from every argument
passed.

May import: ``algorithms``, ``attacks``, ``audit.engine``.
"""
from __future__ import annotations

import math
import numbers
import os
from typing import Optional, Sequence, Union

from algorithms import Algorithm, build
from algorithms.core import Claim
from algorithms.suggest import closest, did_you_mean

_SCALE = {"value": 1.0}
# What the reproduce command prints for an ``Algorithm`` object, which has no
# import path of its own: the user replaces it with one.
PLACEHOLDER = "<module:attribute>"
# The keyword arguments that build the algorithm, and their ``audit run`` flags.
BUILD_FLAGS = {"horizon": "--horizon", "arms": "--arms", "experts": "--experts"}
BUILD_KWARGS = (*BUILD_FLAGS, "params")
ARGUMENTS = ("algorithm", "epsilon", "delta", "trials", "attacks", "modes", "confidence", "seed",
             "claim_epsilon", "claim_delta", "claim_per_round_epsilon", "jobs", "coupled",
             "backend", "stop_early", *BUILD_KWARGS)


def set_budget_scale(scale: float) -> None:
    """Multiply the ``trials`` of every later ``assert_private`` call (the
    plugin's ``--audit-scale``); a finite number > 0."""
    try:
        ok = not isinstance(scale, bool) and math.isfinite(scale) and scale > 0
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"budget scale (--audit-scale) must be a finite number > 0, "
                         f"got {scale!r}")
    _SCALE["value"] = float(scale)


def _got(value) -> str:
    return f"{value!r} (a {type(value).__name__})"


def _number(name: str, value, lo: float, hi: float = math.inf, lo_open: bool = True,
            hi_open: bool = False) -> Optional[float]:
    """``value`` (None stays None) if it is a real number in the interval, the
    same one ``audit run``'s flag allows; else one ``ValueError`` naming
    ``name``."""
    if value is None:
        return None
    close = ")" if hi_open or hi == math.inf else "]"
    interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{close}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        hint = ""
        if isinstance(value, str):
            try:
                hint = f": pass {name}={float(value)!r}, a number, not a string"
            except ValueError:
                pass
        raise ValueError(f"assert_private(): {name} must be a number in {interval}, got "
                         f"{_got(value)}{hint}")
    x = float(value)
    bad = (not math.isfinite(x) or (x <= lo if lo_open else x < lo)
           or (x >= hi if hi_open else x > hi))
    if bad:
        raise ValueError(f"assert_private(): {name} must be a finite number in {interval}, "
                         f"got {value!r}")
    return value


def _integer(name: str, value, lo: int, allowed: str = "") -> int:
    """An integer ≥ ``lo`` (not a bool, not a float), else one ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        what = allowed or (f"an integer >= {lo}")
        raise ValueError(f"assert_private(): {name} must be {what}, got {_got(value)}")
    return int(value)


def _names(name: str, value, known) -> Optional[list[str]]:
    """``attacks``/``modes``: None, one name (a string is one name, not a
    sequence of letters) or a sequence of names, each one of ``known``;
    repeats run once (as ``audit run``)."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or not all(
            isinstance(x, str) for x in items):
        raise ValueError(f"assert_private(): {name} must be a name or a non-empty list of names "
                         f"from: {', '.join(known)}; got {_got(value)}")
    for x in items:
        if x not in known:
            raise ValueError(f"assert_private(): {name}: unknown {name[:-1]} {x!r}"
                             f"{did_you_mean(x, known)} (choose from: {', '.join(known)})")
    return list(dict.fromkeys(items))


def import_path_of(obj) -> Optional[str]:
    """``"package.module:attribute"`` naming ``obj`` (a function or a class
    defined at the top level of an importable module), else None."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or module == "__main__":
        return None
    if "." in qualname or "<" in qualname:   # nested or local: not an attribute of the module
        return None
    return f"{module}:{qualname}"


def _algorithm(value) -> Union[str, Algorithm]:
    """A registered name or ``package.module:attribute`` string, or an
    ``Algorithm``; a factory passed as an object is refused with the string
    that names it."""
    if isinstance(value, (str, Algorithm)):
        if isinstance(value, str) and not value:
            raise ValueError("assert_private(): algorithm must be a registered name or "
                             "'package.module:attribute', got ''")
        return value
    if callable(value):
        path = import_path_of(value)
        what = getattr(value, "__qualname__", None) or type(value).__name__
        if path is not None:
            how = f"pass {path!r}"
        else:
            how = (f"define {what} at the top level of an importable module and pass "
                   f"'package.module:{what}'")
        raise ValueError(f"assert_private(): algorithm must be the import path of your factory "
                         f"as a string, not the object {what}: {how} (audit run and the "
                         f"reproduce command name it the same way)")
    raise ValueError(f"assert_private(): algorithm must be a registered name, "
                     f"'package.module:attribute' or an Algorithm, got {_got(value)}")


def _round_trips(value) -> bool:
    """Whether ``--param name=VALUE`` gives the factory ``value`` back: a
    number (not a bool), or a string that does not read as a number."""
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Real):
        return math.isfinite(float(value))
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return True
        return False
    return False


def reproduce_line(algorithm, epsilon, delta, build_kwargs: dict, claim_epsilon, claim_delta,
                   claim_per_round_epsilon, attacks, trials: int, confidence: float, seed: int,
                   modes, coupled: Optional[bool] = None, backend: str = "numpy",
                   stop_early: Optional[bool] = None) -> str:
    """The ``audit run`` command that repeats an ``assert_private`` audit:
    every argument passed, as its flag (``horizon=`` as ``--horizon``,
    ``params={k: v}`` as ``--param k=v``), ``trials`` as scaled.  An
    ``Algorithm`` object has no import path: ``<module:attribute>`` stands
    for it."""
    from audit.engine import reproduce_command
    name = algorithm if isinstance(algorithm, str) else PLACEHOLDER
    params = build_kwargs.get("params") or {}
    echo = {"--epsilon": epsilon, "--delta": delta,
            **{flag: build_kwargs.get(key) for key, flag in BUILD_FLAGS.items()},
            "--param": list(params.items()) or None,
            "--claim-epsilon": claim_epsilon, "--claim-delta": claim_delta,
            "--claim-per-round-epsilon": claim_per_round_epsilon}
    return reproduce_command(name, echo, attacks, trials, confidence, seed, modes,
                             coupled=coupled, backend=backend, stop_early=stop_early)


def assert_private(algorithm: Union[str, Algorithm], epsilon: Optional[float] = None,
                   delta: Optional[float] = None, trials: int = 100_000,
                   attacks: Union[str, Sequence[str], None] = None,
                   modes: Union[str, Sequence[str], None] = None,
                   confidence: float = 0.95, seed: int = 0, claim_epsilon: Optional[float] = None,
                   claim_delta: Optional[float] = None,
                   claim_per_round_epsilon: Optional[float] = None, jobs: int = 1,
                   coupled: Optional[bool] = None, backend: str = "numpy",
                   stop_early: Optional[bool] = None, **build_kwargs):
    """Audit ``algorithm`` (a registered name, ``"package.module:attribute"``
    or an ``Algorithm``) and raise ``AssertionError`` with the audit summary —
    claim, per-attack bounds, events, counts and the ``audit run`` command
    that reproduces it — if the measured ε lower bound exceeds the claim.
    Returns the result otherwise.

    ``build_kwargs``: ``horizon``, ``arms``, ``experts`` (positive integers)
    and ``params`` (a dict), as ``audit run``'s ``--horizon``, ``--arms``,
    ``--experts`` and ``--param``; they and ``epsilon``/``delta`` build the
    algorithm from its name, so they do not go with an ``Algorithm`` object.
    ``attacks`` and ``modes`` take one name or a list.  ``coupled=False``
    runs the black-box tests on independent runs, as ``audit run --runs
    independent``; None, the default, on coupled runs wherever they cost
    no more (``True`` insists on them).  ``backend="jax"`` runs the
    black-box tests' learners on JAX, as ``audit run --backend jax``.
    ``stop_early=True`` stops a coupled test once it certifies a violation,
    ``False`` reads every block, None (the default) stops early for code
    run one call per run (``audit run --stop-early``).
    A user factory is built as ``audit run`` builds it (ε = ``epsilon``,
    else ``claim_epsilon``, else its default).

    Bad arguments raise one ``ValueError`` naming the argument (a string
    where a number belongs, an unknown keyword, a factory object instead of
    its import path, a value outside what ``audit run`` allows); a user's
    algorithm that raises or breaks the interface raises
    ``algorithms.errors.UserCodeError`` naming the function and the round."""
    from attacks import ATTACKS
    from audit.engine import audit_algorithm
    from audit.engine.evidence import MODES
    from audit.engine.scenarios import attack_names
    unknown = [k for k in build_kwargs if k not in BUILD_KWARGS]
    if unknown:
        near = closest(unknown[0], ARGUMENTS)
        raise ValueError(f"assert_private() got an unknown argument {unknown[0]!r}"
                         + (f" (did you mean {', '.join(near)}?)" if near else "")
                         + f"; allowed: {', '.join(ARGUMENTS)}")
    algorithm = _algorithm(algorithm)
    epsilon = _number("epsilon", epsilon, 0)
    delta = _number("delta", delta, 0, 1, lo_open=False, hi_open=True)
    claim_epsilon = _number("claim_epsilon", claim_epsilon, 0)
    claim_delta = _number("claim_delta", claim_delta, 0, 1, lo_open=False, hi_open=True)
    claim_per_round_epsilon = _number("claim_per_round_epsilon", claim_per_round_epsilon, 0)
    confidence = _number("confidence", confidence, 0.5, 1, lo_open=False, hi_open=True)
    if confidence is None:
        raise ValueError("assert_private(): confidence must be a number in [0.5, 1), got None")
    seed = _integer("seed", seed, 0, "a non-negative integer")
    if coupled is not None and not isinstance(coupled, bool):
        raise ValueError(f"assert_private(): coupled must be True, False or None, got "
                         f"{_got(coupled)}")
    if stop_early is not None and not isinstance(stop_early, bool):
        raise ValueError(f"assert_private(): stop_early must be True, False or None, got "
                         f"{_got(stop_early)}")
    if backend not in ("numpy", "jax"):
        raise ValueError(f"assert_private(): backend must be 'numpy' or 'jax', got "
                         f"{_got(backend)}")
    trials = _integer("trials", trials, 1, "a positive integer")
    jobs = (os.cpu_count() or 1) if jobs == -1 and not isinstance(jobs, bool) else _integer(
        "jobs", jobs, 1, "a positive integer, or -1 for one per CPU")
    for key in BUILD_FLAGS:
        if build_kwargs.get(key) is not None:
            build_kwargs[key] = _integer(key, build_kwargs[key], 1, "a positive integer")
    params = build_kwargs.get("params")
    if params is not None and not (isinstance(params, dict)
                                   and all(isinstance(k, str) and k for k in params)):
        raise ValueError(f"assert_private(): params must be a dict of parameter names to "
                         f"values, got {_got(params)}")
    attacks = _names("attacks", attacks, list(ATTACKS))
    modes = _names("modes", modes, list(MODES))
    if isinstance(algorithm, Algorithm):
        given = [k for k, v in (("epsilon", epsilon), ("delta", delta), *build_kwargs.items())
                 if v is not None]
        if given:
            raise ValueError(f"assert_private(): {given[0]}= builds an algorithm from its name; "
                             f"algorithm is an Algorithm object, already built: drop "
                             f"{given[0]}=, or pass the 'package.module:attribute' of the "
                             f"factory that builds it")
        alg = algorithm
    else:
        alg = build(algorithm, epsilon=epsilon, delta=delta, claim_epsilon=claim_epsilon,
                    claim_delta=claim_delta, naming="python", **build_kwargs)
    claim = Claim.override(alg.claim, claim_epsilon, claim_delta, "assert_private claim",
                           claim_per_round_epsilon)
    n = int(trials * _SCALE["value"])
    if n < 2:
        raise ValueError(f"trials={trials} scaled by --audit-scale {_SCALE['value']:g} leaves "
                         f"{n} runs per side; an audit needs at least 2")
    names = attack_names(alg, attacks, search=not modes or "black-box" in modes)
    command = reproduce_line(algorithm, epsilon, delta, build_kwargs, claim_epsilon, claim_delta,
                             claim_per_round_epsilon, names, n, confidence, seed, modes,
                             coupled, backend, stop_early)
    result = audit_algorithm(alg, attacks, trials=n, confidence=confidence, seed=seed,
                             jobs=jobs, claim=claim, command=command, modes=modes,
                             coupled=coupled, backend=backend, stop_early=stop_early)
    if result.violation:
        raise AssertionError("privacy claim violated\n" + result.summary()
                             + _reproduce_notes(algorithm, params))
    return result


def _reproduce_notes(algorithm, params) -> str:
    """What the reproduce line cannot carry by itself, as lines after the
    summary: the import path of an ``Algorithm`` object, a parameter value
    that ``--param`` does not give back."""
    notes = []
    if isinstance(algorithm, Algorithm):
        notes.append(f"  note: the reproduce command needs the import path of the Algorithm "
                     f"object: replace {PLACEHOLDER} with 'package.module:attribute' naming it "
                     f"(or the factory that builds it)")
    for k, v in (params or {}).items():
        if not _round_trips(v):
            notes.append(f"  note: --param {k}={v} passes the text {str(v)!r}, not "
                         f"{_got(v)}: the factory must accept it")
    return "".join("\n" + line for line in notes)
