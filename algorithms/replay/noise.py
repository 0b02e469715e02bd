"""Following a mechanism's continuous draws through its code: the values and
generator of a trace of Laplace, Gaussian, exponential and Gumbel noise.

A DP mechanism adds noise to numbers it computes from its input, adds
noises together (a tree counter's prefix sums), and compares noisy numbers
(a sparse vector's threshold test, report-noisy-max's argmax, a clip).
Each of these keeps the output an *affine* function of the draws, or
decides it by a comparison of affine functions.  So each draw element is
a variable Z_i of a standard law (``LAWS``: Laplace of scale 1, the
standard normal, exponential of scale 1, Gumbel of location 0 and scale 1),
and ``rng.laplace(loc, scale)`` returns ``loc + scale · Z_i``.

``Noisy`` holds, per element, that affine form — a constant and a
coefficient per variable — and the code runs *on concrete values* of the
variables (``NoiseTrace.z``): sums, differences, negation, scaling or
division by numbers that carry no noise, sums and cumulative sums, dot
products with plain matrices, indexing, stacking and ``np.where`` with a
plain condition keep the form; a comparison of two forms that differ in
some variable returns its plain outcome at the concrete values *and records
it* (``NoiseTrace.constraints``: const + coef·Z > 0 held on this run), as
do ``np.maximum``/``minimum``/``clip``/``abs``, ``max``/``argmax`` and
``sort``/``argsort`` (by the comparisons that decide them).  The run's path
is then the set of draws satisfying every recorded comparison, and on it
each output is the recorded affine form: ``algorithms.replay.paths``
enumerates the paths and confirms each by re-executing the code.

A noisy value turned into a plain number (``float``, ``.item()``,
``np.asarray``) is returned as such and remembered (``NoiseTrace.escaped``):
an output equal to it is read as its form; anything the code does with it
afterwards is invisible here, and re-execution is what catches it.  A noisy
value *rounded* onto a grid (``round(x, 2)``, ``int``, ``math.floor`` and
``ceil``, ``np.round``, ``np.floor``/``ceil``/``trunc``/``rint``) is its
plain rounded value, remembered the same way with how it was rounded
(``NoiseTrace.rounded``, ``Rounded``): which grid value comes out is decided
by the interval of the grid its form falls in (``preimage``).  Any other
function of a noisy value (``exp``, a product of two noisy values) raises
``ReplayRefused`` naming it.

May import: numpy, ``algorithms.replay.tracer``.
"""
from __future__ import annotations

import math
import operator
import threading
from dataclasses import dataclass

from algorithms.replay.plain_numpy import np

from algorithms.replay.grid import (Rounded, grid_digits, grid_value,  # noqa: F401
                                    on_grid, preimage, tidy)
from algorithms.replay.grid import make as grid_number
from algorithms.replay.tracer import (_CONVERSIONS, CURRENT_TRACE, PRECISE,  # noqa: F401
                                      ContinuousDraws, ReplayRefused, Traced, empty_deps)

# bound now: while code is traced, numpy.random's names are the replay's
_GEN, _PCG = np.random.Generator, np.random.PCG64


def _rng(seed):
    return _GEN(_PCG(seed))

LAWS = ("laplace", "normal", "exponential", "gumbel")
# How far from the decided side a concrete value must be for the comparison
# to be read as decided (relative): closer, the code's own rounding could
# have decided it either way.
TIE = 1e-12

_CURRENT = CURRENT_TRACE


def _sample(law: str, rng, n: int) -> np.ndarray:
    if law == "laplace":
        return rng.laplace(0.0, 1.0, n)
    if law == "normal":
        return rng.standard_normal(n)
    if law == "exponential":
        return rng.standard_exponential(n)
    return rng.gumbel(0.0, 1.0, n)


class NoiseTrace:
    """One run's variables (their laws and concrete standard values ``z``),
    the comparisons it made (``constraints``: (coef, const) with const +
    coef·z > 0 on this run), and the noisy values it turned into plain
    floats (``escaped``: value → (const, coef)).  ``chosen``: standard
    values of the first variables, where their laws allow them; the rest are
    drawn from ``fallback``."""

    def __init__(self, chosen=(), fallback=None, limit: int = 10_000, plain: bool = False):
        self.chosen = list(chosen)
        self.fallback = fallback if fallback is not None else _rng(0x7AACE)
        self.laws: list = []
        self.z: list = []
        self.constraints: list = []
        self.escaped: dict = {}
        self.rounded: dict = {}         # plain rounded value -> [Rounded, ...] in rounding order
        self.derived: dict = {}         # a number computed from one -> [(Rounded, origin), ...]
        self.converted: dict = {}       # a number the code made plain -> [Rounded, ...]
        self.compared: set = set()      # ids of roundings whose numbers the code compared
        self.read: dict = {}            # rounded value -> how many outputs have read it
        self.limit = limit
        self.plain = plain

    @property
    def size(self) -> int:
        return len(self.z)

    def zvec(self, n=None) -> np.ndarray:
        z = np.asarray(self.z, dtype=float)
        return z if n is None else z[:n]

    def new(self, law: str, n: int) -> np.ndarray:
        """``n`` new variables of ``law``: their indices."""
        start = len(self.z)
        if start + n > self.limit:
            raise ReplayRefused(f"the code draws more than {self.limit} continuous values in one "
                                f"run (a loop on its draws that the trace's values do not end)")
        fresh = None
        chosen = self.chosen
        for k in range(n):
            i = start + k
            c = chosen[i] if i < len(chosen) else None
            if c is not None and (c >= 0 if law == "exponential" else c == c):
                v = float(c)
            else:
                if fresh is None:
                    fresh = iter(_sample(law, self.fallback, n).tolist())
                v = next(fresh)
            self.laws.append(law)
            self.z.append(v)
        return np.arange(start, start + n)

    def record(self, coef: np.ndarray, const: float) -> int:
        """Record a comparison that held; its number (its bit in ``deps``)."""
        self.constraints.append((np.asarray(coef, dtype=float).copy(), float(const)))
        return len(self.constraints) - 1


