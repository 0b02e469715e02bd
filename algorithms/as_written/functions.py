"""A mechanism written as a plain function, audited as written: one call
per run, ``f(x, rng) -> output`` (the form DP testers take), or one call
per chunk of runs in its batched form ``f(x, rng, size) -> outputs``.

* ``x`` is the input: the T values (``--horizon``, one per "round") as a
  1-D array, or a (T, K) array when each has K coordinates; a fresh copy
  each call, so the function may change it.  It is the first parameter,
  or the second after a generator (``f(prng, queries, epsilon)``, as
  DP testers' benchmarks write them).
* the generator parameter (the second positional one, or one named
  ``rng``, ``generator``, ``seed``, ``random_state``): the tool's
  generator, or, for ``seed``/``random_state``, a fresh integer per run.
  A function without one may draw from ``np.random`` or ``random``: each
  run is seeded from its own stream (``algorithms.as_written.capture``).
* a size parameter (``size``, ``n_samples``, ``runs``, ``n``,
  ``num_samples``) makes it batched: it returns the outputs of ``size``
  runs, as an array with the runs first, a tuple of such arrays, or a list
  of ``size`` outputs.
* any other parameter named like ε or δ receives them
  (``algorithms.as_written.binding``), and ``--param`` the rest — sizes
  too (``T``, ``N``, ``k``: a sparse vector's threshold and cutoff, the
  categories of randomized response), since the input carries its length.

Whatever it returns is observed (``algorithms.as_written.outputs``).  The
function is called in the simulation through ``Learner.whole``: it sees
the whole input at once, never a prefix.  A function called once per run
also gets ``Learner.one_run(losses, rng, seed)``, a batched one
``Learner.one_batch(losses, rng, runs, seed)``: one call on a generator the
exact replay chooses the draws of (``algorithms.replay``).

May import: numpy, ``algorithms.core``, ``algorithms.errors``,
``algorithms.as_written``.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
import time
import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.core import Learner
from algorithms.errors import UserCodeError
from .binding import SEED_SPELLINGS, SPELLINGS
from .capture import Streams
from .outputs import OutputForm, form_of, leaves
from .whole import WHOLE_RUNS, WHOLE_STREAM, rounded, whole_number_code

# Names of a generator parameter: the seeds' spellings and ``prng``.
RNG_NAMES = SEED_SPELLINGS + ("prng",)
SIZE_NAMES = ("size", "n_samples", "runs", "n_runs", "num_samples", "n", "samples")
INT_SEEDS = ("seed", "random_state", "random_seed")
SEED_WORDS = 2 ** 63
# First parameters that name a mechanism's input, whatever else it requires
# (``svt(queries, epsilon, N, T)`` needs ``--param`` for its threshold).
INPUT_NAMES = ("queries", "query", "answers", "answer", "data", "database", "db", "dataset",
               "values", "value", "true_value", "counts", "count", "x", "xs", "input", "inputs",
               "records", "rewards", "losses", "reward_matrix", "loss_matrix", "stream")
# Inputs named as one value: such a function that runs on one number is
# audited on one (``algorithms.as_written._fit_input``), not on a vector
# numpy's broadcasting lets it run on — randomized response returning
# ``bit`` or ``1 - bit`` of a whole vector at once is another mechanism.
ONE_VALUE_NAMES = ("bit", "flag", "vote", "label", "value", "true_value", "answer",
                   "true_answer", "count", "true_count", "response", "score", "reward", "loss",
                   "record", "secret", "datum", "item", "query")
# A required parameter so named gets the most one value changes between
# neighbours where --param does not set it (``algorithms.as_written``); it
# is never the generator.
SENSITIVITY_NAMES = ("sensitivity", "sens", "l1_sensitivity", "global_sensitivity",
                     "delta_f")
COUNT_PREFIXES = ("n_", "num_", "number_", "nb_", "len_", "size_")
PRIVACY_NAMES = frozenset(SPELLINGS["epsilon"] + SPELLINGS["delta"])    # bound by name
GENERATOR_WORDS = ("rng", "gen", "random", "seed", "state", "prng")
PROBE_RUNS = 16
PROBE_STREAM = 0xF0CA1


@dataclass(frozen=True)
class Shape:
    """How the function is called: its input parameter, its generator
    parameter (or None) and whether that takes an integer, its size
    parameter (batched form) or None, and whether the generator comes
    first (``f(prng, x)``)."""

    input: str
    rng: Optional[str]
    int_seed: bool
    size: Optional[str]
    rng_first: bool = False
    scalar: bool = False        # the input is one plain number (``f(x: float, rng)``)
    # "int" or "bool": the code takes whole numbers (bits, counts), and its
    # inputs are rounded to them before it sees them (``whole_inputs``).
    integers: Optional[str] = None

    def describe(self) -> str:
        args = [self.input] + ([self.rng] if self.rng else []) + ([self.size] if self.size
                                                                  else [])
        if self.rng_first:
            args[:2] = args[1::-1]
        form = "batched: one call per chunk of runs" if self.size else "one call per run"
        return f"f({', '.join(args)}), {form}"


def _generator_first(positional) -> bool:
    """``f(prng, x, …)``: a generator parameter first, then the input."""
    return (len(positional) > 1 and positional[0].name in RNG_NAMES
            and positional[1].default is inspect.Parameter.empty)


def looks_like_mechanism(fn) -> bool:
    """Whether ``fn`` reads like ``f(x, rng)`` (or ``f(prng, x)``) rather than
    a factory: its first parameter (after a leading generator) is its input
    (not a size, privacy or seed parameter, nor named like a count,
    ``n_queries``), and it names a generator (``rng``, ``generator``,
    ``seed``, ``random_state``, ``prng``) or a batch size, or its first
    parameter is named like an input (``INPUT_NAMES``), or it requires
    nothing else but ε or δ (``f(x)`` or ``noisy_max(queries, epsilon)``
    drawing from ``np.random``).  A factory taken for one is recognised
    when it returns an algorithm (``algorithms.registry``)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    kinds = inspect.Parameter
    positional = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY,
                                                  kinds.POSITIONAL_OR_KEYWORD)]
    if _generator_first(positional):
        positional = positional[1:]
    if not positional or positional[0].default is not kinds.empty:
        return False
    slot_names = {s for spellings in SPELLINGS.values() for s in spellings}
    first = positional[0].name
    if first in slot_names or first in SEED_SPELLINGS or first.startswith(COUNT_PREFIXES):
        return False        # a factory's size (``make_stream(n_queries, epsilon)``)
    names = {p.name for p in params}
    if names & set(RNG_NAMES) or names & set(SIZE_NAMES) or first in INPUT_NAMES:
        return True
    # ε and δ are bound by name whatever else the callable is, so they do
    # not make it a factory: ``noisy_max(queries, epsilon)`` drawing from
    # ``np.random``, as the DP testers' benchmark programs are written.
    required = [p for p in params if p.default is kinds.empty and p.name not in PRIVACY_NAMES
                and p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD)]
    return len(required) == 1


