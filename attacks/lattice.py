"""Events on the lattice a released number lies on.

A mechanism that adds *integer* noise (a geometric or discrete Laplace
draw, a rounded Laplace draw) to a number its input moves by a fraction
releases values on the lattice input + ℤ: from the inputs 0 and 0.5 the
two sets of reachable values are disjoint, and no ε holds — over the reals,
whatever the arithmetic.  Thresholds on the value cannot see it (the laws
agree to within ε on every interval), nor can the floating-point grain
events of ``attacks.floats`` once the code says it models a mechanism over
the reals (``floating_point = False``).

For each number (a point or a release of one round), each side's pilot
values are tried against the lattices c + s·ℤ, c the side's first value and
s from ``STEPS`` (coarsest first): where at least ``MIN_ON`` of one side's
values lie on its lattice and at most ``MAX_OTHER`` of the other side's do,
the events {v ∈ c + s·ℤ} and {v ∉ c + s·ℤ} are kept.  "On" allows the
floating-point error of computing v − c (``TOL``, relative): a continuous
law puts about 10⁻⁸ of its mass there, a lattice law all of it.  A release
whose lattice does not move with the input (whole numbers from whole
inputs, a value rounded to a fixed grid, a snapped release) gets no event,
so the family costs nothing where it cannot help.  The events are fixed on
pilot runs, before the audit's: the bounds stay valid whatever it chose.

May import: numpy and ``attacks.events``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from .events import NumberEvents, column, cut_numbers, item_name

STEPS = (10.0, 5.0, 2.0, 1.0, 0.5, 0.25, 0.2, 0.1, 0.05, 0.01, 0.001)
TOL = 1e-9              # |(v − c)/s − round(…)| allowed, per unit of (|v| + |c|)/s + 1
MIN_ON = 0.99           # share of a side's pilot values on its lattice
MAX_OTHER = 0.9         # … and at most this share of the other side's
MIN_VALUES = 20         # pilot values a side needs
MAX_ITEMS = 32          # numbers with events of their own


def on_lattice(v: np.ndarray, c: float, s: float) -> np.ndarray:
    """Whether each value lies on c + s·ℤ (up to ``TOL``; NaN: no)."""
    v = np.asarray(v, dtype=float)
    with np.errstate(invalid="ignore"):
        r = (v - c) / s
        return np.abs(r - np.rint(r)) <= TOL * (1.0 + (np.abs(v) + abs(c)) / s)


def lattice_of(values: np.ndarray) -> tuple | None:
    """(c, s): the coarsest lattice of ``STEPS`` at least ``MIN_ON`` of the
    finite ``values`` lie on, c the first of them; None where none is."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < MIN_VALUES:
        return None
    c = float(v[0])
    for s in STEPS:
        if np.mean(on_lattice(v, c, s)) >= MIN_ON:
            return c, s
    return None


def cuts(sides: Sequence[np.ndarray]) -> tuple:
    """The lattices (c, s) of one number that one side's pilot values lie
    on and the other's do not (``MAX_OTHER``)."""
    out = []
    for i, own in enumerate(sides):
        lat = lattice_of(own)
        if lat is None:
            continue
        other = np.asarray(sides[1 - i], dtype=float)
        other = other[np.isfinite(other)]
        if other.size >= MIN_VALUES and np.mean(on_lattice(other, *lat)) <= MAX_OTHER:
            out.append(lat)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class Lattice(NumberEvents):
    """{v ∈ c + s·ℤ} and {v ∉ c + s·ℤ} (finite v) for each number v =
    obs[key][:, coord] of ``items`` and each (c, s) of its ``lattices``,
    fixed before the audit's runs (``obs`` as in ``attacks.floats``)."""

    items: tuple            # ((key, coord), ...)
    lattices: tuple         # one tuple of (c, s) per item

    @cached_property
    def labels(self) -> list[str]:
        out = []
        for (key, coord), lats in zip(self.items, self.lattices):
            name = item_name(key, coord)
            for c, s in lats:
                out += [f"{name} ∈ {c:.10g} + {s:g}·ℤ", f"{name} finite and ∉ {c:.10g} + {s:g}·ℤ"]
        return out

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        runs = actions.shape[0]
        out = []
        for (key, coord), lats in zip(self.items, self.lattices):
            v = column(points, key, coord, runs)
            finite = np.isfinite(v)
            for c, s in lats:
                on = finite & on_lattice(v, c, s)
                out += [on, finite & ~on]
        return np.stack(out, axis=1) if out else np.zeros((runs, 0), dtype=bool)


def lattice_family(items: Sequence, sides: Sequence[dict]) -> list:
    """The ``Lattice`` family of ``items`` ((key, coord) pairs, at most
    ``MAX_ITEMS`` kept, in order) from pilot observations per side
    (``sides``: {key: (runs, d)}); [] where no number's lattice moves."""
    kept, lats = cut_numbers(items, sides, cuts, MAX_ITEMS)
    return [Lattice(kept, lats)] if kept else []