def current() -> NoiseTrace | None:
    return getattr(_CURRENT, "trace", None)


class tracing:
    """Context: ``trace`` is the run being traced (``Noisy`` values look
    their concrete values up in it)."""

    def __init__(self, trace: NoiseTrace):
        self.trace = trace

    def __enter__(self):
        self.saved = current(), getattr(PRECISE, "on", False)
        _watch_plain_roundings(True)
        _CURRENT.trace = self.trace
        PRECISE.on = True
        return self.trace

    def __exit__(self, *exc):
        _CURRENT.trace, PRECISE.on = self.saved
        _watch_plain_roundings(False)


_WATCHING = {"count": 0, "originals": []}
_WATCH_LOCK = threading.Lock()


def _watch_plain_roundings(on: bool) -> None:
    """Python's roundings wrapped (``_remembering``) while any run is traced,
    in any thread (counted: the first trace in wraps them, the last out
    restores them)."""
    with _WATCH_LOCK:
        if on:
            _WATCHING["count"] += 1
            if _WATCHING["count"] == 1:
                _WATCHING["originals"] = [(m, n, getattr(m, n)) for m, n, _, _ in _PLAIN_ROUNDINGS]
                for m, n, op, step in _PLAIN_ROUNDINGS:
                    setattr(m, n, _remembering(getattr(m, n), op, step))
        else:
            _WATCHING["count"] -= 1
            if _WATCHING["count"] == 0:
                for m, n, original in _WATCHING["originals"]:
                    setattr(m, n, original)


def _remembering(original, op: str, step):
    """``original`` (Python's ``round``, ``math.floor``/``ceil``), which
    also remembers rounding a plain float the code made of a noisy value
    (``float(x)``, ``x.item()``) as the rounding of its form."""
    def rounding(x, *args, **kwargs):
        out = original(x, *args, **kwargs)
        tr = current()
        if tr is not None and type(x) is float:
            form = tr.escaped.get(x)
            if form is not None:
                made = Rounded(form[0], form[1].copy(), op, step(*args, **kwargs))
                tr.rounded.setdefault(float(out), []).append(made)
                return grid_number(out, made)
        return out
    rounding.__wrapped__ = original
    return rounding


def _refuse(what: str):
    raise ReplayRefused(f"the code {what} on a noisy value: the trace of continuous draws "
                        f"follows sums, scalings and comparisons of them only")


def _deps_of(x):
    return x.deps if isinstance(x, (Noisy, Traced)) else None


def _union(shape, *xs) -> np.ndarray:
    """The element-wise union of the comparisons ``xs`` depend on,
    broadcast to ``shape`` (bitsets: Python ints in an object array)."""
    out = empty_deps(shape)
    for x in xs:
        d = _deps_of(x)
        if d is not None:
            out = np.bitwise_or(out, np.broadcast_to(d, shape))
    return np.asarray(out, dtype=object).reshape(shape)


def _all(x) -> int:
    d = _deps_of(x)
    return 0 if d is None else int(np.bitwise_or.reduce(np.asarray(d).ravel(), initial=0))


