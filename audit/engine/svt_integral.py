"""Exact output probabilities of a sparse vector, with a certified error.

Given the threshold noise ρ = r the rounds of a sparse vector
(``algorithms.sparse_vector_model``) are independent, so an output's
probability is ∫ f_ρ(r) Π_i h_i(r) dr, where a ⊥ round contributes
h(r) = P(q_i + ν_i < T + r), a ⊤ round 1 − that (times the density of a
released number), and an aborted round 1.  With a fresh ρ after every ⊤
the integral factorises over the segments a ⊤ ends.

Certification.  The Laplace law is log-concave, so every factor, and their
product g, is log-concave in r.  The r-line is cut into cells whose edges
include every kink (r = q_i − T, 0, and y − T for a released value), so
inside a cell log g is smooth and concave: it lies above the chord between
the cell's endpoints (a lower bound) and below both end tangents (an upper
bound); both integrate in closed form.  The two tails beyond ±R are bounded
above by the tangent at ±R (a concave function lies below its tangents) and
below by 0.  Sums are taken in log space (log-sum-exp), and the final
bracket is widened by a relative 1e-10, far above the rounding error of the
few hundred thousand terms summed.  Bracket widths are about 1e-5 relative
at the default resolution.

May import: numpy and ``algorithms.sparse_vector_model``.
"""
from __future__ import annotations

import itertools
import math
from typing import Optional

import numpy as np

from algorithms.sparse_vector_model import ABORTED, ABOVE, BELOW, SparseVectorModel

LN2 = math.log(2.0)
CELLS_PER_SCALE = 80        # cells per unit of the smallest Laplace scale
TAIL_SCALES = 45.0          # R = 45 threshold scales (tail mass e^-45)
SLACK = 1e-10               # relative widening of every bracket (floating point)
NEG = -1e300                # log 0 in matrix products (avoids 0·(−inf) = NaN)


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


def _round_factor(model, code, q, r, side_point):
    """ln h and d/dr ln h at the points r for one round with code ``code``,
    the branch of each kinked term chosen at ``side_point`` (a point inside
    the cell, so one-sided values are taken from inside it)."""
    x = model.threshold + r - q
    b = model.query_scale
    if b == 0:
        # h is an indicator, constant inside a cell: read it at side_point.
        inside = (q < model.threshold + side_point) if code == BELOW else (q >= model.threshold
                                                                          + side_point)
        return np.where(inside, 0.0, NEG), np.zeros_like(r)
    xm = model.threshold + side_point - q
    if code == BELOW:
        # The branch of the kink at x = 0 is the inside point's.
        return _log_cdf(np.where(xm < 0, np.minimum(x, 0.0), np.maximum(x, 0.0)), b)
    return _log_sf(np.where(xm < 0, np.minimum(x, 0.0), np.maximum(x, 0.0)), b)


def _cells(model: SparseVectorModel, kinks) -> np.ndarray:
    b_rho = model.threshold_scale
    # Without query noise log g is linear between kinks (ln f_ρ, indicators
    # constant): chord and tangents coincide, so coarse cells are exact.
    h = b_rho if model.query_scale == 0 else min(b_rho, model.query_scale) / CELLS_PER_SCALE
    R = TAIL_SCALES * b_rho
    kinks = [k for k in kinks if -R < k < R]
    grid = np.arange(-R, R + h / 2, h)
    return np.unique(np.concatenate([grid, [0.0, R], np.asarray(kinks, dtype=float)]))


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