def shape_of(fn, where: str) -> Shape:
    sig = inspect.signature(fn)
    kinds = inspect.Parameter
    params = [p for p in sig.parameters.values()
              if p.kind not in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD)]
    positional = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY,
                                                  kinds.POSITIONAL_OR_KEYWORD)]
    if not positional:
        raise ValueError(f"{where}: a mechanism function takes its input first, "
                         f"f(x, rng) -> output")
    names = [p.name for p in params]
    size = next((n for n in SIZE_NAMES if n in names), None)
    if _generator_first(positional):
        if positional[0].kind is kinds.POSITIONAL_ONLY:
            raise ValueError(f"{where}: a generator parameter before the input must be "
                             f"passable by name")
        rng = positional[0].name
        return Shape(positional[1].name, rng, rng in INT_SEEDS, size, rng_first=True)
    rng = next((n for n in RNG_NAMES if n in names
                and n != positional[0].name), None)
    slot_names = {s for spellings in SPELLINGS.values() for s in spellings}
    if rng is None and len(positional) > 1:
        # An unnamed generator comes second (``f(x, r)``); where more is
        # required (``svt(queries, threshold, epsilon)``) the second is taken
        # for one only when a size or its name says so.
        second = positional[1]
        required = [p for p in params
                    if p.default is kinds.empty and p.name not in PRIVACY_NAMES]
        if second.name not in slot_names and second.name != size \
                and second.name not in SENSITIVITY_NAMES \
                and second.default is kinds.empty \
                and (len(required) == 2 or size is not None
                     or any(w in second.name.lower() for w in GENERATOR_WORDS)):
            rng = second.name
    return Shape(positional[0].name, rng, rng in INT_SEEDS, size)


