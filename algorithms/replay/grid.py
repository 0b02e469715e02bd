"""Noisy values rounded onto a grid, and what code computes from them.

A traced run (``algorithms.replay.noise``) that rounds a noisy value —
``round(x + noise)``, ``int(…)``, ``math.floor``, ``np.round`` of one value
— gets a plain number on the grid, remembered as the rounding of its
affine form (``Rounded``): which grid value q comes out is decided by the
interval of the grid the form falls in (``preimage``).

Code goes on computing with that number: it scales it back
(``np.round(2 * v) / 2``, the snapping mechanism's ``Λ · round(v / Λ)``),
shifts it (``x + round(noise)``), or clamps it (``max(0, round(v))``,
``if round(v) >= 3``).  So a scalar rounding returns a ``Grid`` number — an
``int``, ``float`` or ``np.float64`` that behaves as one — which also
knows its rounding:

* a sum, difference, product or quotient with a plain number is another
  ``Grid`` number, a·q + b of the same grid value (``Rounded.a``, ``.b``);
* an order comparison with a plain number (``<``, ``<=``, ``>``, ``>=``, so
  also ``max``/``min`` with one) holds for the grid values on one side of
  a threshold, which is the form on one side of that grid value's interval
  end: it is recorded as the comparison of the form it is, as a
  comparison of noisy values is, and everything the code returns depends
  on it.

Anything else (two rounded numbers combined, ``abs``, a power, equality
tests, numpy functions of them) gives the plain number it always did;
re-executing the code on plain values then finds the outputs the trace
did not predict and refuses the trace.

May import: numpy, ``algorithms.replay.tracer``.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, replace

from algorithms.replay.plain_numpy import np

from algorithms.replay.tracer import _CONVERSIONS, CURRENT_TRACE, ReplayRefused

TIE = 1e-12             # a form this close (relative) to an interval's end is a tie


@dataclass(frozen=True, eq=False)
class Rounded:
    """An output that is the affine form ``const + coef·z`` rounded onto
    the grid of spacing ``step`` by ``op`` (to the nearest, down, up,
    toward zero), then mapped to ``a·q + b`` by the code's arithmetic on
    the grid value q (1 and 0 where it returns q itself)."""
    const: float
    coef: np.ndarray
    op: str
    step: float
    a: float = 1.0
    b: float = 0.0

    @property
    def post(self) -> tuple:
        return (self.a, self.b)

    @property
    def mapped(self) -> bool:
        return self.post != (1.0, 0.0)

    def form(self, z) -> float:
        zz = np.zeros(self.coef.size)
        zz[:min(zz.size, np.size(z))] = np.asarray(z, float)[:zz.size]
        return float(self.const + self.coef @ zz)

    def value(self, q):
        """The output for grid value(s) ``q``."""
        return q if not self.mapped else self.a * q + self.b + 0.0     # not -0.0

    def output(self, y) -> float:
        """The output where the form is ``y``."""
        return float(self.value(grid_value(self.op, self.step, y)))

    def grid_of(self, v) -> float | None:
        """The grid value whose output is ``v``; None where none is."""
        if not self.mapped:
            return float(v) if on_grid(self.step, v) else None
        q = (float(v) - self.b) / self.a
        if not on_grid(self.step, q):
            return None
        return float(tidy(self.step, round(q / self.step) * self.step))

    def reaches(self, v) -> bool:
        return (isinstance(v, (int, float)) and not isinstance(v, bool)
                and self.grid_of(v) is not None)

    def cell(self, v) -> tuple:
        """The interval of forms whose output is ``v`` (on the grid)."""
        return preimage(self.op, self.step, self.grid_of(v))

    def moved(self, v, k: int) -> float:
        """The output k grid steps from output ``v``."""
        q = self.grid_of(v)
        return float(self.value(tidy(self.step, q + k * self.step)))


def preimage(op: str, step: float, q: float) -> tuple:
    """The values that ``op`` rounds to the grid value ``q`` (an interval;
    its ends, where the code's own rounding decides, have probability 0)."""
    if op == "round":
        return q - step / 2, q + step / 2
    if op == "floor":
        return q, q + step
    if op == "ceil":
        return q - step, q
    if q > 0:                                       # trunc: toward zero
        return q, q + step
    return (q - step, q) if q < 0 else (-step, step)


def grid_value(op: str, step: float, y: float) -> float:
    """The grid value ``op`` rounds ``y`` to (in exact arithmetic)."""
    k = y / step
    k = {"round": round, "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc}[op](k)
    return float(tidy(step, k * step))


def grid_digits(step: float) -> int:
    """The decimals of a grid of spacing ``step`` (2 for 0.01; 0 or fewer
    for whole numbers and coarser)."""
    return -math.floor(math.log10(step) + 1e-9)


def tidy(step: float, q):
    """Grid values as the code writes them (0.3, not 0.30000000000000004)."""
    digits = grid_digits(step)
    return np.round(q, digits) if digits > 0 else q


def on_grid(step: float, q: float) -> bool:
    k = q / step
    return abs(k - round(k)) <= 1e-6 * (abs(k) + 1)


# ------------------------------------------------------------- Grid numbers
def _constant(x) -> bool:
    """A plain real number (not a rounded one, not an array)."""
    return (isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, Grid)
            and math.isfinite(float(x)))


# how each operation with the constant c maps (a, b) of a·q + b
_MAPS = {
    operator.add: lambda a, b, c: (a, b + c),
    operator.sub: lambda a, b, c: (a, b - c),
    operator.mul: lambda a, b, c: (a * c, b * c),
    operator.truediv: lambda a, b, c: (a / c, b / c),
}
_UFUNC_OPS = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
              np.true_divide: operator.truediv}