class Noisy:
    """Values affine in the run's noise variables: ``const`` (shape S),
    ``coef`` (shape S + (V,), V the variables drawn when it was made;
    later ones have coefficient 0) and ``deps`` (shape S): per element, the
    recorded comparisons its value depends on (a bitset), as the replay's
    ``Traced`` values carry them — a comparison whose outcome reaches no
    output is no part of the output's path."""

    __array_priority__ = 1001
    _is_noisy = True

    def __init__(self, const, coef, deps=None):
        self.const = np.asarray(const, dtype=float)
        self.coef = np.asarray(coef, dtype=float)
        self.deps = (empty_deps(self.const.shape) if deps is None else
                     np.array(np.broadcast_to(np.asarray(deps, dtype=object), self.const.shape),
                              dtype=object))

    # -- the form
    def coefs(self, V: int) -> np.ndarray:
        c = self.coef
        if c.shape[-1] < V:
            c = np.concatenate([c, np.zeros(c.shape[:-1] + (V - c.shape[-1],))], axis=-1)
        return c

    @property
    def values(self) -> np.ndarray:
        """The concrete values on this run."""
        tr = current()
        V = self.coef.shape[-1]
        z = tr.zvec(V) if tr is not None else np.zeros(V)
        return self.const + self.coef @ z if V else self.const.copy()

    @property
    def noiseless(self) -> bool:
        return not np.any(self.coef)

    @property
    def shape(self):
        return self.const.shape

    @property
    def ndim(self):
        return self.const.ndim

    @property
    def size(self):
        return self.const.size

    @property
    def dtype(self):
        return np.dtype(float)

    @property
    def T(self):
        return np.transpose(self)

    def __len__(self):
        return len(self.const)

    def _key(self, key):
        """(a plain index, the comparisons a decided index depends on)."""
        if isinstance(key, Noisy) or (isinstance(key, tuple) and any(isinstance(k, Noisy)
                                                                      for k in key)):
            _refuse("indexes an array")
        key = key if isinstance(key, tuple) else (key,)
        extra = 0
        if any(isinstance(k, Traced) for k in key):
            extra = int(np.bitwise_or.reduce([_all(k) for k in key], initial=0))
            key = tuple(k.values if isinstance(k, Traced) else k for k in key)
        if any(k is Ellipsis for k in key):
            i = key.index(Ellipsis)
            used = sum(1 for k in key if k is not None and k is not Ellipsis
                       and not (isinstance(k, np.ndarray) and k.dtype == bool))
            key = key[:i] + (slice(None),) * (self.ndim - used) + key[i + 1:]
        return key, extra

    def __getitem__(self, key):
        key, extra = self._key(key)
        deps = self.deps[key]
        if extra:
            deps = np.bitwise_or(np.asarray(deps, dtype=object), extra)
        return Noisy(self.const[key], self.coef[key], deps)

    def __setitem__(self, key, value):
        key, extra = self._key(key)
        v = lift(value)
        V = max(self.coef.shape[-1], v.coef.shape[-1])
        self.coef = self.coefs(V)
        self.const = self.const.copy() if not self.const.flags.writeable else self.const
        self.const[key] = v.const
        self.coef[key] = v.coefs(V)
        self.deps[key] = np.bitwise_or(np.asarray(v.deps, dtype=object), extra) if extra \
            else v.deps

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        const = self.const.reshape(shape)
        return Noisy(const, self.coef.reshape(const.shape + (self.coef.shape[-1],)),
                     self.deps.reshape(const.shape))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    def copy(self):
        return Noisy(self.const.copy(), self.coef.copy(), self.deps.copy())

    def astype(self, dtype, *args, **kwargs):
        if np.dtype(dtype).kind == "f":
            return self.copy()
        return self._plain(lambda v: v.astype(dtype), "converts with astype")

    def sum(self, axis=None, **kwargs):
        return np.sum(self, axis=axis, **kwargs)

    def mean(self, axis=None, **kwargs):
        return np.mean(self, axis=axis, **kwargs)

    def cumsum(self, axis=None, **kwargs):
        return np.cumsum(self, axis=axis, **kwargs)

    def max(self, axis=None, **kwargs):
        return np.max(self, axis=axis, **kwargs)

    def min(self, axis=None, **kwargs):
        return np.min(self, axis=axis, **kwargs)

    def argmax(self, axis=None, **kwargs):
        return np.argmax(self, axis=axis, **kwargs)

    def argmin(self, axis=None, **kwargs):
        return np.argmin(self, axis=axis, **kwargs)

    def clip(self, a_min=None, a_max=None, **kwargs):
        return np.clip(self, a_min, a_max, **kwargs)

    def dot(self, other):
        return np.dot(self, other)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    # -- turned into plain values: remembered, see the module docstring
    def _taint(self) -> None:
        """A plain value made of this one: what the run does next depends on
        the comparisons it does (as ``Traced._convert``)."""
        seen = getattr(_CONVERSIONS, "deps", None)
        if seen is not None:
            _CONVERSIONS.deps = seen | _all(self)

    def _plain(self, make, what: str):
        self._taint()
        if self.noiseless:
            return make(self.const)
        tr = current()
        if tr is None:
            _refuse(what)
        v = self.values
        coef = self.coef.reshape(-1, self.coef.shape[-1])
        for x, c0, c in zip(v.ravel().tolist(), self.const.ravel().tolist(), coef):
            tr.escaped[x] = (c0, c.copy())
        return make(v)

    def __float__(self):
        return self._plain(lambda v: float(v), "turns it into a float")

    def __int__(self):
        self._taint()
        if self.noiseless:
            return int(self.const)
        # ``int()`` must return an exact int: the number is remembered by
        # its value only (``paths._rounded_as``)
        return int.__int__(self._round("trunc", 1.0, lambda v: int(float(v))))

    def __index__(self):
        self._taint()
        if self.noiseless:
            return operator.index(self.const.item())
        _refuse("uses it as an index")

    def __bool__(self):
        self._taint()
        if self.noiseless:
            return bool(self.const)
        return bool(np.all(self.values != 0))      # a continuous value is 0 with probability 0

    def __round__(self, ndigits=None):
        self._taint()
        if self.noiseless:
            return round(self.const.item(), ndigits)
        return self._round("round", 10.0 ** -(ndigits or 0),
                           lambda v: round(float(v), ndigits))

    def __floor__(self):
        self._taint()
        if self.noiseless:
            return math.floor(self.const.item())
        return self._round("floor", 1.0, lambda v: math.floor(float(v)))

    def __trunc__(self):
        self._taint()
        if self.noiseless:
            return math.trunc(self.const.item())
        return self._round("trunc", 1.0, lambda v: math.trunc(float(v)))

    def __ceil__(self):
        self._taint()
        if self.noiseless:
            return math.ceil(self.const.item())
        return self._round("ceil", 1.0, lambda v: math.ceil(float(v)))

    def round(self, decimals=0, out=None):
        return np.round(self, decimals)

    def _round(self, op: str, step: float, make):
        """The plain value ``make`` rounds this run's concrete values to,
        each element remembered as the rounding of its form (module
        docstring)."""
        self._taint()
        tr = current()
        if tr is None:
            _refuse(f"rounds it ({op})")
        out = make(self.values)
        coef = self.coef.reshape(-1, self.coef.shape[-1])
        made = []
        for q, c0, c in zip(np.ravel(np.asarray(out, dtype=float)).tolist(),
                            self.const.ravel().tolist(), coef):
            made.append(Rounded(c0, c.copy(), op, step))
            tr.rounded.setdefault(q, []).append(made[-1])
        # one number: what the code computes from it is followed (``grid``)
        return grid_number(out, made[0]) if len(made) == 1 \
            and np.ndim(out) == 0 else out

    def __array__(self, dtype=None, copy=None):
        return self._plain(lambda v: np.array(v, dtype=dtype), "turns it into a plain array")

    def item(self, *args):
        return self._plain(lambda v: v.item(*args), "turns it into a number")

    def tolist(self):
        return self._plain(lambda v: v.tolist(), "turns it into a list")

    def __repr__(self):
        return self._plain(repr, "prints it")

    def __str__(self):
        return self._plain(str, "prints it")

    def __format__(self, spec):
        return self._plain(lambda v: format(v.item() if v.ndim == 0 else v, spec), "formats it")

    __hash__ = None

    # -- operators, through the ufuncs
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
    __matmul__, __rmatmul__ = _binary(np.matmul), _binary(np.matmul, True)
    __pow__, __rpow__ = _binary(np.power), _binary(np.power, True)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _binary(np.floor_divide, True)
    __mod__, __rmod__ = _binary(np.remainder), _binary(np.remainder, True)
    del _binary

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return np.absolute(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at":
            _refuse(f"calls {ufunc.__name__}.at")
        if kwargs.get("out") is not None or kwargs.get("where", True) is not True:
            _refuse(f"calls {ufunc.__name__} with out= or where=")
        if method == "reduce":
            axis = kwargs.get("axis", 0)
            keep = kwargs.get("keepdims", False)
            if ufunc is np.add:
                return _sum(inputs[0], axis, keep)
            if ufunc in (np.maximum, np.minimum):
                return _extreme(inputs[0], axis, ufunc is np.maximum, keep)
            if lift(inputs[0]).noiseless:
                x = lift(inputs[0])
                return Traced(getattr(ufunc, method)(x.const, **kwargs),
                              np.array(_all(x), dtype=object))
            _refuse(f"applies {ufunc.__name__}.reduce")
        if method == "accumulate" and ufunc is np.add:
            return _cumsum(inputs[0], kwargs.get("axis", 0))
        if method != "__call__" or kwargs:
            if all(lift(x).noiseless for x in inputs):
                v = getattr(ufunc, method)(*[lift(x).const for x in inputs], **kwargs)
                return Traced(v, np.array(np.bitwise_or.reduce(
                    [_all(x) for x in inputs], initial=0), dtype=object))
            _refuse(f"calls {ufunc.__name__}.{method}")
        return _ufunc(ufunc, inputs)

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCTIONS.get(func)
        if handler is not None:
            return handler(*args, **kwargs)
        noisy = _noisy_args(args, kwargs)
        if all(lift(a).noiseless for a in noisy):
            return _plain_call(func, args, kwargs, noisy)
        _refuse(f"calls np.{func.__name__}")


def _plain_call(func, args, kwargs, noisy):
    """``func`` on arguments that carry no noise (``noisy``: those that are
    traced values), its result carrying the comparisons they depend on."""
    out = func(*_plainify(args), **_plainify(kwargs))
    deps = int(np.bitwise_or.reduce([_all(a) for a in noisy], initial=0))
    if deps and isinstance(out, (np.ndarray, np.generic, int, float, bool)):
        return Traced(out, np.array(np.broadcast_to(np.array(deps, dtype=object),
                                                    np.shape(out)), dtype=object))
    return out


def _noisy_args(args, kwargs):
    out = []

    def walk(x):
        if twin(x) is not None:
            x = twin(x)
        if isinstance(x, (Noisy, Traced)):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
    walk(args)
    walk(kwargs)
    return out


def through(x, leaf):
    """``x`` with ``leaf`` applied to it, or to every element of its tuples,
    lists and dicts (at any depth)."""
    if isinstance(x, tuple):
        return tuple(through(y, leaf) for y in x)
    if isinstance(x, list):
        return [through(y, leaf) for y in x]
    if isinstance(x, dict):
        return {k: through(v, leaf) for k, v in x.items()}
    return leaf(x)


def _plain_leaf(x):
    x = twin(x) if twin(x) is not None else x
    if isinstance(x, Noisy):
        return x.const
    if isinstance(x, Traced):
        return x.values
    return x


def _plainify(x):
    return through(x, _plain_leaf)


def twin(x):
    """A traced run's own float array holding noisy values
    (``slots.Slots``): its ``Noisy`` twin; else None."""
    return getattr(x, "_noisy_twin", None) if isinstance(x, np.ndarray) else None


def has_noisy(x) -> bool:
    if isinstance(x, (Noisy, Traced)) or twin(x) is not None:
        return True
    if isinstance(x, (list, tuple)):
        return any(has_noisy(y) for y in x)
    return False


def lift(x) -> Noisy:
    """``x`` as a ``Noisy`` (a plain number or array: no noise; a list or
    tuple of them stacked)."""
    if isinstance(x, Noisy):
        return x
    if twin(x) is not None:
        return twin(x)
    if isinstance(x, Traced):
        if x.raw is not None:
            _refuse("mixes it with a uniform draw")
        if x.values.dtype.kind not in "biuf":
            _refuse(f"mixes it with values of type {x.values.dtype}")
        return Noisy(x.values.astype(float), np.zeros(x.shape + (0,)), x.deps)
    if isinstance(x, (list, tuple)) and has_noisy(x):
        parts = [lift(y) for y in x]
        V = max(p.coef.shape[-1] for p in parts)
        shape = parts[0].shape
        return Noisy(np.stack([np.broadcast_to(p.const, shape) for p in parts]),
                     np.stack([np.broadcast_to(p.coefs(V), shape + (V,)) for p in parts]),
                     np.stack([np.broadcast_to(p.deps, shape) for p in parts]))
    a = np.asarray(x)
    if a.dtype == object:
        _refuse("mixes it with values of type object")
    if a.dtype.kind not in "biuf":
        _refuse(f"mixes it with values of type {a.dtype}")
    return Noisy(a.astype(float), np.zeros(a.shape + (0,)))


def _pair(a, b):
    a, b = lift(a), lift(b)
    V = max(a.coef.shape[-1], b.coef.shape[-1])
    shape = np.broadcast_shapes(a.shape, b.shape)
    return (np.broadcast_to(a.const, shape), np.broadcast_to(a.coefs(V), shape + (V,)),
            np.broadcast_to(b.const, shape), np.broadcast_to(b.coefs(V), shape + (V,)))


def _plain_of(x) -> np.ndarray:
    """A factor of a product: it must carry no noise."""
    n = lift(x)
    if not n.noiseless:
        _refuse("multiplies or divides two noisy values")
    return n.const


def _compare(a, b):
    """(the sign of a − b per element at the concrete values (+1, −1; 0
    only for two noiseless equal values), what each sign depends on),
    recording every comparison that some variable decides."""
    ca, fa, cb, fb = _pair(a, b)
    deps = _union(ca.shape, a, b).reshape(-1)
    const, coef = ca - cb, fa - fb
    tr = current()
    V = coef.shape[-1]
    z = tr.zvec(V) if (tr is not None and V) else np.zeros(V)
    flat_c, flat_f = const.reshape(-1), coef.reshape(-1, V)
    out = np.sign(flat_c).astype(int) if V == 0 else np.zeros(flat_c.size, dtype=int)
    if V:
        for k in range(flat_c.size):
            f = flat_f[k]
            if not f.any():
                out[k] = int(np.sign(flat_c[k]))
                continue
            if tr is None:
                _refuse("compares it outside a run")
            d = flat_c[k] + f @ z
            if abs(d) <= TIE * (abs(flat_c[k]) + np.abs(f) @ np.abs(z) + 1e-300):
                raise ReplayRefused("a comparison of noisy values fell within rounding of a tie "
                                    "at the trace's values")
            s = 1 if d > 0 else -1
            deps[k] = int(deps[k]) | (1 << tr.record(s * f, s * flat_c[k]))
            out[k] = s
    return out.reshape(const.shape), deps.reshape(const.shape)


def _select(mask, a, b, deps=None) -> Noisy:
    """Element-wise a where mask, else b (``deps``: what the mask depends on)."""
    ca, fa, cb, fb = _pair(a, b)
    m = np.broadcast_to(mask.values if isinstance(mask, Traced) else mask, ca.shape)
    # the mask and the branch it selects
    d = np.bitwise_or(_union(ca.shape, mask),
                      np.where(m, _union(ca.shape, a), _union(ca.shape, b)))
    if deps is not None:
        d = np.bitwise_or(d, np.broadcast_to(deps, ca.shape))
    return Noisy(np.where(m, ca, cb), np.where(m[..., None], fa, fb), d)


def _ufunc(ufunc, inputs):
    if ufunc in (np.add, np.subtract):
        ca, fa, cb, fb = _pair(*inputs)
        return Noisy(ufunc(ca, cb), ufunc(fa, fb), _union(ca.shape, *inputs))
    if ufunc in (np.negative, np.positive):
        x = lift(inputs[0])
        return Noisy(ufunc(x.const), ufunc(x.coef), x.deps)
    if ufunc is np.multiply:
        a, b = (lift(x) for x in inputs)
        if not a.noiseless and not b.noiseless:
            _refuse("multiplies two noisy values")
        n, p = (a, b.const) if b.noiseless else (b, a.const)
        shape = np.broadcast_shapes(n.shape, np.shape(p))
        return Noisy(np.broadcast_to(n.const * p, shape),
                     np.broadcast_to(n.coef * np.asarray(p)[..., None], shape + n.coef.shape[-1:]),
                     _union(shape, a, b))
    if ufunc is np.true_divide:
        n, p = lift(inputs[0]), _plain_of(inputs[1])
        shape = np.broadcast_shapes(n.shape, np.shape(p))
        return Noisy(np.broadcast_to(n.const / p, shape),
                     np.broadcast_to(n.coef / np.asarray(p)[..., None], shape + n.coef.shape[-1:]),
                     _union(shape, *inputs))
    if ufunc is np.matmul:
        return _matmul(*inputs)
    if ufunc in (np.less, np.less_equal, np.greater, np.greater_equal):
        s, d = _compare(*inputs)
        return Traced({np.less: s < 0, np.less_equal: s <= 0, np.greater: s > 0,
                       np.greater_equal: s >= 0}[ufunc], d)
    if ufunc in (np.equal, np.not_equal):
        ca, fa, cb, fb = _pair(*inputs)
        decided = ~np.any(fa != fb, axis=-1)        # equal coefficients: decided by constants
        eq = decided & (ca == cb)                   # else unequal with probability 1
        return Traced(eq if ufunc is np.equal else ~eq, _union(ca.shape, *inputs))
    if ufunc in (np.maximum, np.minimum, np.fmax, np.fmin):
        s, d = _compare(*inputs)
        big = ufunc in (np.maximum, np.fmax)
        return _select(s >= 0 if big else s <= 0, *inputs, deps=d)
    if ufunc is np.absolute:
        s, d = _compare(inputs[0], 0.0)
        x = lift(inputs[0])
        return _select(s >= 0, x, -x, deps=d)
    if ufunc is np.sign:
        s, d = _compare(inputs[0], 0.0)
        return Traced(s.astype(float), d)
    if ufunc in _GRID_UFUNCS and not lift(inputs[0]).noiseless:
        return lift(inputs[0])._round(_GRID_UFUNCS[ufunc], 1.0, ufunc)
    if ufunc in (np.isfinite, np.isnan, np.isinf):
        x = lift(inputs[0])
        return Traced(ufunc(x.const) if x.noiseless else np.full(x.shape, ufunc is np.isfinite),
                      x.deps)
    if all(lift(x).noiseless for x in inputs):
        v = ufunc(*[lift(x).const for x in inputs])
        return Traced(v, _union(np.shape(v), *inputs))
    _refuse(f"applies {ufunc.__name__}")


# ---------------------------------------------------------------- rounding
ROUNDINGS = ("round", "floor", "ceil", "trunc")
# Python's roundings of a plain float, watched while a run is traced
# (``_remembering``): (module, name, how it rounds, its grid step from its arguments).
_PLAIN_ROUNDINGS = (
    (__import__("builtins"), "round", "round", lambda ndigits=None: 10.0 ** -(ndigits or 0)),
    (math, "floor", "floor", lambda: 1.0), (math, "ceil", "ceil", lambda: 1.0))
_GRID_UFUNCS = {np.floor: "floor", np.ceil: "ceil", np.trunc: "trunc", np.rint: "round"}


def _round_array(a, decimals, original):
    x = lift(a)
    if x.noiseless:
        return _plain_call(original, (x.const, decimals), {}, [x])
    return x._round("round", 10.0 ** -decimals, lambda v: np.round(v, decimals))


def _matmul(a, b):
    deps = _all(a) | _all(b)            # every element of a product reads them all
    if isinstance(a, Noisy) or has_noisy(a):
        x, m = lift(a), _plain_of(b)
        const = x.const @ m
        return Noisy(const, np.moveaxis(np.moveaxis(x.coef, -1, 0) @ m, 0, -1),
                     np.array(np.broadcast_to(np.array(deps, dtype=object), np.shape(const))))
    x, m = lift(b), _plain_of(a)
    # m @ x: m's last axis against x's first (x a vector or a matrix)
    const = m @ x.const
    return Noisy(const, np.tensordot(m, x.coef, axes=([m.ndim - 1], [0])),
                 np.array(np.broadcast_to(np.array(deps, dtype=object), np.shape(const))))


def _axis(x: Noisy, axis):
    return axis if axis is None or axis >= 0 else x.ndim + axis


def _sum(a, axis=None, keepdims=False, dtype=None, out=None, **kwargs):
    x = lift(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _axis(x, axis)
    return Noisy(x.const.sum(axis=axis, keepdims=keepdims),
                 x.coef.sum(axis=axis, keepdims=keepdims),
                 np.bitwise_or.reduce(x.deps, axis=axis, keepdims=keepdims))


def _mean(a, axis=None, keepdims=False, **kwargs):
    x = lift(a)
    n = x.size if axis is None else x.shape[axis]
    return _sum(x, axis, keepdims) / n


def _cumsum(a, axis=None, **kwargs):
    x = lift(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _axis(x, axis)
    return Noisy(np.cumsum(x.const, axis=axis), np.cumsum(x.coef, axis=axis),
                 np.bitwise_or.accumulate(x.deps, axis=axis))


def _arg_extreme(a, axis=None, biggest=True, **kwargs):
    """argmax/argmin: the concrete winner, recorded as beating every other
    element (a strict comparison: ties have probability 0 where noise
    decides them; a tie of noiseless values keeps numpy's first)."""
    x = lift(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _axis(x, axis)
    xm = Noisy(np.moveaxis(x.const, axis, -1), np.moveaxis(x.coef, axis, -2),
               np.moveaxis(x.deps, axis, -1))
    v = xm.values
    win = np.argmax(v, axis=-1) if biggest else np.argmin(v, axis=-1)
    deps = empty_deps(win.shape)
    for idx in np.ndindex(win.shape):
        w = int(win[idx])
        row = xm[idx]
        got = _all(row)
        for j in range(row.shape[0]):
            if j != w:
                s, d = _compare(row[w], row[j])
                got |= int(d)
                if (s < 0 if biggest else s > 0) or (s == 0 and j < w):
                    raise ReplayRefused("an argmax disagrees with its own comparisons (a tie)")
        deps[idx] = got
    return Traced(win, deps)


def _extreme(a, axis=None, biggest=True, keepdims=False, **kwargs):
    x = lift(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _axis(x, axis)
    won = _arg_extreme(x, axis, biggest)
    win = np.asarray(won.values)
    xm = Noisy(np.moveaxis(x.const, axis, -1), np.moveaxis(x.coef, axis, -2))
    idx = np.expand_dims(win, -1)
    out = Noisy(np.take_along_axis(xm.const, idx, -1)[..., 0],
                np.take_along_axis(xm.coef, idx[..., None], -2)[..., 0, :], won.deps)
    if keepdims:
        out = Noisy(np.expand_dims(out.const, axis), np.expand_dims(out.coef, axis),
                    np.expand_dims(out.deps, axis))
    return out


def _argsort(a, axis=-1, kind=None, order=None, **kwargs):
    x = lift(a)
    if x.ndim != 1:
        _refuse("sorts a noisy array of more than one axis")
    order = np.argsort(x.values, kind="stable")
    got = _all(x)
    for i, j in zip(order[:-1], order[1:]):
        s, d = _compare(x[j], x[i])
        got |= int(d)
        if s < 0:
            raise ReplayRefused("a sort disagrees with its own comparisons (a tie)")
    return Traced(order, np.array(np.broadcast_to(np.array(got, dtype=object), order.shape)))


def _sort(a, axis=-1, kind=None, order=None, **kwargs):
    x = lift(a)
    return x[_argsort(x)]


def _where(cond, x=None, y=None):
    if x is None or y is None:
        return np.where(_plainify(cond))
    c = lift(cond)
    if not c.noiseless:
        _refuse("uses it as the condition of np.where")
    return _select(c.const.astype(bool), x, y, deps=c.deps)


def _clip(a, a_min=None, a_max=None, out=None, **kwargs):
    x = lift(a)
    if a_min is not None:
        x = np.maximum(x, a_min)
    if a_max is not None:
        x = np.minimum(x, a_max)
    return x


def _join(stacker):
    def join(arrays, axis=0, **kwargs):
        parts = [lift(a) for a in arrays]
        V = max(p.coef.shape[-1] for p in parts)
        ax = axis if axis >= 0 else None
        if ax is None:
            nd = parts[0].ndim + (1 if stacker is np.stack else 0)
            ax = nd + axis
        return Noisy(stacker([p.const for p in parts], axis=ax),
                     stacker([p.coefs(V) for p in parts], axis=ax),
                     stacker([p.deps for p in parts], axis=ax))
    return join


def _dot(a, b, out=None):
    return _matmul(a, b) if (lift(a).ndim and lift(b).ndim) else np.multiply(a, b)


def _shape(x):
    return lift(x).shape


def _transpose(a, axes=None):
    x = lift(a)
    axes = tuple(range(x.ndim))[::-1] if axes is None else tuple(axes)
    return Noisy(np.transpose(x.const, axes), np.transpose(x.coef, axes + (x.ndim,)),
                 np.transpose(x.deps, axes))


def _broadcast_to(a, shape, subok=False):
    x = lift(a)
    shape = tuple(np.atleast_1d(shape).tolist()) if not isinstance(shape, tuple) else shape
    return Noisy(np.broadcast_to(x.const, shape), np.broadcast_to(x.coef, shape + x.coef.shape[-1:]),
                 np.broadcast_to(x.deps, shape))


def _diff(a, n=1, axis=-1, **kwargs):
    x = lift(a)
    for _ in range(n):
        x = x[1:] - x[:-1] if x.ndim == 1 else _refuse("takes np.diff of a noisy matrix")
    return x


def _atleast_1d(*arrays):
    out = [lift(a).reshape(-1) if lift(a).ndim == 0 else lift(a) for a in arrays]
    return out[0] if len(out) == 1 else out


_FUNCTIONS = {
    np.sum: _sum, np.mean: _mean, np.cumsum: _cumsum,
    np.argmax: lambda a, axis=None, **k: _arg_extreme(a, axis, True),
    np.argmin: lambda a, axis=None, **k: _arg_extreme(a, axis, False),
    np.max: lambda a, axis=None, keepdims=False, **k: _extreme(a, axis, True, keepdims),
    np.min: lambda a, axis=None, keepdims=False, **k: _extreme(a, axis, False, keepdims),
    np.amax: lambda a, axis=None, keepdims=False, **k: _extreme(a, axis, True, keepdims),
    np.amin: lambda a, axis=None, keepdims=False, **k: _extreme(a, axis, False, keepdims),
    np.argsort: _argsort, np.sort: _sort, np.where: _where, np.clip: _clip,
    np.concatenate: _join(np.concatenate), np.stack: _join(np.stack),
    np.hstack: lambda arrays, **k: _join(np.concatenate)(
        [lift(a).reshape(-1) if lift(a).ndim == 0 else lift(a) for a in arrays],
        axis=0 if all(lift(a).ndim <= 1 for a in arrays) else 1),
    np.dot: _dot, np.matmul: lambda a, b, **k: _matmul(a, b), np.shape: _shape,
    np.ndim: lambda x: lift(x).ndim, np.size: lambda x, axis=None: lift(x).size,
    np.copy: lambda a, **k: lift(a).copy(), np.transpose: _transpose,
    np.broadcast_to: _broadcast_to, np.diff: _diff, np.atleast_1d: _atleast_1d,
    np.ravel: lambda a, order="C": lift(a).reshape(-1),
    np.reshape: lambda a, *shape, **k: lift(a).reshape(*(shape or (k.get("newshape")
                                                                   or k.get("shape"),))),
    np.squeeze: lambda a, axis=None: lift(a).reshape(np.squeeze(lift(a).const, axis).shape),
    np.around: lambda a, decimals=0, out=None: _round_array(a, decimals, np.around),
    np.round: lambda a, decimals=0, out=None: _round_array(a, decimals, np.round),
}

# numpy functions user code calls on a *list* of noisy values: numpy would
# turn each element into a plain float first; while a run is traced they
# stack the list into one ``Noisy`` array instead (``lifting``).
LIFTED = ("argmax", "argmin", "max", "min", "amax", "amin", "sum", "mean", "cumsum", "sort",
          "argsort", "array", "asarray", "asanyarray", "stack", "concatenate", "hstack",
          "clip", "where", "diff", "dot")


_PLAIN_TYPES = frozenset({np.ndarray, float, int, bool, np.float64, np.int64, np.bool_, type(None),
                          str, np.dtype, type})


def lifting(original):
    """``original`` (a numpy function) taking lists that hold noisy values
    as ``Noisy`` arrays."""
    def lifted(*args, **kwargs):
        for a in args:
            if type(a) not in _PLAIN_TYPES:
                break
        else:
            # numpy's own code and this package's call these too, on plain
            # arrays and numbers: no walk over the arguments
            return original(*args, **kwargs)
        args = tuple(a if twin(a) is None else twin(a) for a in args)
        if (any(isinstance(a, (list, tuple)) and has_noisy(a) for a in args)
                or any(isinstance(a, Noisy) for a in args)):
            name = original.__name__
            if name in ("array", "asarray", "asanyarray"):
                x = lift(args[0])
                dt = kwargs.get("dtype", args[1] if len(args) > 1 else None)
                if dt is not None and np.dtype(dt).kind != "f":
                    return x.astype(dt)
                return x.copy() if name == "array" else x
            if name in ("stack", "concatenate", "hstack"):
                return original([lift(a) for a in args[0]], *args[1:], **kwargs)
            args = tuple(lift(a) if isinstance(a, (list, tuple)) and has_noisy(a) else a
                         for a in args)
        return original(*args, **kwargs)
    lifted.__name__ = getattr(original, "__name__", "lifted")
    return lifted


class NoiseGenerator:
    """A stand-in for a numpy generator (and, routed, for numpy's global
    functions and Python's ``random``) whose continuous draws are new
    variables of ``trace``: ``Noisy`` values, or with ``trace.plain`` the
    plain numbers themselves (re-execution: nothing watched).  Uniform
    draws refuse: code that mixes them with continuous ones is not traced."""

    def __init__(self, trace: NoiseTrace):
        self.trace = trace
        self.draws = []
        self._first = self._next = 0
        self.from_seed = 0

    def _draw(self, law, loc, scale, size, python=False):
        tr = self.trace
        if tr.plain and type(loc) in (int, float) and type(scale) in (int, float) \
                and scale >= 0 and (size is None or type(size) is int):
            # re-execution's hot path: plain numbers, no arrays to build
            n = 1 if size is None else size
            start = tr.size
            tr.new(law, n)
            self._next = tr.size
            if size is None:
                v = loc + scale * tr.z[start]
                return float(v) if python else np.float64(v)
            return loc + scale * np.asarray(tr.z[start:], dtype=float)
        for p in (loc, scale):
            if isinstance(p, Noisy) and not p.noiseless:
                _refuse("uses it as a location or scale of another draw")
        loc = np.asarray(_plainify(loc), dtype=float)
        scale = np.asarray(_plainify(scale), dtype=float)
        if np.any(scale < 0) or not np.all(np.isfinite(scale)) or not np.all(np.isfinite(loc)):
            raise ValueError(f"{law}: scale must be a non-negative finite number")
        if size is None:
            shape = np.broadcast_shapes(loc.shape, scale.shape)
        else:
            shape = tuple(np.atleast_1d(size).astype(int).tolist())
        n = int(np.prod(shape)) if shape else 1
        idx = self.trace.new(law, n)
        self._next = self.trace.size
        z = self.trace.zvec()[idx].reshape(shape)
        loc_b, scale_b = np.broadcast_to(loc, shape), np.broadcast_to(scale, shape)
        if self.trace.plain:
            v = loc_b + scale_b * z
            if python or not shape:
                return float(v) if python else np.float64(v)
            return v
        coef = np.zeros(shape + (self.trace.size,))
        flat = coef.reshape(n, -1)
        flat[np.arange(n), idx] = scale_b.reshape(-1)
        return Noisy(loc_b.copy(), coef)

    # numpy Generator / RandomState spellings
    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self._draw("laplace", loc, scale, size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self._draw("normal", loc, scale, size)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return self._draw("normal", 0.0, 1.0, size)

    def exponential(self, scale=1.0, size=None):
        return self._draw("exponential", 0.0, scale, size)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        return self._draw("exponential", 0.0, 1.0, size)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return self._draw("gumbel", loc, scale, size)

    def randn(self, *dims):
        return self._draw("normal", 0.0, 1.0, dims or None)

    # Python's random spellings: plain floats
    def gauss(self, mu=0.0, sigma=1.0):
        return self._draw("normal", mu, sigma, None, python=True)

    normalvariate = gauss

    def expovariate(self, lambd=1.0):
        return self._draw("exponential", 0.0, 1.0 / lambd, None, python=True)

    def python_int(self, x):
        return x

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise ReplayRefused(f"the code draws from rng.{name} as well as continuous noise: the "
                            f"trace follows Laplace, Gaussian, exponential and Gumbel draws, "
                            f"alone")
