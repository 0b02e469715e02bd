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

Certification.  The Laplace law is log-concave, so every factor, and their
product g, is log-concave in r.  The r-line is cut into cells whose edges
include every kink (r = q_i − T, 0, and y − T for a released value), so
inside a cell log g is smooth and concave: it lies above the chord between
the cell's endpoints (a lower bound) and below both end tangents (an upper
bound); both integrate in closed form, on any cell, so the grid may be
non-uniform.  It is fine (1/``CELLS_PER_SCALE`` of the smallest Laplace
scale) within ``FINE_SCALES`` scales of every kink, where the curvature
lives, and the cells then grow geometrically (by ``GROWTH`` a cell) away
from the kinks, so the number of cells is a few hundred per kink whatever
the scales and the spread of the answers.  The grid reaches
``TAIL_SCALES`` of the largest scale beyond the outermost kink on both
sides: every kink is inside, so beyond the ends log g is concave with
slopes pointing into decay, and each tail is bounded above by the integral
of the tangent at its end (a concave function lies below its tangents) and
below by 0.  A slope that does not decay there, or a bracket whose lower
end exceeds its upper end, is an internal error, never a result.  Sums are
taken in log space (log-sum-exp), and the final bracket is widened by a
relative 1e-10, far above the rounding error of the terms summed.  Bracket
widths are about 1e-5 relative near the default parameters (as with the
uniform grid of the same fine step: the exact figures do not move).

Bounded work.  Cells are processed in blocks and count rows in batches, so
no array holds more than ``BATCH_ENTRIES`` numbers (a few MB; memory stays
well under 200 MB whatever the horizon).  ``output_count`` gives the number
of possible code sequences combinatorially (2^n without a cutoff, else
Σ_{k ≤ c} C(n, k)); ``outputs`` enumerates them only when
``enumerable``: at most ``ENUMERATION_LIMIT`` outputs and
``ENUMERATION_ENTRIES`` codes in all (outputs × rounds, one byte each).
Beyond that the ``integral`` evidence samples outputs instead.

