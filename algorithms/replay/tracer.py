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
draw elements it depends on (a bitset: a Python int).  A raw draw may be
compared (``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``) or searched
(``np.searchsorted``); every comparison is recorded as a cut of that
element's grid.  It may also go through steps that are monotone in it by
IEEE arithmetic — adding, subtracting or multiplying a constant, dividing
by one, negation, ``floor``/``ceil``/``trunc``/``rint``, ``minimum`` and
``maximum`` with a constant (``rng.uniform(a, b)`` is ``a + (b − a)·u``):
a comparison of such a value is cut where the code's own arithmetic,
evaluated on the grid by bisection, changes the comparison's outcome.  A
draw whose value itself is used (an output, an index, arithmetic of
another kind, ``int()``) is cut at every point where that value changes:
an integer draw of at most ``MAX_VALUES`` values, or a monotone step of a
draw (``int(k · u)``) taking at most that many.  Values computed from
comparisons (``np.where``, arithmetic, reductions, indexing) carry the
union of their inputs' dependencies.  Anything else — any other law
(``rng.laplace``), a continuous function of a draw in the output, turning a
value that depends on the draws into a plain number in code over all runs,
a numpy function not listed here — raises ``ReplayRefused`` naming it: the
replay then claims nothing, and the code is never misread.

Draws are numbered per run and per kind (``random``, or ``integers`` of one
range): the n-th uniform of a kind a run draws is one variable, whichever
path led there — each call's draws are independent of everything before,
so any such numbering gives the output its true law.