def _segment_bounds(model, codes_list, q_list, extra_logs, kinks_extra=()):
    """Certified (lo, hi) of ln ∫ f_ρ(r) Π h_i(r) dr for several outputs of
    one segment sharing the answers (codes_list: (m, n) codes of the
    segment's rounds; BELOW/ABOVE only; q_list: (n,) answers; extra_logs:
    (m,) constant log factors; kinks_extra: per output an upper limit
    r ≤ u (or +inf) for released 'same' values)."""
    codes = np.asarray(codes_list)
    m, n = codes.shape
    b_rho = model.threshold_scale
    kinks = [qi - model.threshold for qi in q_list]
    lims = np.asarray(kinks_extra if len(kinks_extra) else [np.inf] * m, dtype=float)
    finite_lims = lims[np.isfinite(lims)]
    edges = _cells(model, kinks + finite_lims.tolist())
    a, b = edges[:-1], edges[1:]
    mid = (a + b) / 2
    # f_ρ: log density and derivative, branch by the cell's midpoint.
    def rho_terms(r, side):
        return (-np.abs(r) / b_rho - math.log(2 * b_rho),
                np.where(side < 0, 1.0 / b_rho, -1.0 / b_rho))
    la, da = rho_terms(a, mid)
    lb, db = rho_terms(b, mid)
    LA = np.tile(la, (m, 1))
    LB = np.tile(lb, (m, 1))
    DA = np.tile(da, (m, 1))
    DB = np.tile(db, (m, 1))
    for i in range(n):
        for code in (BELOW, ABOVE):
            rows = codes[:, i] == code
            if not rows.any():
                continue
            va, dva = _round_factor(model, code, q_list[i], a, mid)
            vb, dvb = _round_factor(model, code, q_list[i], b, mid)
            LA[rows] += va
            LB[rows] += vb
            DA[rows] += dva
            DB[rows] += dvb
    # Released 'same' values: r ≤ lim, an indicator constant in each cell.
    if np.isfinite(lims).any():
        out_side = mid[None, :] > lims[:, None]
        LA = np.where(out_side, NEG, LA)
        LB = np.where(out_side, NEG, LB)
    LA = np.maximum(LA, NEG)
    LB = np.maximum(LB, NEG)
    w = (b - a)[None, :]
    # Lower: the chord.
    slope = (LB - LA) / w
    lower_cells = _log_int_exp_linear(LA, slope, w)
    # Upper: min of the end tangents; they cross at s* (from a), clipped.
    with np.errstate(divide="ignore", invalid="ignore"):
        s_star = np.where(DA > DB, (LB - LA - DB * w) / (DA - DB), w)
    s_star = np.clip(np.nan_to_num(s_star, nan=0.0), 0.0, w)
    up1 = np.where(s_star > 0, _log_int_exp_linear(LA, DA, np.maximum(s_star, 1e-300)), -np.inf)
    rest = w - s_star
    vb_back = LB - DB * rest          # tangent at b evaluated at a + s*
    up2 = np.where(rest > 0, _log_int_exp_linear(vb_back, DB, np.maximum(rest, 1e-300)),
                   -np.inf)
    upper_cells = np.logaddexp(up1, up2)
    # Tails beyond the edges: below the tangent at the edge (slope into the
    # tail must be positive on the left, negative on the right).
    left_slope, right_slope = DA[:, 0], DB[:, -1]
    if np.any(left_slope <= 0) or np.any(right_slope >= 0):
        raise ArithmeticError("tail tangents do not decay: widen TAIL_SCALES")
    tail_l = LA[:, 0] - np.log(left_slope)
    tail_r = LB[:, -1] - np.log(-right_slope)
    lo = _lse(lower_cells) + extra_logs
    hi = _lse(np.concatenate([upper_cells, tail_l[:, None], tail_r[:, None]], axis=1)) + extra_logs
    lo = np.where(lo <= NEG / 2, -np.inf, lo)
    hi = np.where(hi <= NEG / 2, -np.inf, hi)
    return lo, hi


def _laplace_log_density(x, b):
    return -abs(x) / b - math.log(2 * b)


def _valid(model, codes) -> bool:
    """The abort structure: rounds after the c-th ⊤ are ABORTED, no others."""
    count = 0
    for c in codes:
        done = model.cutoff is not None and count >= model.cutoff
        if done != (c == ABORTED):
            return False
        count += c == ABOVE
    return True