_REFLECTED = {
    operator.add: lambda a, b, c: (a, b + c),
    operator.sub: lambda a, b, c: (-a, c - b),
    operator.mul: lambda a, b, c: (a * c, b * c),
}


class Grid:
    """A plain rounded number that also knows its rounding (``rounded``)
    and the rounding it was computed from (``origin``): the mixin of
    ``GridInt``, ``GridFloat`` and ``GridFloat64`` (module docstring)."""
    rounded: Rounded
    origin: Rounded

    def _plain(self):
        return _PLAIN[type(self)](self)

    def _mapped(self, out, a: float, b: float):
        if a == 0 or not (math.isfinite(a) and math.isfinite(b)):
            return out
        made = replace(self.rounded, a=float(a), b=float(b))
        tr = _trace()
        if tr is not None:
            # ``np.asarray([g / 2])`` holds a plain float: an output equal
            # to it is read as this (``paths._elements``)
            tr.derived.setdefault(float(out), []).append((made, self.origin))
        return make(out, made, self.origin)

    def _converted(self, out):
        """``out``, the plain number the code turned this into: an output
        equal to it reads this rounding, whatever the code compared."""
        tr = _trace()
        if tr is not None and out == self._plain():
            tr.converted.setdefault(float(out), []).append(self.rounded)
        return out

    def __float__(self):
        return self._converted(float(self._plain()))

    def __int__(self):
        return self._converted(int(self._plain()))

    def item(self, *args):
        return self._converted(float(self._plain()))

    def _arith(self, other, op, reflected: bool):
        plain = self._plain()
        out = op(other, plain) if reflected else op(plain, other)
        maps = _REFLECTED if reflected else _MAPS
        if op not in maps:
            return out
        if isinstance(other, np.ndarray) and isinstance(out, np.ndarray):
            self._each(out, other, maps[op])
            return out
        if not _constant(other) or not _constant(out):
            return out
        return self._mapped(out, *maps[op](self.rounded.a, self.rounded.b, float(other)))

    def _each(self, out: np.ndarray, other: np.ndarray, how) -> None:
        """An array of plain numbers, each a map of this one (``x +
        np.round(noise)`` with ``x`` an array): each remembered as such."""
        tr = _trace()
        if tr is None or other.dtype.kind not in "biuf" or out.dtype.kind != "f" \
                or out.shape != np.broadcast_shapes(other.shape, out.shape):
            return
        a0, b0 = self.rounded.a, self.rounded.b
        for v, c in zip(out.ravel().tolist(), np.broadcast_to(other, out.shape).ravel().tolist()):
            a, b = how(a0, b0, float(c))
            if a != 0 and math.isfinite(a) and math.isfinite(b):
                tr.derived.setdefault(float(v), []).append(
                    (replace(self.rounded, a=float(a), b=float(b)), self.origin))

    def clip(self, a_min=None, a_max=None, **kwargs):
        """``np.clip`` of one rounded number with plain ends: ``max`` then
        ``min`` (each comparison recorded)."""
        kwargs = {k: v for k, v in kwargs.items() if v is not None}      # np.clip's out=None
        if kwargs or not all(e is None or _constant(e) for e in (a_min, a_max)):
            return np.clip(self._plain(), a_min, a_max, **kwargs)
        clamped = np.clip(self._plain(), a_min, a_max)     # numpy's value and type
        if a_min is not None and not self >= a_min:
            return clamped
        if a_max is not None and not self <= a_max:
            return clamped
        return self

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy's arithmetic with an array on the left (``x + g``) as the
        operators; ``np.maximum``/``minimum`` with a number as ``max``/``min``
        (their comparison recorded); anything else on plain numbers."""
        plain = [x._plain() if isinstance(x, Grid) else x for x in inputs]
        mine = [i for i, x in enumerate(inputs) if isinstance(x, Grid)]
        if method == "__call__" and not kwargs and len(inputs) == 2 and len(mine) == 1:
            i = mine[0]
            other = inputs[1 - i]
            if ufunc in _UFUNC_OPS:
                return inputs[i]._arith(other, _UFUNC_OPS[ufunc], reflected=i == 1)
            if ufunc in (np.maximum, np.minimum) and _constant(other):
                g = inputs[i]
                keep = (g >= other) if ufunc is np.maximum else (g <= other)
                return g if keep else getattr(ufunc, method)(*plain)
        return getattr(ufunc, method)(*plain, **kwargs)

    def __add__(self, other):
        return self._arith(other, operator.add, False)

    def __radd__(self, other):
        return self._arith(other, operator.add, True)

    def __sub__(self, other):
        return self._arith(other, operator.sub, False)

    def __rsub__(self, other):
        return self._arith(other, operator.sub, True)

    def __mul__(self, other):
        return self._arith(other, operator.mul, False)

    def __rmul__(self, other):
        return self._arith(other, operator.mul, True)

    def __truediv__(self, other):
        return self._arith(other, operator.truediv, False)

    def __neg__(self):
        return self._mapped(-self._plain(), -self.rounded.a, -self.rounded.b)

    def __pos__(self):
        return self

    def _compare(self, other, op):
        out = op(self._plain(), other)
        if not _constant(other) or not isinstance(out, (bool, np.bool_)):
            return out
        tr = _trace()
        if tr is None or tr.plain:
            return out
        _record(tr, self.rounded, op, float(other), bool(out))
        # a plain number equal to this one may now be a constant the code
        # chose by the comparison (``max(0, g)``): only conversions say
        tr.compared.add(id(self.origin))
        return bool(out)

    def __lt__(self, other):
        return self._compare(other, operator.lt)

    def __le__(self, other):
        return self._compare(other, operator.le)

    def __gt__(self, other):
        return self._compare(other, operator.gt)

    def __ge__(self, other):
        return self._compare(other, operator.ge)

    __hash__ = None         # set on each concrete class from its plain type


class GridInt(Grid, int):
    __hash__ = int.__hash__


class GridFloat(Grid, float):
    __hash__ = float.__hash__


class GridFloat64(np.float64, Grid):
    # np.float64 second in the method order: numpy reads the class's dtype
    # from it (float64, not object); Grid's methods set here come first
    __hash__ = np.float64.__hash__


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__neg__", "__pos__", "__lt__", "__le__", "__gt__", "__ge__",
              "__float__", "__int__", "item", "__array_ufunc__", "clip"):
    setattr(GridFloat64, _name, getattr(Grid, _name))


# the plain number itself (past the conversions above)
_PLAIN = {GridInt: int.__int__, GridFloat: float.__float__,
          GridFloat64: lambda x: np.float64(np.float64.__float__(x))}
_MADE = {int: GridInt, float: GridFloat, np.float64: GridFloat64}


def make(out, rounded: Rounded, origin: Rounded | None = None):
    """``out`` (a plain scalar the code's rounding or arithmetic returned)
    as a ``Grid`` number of ``rounded``; other values
    as they are."""
    if isinstance(out, np.ndarray) and out.ndim == 0:
        out = out[()]
    base = type(out) if not isinstance(out, Grid) else _PLAIN_TYPE[type(out)]
    cls = _MADE.get(base)
    if cls is None:
        return out
    g = cls(out)
    g.rounded, g.origin = rounded, origin if origin is not None else rounded
    return g


_PLAIN_TYPE = {GridInt: int, GridFloat: float, GridFloat64: np.float64}


def _trace():
    """The trace being run in this thread (``noise.tracing``), or None."""
    return getattr(CURRENT_TRACE, "trace", None)


def _record(tr, r: Rounded, op, t: float, held: bool) -> None:
    """Record ``op(a·q + b, t)`` (which ``held`` on this run) as the
    comparison of the form with the end of the interval of the grid
    value where it changes."""
    if r.a == 0:
        return
    k = math.floor((t - r.b) / r.a / r.step)
    qs = [float(tidy(r.step, (k + j) * r.step)) for j in range(-2, 4)]
    holds = [bool(op(r.a * q + r.b, t)) for q in qs]
    changes = [i for i in range(len(qs) - 1) if holds[i] != holds[i + 1]]
    if len(changes) != 1:
        raise ReplayRefused("a comparison of a rounded noisy value with a number is not "
                            "decided at one grid value")
    i = changes[0]
    # grid values up to qs[i] on one side, from qs[i + 1] on the other: the
    # form is below or above the upper end of qs[i]'s interval
    end = preimage(r.op, r.step, qs[i])[1]
    V = r.coef.size
    z = tr.zvec(V)
    d = r.const + r.coef @ z - end                  # > 0: the grid value is above qs[i]
    if abs(d) <= TIE * (abs(r.const) + np.abs(r.coef) @ np.abs(z) + abs(end) + 1e-300):
        raise ReplayRefused("a rounded noisy value fell within rounding of its interval's end "
                            "at the trace's values")
    above = d > 0
    if above != (holds[i + 1] == held):
        # the form says one grid value, the code's number another
        raise ReplayRefused("a rounded noisy value compared with a number does not agree with "
                            "the interval its form is in")
    s = 1.0 if above else -1.0
    bit = 1 << tr.record(s * r.coef, s * (r.const - end))
    seen = getattr(_CONVERSIONS, "deps", None)
    if seen is not None:
        _CONVERSIONS.deps = seen | bit