May import: numpy and ``algorithms.sparse_vector_model``.
"""
from __future__ import annotations

import itertools
import math
from typing import Optional

import numpy as np

from algorithms.sparse_vector_model import ABORTED, ABOVE, BELOW, SparseVectorModel

LN2 = math.log(2.0)
CELLS_PER_SCALE = 80        # cells per unit of the smallest Laplace scale near a kink
FINE_SCALES = 5.0           # the fine cells reach this many smallest scales from a kink
GROWTH = 0.01               # then each cell is 1% wider than the last
TAIL_SCALES = 45.0          # the grid ends 45 largest scales beyond the outermost kink
SLACK = 1e-10               # relative widening of every bracket (floating point)
NEG = -1e300                # log 0 in matrix products (avoids 0·(−inf) = NaN)
ENUMERATION_LIMIT = 2 ** 14         # outputs enumerated at most
ENUMERATION_ENTRIES = 2 ** 24       # codes (outputs × rounds, int8: 16 MB) enumerated at most
BATCH_ENTRIES = 2 ** 16             # numbers in one array of one pass (512 kB)


def _log_cdf(x, b):
    """ln P(Lap(b) < x) and its derivative, stable in both tails."""
    x = np.asarray(x, dtype=float)
    neg = x < 0
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x) / b)
    val = np.where(neg, x / b - LN2, np.log1p(-0.5 * e))
    der = np.where(neg, 1.0 / b, 0.5 * e / b / (1 - 0.5 * e))
    return val, der


def _log_sf(x, b):
    """ln P(Lap(b) ≥ x) and its derivative."""
    v, d = _log_cdf(-np.asarray(x, dtype=float), b)
    return v, -d


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
    return _log_cdf(xc, b), _log_sf(xc, b)


def _rho_terms(model, r, side):
    """ln f_ρ and its derivative at r, branch of the kink at 0 by ``side``."""
    b = model.threshold_scale
    return (-np.abs(r) / b - math.log(2 * b),
            np.where(side < 0, 1.0 / b, -1.0 / b))


def _offsets(h0: float, reach: float) -> np.ndarray:
    """Distances from a kink of the cell edges on one side of it, up to
    ``reach``: steps of h0 for FINE_SCALES·(h0·CELLS_PER_SCALE), then each
    step GROWTH wider than the last."""
    fine = int(round(FINE_SCALES * CELLS_PER_SCALE))
    near = np.arange(fine + 1) * h0
    if near[-1] >= reach:
        return near[near < reach]
    k = math.ceil(math.log1p(GROWTH * (reach - near[-1]) / h0) / math.log1p(GROWTH)) + 1
    far = near[-1] + h0 * np.expm1(np.arange(1, k + 1) * math.log1p(GROWTH)) / GROWTH
    out = np.concatenate([near, far])
    return out[out < reach]


def _cells(model: SparseVectorModel, kinks) -> np.ndarray:
    """The cell edges: every kink and 0, fine near them, coarse far away,
    from TAIL_SCALES largest scales below the lowest kink to as far above
    the highest."""
    b_rho, b_nu = model.threshold_scale, model.query_scale
    # Without query noise log g is linear between kinks (ln f_ρ, indicators
    # constant): chord and tangents coincide, so coarse cells are exact.
    h0 = b_rho if b_nu == 0 else min(b_rho, b_nu) / CELLS_PER_SCALE
    kinks = np.asarray(kinks, dtype=float)
    pts = np.unique(np.concatenate([[0.0], kinks[np.isfinite(kinks)]]))
    reach = TAIL_SCALES * max(b_rho, b_nu)
    lo_end, hi_end = pts[0] - reach, pts[-1] + reach
    pieces = [pts, [lo_end, hi_end]]
    # Edges grow away from each kink towards its neighbours (half-way each)
    # and towards the ends.
    gaps = np.diff(pts)
    left_reach = np.concatenate([[reach], gaps / 2])      # below each kink
    right_reach = np.concatenate([gaps / 2, [reach]])     # above each kink
    cache: dict = {}
    for p, below, above in zip(pts, left_reach, right_reach):
        for reach_side, sign in ((below, -1.0), (above, 1.0)):
            if reach_side not in cache:
                cache[reach_side] = _offsets(h0, reach_side)
            pieces.append(p + sign * cache[reach_side])
    edges = np.unique(np.concatenate(pieces))
    return edges[(edges >= lo_end) & (edges <= hi_end)]


def _lse(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m, axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def _log_int_exp_linear(va, slope, width):
    """ln ∫_0^width exp(va + slope·s) ds, elementwise (width > 0)."""
    z = slope * width
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        big = z > 0
        # ∫ = e^va (e^z − 1)/slope; write stably for both signs of z.
        pos = va + z + np.log(-np.expm1(-np.abs(z))) - np.log(np.abs(slope))
        neg = va + np.log(-np.expm1(-np.abs(z))) - np.log(np.abs(slope))
        out = np.where(big, pos, neg)
        out = np.where(np.abs(z) < 1e-12, va + np.log(width), out)
    return np.where(va <= NEG / 2, -np.inf, out)


def _cell_bounds(LA, LB, DA, DB, w):
    """ln of the lower (chord) and upper (min of the end tangents) integrals
    of exp(log g) over each cell, from its end values and one-sided slopes."""
    slope = (LB - LA) / w
    lower = _log_int_exp_linear(LA, slope, w)
    # The end tangents cross at s* (from a), clipped to the cell.
    with np.errstate(divide="ignore", invalid="ignore"):
        s_star = np.where(DA > DB, (LB - LA - DB * w) / (DA - DB), w)
    s_star = np.clip(np.nan_to_num(s_star, nan=0.0), 0.0, w)
    up1 = np.where(s_star > 0, _log_int_exp_linear(LA, DA, np.maximum(s_star, 1e-300)), -np.inf)
    rest = w - s_star
    vb_back = LB - DB * rest          # the tangent at b evaluated at a + s*
    up2 = np.where(rest > 0, _log_int_exp_linear(vb_back, DB, np.maximum(rest, 1e-300)),
                   -np.inf)
    return lower, np.logaddexp(up1, up2)


def _rows_at(model, uq, CB, CA, lims, r, side):
    """ln g and its slope at the points r for each count row (rows × len(r))."""
    (vb, db), (va, da) = _factor_tables(model, uq, r, side)
    lr, dr = _rho_terms(model, r, side)
    L = lr + CB @ vb + CA @ va
    D = dr + CB @ db + CA @ da
    if np.isfinite(lims).any():
        # Released compared values: r ≤ lim, an indicator constant in each cell.
        L = np.where(side[None, :] > lims[:, None], NEG, L)
    return np.maximum(L, NEG), D


def _segment_bounds(model, uq, CB, CA, lims):
    """Certified (lo, hi) of ln ∫ f_ρ(r) Π h_i(r) dr for count rows: CB, CA
    (m, u) the numbers of ⊥ rounds and of ⊤ rounds with a P(⊤) factor at
    each distinct answer ``uq``; lims (m,) an upper limit r ≤ lim from
    released compared values (+inf: none).  Cells in blocks, rows in
    batches: no array exceeds about BATCH_ENTRIES numbers."""
    m, u = CB.shape
    finite = lims[np.isfinite(lims)]
    edges = _cells(model, np.concatenate([uq - model.threshold, finite]))
    ncell = len(edges) - 1
    block = int(min(ncell, 4096, max(64, BATCH_ENTRIES // max(u, 1))))
    batch = max(1, BATCH_ENTRIES // block)
    lo = np.full(m, -np.inf)
    hi = np.full(m, -np.inf)
    for c0 in range(0, ncell, block):
        c1 = min(c0 + block, ncell)
        a, b = edges[c0:c1], edges[c0 + 1:c1 + 1]
        mid = (a + b) / 2
        w = (b - a)[None, :]
        (vba, dba), (vaa, daa) = _factor_tables(model, uq, a, mid)
        (vbb, dbb), (vab, dab) = _factor_tables(model, uq, b, mid)
        lra, dra = _rho_terms(model, a, mid)
        lrb, drb = _rho_terms(model, b, mid)
        for r0 in range(0, m, batch):
            cb, ca, lim = CB[r0:r0 + batch], CA[r0:r0 + batch], lims[r0:r0 + batch]
            LA = lra + cb @ vba + ca @ vaa
            LB = lrb + cb @ vbb + ca @ vab
            DA = dra + cb @ dba + ca @ daa
            DB = drb + cb @ dbb + ca @ dab
            if np.isfinite(lim).any():
                out = mid[None, :] > lim[:, None]
                LA = np.where(out, NEG, LA)
                LB = np.where(out, NEG, LB)
            lower, upper = _cell_bounds(np.maximum(LA, NEG), np.maximum(LB, NEG), DA, DB, w)
            lo[r0:r0 + batch] = np.logaddexp(lo[r0:r0 + batch], _lse(lower))
            hi[r0:r0 + batch] = np.logaddexp(hi[r0:r0 + batch], _lse(upper))
    # Tails beyond the ends: below the tangent at the end, whose slope must
    # point into decay (up on the left, down on the right).  A row that is 0
    # at an end through an indicator (monotone) is 0 over the whole tail.
    first, last = np.array([edges[0]]), np.array([edges[-1]])
    L0, D0 = _rows_at(model, uq, CB, CA, lims, first, np.array([(edges[0] + edges[1]) / 2]))
    L1, D1 = _rows_at(model, uq, CB, CA, lims, last, np.array([(edges[-2] + edges[-1]) / 2]))
    L0, D0, L1, D1 = L0[:, 0], D0[:, 0], L1[:, 0], D1[:, 0]
    live0, live1 = L0 > NEG / 2, L1 > NEG / 2
    if np.any(live0 & (D0 <= 0)) or np.any(live1 & (D1 >= 0)):
        raise ArithmeticError("sparse vector integral: the tangent at an end of the grid does "
                              "not decay although every kink is inside it")
    with np.errstate(divide="ignore", invalid="ignore"):
        tail_l = np.where(live0, L0 - np.log(np.where(live0, D0, 1.0)), -np.inf)
        tail_r = np.where(live1, L1 - np.log(np.where(live1, -D1, 1.0)), -np.inf)
    hi = np.logaddexp(hi, np.logaddexp(tail_l, tail_r))
    lo = np.where(lo <= NEG / 2, -np.inf, lo)
    hi = np.where(hi <= NEG / 2, -np.inf, hi)
    return lo, hi


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


def _rows_bounds(model, uq, CB, CA, lims):
    """Brackets of count rows, each distinct row once; rows without a limit
    share one grid, rows with one get the grid of their limit."""
    stacked = np.concatenate([CB, CA, lims[:, None]], axis=1)
    uniq, inv = np.unique(stacked, axis=0, return_inverse=True)
    inv = inv.ravel()
    u = len(uq)
    ub, ua, ul = uniq[:, :u], uniq[:, u:2 * u], uniq[:, 2 * u]
    lo = np.empty(len(uniq))
    hi = np.empty(len(uniq))
    free = ~np.isfinite(ul)
    if free.any():
        lo[free], hi[free] = _segment_bounds(model, uq, ub[free], ua[free], ul[free])
    for lim in np.unique(ul[~free]):
        sel = ul == lim
        lo[sel], hi[sel] = _segment_bounds(model, uq, ub[sel], ua[sel], ul[sel])
    return lo[inv], hi[inv]


def log_probability(model: SparseVectorModel, answers, codes,
                    values: Optional[np.ndarray] = None):
    """Certified (lo, hi) arrays of ln P(output) for each row of ``codes``
    (m, n) under ``answers`` (n,); a log density on the released numbers
    (``values`` (m, n), read on ⊤ rounds) for a numeric model; −inf for an
    impossible output.  Outputs are processed in batches (bounded memory).
    A bracket with its lower end above its upper end raises
    AssertionError: an internal error, never a result."""
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
        l_rows, h_rows = _rows_bounds(model, uq, CB, CA, lims)
        with np.errstate(invalid="ignore"):
            lo[s0 + idx] = np.bincount(owner, weights=l_rows, minlength=idx.size) + const
            hi[s0 + idx] = np.bincount(owner, weights=h_rows, minlength=idx.size) + const
    def widen(x):
        return SLACK * np.maximum(1.0, np.abs(np.where(np.isfinite(x), x, 0.0)))
    lo, hi = lo - widen(lo), hi + widen(hi)
    check_ordered(lo, hi, "sparse vector log-probability")
    return lo, hi


def check_ordered(lo, hi, what: str) -> None:
    """Every bracket [lo, hi] must be ordered and free of NaN: anything else
    is an internal error of the certification (AssertionError)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    bad = np.isnan(lo) | np.isnan(hi) | (lo > hi)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"{what}: certified bracket {k} is not ordered or is NaN "
                             f"([{lo[k]!r}, {hi[k]!r}]; {int(bad.sum())} of {bad.size} such): "
                             f"an internal error of the integration, not a result")


_CACHE: dict = {}


def all_outputs_log_probability(model: SparseVectorModel, answers):
    """(codes, lo, hi) for every output of a finite-output model, cached per
    model and answers (the pattern pairs share their base answers); only
    for an ``enumerable`` model."""
    key = (model, tuple(np.asarray(answers, dtype=float).tolist()))
    if key not in _CACHE:
        codes = outputs(model, len(key[1]))
        _CACHE[key] = (codes, *log_probability(model, np.asarray(key[1]), codes))
        if len(_CACHE) > 64:
            _CACHE.pop(next(iter(_CACHE)))
    return _CACHE[key]


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
    if not model.finite_outputs:
        return False
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
