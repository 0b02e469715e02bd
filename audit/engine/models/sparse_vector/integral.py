"""Exact output probabilities of a sparse vector, with a certified error.

Given the threshold noise ρ = r the rounds of a sparse vector
(``algorithms.sparse_vector_model``) are independent, so an output's
probability is ∫ f_ρ(r) Π_i h_i(r) dr, where a ⊥ round contributes
h(r) = P(q_i + ν_i < T + r), a ⊤ round 1 − that (or, for a released
compared value y, its density f_ν(y − q_i)·1[r ≤ y − T]) times the density
of a fresh released number, and an aborted round 1.  With a fresh ρ after
every ⊤ the integral factorises over the segments a ⊤ ends.  The integrand
of a segment depends only on how many ⊥ and ⊤ rounds it has at each
distinct answer, so outputs are reduced to those counts (and the limit
y − T) and every distinct count row is integrated once.

Certification (``audit.engine.models.log_concave``, shared with
report-noisy-max).  The Laplace law is log-concave, so every factor, and
their product g, is log-concave in r.  The r-line is cut into cells whose
edges include every kink (r = q_i − T and 0), so inside a cell log g is
smooth and concave: it lies above the chord between the cell's endpoints
(a lower bound) and below both end tangents (an upper bound); both
integrate in closed form, on any cell, so the grid may be non-uniform.  It
is fine (1/``CELLS_PER_SCALE`` of the smallest Laplace scale) within
``FINE_SCALES`` scales of every kink, where the curvature lives, and the
cells then grow geometrically away from the kinks, so the number of cells
is a few hundred per kink whatever the scales and the spread of the
answers.  The grid reaches ``TAIL_SCALES`` of the largest scale beyond the
outermost kink on both sides, and each tail is bounded above by the
integral of the tangent at its end and below by 0.  A slope that does not
decay there, or a bracket whose lower end exceeds its upper end, is an
internal error, never a result.  The final bracket is widened by a
relative 1e-10, far above the rounding error of the terms summed.  Bracket
widths are about 1e-5 relative near the default parameters.

Released compared values.  A row's limit r ≤ y − T is not a kink of its
integrand but where its integral stops: every distinct count row is
integrated once over one grid, and each output's limit cuts the cell it
falls in (``log_concave.log_integrals``).  That grid is fine over all the
limits at once (``log_concave.limit_edges``): below each limit it is no
coarser than a grid refined around that limit alone, which is what each
output got before (one grid and one pass per output, about 100 times
slower on Alg 3's sampled outputs), so no bracket is wider.

``exact_pair`` is the pair's exact ε over every output where the code
sequences are enumerable and no number or only fresh ones are released.

May import: numpy, ``algorithms.sparse_vector_model``,
``audit.engine.models.log_concave`` and ``audit.engine.models.pair_loss``.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from algorithms.sparse_vector_model import ABORTED, ABOVE, BELOW, SparseVectorModel
from audit.engine.models.log_concave import (BATCH_ENTRIES, CELLS_PER_SCALE, NEG, TAIL_SCALES,
                                             check_ordered, grid, laplace_log_cdf,
                                             laplace_log_sf, log_integrals, widen)
from audit.engine.models.pair_loss import loss_bracket

ENUMERATION_LIMIT = 2 ** 14         # outputs enumerated at most
ENUMERATION_ENTRIES = 2 ** 24       # codes (outputs × rounds, int8: 16 MB) enumerated at most


def _factor_tables(model, uq, r, side):
    """(ln h, d/dr ln h) of a ⊥ round and of a ⊤ round, each (u, len(r)),
    for every distinct answer ``uq`` at the points ``r``, the branch of each
    kinked term chosen at ``side`` (a point inside the cell, so one-sided
    values are taken from inside it)."""
    x = model.threshold + r[None, :] - uq[:, None]
    xm = model.threshold + side[None, :] - uq[:, None]
    b = model.query_scale
    if b == 0:
        # h is an indicator, constant inside a cell: read it at side.
        zero = np.zeros_like(x)
        return (np.where(xm > 0, 0.0, NEG), zero), (np.where(xm > 0, NEG, 0.0), zero)
    # The branch of the kink at x = 0 is the inside point's.
    xc = np.where(xm < 0, np.minimum(x, 0.0), np.maximum(x, 0.0))
    return laplace_log_cdf(xc, b), laplace_log_sf(xc, b)


def _rho_terms(model, r, side):
    """ln f_ρ and its derivative at r, branch of the kink at 0 by ``side``."""
    b = model.threshold_scale
    return (-np.abs(r) / b - math.log(2 * b),
            np.where(side < 0, 1.0 / b, -1.0 / b))


class _Rows:
    """The integrands of count rows as a ``log_concave`` family: row k is
    f_ρ(r) Π_u h_⊥(r; uq_u)^CB[k, u] h_⊤(r; uq_u)^CA[k, u]."""

    def __init__(self, model, uq, CB, CA):
        self.model, self.uq, self.CB, self.CA = model, uq, CB, CA
        self.n, self.width = CB.shape[0], max(CB.shape[1], 1)

    def tables(self, r, side):
        return _factor_tables(self.model, self.uq, r, side), _rho_terms(self.model, r, side)

    def rows(self, tables, sl):
        ((vb, db), (va, da)), (lr, dr) = tables
        cb, ca = self.CB[sl], self.CA[sl]
        return np.maximum(lr + cb @ vb + ca @ va, NEG), dr + cb @ db + ca @ da

    def pointwise(self, rows, r, side):
        ((vb, db), (va, da)), (lr, dr) = self.tables(r, side)
        cb, ca = self.CB[rows], self.CA[rows]
        L = lr + np.sum(cb * vb.T, axis=1) + np.sum(ca * va.T, axis=1)
        return np.maximum(L, NEG), dr + np.sum(cb * db.T, axis=1) + np.sum(ca * da.T, axis=1)


def _cells(model: SparseVectorModel, kinks, limits=(), cells: int = CELLS_PER_SCALE) -> np.ndarray:
    """The cell edges: every kink and 0, fine near them, coarse far away,
    from TAIL_SCALES largest scales below the lowest kink to as far above
    the highest, with fine cells over the upper limits ``limits``
    (``log_concave.grid``)."""
    b_rho, b_nu = model.threshold_scale, model.query_scale
    # Without query noise log g is linear between kinks (ln f_ρ, indicators
    # constant): chord and tangents coincide, so coarse cells are exact.
    h0 = b_rho if b_nu == 0 else min(b_rho, b_nu) / cells
    kinks = np.asarray(kinks, dtype=float)
    pts = np.concatenate([[0.0], kinks[np.isfinite(kinks)]])
    return grid(pts, h0, TAIL_SCALES * max(b_rho, b_nu), limits=limits, cells=cells)


def _segment_bounds(model, uq, CB, CA, lims, cells=CELLS_PER_SCALE):
    """Certified (lo, hi) of ln ∫_{r ≤ lim} f_ρ(r) Π h_i(r) dr for count
    rows: CB, CA (m, u) the numbers of ⊥ rounds and of ⊤ rounds with a
    P(⊤) factor at each distinct answer ``uq``; lims (m,) an upper limit
    r ≤ lim from released compared values (+inf: none).  Every distinct
    count row is one integrand; every row's limit one query of it, all on
    one grid (``log_concave.log_integrals``)."""
    u = CB.shape[1]
    counts, row = np.unique(np.concatenate([CB, CA], axis=1), axis=0, return_inverse=True)
    family = _Rows(model, uq, counts[:, :u], counts[:, u:])
    edges = _cells(model, uq - model.threshold, limits=lims, cells=cells)
    return log_integrals(family, edges, row.ravel(), lims, what="sparse vector integral")


def _laplace_log_density(x, b):
    return -np.abs(x) / b - math.log(2 * b)


def well_formed(model, codes) -> np.ndarray:
    """The abort structure, row by row: every code is ⊥, ⊤ or aborted, and
    the rounds after the c-th ⊤ are aborted, no others."""
    codes = np.atleast_2d(np.asarray(codes))
    above = codes == ABOVE
    before = np.cumsum(above, axis=1) - above          # ⊤s strictly before each round
    done = (before >= model.cutoff) if model.cutoff is not None else np.zeros_like(above)
    return np.all(done == (codes == ABORTED), axis=1) & np.all(
        (codes == ABOVE) | (codes == BELOW) | (codes == ABORTED), axis=1)


def _count_rows(model, answers, codes, values):
    """The segments of a batch of valid outputs as count rows.  Returns
    (uq, CB, CA, lims, owner, const): per row the numbers of ⊥ rounds and of
    ⊤ rounds with a P(⊤) factor at each distinct answer, the limit from
    released compared values and the output it belongs to; per output the
    log densities of its released numbers."""
    m, n = codes.shape
    uq, uidx = np.unique(answers, return_inverse=True)
    u = len(uq)
    above, below = codes == ABOVE, codes == BELOW
    const = np.zeros(m)
    y = None
    if model.numeric is not None:
        y = np.asarray(values, dtype=float)
        scale = model.numeric_scale if model.numeric == "fresh" else model.query_scale
        const = np.where(above, _laplace_log_density(y - answers[None, :], scale), 0.0).sum(axis=1)
    # A released compared value y replaces P(⊤ | r) by its density
    # f_ν(y − q)·1[r ≤ y − T] (const above, lims below): no P(⊤) factor too.
    factor_above = above if model.numeric != "same" else np.zeros_like(above)
    seg = (np.cumsum(above, axis=1) - above) if model.resample else np.zeros((m, n), np.int64)
    live = above | below
    j, i = np.nonzero(live)
    keys = j * (n + 1) + seg[j, i]
    row_keys, row = np.unique(keys, return_inverse=True)
    rows = len(row_keys)
    cell = row * u + uidx[i]
    size = rows * u
    CB = np.bincount(cell, weights=below[j, i].astype(float), minlength=size).reshape(rows, u)
    CA = np.bincount(cell, weights=factor_above[j, i].astype(float),
                     minlength=size).reshape(rows, u)
    lims = np.full(rows, np.inf)
    if model.numeric == "same":
        s = above[j, i]
        np.minimum.at(lims, row[s], y[j[s], i[s]] - model.threshold)
    return uq, CB, CA, lims, row_keys // (n + 1), const


def _rows_bounds(model, uq, CB, CA, lims, cells=CELLS_PER_SCALE):
    """Brackets of count rows, each distinct (row, limit) once, all in one
    pass over one grid (rows without a limit integrate the whole line)."""
    stacked = np.concatenate([CB, CA, lims[:, None]], axis=1)
    uniq, inv = np.unique(stacked, axis=0, return_inverse=True)
    u = len(uq)
    lo, hi = _segment_bounds(model, uq, uniq[:, :u], uniq[:, u:2 * u], uniq[:, 2 * u], cells)
    inv = inv.ravel()
    return lo[inv], hi[inv]


def log_probability(model: SparseVectorModel, answers, codes,
                    values: Optional[np.ndarray] = None, cells: int = CELLS_PER_SCALE):
    """Certified (lo, hi) arrays of ln P(output) for each row of ``codes``
    (m, n) under ``answers`` (n,); a log density on the released numbers
    (``values`` (m, n), read on ⊤ rounds) for a numeric model; −inf for an
    impossible output.  Outputs are processed in batches (bounded memory).
    A bracket with its lower end above its upper end raises
    AssertionError: an internal error, never a result.  ``cells``: cells
    per smallest scale near a kink (fewer: faster, still certified, wider)."""
    answers = np.asarray(answers, dtype=float)
    codes = np.atleast_2d(np.asarray(codes))
    m, n = codes.shape
    if model.numeric is not None and values is None:
        raise ValueError("a numeric sparse vector needs the released values of each output")
    lo = np.full(m, -np.inf)
    hi = np.full(m, -np.inf)
    # Outputs per batch: their codes, and their count rows (outputs × segments
    # × distinct answers), stay near BATCH_ENTRIES numbers.
    segments = (n if model.cutoff is None else min(model.cutoff, n)) + 1 if model.resample else 1
    step = max(1, BATCH_ENTRIES // max(n * segments, 1))
    for s0 in range(0, m, step):
        c = codes[s0:s0 + step].astype(np.int64)
        v = None if values is None else np.asarray(values[s0:s0 + step], dtype=float)
        idx = np.flatnonzero(well_formed(model, c))
        if not idx.size:
            continue
        uq, CB, CA, lims, owner, const = _count_rows(model, answers, c[idx],
                                                     None if v is None else v[idx])
        l_rows, h_rows = _rows_bounds(model, uq, CB, CA, lims, cells)
        with np.errstate(invalid="ignore"):
            lo[s0 + idx] = np.bincount(owner, weights=l_rows, minlength=idx.size) + const
            hi[s0 + idx] = np.bincount(owner, weights=h_rows, minlength=idx.size) + const
    lo, hi = lo - widen(lo), hi + widen(hi)
    check_ordered(lo, hi, "sparse vector log-probability")
    return lo, hi


_CACHE: dict = {}


def all_outputs_log_probability(model: SparseVectorModel, answers,
                                cells: int = CELLS_PER_SCALE):
    """(codes, lo, hi) for every output of a finite-output model, cached per
    model and answers (the pattern pairs share their base answers); only
    for an ``enumerable`` model."""
    key = (model, tuple(np.asarray(answers, dtype=float).tolist()), cells)
    if key not in _CACHE:
        codes = outputs(model, len(key[1]))
        _CACHE[key] = (codes, *log_probability(model, np.asarray(key[1]), codes, cells=cells))
        if len(_CACHE) > 64:
            _CACHE.pop(next(iter(_CACHE)))
    return _CACHE[key]


@dataclass
class ExactPair:
    """The pair's exact ε over every output of an enumerable model: the
    largest certified lower end of a loss (``lower``, with the output and
    direction attaining it, and that output's upper end ``best_upper``)
    and the largest upper end (``upper``)."""

    lower: float
    upper: float
    direction: Optional[str]
    codes: Optional[np.ndarray]
    values: Optional[np.ndarray]
    best_upper: float
    outputs: int
    # Every output's certified log-probability (density) brackets in the
    # winning direction, (lo, hi) on each side, with the codes they belong
    # to: the report draws the outputs that certify the most.
    log_numerator: Optional[tuple] = None
    log_denominator: Optional[tuple] = None
    all_codes: Optional[np.ndarray] = None


def exact_pair(model, a, b, directions=("l>l'", "l'>l"),
               cells: int = CELLS_PER_SCALE) -> ExactPair:
    """The pair's exact ε over every output (in the given directions), for
    a model whose code sequences are enumerable and that releases no number
    or fresh ones (placed, per direction, at the numerator's answers, where
    each one's density ratio is largest)."""
    if not (model.finite_outputs or model.numeric == "fresh") or \
            not codes_enumerable(model, len(a)):
        raise ValueError("the pair's exact ε is computed only over enumerable code sequences "
                         "with no released number or fresh ones")
    # The codes' probabilities do not depend on fresh numbers (their density
    # factors out), so both come from the cached code-only enumeration.
    codes_model = dataclasses.replace(model, numeric=None, numeric_scale=None)
    codes = outputs(model, len(a))
    above = codes == ABOVE
    best = ExactPair(-math.inf, -math.inf, None, None, None, -math.inf, len(codes))
    for d, (num, den) in (("l>l'", (a, b)), ("l'>l", (b, a))):
        if d not in directions:
            continue
        lo_n, hi_n = all_outputs_log_probability(codes_model, num, cells)[1:]
        lo_d, hi_d = all_outputs_log_probability(codes_model, den, cells)[1:]
        values = None
        if model.numeric == "fresh":
            # Each ⊤'s number y = the numerator's answer: ln f(0) on the
            # numerator, ln f(q − q′) on the denominator, f = Lap(numeric_scale).
            s = model.numeric_scale
            values = np.asarray(num, dtype=float)
            fn = np.where(above, -math.log(2 * s), 0.0).sum(axis=1)
            fd = np.where(above, -np.abs(num - den)[None, :] / s - math.log(2 * s),
                          0.0).sum(axis=1)
            lo_n, hi_n = lo_n + fn - widen(fn), hi_n + fn + widen(fn)
            lo_d, hi_d = lo_d + fd - widen(fd), hi_d + fd + widen(fd)
        low, high = loss_bracket(lo_n, hi_n, lo_d, hi_d)
        if not np.all(np.isnan(high)):
            best.upper = max(best.upper, float(np.nanmax(high)))
        if np.all(np.isnan(low)):
            continue
        i = int(np.nanargmax(low))
        if low[i] > best.lower:
            best.lower, best.direction, best.codes = float(low[i]), d, codes[i]
            best.values = None if values is None else values.copy()
            best.best_upper = float(high[i])
            best.log_numerator, best.log_denominator = (lo_n, hi_n), (lo_d, hi_d)
            best.all_codes = codes
    return best


def output_count(model: SparseVectorModel, n: int) -> int:
    """The number of code sequences the model can output on n rounds,
    counted without enumerating: 2^n without a cutoff; with cutoff c the
    sequences with k < c ⊤s (C(n, k) each) and those whose c-th ⊤ is at
    round p, the rest aborted (Σ_p C(p − 1, c − 1) = C(n, c)), so
    Σ_{k ≤ min(c, n)} C(n, k)."""
    if model.cutoff is None or model.cutoff >= n:
        return 2 ** n
    return sum(math.comb(n, k) for k in range(model.cutoff + 1))


def enumerable(model: SparseVectorModel, n: int) -> bool:
    """Whether every output is enumerated: codes only, at most
    ENUMERATION_LIMIT outputs and ENUMERATION_ENTRIES codes in all."""
    return model.finite_outputs and codes_enumerable(model, n)


def codes_enumerable(model: SparseVectorModel, n: int) -> bool:
    """Whether every code sequence can be enumerated (numbers aside): at
    most ENUMERATION_LIMIT of them and ENUMERATION_ENTRIES codes in all."""
    count = output_count(model, n)
    return count <= ENUMERATION_LIMIT and count * n <= ENUMERATION_ENTRIES


def outputs(model: SparseVectorModel, n: int) -> np.ndarray:
    """Every code sequence the model can output on n rounds (numbers aside),
    sorted, as int8 rows; built from the positions of the ⊤s, never from
    all 2^n sequences.  ValueError beyond the enumeration limit."""
    count = output_count(model, n)
    if count > ENUMERATION_LIMIT or count * n > ENUMERATION_ENTRIES:
        raise ValueError(f"the sparse vector has {count} possible outputs on {n} rounds, more "
                         f"than the {ENUMERATION_LIMIT} (and {ENUMERATION_ENTRIES} codes) "
                         f"enumerated at most")
    out = np.zeros((count, n), dtype=np.int8)
    k_max = n if model.cutoff is None else min(model.cutoff, n)
    row = 0
    for k in range(k_max + 1):
        for pos in itertools.combinations(range(n), k):
            out[row, list(pos)] = ABOVE
            if model.cutoff is not None and k == model.cutoff:
                out[row, pos[-1] + 1:] = ABORTED
            row += 1
    assert row == count, (row, count)
    # Sorted like the code sequences themselves (lexicographically).
    order = np.lexsort(out.T[::-1])
    return out[order]
