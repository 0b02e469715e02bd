"""Running a mechanism's own code on chosen uniform draws and watching what
it does with them: the generator and the arrays of an exact replay.

A mechanism whose randomness is uniform draws (``rng.random``,
``rng.integers``) that it only *compares* — against constants, against
numbers computed from earlier comparisons, or by ``np.searchsorted`` into a
sorted table — behaves the same for every draw between two of the values it
compares with: the comparisons decide everything it computes.  Run on one
value of each such interval, the code itself says what it outputs there,
and the interval's length is that output's probability, with no declared
table anywhere.

``ReplayGenerator`` stands in for the generator: each uniform draw returns
a ``Traced`` array holding the values the driver chose and, per element, the
draw elements it depends on (a bitset: a Python int).  A raw draw may only
be compared (``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``) or searched
(``np.searchsorted``); every comparison is recorded as a cut of that
element's grid.  Values computed from comparisons (``np.where``,
arithmetic, reductions, indexing) carry the union of their inputs'
dependencies.  Anything else — any other law (``rng.laplace``), arithmetic
on a raw draw, turning a value that depends on the draws into a plain
number (``float``, ``if``, ``np.asarray``), indexing with one, a numpy
function not listed here — raises ``ReplayRefused`` naming it: the replay
then claims nothing, and the code is never misread.

May import: numpy only.
"""
from __future__ import annotations

import math
import operator
import random as _random
import threading
from contextlib import contextmanager
from fractions import Fraction

import numpy as np