May import: numpy, ``algorithms.imported_sources`` (the names the code's
modules imported a source by) and ``algorithms.user_output``.
"""
from __future__ import annotations

import bisect
import decimal
import itertools
import math
import operator
import random as _random
import threading
from contextlib import contextmanager
from fractions import Fraction

from algorithms.replay.plain_numpy import np

from algorithms import imported_sources, user_output

RANDOM_GRID = 2 ** 53       # rng.random() returns k / 2^53, k uniform on [0, 2^53)
MAX_VALUES = 4096           # values a draw's own value may take where it is used as a value
# The seed handed to code that takes one, while it is replayed: generators
# it builds from exactly this seed draw from the replay (any other seed is
# randomness the replay does not choose).
REPLAY_SEED = 0x5EED_2E91_A7ED
_CMP = {np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">=",
        np.equal: "==", np.not_equal: "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
# Steps monotone in a draw by IEEE arithmetic (correctly rounded, hence
# monotone): unary ones, and binary ones with a constant on the given side.
_UNARY_STEPS = (np.negative, np.positive, np.floor, np.ceil, np.trunc, np.rint)
_STEPWISE = (np.floor, np.ceil, np.trunc, np.rint)      # integer-valued: few values
_EXACT_INT = {np.add, np.subtract, np.multiply, np.negative, np.positive, np.minimum,
              np.maximum, np.floor_divide}


_CONVERSIONS = threading.local()     # .deps: what one run's code turned into plain values
# .trace: the trace of continuous draws being run (``noise.NoiseTrace``), in
# this thread (``noise.tracing`` sets it; ``noise``, ``grid`` read it)
CURRENT_TRACE = threading.local()
# .on: dependencies read from the values (the trace of continuous draws):
# a logical and with a false side, an or with a true side, np.where's
# unselected branch depend on nothing else (``_value_deps``)
PRECISE = threading.local()


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


class ContinuousDraws(ReplayRefused):
    """The code draws continuous noise (Laplace, Gaussian, exponential,
    Gumbel): the replay of uniform draws steps aside for the trace of
    continuous draws (``algorithms.replay.noise``)."""


# numpy's and Python's names of continuous draws, followed by the trace of
# continuous draws (``algorithms.replay.noise``)
CONTINUOUS_NUMPY = ("laplace", "normal", "exponential", "gumbel", "standard_normal",
                    "standard_exponential", "randn")
CONTINUOUS_PYTHON = ("gauss", "normalvariate", "expovariate")


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
    draw straight from the generator (maybe indexed) or a monotone step of
    one, each element's id, ``draw`` the draw it came from and ``ops`` the
    steps applied to it (``(ufunc, constant broadcast to the shape or None,
    constant first)``); ``raw`` is None for values computed from
    comparisons."""

    __array_priority__ = 1000

    def __init__(self, values, deps, raw=None, draw=None, ops=()):
        self.values = np.asarray(values)
        self.deps = deps
        self.raw = raw
        self.draw = draw
        self.ops = ops

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
            if getattr(_CONVERSIONS, "deps", None) is None:
                raise ReplayRefused("the code indexes with a value that depends on its draws")
            # one run's code: the index is the same on a whole cell
            key = (tuple(k._convert(np.asarray) if isinstance(k, Traced) else k for k in key)
                   if isinstance(key, tuple) else key._convert(np.asarray))
        return self._map(lambda a: a[key])

    def reshape(self, *shape):
        return self._map(lambda a: a.reshape(*shape))

    def _map(self, f):
        """The same view ``f`` of the values, dependencies, draw ids and the
        steps' constants."""
        # an element of an object array comes back as a plain int: kept 0-d
        deps = np.asarray(f(self.deps), dtype=object)
        if self.raw is None:
            return Traced(f(self.values), deps)
        ops = tuple((u, None if c is None else f(c), first) for u, c, first in self.ops)
        return Traced(f(self.values), deps, np.asarray(f(self.raw)), self.draw, ops)

    def copy(self):
        return Traced(self.values.copy(), self.deps.copy(), self.raw, self.draw, self.ops)

    def astype(self, dtype, *args, **kwargs):
        x = self.settled("the code converts a uniform draw itself with astype")
        return Traced(x.values.astype(dtype), x.deps)

    def sum(self, axis=None, **kwargs):
        return np.sum(self, axis=axis, **kwargs)

    def any(self, axis=None, **kwargs):
        return np.any(self, axis=axis, **kwargs)

    def all(self, axis=None, **kwargs):
        return np.all(self, axis=axis, **kwargs)

    # -- a draw's own value, used as a value
    def settled(self, what: str) -> "Traced":
        """This value as one computed from comparisons: for a draw (or a
        monotone step of one), its grid is cut wherever the value changes,
        so that it is the same on every cell.  Refused (naming ``what``)
        where it takes more than ``MAX_VALUES`` values."""
        if self.raw is None:
            return self
        why = (f"{what} (only comparisons of a draw, or a value of it taking at most "
               f"{MAX_VALUES} values, can be replayed exactly)")
        draw, ids = self.draw, self.raw.ravel()
        if draw.kind == "integers" and draw.size <= MAX_VALUES:
            # an integer draw of few values, stepped or not: every value its
            # own cell (no bisection needed: each cell is one point)
            for e in ids.tolist():         # every integer its own cell
                draw.cuts.setdefault(int(e), set()).update(range(1, draw.size))
            return Traced(self.values, self.deps)
        if not self.ops:
            raise ReplayRefused(why)
        steps = [k for k, (u, _, _) in enumerate(self.ops) if u in _STEPWISE]
        if steps:
            # after the first integer-valued step, at most (its range + 1) values
            ends = [self._at(np.full(ids.size, k), np.arange(ids.size), upto=steps[0] + 1)
                    for k in (0, draw.size - 1)]
            many = np.abs(ends[1].astype(float) - ends[0].astype(float)).max(initial=0) + 1
        else:
            many = draw.size if draw.kind == "integers" else math.inf
        if many > MAX_VALUES:
            raise ReplayRefused(why)
        # from the grid's start, cut where the value next changes, until the end
        start = np.zeros(ids.size, dtype=np.int64)
        sel = np.arange(ids.size)
        while (start < draw.size).any():
            here = self._at(np.minimum(start, draw.size - 1), sel)
            a = sel[start < draw.size]
            start[a] = self._first_change(lambda v, s: v != here[s], a, start[a] + 1)
            draw.add_cuts(ids[a], start[a])
        return Traced(self.values, self.deps)

    def _at(self, k: np.ndarray, sel: np.ndarray, upto=None) -> np.ndarray:
        """The value of the flat elements ``sel`` had their draws been at
        grid indices ``k``: the code's own steps, evaluated again."""
        v = self.draw.value(k)
        for _, _, v in self._stages(v, sel, upto):
            pass
        return v

    def _stages(self, v: np.ndarray, sel: np.ndarray, upto=None):
        """(step, its constant for ``sel`` or None, the value after it), step
        by step from the draw's values ``v``."""
        for step in self.ops[:upto]:
            u, c, first = step
            cc = None if c is None else c.reshape(-1)[sel]
            v = u(v) if cc is None else (u(cc, v) if first else u(v, cc))
            yield step, cc, v

    def _first_change(self, changed, sel: np.ndarray, lo: np.ndarray) -> np.ndarray:
        """Per flat element of ``sel``, the first grid index ≥ ``lo`` at
        which ``changed(values, elements)`` holds (the grid's size if none):
        by bisection, since the values are monotone in the grid index."""
        lo = np.asarray(lo, dtype=np.int64).copy()
        hi = np.full(lo.shape, self.draw.size, dtype=np.int64)
        while True:
            act = np.nonzero(lo < hi)[0]
            if act.size == 0:
                return lo
            mid = (lo[act] + hi[act]) // 2
            hit = np.asarray(changed(self._at(mid, sel[act]), sel[act]), dtype=bool)
            hi[act[hit]] = mid[hit]
            lo[act[~hit]] = mid[~hit] + 1

    def _cut_comparison(self, ufunc, other, first: bool) -> None:
        """Record the cuts of ``self op other`` (``other op self`` when
        ``first``): the grid points where its outcome changes."""
        shape = np.broadcast_shapes(self.shape, np.shape(other))
        if not self.ops:
            op = _FLIP[_CMP[ufunc]] if first else _CMP[ufunc]
            self.draw.record(np.broadcast_to(self.raw, shape),
                             np.broadcast_to(other, shape), op)     # exact thresholds
            return
        for t in np.ravel(other):
            if not (isinstance(t, (float, np.floating)) and not math.isfinite(t)):
                exact_value(t)          # a type the replay compares exactly, or refused
        x = self if self.shape == shape else self._map(lambda a: np.broadcast_to(a, shape))
        t = np.broadcast_to(other, shape).reshape(-1)
        sel = np.arange(t.size)
        # ==/!= hold on an interval: its ends are where < and <= change
        tests = (np.less, np.less_equal) if ufunc in (np.equal, np.not_equal) else (ufunc,)
        for test in tests:
            def outcome(v, s, test=test):
                return test(t[s], v) if first else test(v, t[s])
            at0 = outcome(x._at(np.zeros(t.size, dtype=np.int64), sel), sel)
            cut = x._first_change(lambda v, s: outcome(v, s) != at0[s], sel, np.ones(t.size))
            x.draw.add_cuts(x.raw.reshape(-1), cut)

    def _step(self, ufunc, inputs, i: int):
        """``ufunc(*inputs)`` with ``inputs[i]`` this draw, as a monotone step
        of it (a ``Traced`` still bound to the draw), or None where the step
        is not one the replay follows."""
        if len(inputs) == 1:
            if ufunc not in _UNARY_STEPS:
                return None
            const, cdeps = None, None
        else:
            other = inputs[1 - i]
            if isinstance(other, Traced):
                if other.raw is not None:
                    return None
                const, cdeps = other.values, other.deps
            else:
                const, cdeps = np.asarray(other), None
            if const.dtype.kind not in "biuf" or not np.isfinite(const).all():
                return None
            if ufunc is np.floor_divide:
                # exact, hence monotone, on integers only, by a positive constant
                if i == 1 or self.dtype.kind not in "iu" or const.dtype.kind not in "iu" \
                        or not (const > 0).all():
                    return None
            elif ufunc in (np.multiply, np.true_divide):
                if (ufunc is np.true_divide and i == 1) or not (
                        (const > 0).all() or (const < 0).all()):
                    return None
            elif ufunc not in (np.add, np.subtract, np.minimum, np.maximum):
                return None
        values = ufunc(*[x.values if isinstance(x, Traced) else np.asarray(x) for x in inputs])
        shape = np.shape(values)
        x = self if self.shape == shape else self._map(lambda a: np.broadcast_to(a, shape))
        deps = x.deps if cdeps is None else _or(x.deps, np.broadcast_to(cdeps, shape))
        step = (ufunc, None if const is None else np.broadcast_to(const, shape), i == 1)
        out = Traced(values, np.array(deps, dtype=object), x.raw, x.draw, x.ops + (step,))
        # a step that wraps an integer around is no monotone step: the draw
        # is then cut at every value it takes and numpy's own arithmetic
        # (wrap-around included) computes each cell's value
        return out if out._in_range() else None

    def _in_range(self) -> bool:
        """Every step must be monotone on the whole grid: finite floats (no
        overflow to ∞, hence no NaN: refused) and integers without
        wrap-around (False), checked at both ends of the grid — each step is
        monotone, so the values in between lie between the ends'."""
        sel = np.arange(self.size)
        for k in (0, self.draw.size - 1):
            v = self.draw.value(np.full(self.size, k, dtype=np.int64))
            exact = v.astype(object) if v.dtype.kind in "iu" else None
            with np.errstate(all="ignore"):
                stages = list(self._stages(v, sel))
            for (u, _, first), cc, v in stages:
                if v.dtype.kind == "f":
                    exact = None
                    if not np.isfinite(v).all():
                        raise ReplayRefused("a step of a uniform draw overflows")
                elif exact is not None and u in _EXACT_INT:
                    eargs = (exact,) if cc is None else (
                        (cc.astype(object), exact) if first else (exact, cc.astype(object)))
                    exact = u(*eargs)
                    if not all(int(a) == int(b) for a, b in zip(v.ravel(), exact.ravel())):
                        return False
        return True

    # -- conversions to plain numbers.  A value computed from comparisons is
    # the same on a whole cell, so one run's code may branch on it or turn
    # it into a number, provided everything that run outputs is then taken
    # to depend on it (``conversions``: code called one run at a time).
    # Anywhere else the draws would escape the replay: refused.
    def _convert(self, plain):
        seen = getattr(_CONVERSIONS, "deps", None)
        if seen is None:
            if self.raw is not None:
                raise ReplayRefused("the code turns a uniform draw itself into a plain number "
                                    "(only comparisons of a draw can be replayed exactly)")
            raise ReplayRefused("the code turns a value that depends on its draws into a plain "
                                "number or array (float, int, bool, if, np.asarray, tolist)")
        x = self.settled("the code turns a uniform draw itself into a plain number")
        _CONVERSIONS.deps = seen | int(np.bitwise_or.reduce(x.deps.ravel(), initial=0))
        return plain(x.values)

    def __bool__(self):
        return self._convert(bool)

    def __float__(self):
        return self._convert(float)

    def __int__(self):
        # int() of a float truncates: a step the replay follows
        x = np.trunc(self) if self.dtype.kind == "f" else self
        return x._convert(int)

    def __index__(self):
        return self._convert(operator.index)

    def __floor__(self):
        return np.floor(self)._convert(int)

    def __ceil__(self):
        return np.ceil(self)._convert(int)

    def __trunc__(self):
        return np.trunc(self)._convert(int)

    def __round__(self, ndigits=None):
        if ndigits is not None:
            raise ReplayRefused("the code rounds a value of its draws to digits")
        return np.rint(self)._convert(int)       # Python rounds half to even, as rint

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
    # ``&``, ``|``, ``^``, ``~`` and shifts are numpy's bitwise ufuncs, as on
    # arrays (logical on booleans, bitwise on integers): a drawn integer
    # through them is cut at every value it takes, never read as a truth value
    __and__, __rand__ = _binary(np.bitwise_and), _binary(np.bitwise_and, True)
    __or__, __ror__ = _binary(np.bitwise_or), _binary(np.bitwise_or, True)
    __xor__, __rxor__ = _binary(np.bitwise_xor), _binary(np.bitwise_xor, True)
    __lshift__, __rlshift__ = _binary(np.left_shift), _binary(np.left_shift, True)
    __rshift__, __rrshift__ = _binary(np.right_shift), _binary(np.right_shift, True)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _binary(np.floor_divide, True)
    __mod__, __rmod__ = _binary(np.remainder), _binary(np.remainder, True)
    __pow__, __rpow__ = _binary(np.power), _binary(np.power, True)
    del _binary
    __hash__ = None

    def __repr__(self):
        return self._convert(repr)

    def __str__(self):
        return self._convert(str)

    def __format__(self, spec):
        return self._convert(lambda v: format(v.item() if v.ndim == 0 else v, spec))

    def __invert__(self):
        return np.invert(self)

    def __neg__(self):
        return np.negative(self)

    def __abs__(self):
        return np.absolute(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(getattr(type(x), "_is_noisy", False) for x in inputs):
            return NotImplemented       # a noisy value (``noise.Noisy``) takes it
        if kwargs.get("out") is not None or kwargs.get("where", True) is not True:
            raise ReplayRefused(f"the code calls {ufunc.__name__} with out= or where=")
        if method == "reduce":
            (x,) = inputs
            x = x.settled(f"the code applies {ufunc.__name__}.reduce to a uniform draw itself")
            axis = kwargs.get("axis", 0)
            keep = kwargs.get("keepdims", False)
            values = ufunc.reduce(x.values, axis=axis, keepdims=keep,
                                  **({"dtype": kwargs["dtype"]} if kwargs.get("dtype") else {}))
            deps = np.bitwise_or.reduce(x.deps, axis=axis, keepdims=keep)
            return Traced(values, deps if isinstance(deps, np.ndarray) else
                          np.array(deps, dtype=object))
        if method != "__call__":
            raise ReplayRefused(f"the code calls {ufunc.__name__}.{method} on its draws")
        raw = [i for i, x in enumerate(inputs) if isinstance(x, Traced) and x.raw is not None]
        if len(raw) == 1 and not kwargs:
            i = raw[0]
            if ufunc in _CMP and len(inputs) == 2:
                other = inputs[1 - i]
                inputs[i]._cut_comparison(
                    ufunc, other.values if isinstance(other, Traced) else other, i == 1)
                raw = []                # the outcome is the same on every cell
            else:
                step = inputs[i]._step(ufunc, inputs, i)
                if step is not None:
                    return step
        if raw:
            inputs = tuple(x.settled(f"the code applies {ufunc.__name__} to a uniform draw "
                                     f"itself") if k in raw else x for k, x in enumerate(inputs))
        plain = [x.values if isinstance(x, Traced) else np.asarray(x) for x in inputs]
        values = ufunc(*plain, **kwargs)
        shape = np.shape(values)
        deps = _value_deps(ufunc, inputs, plain, shape)
        if deps is None:
            deps = _or(*[np.broadcast_to(x.deps, shape) for x in inputs if isinstance(x, Traced)])
        return Traced(values, np.array(deps, dtype=object))

    def __array_function__(self, func, types, args, kwargs):
        if any(getattr(t, "_is_noisy", False) for t in types):
            return NotImplemented       # a noisy value (``noise.Noisy``) takes it
        handler = _FUNCTIONS.get(func)
        if handler is None:
            raise ReplayRefused(f"the code calls np.{func.__name__} on values that depend on "
                                f"its draws, which an exact replay does not follow")
        return handler(*args, **kwargs)


_BIT_LENGTH = np.frompyfunc(lambda d: int(d).bit_length(), 1, 1)


def _value_deps(ufunc, inputs, plain, shape):
    """With ``PRECISE.on``: the dependencies of a logical and/or of two
    boolean arrays read from their values — a false side decides an and, a
    true side an or, whatever the other side depends on — else None."""
    if not getattr(PRECISE, "on", False) or len(inputs) != 2 or ufunc not in (
            np.logical_and, np.bitwise_and, np.logical_or, np.bitwise_or):
        return None
    if any(np.asarray(p).dtype != bool for p in plain):
        return None
    a, b = (np.broadcast_to(p, shape) for p in plain)
    da, db = (np.broadcast_to(x.deps, shape) if isinstance(x, Traced) else empty_deps(shape)
              for x in inputs)
    decide = False if ufunc in (np.logical_and, np.bitwise_and) else True
    both = _or(da, db)
    out = np.where(b == decide, db, both)
    # where both sides decide, either one's dependencies suffice: the one
    # decided earliest (its highest comparison the oldest), so that a
    # sparse vector's comparisons after it halts reach nothing
    older = _BIT_LENGTH(da) <= _BIT_LENGTH(db)
    return np.where((a == decide) & ((b != decide) | older), da, out)


def _parts(x):
    if isinstance(x, Traced):
        return x.values, x.deps
    v = np.asarray(x)
    return v, None


def _where(cond, x=None, y=None):
    if x is None or y is None:
        raise ReplayRefused("the code calls np.where with one argument on its draws")
    cond, x, y = (a.settled("a uniform draw's own value flows into np.where")
                  if isinstance(a, Traced) else a for a in (cond, x, y))
    parts = [_parts(a) for a in (cond, x, y)]
    values = np.where(*(p[0] for p in parts))
    if getattr(PRECISE, "on", False):
        # the condition and the branch it selects
        d = [empty_deps(values.shape) if p[1] is None else np.broadcast_to(p[1], values.shape)
             for p in parts]
        deps = _or(d[0], np.where(np.broadcast_to(parts[0][0], values.shape), d[1], d[2]))
    else:
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
        # side="left" counts a_i < v, side="right" counts a_i <= v: each
        # entry cuts where that comparison changes
        test = np.greater if side == "left" else np.greater_equal
        for t in a.ravel():
            v._cut_comparison(test, t, False)
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
            if isinstance(a, Traced):
                a = a.settled("a uniform draw's own value is stacked into an array")
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


def exact_value(t) -> Fraction:
    """The exact rational value of a finite number the code compares a draw
    with: a Python or numpy integer, float (every width, ``longdouble``
    included) or bool, a ``Fraction`` or a ``Decimal``.  Anything else —
    a type whose comparison with a double the replay does not know —
    refuses."""
    if isinstance(t, Fraction):
        return t
    if isinstance(t, (int, np.integer, np.bool_)):      # bool is an int
        return Fraction(int(t))
    if isinstance(t, (float, np.floating, decimal.Decimal)):
        if isinstance(t, decimal.Decimal) and not t.is_finite():
            raise ReplayRefused("the code compares a uniform draw with a Decimal that is not "
                                "a finite number")
        return Fraction(*t.as_integer_ratio())
    raise ReplayRefused(f"the code compares a uniform draw with a {type(t).__name__}, whose "
                        f"comparison with a number an exact replay does not follow")


class Draw:
    """One uniform draw call: its grid (``rng.random``: k/2^53 for k in
    [0, 2^53); ``rng.integers``: the integers in [low, high)), the ids of
    its elements, and the cuts its comparisons made, per element: grid
    indices c such that the code's comparisons cannot tell apart two values
    both below c or both at or above it.  ``start``: how many draws of its
    kind (``kind``, ``low``, ``high``) the run had made before this call —
    its elements are that kind's draws ``start``, ``start + 1``, … of the
    run."""

    def __init__(self, kind: str, low: int, high: int, ids: np.ndarray, start: int = 0,
                 dtype=None):
        self.kind, self.low, self.high, self.ids = kind, low, high, ids
        self.start = start
        # the dtype the code asked for (``integers(..., dtype=np.uint8)``):
        # its values carry it, so numpy's own arithmetic on them wraps
        # around as it does in the code
        self.dtype = np.dtype(np.float64 if kind == "random" else (dtype or np.int64))
        self.cuts: dict = {}

    @property
    def sig(self) -> tuple:
        return (self.kind, self.low, self.high)

    @property
    def size(self) -> int:
        """The number of grid points."""
        return RANDOM_GRID if self.kind == "random" else self.high - self.low

    def value(self, index: np.ndarray) -> np.ndarray:
        """The draw values at grid indices ``index``."""
        if self.kind == "random":
            return np.asarray(index, dtype=np.float64) / RANDOM_GRID
        return (np.asarray(index, dtype=np.int64) + self.low).astype(self.dtype)

    def _on_grid(self, t) -> Fraction:
        """The threshold t in grid units, exactly: the value t holds, not a
        double near it (``Fraction(2, 3)``, ``Decimal(2) / 3`` and
        ``np.longdouble(2) / 3`` lie between two grid points, and Python and
        numpy compare a double with them exactly)."""
        return exact_value(t) * RANDOM_GRID if self.kind == "random" else \
            exact_value(t) - self.low

    def _first_at_least(self, t) -> int:
        """The first grid index whose value is ≥ t."""
        return min(max(math.ceil(self._on_grid(t)), 0), self.size)

    def _first_above(self, t) -> int:
        """The first grid index whose value is > t."""
        return min(max(math.floor(self._on_grid(t)) + 1, 0), self.size)

    def add_cuts(self, ids: np.ndarray, at: np.ndarray) -> None:
        """Cuts at grid indices ``at``, element-wise (the grid's ends are no cuts)."""
        for e, c in zip(np.ravel(ids).tolist(), np.ravel(at).tolist()):
            if 0 < c < self.size:
                self.cuts.setdefault(int(e), set()).add(int(c))

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


_BOUNDS: dict = {}


def _bounds(dtype) -> tuple:
    """The least and greatest values of an integer (or bool) dtype."""
    got = _BOUNDS.get(dtype)
    if got is None:
        dt = np.dtype(dtype)
        if dt.kind not in "iub":
            raise TypeError(f"Unsupported dtype {dt} for integers")
        got = _BOUNDS[dtype] = ((0, 1) if dt.kind == "b"
                                else (int(np.iinfo(dt).min), int(np.iinfo(dt).max)))
    return got


def integer_range(low, high, dtype, endpoint) -> tuple:
    """``integers``' arguments as the half-open range [low, high) of Python
    ints, checked against ``dtype`` as numpy checks them."""
    if high is None:
        low, high = 0, low
    low, high = operator.index(low), operator.index(high)
    high += bool(endpoint)
    info = _bounds(dtype)
    if low < info[0] or high - 1 > info[1] or low >= high:
        dt = np.dtype(dtype)
        raise ValueError(f"integers: [{low}, {high}) is empty or out of bounds for {dt}")
    return low, high


class ReplayGenerator:
    """A stand-in for ``numpy.random.Generator`` whose uniform draws return
    the values ``choose(draw, shape) -> grid indices`` asks for, as
    ``Traced`` arrays; ``choice`` and ``uniform`` are made of them as numpy
    makes them, every other method is refused.  ``single_run``: the
    generator of one run (else every draw has the runs axis first)."""

    def __init__(self, choose, first_id: int = 0, limit: int = 10 ** 7,
                 single_run: bool = False):
        self.choose = choose
        self.draws: list[Draw] = []
        self._next = self._first = first_id
        self.limit = limit
        self.single_run = single_run
        self._taken: dict = {}          # draws of each kind per run so far
        self.from_seed = 0              # generators the run's code built from its seed

    def _allocate(self, kind, low, high, size, dtype=None):
        """The bookkeeping of one draw call: (its ``Draw``, the chosen grid
        indices, its shape)."""
        shape = () if size is None else tuple(np.atleast_1d(size).astype(int).tolist())
        n = int(np.prod(shape)) if shape else 1
        if self._next + n - self._first > self.limit:
            raise ReplayRefused(f"the code draws more than {self.limit} uniforms (a loop on "
                                f"its draws that the replay's choices do not end)")
        ids = np.arange(self._next, self._next + n).reshape(shape)
        self._next += n
        sig = (kind, low, high)
        start = self._taken.get(sig, 0)
        self._taken[sig] = start + (n if self.single_run or not shape
                                    else int(np.prod(shape[1:], dtype=np.int64)))
        draw = Draw(kind, low, high, ids, start, dtype)
        return draw, np.asarray(self.choose(draw, shape)), shape

    def _make(self, kind, low, high, size, dtype=None):
        draw, index, shape = self._allocate(kind, low, high, size, dtype)
        self.draws.append(draw)
        deps = np.empty(shape, dtype=object)
        flat = deps.reshape(-1)
        for k, i in enumerate(draw.ids.reshape(-1)):
            flat[k] = 1 << int(i)
        return Traced(draw.value(index).reshape(shape), deps, draw.ids, draw)

    def python_int(self, x):
        """An integer draw as Python's ``random`` and numpy's legacy
        scalar functions return it: a plain ``int`` there; here the traced
        value itself (its dtype is int64, whose arithmetic re-execution
        checks against Python's)."""
        return x

    def random(self, size=None, dtype=np.float64, out=None):
        if out is not None or np.dtype(dtype) != np.float64:
            raise ReplayRefused("rng.random with out= or float32")
        return self._make("random", 0, RANDOM_GRID, size)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        low, high = integer_range(low, high, dtype, endpoint)
        return self._make("integers", low, high, size, dtype)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """numpy's choice with replacement, made as numpy makes it: a
        uniform integer index, or with ``p`` the uniform searched in the
        normalised cumulative sums (``Generator.choice`` and
        ``RandomState.choice`` alike)."""
        pop, idx = self._choice_index(a, size, replace, p, axis)
        if pop.ndim == 0:
            return self.python_int(idx) if size is None else idx
        return self._pick(pop, idx)

    def _choice_index(self, a, size, replace, p, axis):
        """(the population as an array, the drawn index)."""
        if not replace or axis != 0:
            raise ReplayRefused("rng.choice without replacement or along another axis")
        pop = np.asarray(a)
        n = operator.index(a) if pop.ndim == 0 else len(pop)
        if p is None:
            return pop, self.integers(0, n, size)
        p = np.asarray(p, dtype=np.float64)
        if p.ndim != 1 or p.size != n or (p < 0).any() or not np.isfinite(p).all() \
                or abs(p.sum() - 1.0) > math.sqrt(np.finfo(np.float64).eps):
            raise ValueError("probabilities must be a 1-D array of non-negative numbers "
                             "summing to 1, one per choice")
        _check_choice_formula(p)
        cdf = p.cumsum()
        cdf /= cdf[-1]
        return pop, _searchsorted(cdf, self.random(size), side="right")

    def _pick(self, pop, idx):
        idx = idx.settled("rng.choice")
        return Traced(pop[idx.values], idx.deps)

    def uniform(self, low=0.0, high=1.0, size=None):
        """``low + (high − low)·u`` on the ``random`` grid — numpy's own
        formula, checked bit for bit against numpy on these bounds."""
        low, high = float(low), float(high)
        if not (math.isfinite(low) and math.isfinite(high)):
            raise ReplayRefused("rng.uniform with bounds that are not finite numbers")
        _check_uniform_formula(low, high)
        return low + (high - low) * self.random(size)

    def __getattr__(self, name):
        if name in CONTINUOUS_NUMPY or name in CONTINUOUS_PYTHON:
            raise ContinuousDraws(f"the code draws continuous noise (rng.{name})")
        raise ReplayRefused(f"the code draws from rng.{name}: only uniform draws "
                            f"(rng.random, rng.integers, rng.choice, rng.uniform) can be "
                            f"replayed exactly")


_UNIFORM_CHECKED: dict = {}
# numpy's own classes, bound now: while the code is replayed their names
# in numpy.random refuse
_NUMPY_GENERATORS = ((lambda g, b: lambda s: g(b(s)))(np.random.Generator, np.random.PCG64),
                     np.random.RandomState)


def _check_uniform_formula(low: float, high: float) -> None:
    """numpy's ``uniform`` is ``low + (high − low)·u`` in C; a build that
    fused the multiply-add would round otherwise.  Checked once per bounds,
    bit for bit, against both of numpy's generators on 256 draws of a fixed
    seed."""
    ok = _UNIFORM_CHECKED.get((low, high))
    if ok is None:
        ok = True
        for make in _NUMPY_GENERATORS:
            u = make(20261127).random(256)
            ok &= bool(np.array_equal(make(20261127).uniform(low, high, 256),
                                      low + (high - low) * u))
        _UNIFORM_CHECKED[(low, high)] = ok
    if not ok:
        raise ReplayRefused("numpy's uniform does not round as low + (high - low)·u here")


_CHOICE_CHECKED: dict = {}


def _check_choice_formula(p: np.ndarray) -> None:
    """numpy's ``choice(n, p=p)`` is the uniform searched (side "right") in
    the normalised cumulative sums of ``p``.  Checked once per ``p``, draw
    for draw, against both of numpy's generators on 256 draws of a fixed
    seed: the replay and its re-execution both make choices so."""
    key = p.tobytes()
    ok = _CHOICE_CHECKED.get(key)
    if ok is None:
        ok = True
        cdf = p.cumsum()
        cdf /= cdf[-1]
        for make in _NUMPY_GENERATORS:
            u = make(20261127).random(256)
            ok &= bool(np.array_equal(make(20261127).choice(p.size, 256, p=p),
                                      np.searchsorted(cdf, u, side="right")))
        _CHOICE_CHECKED[key] = ok
    if not ok:
        raise ReplayRefused("numpy's choice(p=...) does not search the uniform in the "
                            "cumulative sums here")


_SEAL = threading.Lock()


def _refuse_source(name: str):
    def refused(*args, **kwargs):
        raise ReplayRefused(f"the code draws from {name}, not from the generator it is given: "
                            f"randomness the replay cannot see")
    return refused


class _Facade:
    """A generator object the code builds (``np.random.RandomState()``,
    ``random.Random(seed)``), its uniform draws routed to the replay's
    generator; any other method refuses, naming it."""

    def __init__(self, what: str, methods: dict):
        self._what, self._methods = what, methods

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._methods[name]
        except KeyError:
            raise ReplayRefused(f"the code draws from {self._what}.{name}: only uniform draws "
                                f"can be replayed exactly") from None


class _RoutedBits:
    """A bit generator the code builds from the replay's seed; a
    ``np.random.Generator`` of it is the replay's generator."""


class RunGenerator:
    """The replay generator of the run being called (``gen``, set by the
    caller run by run), and ``proxy``, which forwards every draw to it:
    routes are installed once for a batch of runs."""

    def __init__(self):
        self.gen = None
        outer = self

        class _Proxy:
            def __getattr__(self, name):
                return getattr(outer.gen, name)
        self.proxy = _Proxy()


def _routes(run: "RunGenerator", seed) -> dict:
    """The draws of code written as one call or one object per run, sent to
    that run's replay generator: numpy's global ``random``/``rand``/
    ``randint``/``choice``/``uniform`` and Python's ``random``/``randint``/
    ``randrange``/``uniform``/``choice`` (their grids are the generator's:
    k/2^53, and uniform integers; ``uniform`` and ``choice`` made as their
    libraries make them), and the generators the code builds unseeded or
    from ``seed`` (``default_rng``, ``RandomState``, ``Generator(PCG64(…))``,
    ``random.Random``), as do ``np.random.seed``/``random.seed`` with them;
    a generator built from any other seed refuses."""
    gen = run.proxy

    def ours(s, name) -> bool:
        """Whether a generator built (or a state seeded) from ``s`` is the
        replay's: unseeded, the run's generator itself, or the seed handed
        to the code — once: two generators from one seed draw the same
        numbers, which the replay's independent draws would misstate."""
        if s is None or s is run.gen:
            return True
        if not (isinstance(s, (int, np.integer)) and not isinstance(s, bool) and int(s) == seed):
            return False
        run.gen.from_seed += 1
        if run.gen.from_seed > 1:
            raise ReplayRefused(f"the code seeds {name} with the seed it was given after "
                                f"seeding another generator with it: the two would draw the "
                                f"same numbers")
        return True

    def seeded(name, make):
        def build(s=None, *args, **kwargs):
            if args or kwargs or not ours(s, name):
                raise ReplayRefused(f"the code builds {name} from a seed of its own: randomness "
                                    f"the replay does not choose")
            return make()
        return build

    def rand(*dims):
        return gen.random(dims or None)

    def randint(low, high=None, size=None, dtype=int):
        # numpy's legacy randint: a plain int for one draw of the default dtype
        x = gen.integers(low, high, size, dtype=np.int64 if dtype is int else dtype)
        return gen.python_int(x) if size is None and dtype is int else x

    def randrange(start, stop=None, step=1):
        if stop is None:
            return gen.python_int(gen.integers(0, start))
        if step == 1:
            return gen.python_int(gen.integers(start, stop))
        # Python's own: start + step·randbelow(n), n the values in range
        step = operator.index(step)
        if step == 0:
            raise ValueError("zero step for randrange()")
        n = (stop - start + step - 1) // step if step > 0 else (stop - start + step + 1) // step
        if n <= 0:
            raise ValueError("empty range in randrange")
        return start + step * gen.python_int(gen.integers(0, n))

    def py_uniform(a, b):
        return a + (b - a) * gen.random()       # Python's own formula

    def py_choice(seq):
        if not len(seq):
            raise IndexError("Cannot choose from an empty sequence")
        return seq[gen.integers(0, len(seq))]

    def py_choices(population, weights=None, *, cum_weights=None, k=1):
        # Python's own algorithm: floor(random() * n), or the uniform scaled
        # by the total searched in the cumulative weights by bisection
        n = len(population)
        if cum_weights is None:
            if weights is None:
                return [population[math.floor(gen.random() * (n + 0.0))] for _ in range(k)]
            cum_weights = list(itertools.accumulate(weights))
        elif weights is not None:
            raise TypeError("Cannot specify both weights and cumulative weights")
        if len(cum_weights) != n:
            raise ValueError("The number of weights does not match the population")
        total = cum_weights[-1] + 0.0
        if total <= 0.0 or not math.isfinite(total):
            raise ValueError("Total of weights must be greater than zero and finite")
        return [population[bisect.bisect(cum_weights, gen.random() * total, 0, n - 1)]
                for _ in range(k)]

    def reseed(name):
        def reseed_(s=None, *args, **kwargs):
            if not ours(s, name):
                raise ReplayRefused(f"the code seeds {name} with a seed of its own: randomness "
                                    f"the replay does not choose")
        return reseed_

    def late(name):         # the run's generator is looked up at each draw
        return lambda *args, **kwargs: getattr(run.gen, name)(*args, **kwargs)

    legacy = {"random": late("random"), "random_sample": late("random"),
              "sample": late("random"), "rand": rand, "randint": randint,
              "choice": late("choice"), "uniform": late("uniform")}
    python = {"random": lambda: gen.random(), "randint": lambda a, b: gen.python_int(gen.integers(a, b + 1)),
              "randrange": randrange, "uniform": py_uniform, "choice": py_choice,
              "choices": py_choices}

    def generator(bits=None, *args, **kwargs):
        if not isinstance(bits, _RoutedBits) or args or kwargs:
            raise ReplayRefused("the code builds np.random.Generator on a bit generator the "
                                "replay does not choose")
        return run.gen

    legacy.update({k: late(k) for k in CONTINUOUS_NUMPY})
    python.update({k: late(k) for k in CONTINUOUS_PYTHON})
    legacy["seed"] = reseed("RandomState.seed")
    python["seed"] = reseed("random.Random.seed")
    routes = {(np.random, k): v for k, v in legacy.items()}
    routes.update({(_random, k): v for k, v in python.items()})
    routes.update({
        (np.random, "default_rng"): seeded("np.random.default_rng", lambda: gen),
        (np.random, "RandomState"): seeded("np.random.RandomState",
                                           lambda: _Facade("RandomState", legacy)),
        (np.random, "Generator"): generator,
        (np.random, "seed"): reseed("np.random.seed"),
        (_random, "Random"): seeded("random.Random", lambda: _Facade("random.Random", python)),
        (_random, "seed"): reseed("random.seed")})
    for bits in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"):
        routes[(np.random, bits)] = seeded(f"np.random.{bits}", _RoutedBits)
    # numpy's global RandomState as libraries reach it (scipy.stats' rvs
    # without a random_state draws from np.random.mtrand._rand)
    routes[(np.random.mtrand, "_rand")] = _Facade("numpy's global RandomState", legacy)
    return routes


@contextmanager
def sealed(route: "RunGenerator | None" = None, seed=None):
    """While the code is replayed, every other source of randomness it could
    reach by name — numpy's global functions and generator constructors,
    Python's ``random`` — refuses (``ReplayRefused``): a draw the replay
    does not choose would make a chosen cell's output a matter of chance.
    With ``route`` (code called one run at a time), their uniform draws, and
    the generators the code builds unseeded or from ``seed``, go to the
    replay generator of the run being called (``route.gen``) instead
    (``_routes``).  (What is out of
    reach here, e.g. ``os.urandom``, the law's final check catches: the
    same draws in another run order must give the same outputs.)"""
    targets = [(np.random, n) for n in dir(np.random)
               if not n.startswith("_") and callable(getattr(np.random, n))]
    targets += [(_random, n) for n in dir(_random)
                if not n.startswith("_") and callable(getattr(_random, n))
                and n not in ("getstate", "setstate")]
    targets.append((np.random.mtrand, "_rand"))
    routes = _routes(route, seed) if route is not None else {}
    routes.setdefault((np.random.mtrand, "_rand"), _Facade("numpy's global RandomState", {}))
    # Sources the code's modules imported by name, routed as their originals.
    for mod, name, smod, sname in imported_sources.imported():
        targets.append((mod, name))
        if (smod, sname) in routes:
            routes[(mod, name)] = routes[(smod, sname)]
    global_state = np.random.mtrand._rand
    for dist in _scipy_distributions():
        if getattr(dist, "_random_state", None) is global_state:
            targets.append((dist, "_random_state"))
            routes[(dist, "_random_state")] = routes[(np.random.mtrand, "_rand")]
    with _SEAL:
        saved = [(mod, n, getattr(mod, n)) for mod, n in targets]
        # A global function imported by name before the audit is not
        # reached by the patching: its draws still move the global states.
        before = global_states()
        try:
            for mod, n, _ in saved:
                setattr(mod, n, routes.get((mod, n)) or _refuse_source(f"{mod.__name__}.{n}"))
            with user_output.silenced():        # the code's prints are not shown
                yield
        finally:
            for mod, n, original in saved:
                setattr(mod, n, original)
        if global_states() != before:
            raise ReplayRefused("the code drew from numpy's or Python's global random state "
                                "through a name the replay does not reach")


_DISTRIBUTIONS: list = []


def _scipy_distributions() -> list:
    """scipy.stats' distribution objects (``scipy.stats.laplace``…), where
    scipy is loaded: each holds the global RandomState it was built with and
    draws from it when ``rvs`` is given no ``random_state``."""
    import sys
    stats = sys.modules.get("scipy.stats")
    if stats is None:
        return []
    if not _DISTRIBUTIONS:
        base = getattr(sys.modules.get("scipy.stats._distn_infrastructure"), "rv_generic", None)
        if base is None:
            return []
        _DISTRIBUTIONS.extend(getattr(stats, n) for n in dir(stats)
                              if isinstance(getattr(stats, n, None), base))
    return _DISTRIBUTIONS


def global_states():
    """numpy's global ``RandomState`` and Python's ``random`` states."""
    state = np.random.mtrand._rand.get_state(legacy=False)
    return (_random.getstate(), state["state"]["key"].tobytes(), state["state"]["pos"],
            state["has_gauss"], state["gauss"])


def kept_generator_drew(before: dict) -> bool:
    """Whether a numpy bit generator alive at ``before``
    (``generator_states``, which holds them) has moved its state: a
    generator the code keeps drew.  Generators built in between, or dropped
    by their owners (the garbage collector frees cycles at any moment),
    say nothing."""
    return any(repr(gen.state) != state for gen, state in before.values())


def generator_states() -> dict:
    """Every numpy bit generator alive and its state (by id): a generator
    the code keeps somewhere and draws from moves its state.  Each is held
    with its state, so none of them is freed (and its id reused) while the
    states are kept."""
    import gc
    out = {}
    for o in gc.get_objects():
        if isinstance(o, np.random.BitGenerator):
            try:
                out[id(o)] = (o, repr(o.state))
            except Exception:   # noqa: BLE001 - an exotic bit generator: not compared
                continue
    return out
