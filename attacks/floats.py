"""Events on the floating-point representation of released numbers.

A mechanism proved private over the reals runs on doubles, and the doubles
it can output depend on its input (Mironov, "On significance of the least
significant bits for differential privacy", CCS 2012; Haney et al.,
"Precision-based attacks and interval refining", PETS 2023).  The textbook
``np.random.laplace(loc=a, scale=b)`` computes ``a + b·ln(2U)``: with
``a = 0`` an output near 0 carries every bit of the logarithm, with
``a = 1`` it is ``1 + y`` rounded, a multiple of 2⁻⁵³.  Near 0 the two
inputs reach disjoint sets of doubles, so no ε holds, however large the
noise.  Thresholds on the value cannot see this: the laws agree to within
ε on every interval.

The events here read two integers of a double v (``parts``):

* its binary exponent e, the least with |v| < 2^e (``np.frexp``), and
* its grain g, the exponent of its least significant set bit: v is a
  multiple of 2^g and not of 2^(g+1) (0 has every grain: +∞).

and count {e ≤ E and g ≥ G} ("|v| < 2^E and v is a multiple of 2^G") and
{e ≤ E and g < G} ("… not a multiple of 2^G").  Which E and G: from pilot
runs of both sides (streams no audit run uses, the caller's), for magnitudes
at quantiles of |v| in the pilot's lower half and at its maximum, G is the
finest grain the coarser side showed there where the two sides' finest
grains differ.  A number whose grain does not depend on the input (a
snapped release, rounded to a fixed power of two; any continuous release
whose input does not move its magnitude's grid) gets no event, so the
family costs nothing where it cannot help.  The family is read for code
audited as written (``reads_doubles``), not for the reference
implementations written for the audit, which model mechanisms over the
reals.  As with every family, the events are fixed before the audit's runs
and the bounds stay valid whatever the pilot chose.

May import: numpy, ``attacks.events`` and ``attacks.lattice``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from .events import NumberEvents, column, cut_numbers, item_name
from .lattice import lattice_family

# Quantile levels of |v| (pooled pilot) at which magnitudes are cut: the
# grids of two inputs differ near the smaller of them, so the lower half.
MAGNITUDE_LEVELS = (0.5, 0.25, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002)
MIN_REGION = 20         # pilot values a side needs below a magnitude
MAX_ITEMS = 32          # numbers (round, coordinate) with events of their own
# A cut whose grain is within this many bits of its magnitude (G ≥ E − 24)
# reads a grid no 53-bit rounding makes: at |v| < 2^E a continuous law's
# doubles are multiples of 2^G with probability about 2^-28.  Such an
# event (integers against half-integers) is a fact about the real values.
COARSE_BITS = 24
ZERO_GRAIN = 4096       # the grain of 0 (a multiple of every power of two)
ZERO_EXPONENT = -4096   # and its exponent (|0| < 2^E for every E)


def coarse(E: int, G: int) -> bool:
    """Whether the cut (E, G) reads a grid of the real values, not the
    doubles' rounding (``COARSE_BITS``)."""
    return G >= E - COARSE_BITS


def reads_grids(alg) -> bool:
    """Whether an algorithm's numbers get the coarse grid events: code
    audited as written, even where it says it models a mechanism over the
    reals (``floating_point = False``): integer noise on a fractional
    input reaches other values over the reals too."""
    extra = alg.extra if isinstance(getattr(alg, "extra", None), dict) else {}
    return reads_doubles(alg) or bool(extra.get("as_written"))


def reads_doubles(alg) -> bool:
    """Whether an algorithm's outputs are read as doubles: code audited as
    written (what runs is what is audited: its rounding is its output), or
    an ``Algorithm`` whose ``extra["floating_point"]`` says so.  An
    ``Algorithm`` written for the audit (the papers' and the testers'
    reference implementations, a user's vectorised learner) models a
    mechanism over the reals: the doubles its simulator happens to round to
    are not the mechanism's, and a finding about them would accuse a paper
    of the simulator's arithmetic."""
    extra = alg.extra if isinstance(getattr(alg, "extra", None), dict) else {}
    return bool(extra.get("floating_point", extra.get("as_written")))