RANDOM_GRID = 2 ** 53       # rng.random() returns k / 2^53, k uniform on [0, 2^53)
_CMP = {np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">=",
        np.equal: "==", np.not_equal: "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


_CONVERSIONS = threading.local()     # .deps: what one run's code turned into plain values


@contextmanager
def conversions():
    """While one run's code is called: values computed from comparisons may
    be turned into plain numbers (branches, ``float``), and the union of
    their dependencies is collected; ``get()`` returns it."""
    _CONVERSIONS.deps = 0
    try:
        yield lambda: _CONVERSIONS.deps
    finally:
        _CONVERSIONS.deps = None


class ReplayRefused(Exception):
    """The code does something with its draws that an exact replay cannot
    follow; the message says what."""


def _or(*deps) -> np.ndarray:
    """Element-wise union of broadcast dependency arrays (object dtype)."""
    out = None
    for d in deps:
        out = d if out is None else np.bitwise_or(out, d)
    return out


def empty_deps(shape) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.fill(0)
    return out


class Traced:
    """Values and their per-element draw dependencies.  ``raw`` holds, for a
    draw straight from the generator (maybe indexed), each element's id, and
    ``draw`` the draw it came from; None for computed values."""

    __array_priority__ = 1000

    def __init__(self, values, deps, raw=None, draw=None):
        self.values = np.asarray(values)
        self.deps = deps
        self.raw = raw
        self.draw = draw

    # -- what numpy asks of an array-like
    @property
    def shape(self):
        return self.values.shape

    @property
    def ndim(self):
        return self.values.ndim

    @property
    def size(self):
        return self.values.size

    @property
    def dtype(self):
        return self.values.dtype

    def __len__(self):
        return len(self.values)

    def __getitem__(self, key):
        if isinstance(key, Traced) or (isinstance(key, tuple)
                                       and any(isinstance(k, Traced) for k in key)):
            raise ReplayRefused("the code indexes with a value that depends on its draws")
        raw = None if self.raw is None else self.raw[key]
        return Traced(self.values[key], self.deps[key], raw, self.draw)

    def reshape(self, *shape):
        raw = None if self.raw is None else self.raw.reshape(*shape)
        return Traced(self.values.reshape(*shape), self.deps.reshape(*shape), raw, self.draw)

    def copy(self):
        return Traced(self.values.copy(), self.deps.copy(), self.raw, self.draw)

    def astype(self, dtype, *args, **kwargs):
        self._not_raw("astype")
        return Traced(self.values.astype(dtype), self.deps)

    def sum(self, axis=None, **kwargs):
        return np.sum(self, axis=axis, **kwargs)

    def any(self, axis=None, **kwargs):
        return np.any(self, axis=axis, **kwargs)

    def all(self, axis=None, **kwargs):
        return np.all(self, axis=axis, **kwargs)

    def _not_raw(self, what: str) -> None:
        if self.raw is not None:
            raise ReplayRefused(f"the code applies {what} to a uniform draw itself (only "
                                f"comparisons of a draw can be replayed exactly)")

    # -- conversions to plain numbers.  A value computed from comparisons is
    # the same on a whole cell, so one run's code may branch on it or turn
    # it into a number, provided everything that run outputs is then taken
    # to depend on it (``conversions``: code called one run at a time).
    # Anywhere else the draws would escape the replay: refused.
    def _convert(self, plain):
        if self.raw is not None:
            raise ReplayRefused("the code turns a uniform draw itself into a plain number "
                                "(only comparisons of a draw can be replayed exactly)")
        seen = getattr(_CONVERSIONS, "deps", None)
        if seen is None:
            raise ReplayRefused("the code turns a value that depends on its draws into a plain "
                                "number or array (float, int, bool, if, np.asarray, tolist)")
        _CONVERSIONS.deps = seen | int(np.bitwise_or.reduce(self.deps.ravel(), initial=0))
        return plain(self.values)

    def __bool__(self):
        return self._convert(bool)

    def __float__(self):
        return self._convert(float)

    def __int__(self):
        return self._convert(int)

    def __index__(self):
        return self._convert(operator.index)

    def __array__(self, dtype=None, copy=None):
        return self._convert(lambda v: np.array(v, dtype=dtype))

    def tolist(self):
        return self._convert(lambda v: v.tolist())

    def item(self, *args):
        return self._convert(lambda v: v.item(*args))

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    # -- operators, through the ufuncs below
    def _binary(ufunc, reflected=False):
        def op(self, other):
            return ufunc(other, self) if reflected else ufunc(self, other)
        return op

    __lt__, __le__ = _binary(np.less), _binary(np.less_equal)
    __gt__, __ge__ = _binary(np.greater), _binary(np.greater_equal)
    __eq__, __ne__ = _binary(np.equal), _binary(np.not_equal)
    __add__, __radd__ = _binary(np.add), _binary(np.add, True)
    __sub__, __rsub__ = _binary(np.subtract), _binary(np.subtract, True)
    __mul__, __rmul__ = _binary(np.multiply), _binary(np.multiply, True)
    __truediv__, __rtruediv__ = _binary(np.true_divide), _binary(np.true_divide, True)
    __and__, __rand__ = _binary(np.logical_and), _binary(np.logical_and, True)
    __or__, __ror__ = _binary(np.logical_or), _binary(np.logical_or, True)
    del _binary
    __hash__ = None

    def __repr__(self):
        return self._convert(repr)

    def __str__(self):
        return self._convert(str)

    def __format__(self, spec):
        return self._convert(lambda v: format(v.item() if v.ndim == 0 else v, spec))

    def __invert__(self):
        return np.logical_not(self)

    def __neg__(self):
        return np.negative(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if kwargs.get("out") is not None or kwargs.get("where", True) is not True:
            raise ReplayRefused(f"the code calls {ufunc.__name__} with out= or where=")
        if method == "reduce":
            (x,) = inputs
            x._not_raw(f"{ufunc.__name__}.reduce")
            axis = kwargs.get("axis", 0)
            keep = kwargs.get("keepdims", False)
            values = ufunc.reduce(x.values, axis=axis, keepdims=keep,
                                  **({"dtype": kwargs["dtype"]} if kwargs.get("dtype") else {}))
            deps = np.bitwise_or.reduce(x.deps, axis=axis, keepdims=keep)
            return Traced(values, deps if isinstance(deps, np.ndarray) else
                          np.array(deps, dtype=object))
        if method != "__call__":
            raise ReplayRefused(f"the code calls {ufunc.__name__}.{method} on its draws")
        plain = [x.values if isinstance(x, Traced) else np.asarray(x) for x in inputs]
        values = ufunc(*plain, **kwargs)
        shape = np.shape(values)
        deps = _or(*[np.broadcast_to(x.deps, shape) for x in inputs if isinstance(x, Traced)])
        raw = [i for i, x in enumerate(inputs) if isinstance(x, Traced) and x.raw is not None]
        if raw:
            if ufunc not in _CMP or len(inputs) != 2 or len(raw) != 1:
                raise ReplayRefused(f"the code applies {ufunc.__name__} to a uniform draw "
                                    f"itself (only comparisons of a draw with other values "
                                    f"can be replayed exactly)")
            i = raw[0]
            op = _CMP[ufunc] if i == 0 else _FLIP[_CMP[ufunc]]
            draw = inputs[i]
            draw.draw.record(np.broadcast_to(draw.raw, shape),
                             np.broadcast_to(plain[1 - i], shape), op)
        return Traced(values, np.array(deps, dtype=object))

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCTIONS.get(func)
        if handler is None:
            raise ReplayRefused(f"the code calls np.{func.__name__} on values that depend on "
                                f"its draws, which an exact replay does not follow")
        return handler(*args, **kwargs)


def _parts(x):
    if isinstance(x, Traced):
        return x.values, x.deps
    v = np.asarray(x)
    return v, None


def _where(cond, x=None, y=None):
    if x is None or y is None:
        raise ReplayRefused("the code calls np.where with one argument on its draws")
    if isinstance(cond, Traced) and cond.raw is not None:
        raise ReplayRefused("the code uses a uniform draw itself as a condition")
    for a in (x, y):
        if isinstance(a, Traced) and a.raw is not None:
            raise ReplayRefused("a uniform draw's own value flows into the output "
                                "(np.where); only comparisons of a draw can be replayed")
    parts = [_parts(a) for a in (cond, x, y)]
    values = np.where(*(p[0] for p in parts))
    deps = _or(*[np.broadcast_to(d, values.shape) for _, d in parts if d is not None])
    return Traced(values, np.array(deps, dtype=object))


def _searchsorted(a, v, side="left", sorter=None):
    if isinstance(a, Traced) or sorter is not None:
        raise ReplayRefused("np.searchsorted into values that depend on the draws")
    a = np.asarray(a)
    if not isinstance(v, Traced):
        return np.searchsorted(a, v, side=side)
    values = np.searchsorted(a, v.values, side=side)
    if v.raw is not None:
        # side="left" counts a_i < v (cut between a_i and the next value up),
        # side="right" counts a_i <= v (cut at a_i)
        op = ">" if side == "left" else ">="
        for t in a.ravel():
            v.draw.record(v.raw, np.broadcast_to(t, v.shape), op)
    return Traced(values, v.deps.copy())


def _reduction(ufunc):
    def reduce(x, axis=None, keepdims=False, **kwargs):
        if not isinstance(x, Traced):
            return ufunc.reduce(np.asarray(x).ravel() if axis is None else np.asarray(x),
                                axis=0 if axis is None else axis, keepdims=keepdims)
        if axis is None:
            x, axis = x.reshape(-1), 0
        return ufunc.reduce(x, axis=axis, keepdims=keepdims)
    return reduce


def _join(stacker):
    def join(arrays, axis=0, **kwargs):
        vals, deps = [], []
        for a in arrays:
            if isinstance(a, Traced) and a.raw is not None:
                raise ReplayRefused("a uniform draw's own value is stacked into the output")
            v, d = _parts(a)
            vals.append(v)
            deps.append(empty_deps(v.shape) if d is None else d)
        return Traced(stacker(vals, axis=axis), stacker(deps, axis=axis))
    return join


def _shape(x):
    return np.shape(x.values if isinstance(x, Traced) else x)


_FUNCTIONS = {np.where: _where, np.searchsorted: _searchsorted,
              np.sum: _reduction(np.add), np.any: _reduction(np.logical_or),
              np.all: _reduction(np.logical_and), np.concatenate: _join(np.concatenate),
              np.stack: _join(np.stack), np.shape: _shape,
              np.ndim: lambda x: len(_shape(x)), np.size: lambda x: int(np.prod(_shape(x)))}


class Draw:
    """One uniform draw call: its grid (``rng.random``: k/2^53 for k in
    [0, 2^53); ``rng.integers``: the integers in [low, high)), the ids of
    its elements, and the cuts its comparisons made, per element: grid
    indices c such that the code's comparisons cannot tell apart two values
    both below c or both at or above it."""

    def __init__(self, kind: str, low: int, high: int, ids: np.ndarray):
        self.kind, self.low, self.high, self.ids = kind, low, high, ids
        self.cuts: dict = {}

    @property
    def size(self) -> int:
        """The number of grid points."""
        return RANDOM_GRID if self.kind == "random" else self.high - self.low

    def value(self, index: np.ndarray) -> np.ndarray:
        """The draw values at grid indices ``index``."""
        if self.kind == "random":
            return np.asarray(index, dtype=np.float64) / RANDOM_GRID
        return np.asarray(index, dtype=np.int64) + self.low

    def _on_grid(self, t) -> Fraction:
        """The threshold t in grid units, exactly (the scaling of a double
        by 2^53 is exact, and integers compare exactly)."""
        if self.kind == "random":
            return Fraction(float(t)) * RANDOM_GRID
        return Fraction(t.item() if hasattr(t, "item") else t) - self.low

    def _first_at_least(self, t) -> int:
        """The first grid index whose value is ≥ t."""
        return min(max(math.ceil(self._on_grid(t)), 0), self.size)

    def _first_above(self, t) -> int:
        """The first grid index whose value is > t."""
        return min(max(math.floor(self._on_grid(t)) + 1, 0), self.size)

    def record(self, ids: np.ndarray, thresholds: np.ndarray, op: str) -> None:
        """Cuts of the comparisons ``draw op threshold``, element-wise."""
        if (self.kind == "integers" and max(abs(self.low), abs(self.high)) > 2 ** 53
                and np.asarray(thresholds).dtype.kind not in "iub"):
            # numpy compares such integers with a float after rounding them
            raise ReplayRefused("an integer draw beyond 2^53 is compared with a float")
        for e, t in zip(np.ravel(ids), np.ravel(thresholds)):
            if isinstance(t, (float, np.floating)) and not math.isfinite(t):
                continue        # ±inf or NaN: the same outcome on the whole grid
            cuts = self.cuts.setdefault(int(e), set())
            if op in ("<", ">="):
                cuts.add(self._first_at_least(t))
            elif op in ("<=", ">"):
                cuts.add(self._first_above(t))
            else:
                cuts.update((self._first_at_least(t), self._first_above(t)))


class ReplayGenerator:
    """A stand-in for ``numpy.random.Generator`` whose uniform draws return
    the values ``choose(call, kind, low, high, shape) -> grid indices`` asks
    for, as ``Traced`` arrays; every other method is refused."""

    def __init__(self, choose, first_id: int = 0, limit: int = 10 ** 7):
        self.choose = choose
        self.draws: list[Draw] = []
        self._next = self._first = first_id
        self.limit = limit

    def _make(self, kind, low, high, size):
        shape = () if size is None else tuple(np.atleast_1d(size).astype(int).tolist())
        n = int(np.prod(shape)) if shape else 1
        if self._next + n - self._first > self.limit:
            raise ReplayRefused(f"the code draws more than {self.limit} uniforms (a loop on "
                                f"its draws that the replay's choices do not end)")
        ids = np.arange(self._next, self._next + n).reshape(shape)
        self._next += n
        draw = Draw(kind, low, high, ids)
        index = np.asarray(self.choose(len(self.draws), draw, shape))
        self.draws.append(draw)
        deps = np.empty(shape, dtype=object)
        flat = deps.reshape(-1)
        for k, i in enumerate(ids.reshape(-1)):
            flat[k] = 1 << int(i)
        return Traced(draw.value(index).reshape(shape), deps, ids, draw)

    def random(self, size=None, dtype=np.float64, out=None):
        if out is not None or np.dtype(dtype) != np.float64:
            raise ReplayRefused("rng.random with out= or float32")
        return self._make("random", 0, RANDOM_GRID, size)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        low, high = operator.index(low), operator.index(high)
        return self._make("integers", low, high + 1 if endpoint else high, size)

    def __getattr__(self, name):
        raise ReplayRefused(f"the code draws from rng.{name}: only uniform draws "
                            f"(rng.random, rng.integers) can be replayed exactly")


_SEAL = threading.Lock()


def _refuse_source(name: str):
    def refused(*args, **kwargs):
        raise ReplayRefused(f"the code draws from {name}, not from the generator it is given: "
                            f"randomness the replay cannot see")
    return refused


def _routes(gen: "ReplayGenerator") -> dict:
    """The global uniform draws of code written as one call per run, sent to
    that run's replay generator: numpy's ``random``/``rand``/``randint``
    and Python's ``random``/``randint``/``randrange`` (their grids are the
    generator's: k/2^53, and uniform integers)."""
    def rand(*dims):
        return gen.random(dims or None)

    def randint(low, high=None, size=None, dtype=int):
        return gen.integers(low, high, size)

    def randrange(start, stop=None, step=1):
        if step != 1:
            raise ReplayRefused("random.randrange with a step")
        return gen.integers(0, start) if stop is None else gen.integers(start, stop)

    def py_random():
        return gen.random()

    return {(np.random, "random"): gen.random, (np.random, "random_sample"): gen.random,
            (np.random, "sample"): gen.random, (np.random, "rand"): rand,
            (np.random, "randint"): randint, (_random, "random"): py_random,
            (_random, "randint"): lambda a, b: gen.integers(a, b + 1),
            (_random, "randrange"): randrange}


@contextmanager
def sealed(route: "ReplayGenerator | None" = None):
    """While the code is replayed, every other source of randomness it could
    reach by name — numpy's global functions and generator constructors,
    Python's ``random`` — refuses (``ReplayRefused``): a draw the replay
    does not choose would make a chosen cell's output a matter of chance.
    With ``route`` (code called one run at a time), their uniform draws go
    to that run's replay generator instead (``_routes``).  (What is out of
    reach here, e.g. ``os.urandom``, the law's final check catches: the
    same draws in another run order must give the same outputs.)"""
    targets = [(np.random, n) for n in dir(np.random)
               if not n.startswith("_") and callable(getattr(np.random, n))]
    targets += [(_random, n) for n in dir(_random)
                if not n.startswith("_") and callable(getattr(_random, n))
                and n not in ("getstate", "setstate")]
    routes = _routes(route) if route is not None else {}
    with _SEAL:
        saved = [(mod, n, getattr(mod, n)) for mod, n in targets]
        # A global function imported by name before the audit is not
        # reached by the patching: its draws still move the global states.
        before = global_states()
        try:
            for mod, n, _ in saved:
                setattr(mod, n, routes.get((mod, n)) or _refuse_source(f"{mod.__name__}.{n}"))
            yield
        finally:
            for mod, n, original in saved:
                setattr(mod, n, original)
        if global_states() != before:
            raise ReplayRefused("the code drew from numpy's or Python's global random state "
                                "through a name the replay does not reach")


def global_states():
    """numpy's global ``RandomState`` and Python's ``random`` states."""
    state = np.random.mtrand._rand.get_state(legacy=False)
    return (_random.getstate(), state["state"]["key"].tobytes(), state["state"]["pos"],
            state["has_gauss"], state["gauss"])


def generator_states() -> dict:
    """The state of every numpy bit generator alive (by id): a generator
    the code keeps somewhere and draws from moves its state."""
    import gc
    out = {}
    for o in gc.get_objects():
        if isinstance(o, np.random.BitGenerator):
            try:
                out[id(o)] = repr(o.state)
            except Exception:   # noqa: BLE001 - an exotic bit generator: not compared
                continue
    return out