NUMBER_ANNOTATIONS = (float, int, "float", "int", "numbers.Real", "Real")


def annotated_number(fn, name: str) -> Optional[str]:
    """The annotation (``"float"``) where ``fn``'s parameter ``name`` is
    annotated as one plain number (``x: float``, ``x: int``, also as
    strings under postponed annotations), else None: its author says it
    takes one value, whatever numpy's broadcasting would let it run on."""
    try:
        ann = inspect.signature(fn).parameters[name].annotation
    except (TypeError, ValueError, KeyError):
        return None
    if any(ann is a or ann == a for a in NUMBER_ANNOTATIONS):
        return ann if isinstance(ann, str) else ann.__name__
    return None


def whole_inputs(fn, shape: Shape, kwargs: dict, T: int, K: int, lo: float, hi: float,
                 where: str) -> Optional[str]:
    """Why ``fn`` is code for whole-number inputs, or None
    (``whole.whole_number_code``): ``WHOLE_RUNS`` runs of each input."""
    rng = np.random.default_rng(WHOLE_STREAM)
    as_ints = dataclasses.replace(shape, integers="int")

    def outputs(x, ints):
        return outputs_of(fn, as_ints if ints else shape, kwargs, x, WHOLE_RUNS, rng, where)
    return whole_number_code(outputs, T, K, lo, hi, rng)


def _call(fn, shape: Shape, x: np.ndarray, kw: dict):
    """``fn`` on the input ``x`` and the keywords ``kw``: the input by
    position when it comes first, else by name (after the generator)."""
    return fn(**{shape.input: x}, **kw) if shape.rng_first else fn(x, **kw)


def split_batch(out, runs: int, where: str) -> list:
    """The per-run outputs of a batched call."""
    if isinstance(out, np.ndarray) and out.ndim >= 1 and out.shape[0] == runs:
        return list(out)
    if isinstance(out, tuple) and out and all(
            isinstance(a, np.ndarray) and a.ndim >= 1 and a.shape[0] == runs for a in out):
        return [tuple(a[i] for a in out) for i in range(runs)]
    if isinstance(out, list) and len(out) == runs:
        return out
    got = f"an array of shape {out.shape}" if isinstance(out, np.ndarray) else (
        f"a {type(out).__name__} of length {len(out)}" if hasattr(out, "__len__")
        else type(out).__name__)
    raise UserCodeError(where, None, f"returned {got}; the batched form must return the "
                        f"outputs of its {runs} runs (an array with the runs first, a tuple "
                        f"of such arrays, or a list of {runs} outputs)")


def _input(losses: np.ndarray, shape: Shape):
    """The input as the function takes it: one number (``shape.scalar``)
    or a copy of the values; whole numbers or truth values, rounded, for
    code that takes them (``shape.integers``)."""
    x = np.asarray(losses, dtype=float)
    x = x[:, 0].copy() if x.shape[1] == 1 else x.copy()
    x = rounded(x, shape.integers)
    return x.flat[0].item() if shape.scalar else x