def log_probability(model: SparseVectorModel, answers, codes,
                    values: Optional[np.ndarray] = None):
    """Certified (lo, hi) arrays of ln P(output) for each row of ``codes``
    (m, n) under ``answers`` (n,); a log density on the released numbers
    (``values`` (m, n), read on ⊤ rounds) for a numeric model; −inf for an
    impossible output."""
    answers = np.asarray(answers, dtype=float)
    codes = np.atleast_2d(np.asarray(codes, dtype=np.int64))
    m, n = codes.shape
    lo = np.full(m, -np.inf)
    hi = np.full(m, -np.inf)
    valid = np.array([_valid(model, c) for c in codes])
    if model.numeric != "same" and not model.resample:
        # The code sequences share the answers' kinks: one vectorised pass
        # over the distinct ones; a fresh released value multiplies in its
        # own Laplace density (it is independent of everything else).
        idx = np.flatnonzero(valid)
        if idx.size:
            uniq, inv = np.unique(codes[idx], axis=0, return_inverse=True)
            seg = np.where(uniq == ABORTED, -1, uniq)
            l, h = _segment_bounds(model, seg, answers, np.zeros(len(uniq)))
            const = np.zeros(idx.size)
            if model.numeric == "fresh":
                y = np.asarray(values, dtype=float)[idx]
                dens = -np.abs(y - answers[None, :]) / model.numeric_scale - math.log(
                    2 * model.numeric_scale)
                const = np.where(codes[idx] == ABOVE, dens, 0.0).sum(axis=1)
            lo[idx], hi[idx] = l[inv.ravel()] + const, h[inv.ravel()] + const
    else:
        for j in np.flatnonzero(valid):
            lo[j], hi[j] = _one(model, answers, codes[j],
                                None if values is None else np.asarray(values[j], dtype=float))
    widen = SLACK * np.maximum(1.0, np.abs(np.where(np.isfinite(lo), lo, 0.0)))
    return lo - widen, hi + widen


def _one(model, answers, codes, values):
    """One output: product over segments (a fresh ρ after each ⊤ when the
    model resamples), each a certified integral."""
    rounds = [i for i, c in enumerate(codes) if c != ABORTED]
    segments, cur = [], []
    for i in rounds:
        cur.append(i)
        if codes[i] == ABOVE and model.resample:
            segments.append(cur)
            cur = []
    if cur:
        segments.append(cur)
    lo = hi = 0.0
    for seg in segments:
        const, lim = 0.0, np.inf
        for i in seg:
            if codes[i] == ABOVE and model.numeric is not None:
                y = float(values[i])
                if model.numeric == "same":
                    const += _laplace_log_density(y - answers[i], model.query_scale)
                    lim = min(lim, y - model.threshold)
                else:
                    const += _laplace_log_density(y - answers[i], model.numeric_scale)
        # A released compared value y replaces P(⊤ | r) by its density
        # f_ν(y − q)·1[r ≤ y − T] (const and lim above): no P(⊤) factor too.
        sub = np.array([[-1 if codes[i] == ABOVE and model.numeric == "same" else codes[i]
                         for i in seg]])
        l, h = _segment_bounds(model, sub, answers[seg], np.array([const]),
                               [lim] if np.isfinite(lim) else ())
        lo, hi = lo + float(l[0]), hi + float(h[0])
    return lo, hi


_CACHE: dict = {}


def all_outputs_log_probability(model: SparseVectorModel, answers):
    """(codes, lo, hi) for every output of a finite-output model, cached per
    model and answers (the pattern pairs share their base answers)."""
    key = (model, tuple(np.asarray(answers, dtype=float).tolist()))
    if key not in _CACHE:
        codes = outputs(model, len(key[1]))
        _CACHE[key] = (codes, *log_probability(model, np.asarray(key[1]), codes))
        if len(_CACHE) > 64:
            _CACHE.pop(next(iter(_CACHE)))
    return _CACHE[key]


def outputs(model: SparseVectorModel, n: int) -> np.ndarray:
    """Every code sequence the model can output on n rounds (numbers aside)."""
    out = []
    for seq in itertools.product((BELOW, ABOVE), repeat=n):
        seq = list(seq)
        if model.cutoff is not None:
            count = 0
            for i, c in enumerate(seq):
                if count >= model.cutoff:
                    seq[i] = ABORTED
                elif c == ABOVE:
                    count += 1
        out.append(tuple(seq))
    return np.array(sorted(set(out)), dtype=np.int64)