def parts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(exponent, grain, finite) of float64 values, elementwise: |v| < 2^e
    and |v| ≥ 2^(e−1); v a multiple of 2^g, not of 2^(g+1).  Non-finite
    values get ``finite`` False (they are in no event)."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    bits = v.view(np.uint64)
    field = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    mant = bits & np.uint64((1 << 52) - 1)
    sig = np.where(field > 0, mant | np.uint64(1 << 52), mant)
    # The least significant set bit of the significand, 2^tz (exact in a
    # double: at most 2^52); subnormals have the exponent field of 1.
    low = sig & (~sig + np.uint64(1))
    tz = np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1
    grain = np.maximum(field, 1) - 1075 + tz
    exponent = np.frexp(v)[1].astype(np.int64)
    zero = v == 0
    grain = np.where(zero, ZERO_GRAIN, grain)
    exponent = np.where(zero, ZERO_EXPONENT, exponent)
    return exponent, grain, finite


@dataclass(frozen=True)
class FloatGrain(NumberEvents):
    """{e(v) ≤ E and g(v) ≥ G} and {e(v) ≤ E and g(v) < G} for each number
    v = obs[key][:, coord] of ``items`` and each (E, G) of its grid, fixed
    before the audit's runs.  ``obs`` holds points under their round and
    released values under ``("r", t)`` (``attacks.values``)."""

    items: tuple            # ((key, coord), ...)
    grids: tuple            # one tuple of (E, G) per item

    @cached_property
    def labels(self) -> list[str]:
        return [label for label, _ in self._labelled]

    @cached_property
    def fine_labels(self) -> frozenset:
        """The labels of events that read the doubles' rounding, not a
        grid of the real values (``coarse``)."""
        return frozenset(label for label, fine in self._labelled if fine)

    @cached_property
    def _labelled(self) -> list:
        out = []
        for (key, coord), grid in zip(self.items, self.grids):
            name = item_name(key, coord)
            for E, G in grid:
                where = f"|{name}| < 2^{E}" if E < 1024 else f"{name} finite"
                fine = not coarse(E, G)
                out += [(f"{where} and {name} is a multiple of 2^{G}", fine),
                        (f"{where} and {name} is not a multiple of 2^{G}", fine)]
        return out

    def indicators(self, actions: np.ndarray, points=None) -> np.ndarray:
        runs = actions.shape[0]
        out = []
        for (key, coord), grid in zip(self.items, self.grids):
            e, g, ok = parts(column(points, key, coord, runs))
            for E, G in grid:
                inside = ok & (e <= E)
                coarse = g >= G
                out += [inside & coarse, inside & ~coarse]
        return np.stack(out, axis=1) if out else np.zeros((runs, 0), dtype=bool)


def grid(sides: Sequence[np.ndarray], coarse_only: bool = False) -> tuple:
    """The (E, G) cuts of one number from its pilot values on the two sides
    (``sides``: one array each, NaN where not observed): see the module's
    docstring; ``coarse_only``: only those that read a grid of the real
    values (``coarse``).  Empty where the sides' grains never differ."""
    parted = [parts(np.asarray(v, dtype=np.float64).ravel()) for v in sides]
    kept = [(e[ok], g[ok]) for e, g, ok in parted]
    if any(e.size < MIN_REGION for e, _ in kept):
        return ()
    pooled = np.concatenate([e for e, _ in kept])
    levels = np.quantile(pooled, MAGNITUDE_LEVELS, method="inverted_cdf")
    cuts = sorted({int(E) for E in levels} | {1024})   # 1024: every finite value
    out = []
    for E in cuts:
        finest = []
        for e, g in kept:
            region = g[e <= E]
            finest.append(int(region.min()) if region.size >= MIN_REGION else None)
        if None in finest or finest[0] == finest[1]:
            continue
        if coarse_only and not coarse(E, max(finest)):
            continue
        out.append((E, max(finest)))
    return tuple(dict.fromkeys(out))


def grid_families(items: Sequence, sides: Sequence[dict], doubles: bool) -> list:
    """The events on the grids the numbers of ``items`` lie on, from pilot
    observations per side: their floating-point grain (with ``doubles``,
    ``reads_doubles``; else only its grids of the real values) and the
    lattices an input moves (``attacks.lattice``)."""
    return (float_family(items, sides, coarse_only=not doubles)
            + lattice_family(items, sides))


def float_family(items: Sequence, sides: Sequence[dict], coarse_only: bool = False) -> list:
    """The ``FloatGrain`` family of ``items`` ((key, coord) pairs, at most
    ``MAX_ITEMS`` of them kept, in order) from pilot observations per side
    (``sides``: {key: (runs, d)}); [] where no number's grain differs.
    ``coarse_only``: grids of the real values only (code that models a
    mechanism over the reals)."""
    kept, grids = cut_numbers(items, sides, lambda v: grid(v, coarse_only), MAX_ITEMS)
    return [FloatGrain(kept, grids)] if kept else []