def outputs_of(fn, shape: Shape, kwargs: dict, losses: np.ndarray, runs: int,
               rng: np.random.Generator, where: str) -> list:
    """The function's outputs on ``runs`` runs of the input ``losses``."""
    words = rng.integers(0, SEED_WORDS, size=1 if shape.size else runs, dtype=np.int64)
    streams = Streams(words, code=fn)
    ints = rng.integers(0, 2 ** 32, size=runs, dtype=np.int64) if shape.int_seed else None
    with streams.active() as set_run:
        try:
            if shape.size:
                set_run(0)
                kw = dict(kwargs)
                kw[shape.size] = runs
                if shape.rng:
                    kw[shape.rng] = int(ints[0]) if shape.int_seed else rng
                return split_batch(_call(fn, shape, _input(losses, shape), kw), runs, where)
            outs = []
            kw = dict(kwargs)
            for i in range(runs):
                set_run(i)
                if shape.rng:
                    kw[shape.rng] = int(ints[i]) if shape.int_seed else rng
                outs.append(_call(fn, shape, _input(losses, shape), kw))
            return outs
        except UserCodeError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's function
            raise UserCodeError.raised(where, None, exc) from exc


def probe(fn, shape: Shape, kwargs: dict, inputs: list, where: str) -> OutputForm:
    """The layout of the function's outputs, from ``PROBE_RUNS`` runs on
    each of ``inputs`` ((T, K) arrays) with fixed streams."""
    outs = []
    for k, x in enumerate(inputs):
        outs += outputs_of(fn, shape, kwargs, x, PROBE_RUNS,
                           np.random.default_rng([PROBE_STREAM, k]), where)
    return form_of(outs, inputs[0].shape[0], where)


READ_RUNS = 32
READ_STREAM = 0x5EAD
READ_MAX_ROUNDS = 64


def _same(a: list, b: list) -> bool:
    try:
        return all(leaves(x) == leaves(y) for x, y in zip(a, b)) and len(a) == len(b)
    except Exception:   # noqa: BLE001 - an output without a usable equality
        return False


def read_rounds(fn, shape: Shape, kwargs: dict, T: int, K: int, lo: float, hi: float,
                where: str) -> Optional[set]:
    """The rounds (input positions) the function's output depends on, seen
    on coupled runs: the same ``READ_RUNS`` streams on an input and on that
    input with one round moved across the range, from three bases (all
    ``lo``, all ``hi``, random values).  A round no change moved in any run
    is taken as not read.  Only power rests on this (the audit's pairs
    change the rounds read); None when it cannot tell (more than
    ``READ_MAX_ROUNDS`` rounds, or the code fails on a changed input)."""
    if T > READ_MAX_ROUNDS:
        return None
    rand = lo + (hi - lo) * np.random.default_rng(READ_STREAM).random((T, K))
    bases = [np.full((T, K), lo), np.full((T, K), hi), rand]
    read: set = set()
    try:
        for b, x in enumerate(bases):
            ref = outputs_of(fn, shape, kwargs, x, READ_RUNS,
                             np.random.default_rng([READ_STREAM, b]), where)
            for t in range(T):
                if t in read:
                    continue
                y = x.copy()
                y[t] = lo + hi - x[t] if b == 2 else (hi if b == 0 else lo)
                out = outputs_of(fn, shape, kwargs, y, READ_RUNS,
                                 np.random.default_rng([READ_STREAM, b]), where)
                if not _same(ref, out):
                    read.add(t)
    except UserCodeError:
        return None
    return read


# Clamps: a far value (beyond any clamp a person writes), the farthest
# clamp taken for one (a clamp at ±10⁶ guards against overflow, it does not
# say what the values mean), the bisection's steps, the runs compared, and
# the slowest probe call worth the search.
CLAMP_FAR = 1e9
CLAMP_MOST = 1e4
CLAMP_STEPS = 48
CLAMP_RUNS = 16
CLAMP_STREAM = 0xC1A4
CLAMP_MAX_SECONDS = 0.05
# An end is confirmed on this many fresh runs: a clamp holds in every run,
# while an output that merely stops depending on a far value (an argmax the
# moved answer no longer wins) is reached further out the more runs look.
CLAMP_CONFIRM_RUNS = 1024
# A clamp leaves the output continuous at its end: just inside it the
# outputs are (run for run) nearly those beyond it.  A filter that drops
# out-of-range values (``x[(x >= 0) & (x <= 1)]``) makes them jump there —
# the value counts just inside and not beyond —, and taking its end for a
# clamp would widen the domain to values the code treats as absent.  The
# outputs' distance from the far ones is measured at the bisection's last
# point inside the end (near it, though rounded outputs agreeing on the
# bisection's few runs leave it a little way in) and CLAMP_INSIDE of the
# way back to the midpoint: a clamp's is at most CLAMP_JUMP times the
# latter (it grows with the distance from the end), a filter's about the
# same (the jump) or more.
CLAMP_INSIDE = 0.5
CLAMP_JUMP = 0.1
# An end within this share of the range's width of the range's own end does
# not widen it (a clamp at the range's end, found a hair beyond it).
CLAMP_NEGLIGIBLE = 1e-6


def _distance(a: list, b: list) -> float:
    """How far outputs ``a`` lie from ``b``, run for run: the mean over runs
    of the largest difference between numeric leaves (1 for any other leaf
    that differs, or a different number of leaves)."""
    total = 0.0
    for x, y in zip(a, b):
        u, v = leaves(x), leaves(y)
        if len(u) != len(v):
            total += 1.0
            continue
        worst = 0.0
        for p, q in zip(u, v):
            if isinstance(p, (int, float)) and isinstance(q, (int, float)):
                d = abs(float(p) - float(q))
                worst = max(worst, d if math.isfinite(d) else (0.0 if p == q else 1.0))
            elif p != q:
                worst = max(worst, 1.0)
        total += worst
    return total / max(len(a), 1)


def clamped_range(fn, shape: Shape, kwargs: dict, T: int, K: int, lo: float, hi: float,
                  where: str, t: int = 0) -> Optional[tuple]:
    """The interval the function clamps its input to (``np.clip(x, 0, 10)``,
    ``min(max(x, lo), hi)``), seen on coupled runs of answer ``t`` moved
    while the others sit at the range's midpoint, or None where none is
    seen.  An end is a clamp where the outputs at ±10⁹ and at ±10⁴ agree
    run for run while those at the midpoint do not, and the runs at ±10⁹
    still differ from one another: the noise survives the clamp, so it is
    the input that was clamped, not the output (``np.clip(x + noise, 0,
    1)`` saturates every run to one value and is not taken for one).  A
    bisection finds where the outputs start to agree with the far ones;
    the end is the simplest decimal near that point whose outputs still
    agree (10, where rounded outputs first agree at 9.94); it must then
    agree with the far value on ``CLAMP_CONFIRM_RUNS`` fresh runs, and
    the outputs must not jump there (``CLAMP_JUMP``: a filter dropping
    out-of-range values is no clamp).  Each end found beyond ``lo`` or
    ``hi`` (by more than ``CLAMP_NEGLIGIBLE`` of the width) replaces it; an
    end inside the range is left as it is.  Returns ((lo, hi), (low end found, high end
    found)), or None — also where the code fails on far values or is too
    slow for the search (``CLAMP_MAX_SECONDS`` a call of ``CLAMP_RUNS``
    runs).  Only what the code was seen to do sets the range; the summary
    says so and ``--input-range`` sets another."""
    mid = (lo + hi) / 2
    base = np.full((T, K), mid)
    seen: dict = {}         # the midpoint is compared from both ends

    def outputs(v, runs: int, stream: int):
        x = base.copy()
        x[t] = v
        return outputs_of(fn, shape, kwargs, x, runs, np.random.default_rng(stream), where)

    def at(v):
        if v not in seen:
            seen[v] = outputs(v, CLAMP_RUNS, CLAMP_STREAM)
        return seen[v]

    def end(sign) -> Optional[float]:
        found = bisected(sign)
        if found is None:
            return None
        e, a = found
        def fresh(v):
            return outputs(v, CLAMP_CONFIRM_RUNS, CLAMP_STREAM + 1)
        far = fresh(sign * CLAMP_FAR)
        # confirmed on fresh runs: an argmax's "clamp" moves out as more look
        if not _same(fresh(e), far):
            return None
        # and continuous there: a filter's outputs jump at its end
        near = _distance(fresh(a), far)
        inside = _distance(fresh(a - sign * CLAMP_INSIDE * abs(a - mid)), far)
        return e if inside > 0 and near <= CLAMP_JUMP * inside else None

    def bisected(sign) -> Optional[tuple]:
        """(the end, the last point inside it whose outputs differ from the
        far ones)."""
        far = at(sign * CLAMP_FAR)
        if all(leaves(r) == leaves(far[0]) for r in far[1:]):
            return None                     # no noise left at far values: an output clamp
        if not _same(at(sign * CLAMP_MOST), far) or _same(at(mid), far):
            return None                     # no clamp within reach, or one inside the range
        a, b = mid, sign * CLAMP_MOST       # a: outputs differ from far's; b: alike
        for _ in range(CLAMP_STEPS):
            m = (a + b) / 2
            a, b = (a, m) if _same(at(m), far) else (m, b)
        window = 0.1 * abs(b - mid) + abs(b - a)
        scale = 10.0 ** math.ceil(math.log10(abs(b) + window))
        while scale >= abs(b - a):          # the coarsest decimals first
            nice = round(b / scale) * scale
            if abs(nice - b) <= window and _same(at(nice), far):
                return float(nice) + 0.0, a
            scale /= 10
        return float(b), a

    try:
        start = time.perf_counter()
        at(mid)
        if time.perf_counter() - start > CLAMP_MAX_SECONDS:
            return None
        # The far values are the probe's, not the user's: what the code
        # warns of there (np.exp(1e9) overflows) is not shown.
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            new_lo, new_hi = end(-1), end(+1)
    except Exception:   # noqa: BLE001 - code failing on far values: no clamp seen
        return None
    tiny = CLAMP_NEGLIGIBLE * (hi - lo)
    found = (new_lo is not None and new_lo < lo - tiny, new_hi is not None and new_hi > hi + tiny)
    out = (new_lo if found[0] else lo, new_hi if found[1] else hi)
    return (out, found) if any(found) and out[0] < out[1] else None


def function_learner(fn, shape: Shape, kwargs: dict, form: OutputForm, where: str) -> Learner:
    """The learner calling ``fn`` on the whole input (``Learner.whole``)."""
    def whole(losses, runs, rng):
        return form.encode(outputs_of(fn, shape, kwargs, losses, runs, rng, where))

    def unused(*args):
        raise RuntimeError("a mechanism function is simulated through Learner.whole")

    one_run = None
    if shape.size is None:
        def one_run(losses, rng, seed):
            """One call on ``rng`` (the exact replay's generator; an integer
            seed parameter gets ``seed``), its output as the function
            returns it."""
            kw = dict(kwargs)
            if shape.rng:
                kw[shape.rng] = seed if shape.int_seed else rng
            return _call(fn, shape, _input(losses, shape), kw)

    one_batch = None
    if shape.size is not None:
        def one_batch(losses, rng, runs, seed):
            """One call for ``runs`` runs on ``rng`` (an integer seed
            parameter gets ``seed``), its outputs as the function returns
            them."""
            kw = dict(kwargs)
            kw[shape.size] = runs
            if shape.rng:
                kw[shape.rng] = seed if shape.int_seed else rng
            return _call(fn, shape, _input(losses, shape), kw)

    point = (lambda state: None) if form.step.numbers else None
    return Learner(unused, unused, unused, form.step.n_codes, feedback="stream",
                   point=point, whole=whole, one_run=one_run, one_batch=one_batch)
