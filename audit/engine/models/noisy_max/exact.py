"""Exact output probabilities and densities of report-noisy-max, with a
certified error.

With i.i.d. noise of density f and CDF F added to answers q_1..q_K:

* the index: P(argmax = i) = ∫ f(x − q_i) Π_{j≠i} F(x − q_j) dx.  Laplace
  and exponential densities and CDFs are log-concave, so the integrand is,
  and ``audit.engine.models.log_concave`` brackets the integral the way it
  brackets a sparse vector's: cells with edges at every kink (every q_j:
  the Laplace density's kink and where its CDF changes form), chord below
  and end tangents above, certified tails.  Exponential noise has support
  [0, ∞), so every integrand is 0 below M = max_j q_j (a support edge: no
  lower tail, cells shrinking geometrically towards it, since
  ln F(x − q_j) → −∞ there for every j ≠ i attaining M).  All K outputs are
  enumerated (``index_log_probability``).
* the value: the maximum has density Σ_i f(y − q_i) Π_{j≠i} F(y − q_j)
  (the derivative of Π_j F(y − q_j)), a closed form evaluated in log space
  and widened by a relative ``SLACK`` for rounding
  (``value_log_density``); 0 below M for exponential noise.  A set the
  code can produce on one side only — [M, M′) when M < M′ — has
  probability Π_j F(M′ − q_j) > 0 on that side and 0 on the other
  (``edge_log_probability``).

Every bracket is checked ordered (an unordered one is an internal error).

The pair: ``index_pair_epsilon`` is the pair's exact ε over every output
sequence (per direction, the sum over rounds of each round's largest
certified loss); ``value_pair_epsilon`` the largest certified density
ratio over a fixed grid of values (and any sampled ones), ∞ where the
support edge makes a set of outputs possible on one side only.

May import: numpy, ``algorithms.noisy_max_model``,
``audit.engine.models.log_concave``, ``audit.engine.models.pair_loss``.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.noisy_max_model import NoisyMaxModel
from audit.engine.models.log_concave import (BATCH_ENTRIES, CELLS_PER_SCALE, NEG, TAIL_SCALES,
                                             check_ordered, grid, laplace_log_cdf, lse,
                                             log_integrals, widen)
from audit.engine.models.pair_loss import loss_bracket


def _terms(model: NoisyMaxModel, z, zs):
    """(ln f, d ln f, ln F, d ln F) of the noise at z = x − q, each kinked
    term on the branch of ``zs`` (a point inside the cell); NEG for log 0."""
    b = model.scale
    z = np.asarray(z, dtype=float)
    zs = np.broadcast_to(np.asarray(zs, dtype=float), z.shape)
    if model.noise == "laplace":
        zc = np.where(zs < 0, np.minimum(z, 0.0), np.maximum(z, 0.0))
        lf = -np.abs(zc) / b - math.log(2 * b)
        df = np.where(zs < 0, 1.0 / b, -1.0 / b)
        lF, dF = laplace_log_cdf(zc, b)
        return lf, df, lF, dF
    # Exponential: f(z) = e^{−z/b}/b and F(z) = 1 − e^{−z/b} on z ≥ 0, both 0 below.
    out = zs < 0
    zc = np.maximum(z, 0.0)
    lf = np.where(out, NEG, -zc / b - math.log(b))
    df = np.where(out, 0.0, -1.0 / b)
    with np.errstate(divide="ignore", over="ignore"):
        lF = np.log(-np.expm1(-zc / b))
        dF = 1.0 / (b * np.expm1(zc / b))
    dead = out | ~np.isfinite(lF)
    return lf, df, np.where(dead, NEG, lF), np.where(dead | ~np.isfinite(dF), 0.0, dF)


class _Winners:
    """The integrands of the K outputs as a ``log_concave`` family: row i is
    f(x − q_i) Π_{j≠i} F(x − q_j)."""

    def __init__(self, model, q):
        self.model, self.q = model, np.asarray(q, dtype=float)
        self.n = self.width = self.q.size
        self.others = 1.0 - np.eye(self.n)

    def tables(self, x, side):
        return _terms(self.model, x[None, :] - self.q[:, None], side[None, :] - self.q[:, None])

    def rows(self, tables, sl):
        lf, df, lF, dF = tables
        A = self.others[sl]
        return np.maximum(lf[sl] + A @ lF, NEG), df[sl] + A @ dF

    def pointwise(self, rows, x, side):
        lf, df, lF, dF = self.tables(x, side)
        k = np.arange(x.size)
        mine = np.arange(self.n)[:, None] == rows[None, :]
        L = lf[rows, k] + np.where(mine, 0.0, lF).sum(axis=0)
        D = df[rows, k] + np.where(mine, 0.0, dF).sum(axis=0)
        return np.maximum(L, NEG), D


def _edges(model: NoisyMaxModel, q, cells: int) -> tuple[np.ndarray, bool]:
    """The cells of the winning value's line and whether they start at a
    support edge."""
    b = model.scale
    h0 = b / cells
    if model.noise == "laplace":
        return grid(q, h0, TAIL_SCALES * b, cells=cells), False
    top = float(np.max(q))
    return grid([top], h0, TAIL_SCALES * b, start=top, cells=cells), True


def index_log_probability(model: NoisyMaxModel, answers, cells: int = CELLS_PER_SCALE):
    """Certified (lo, hi) arrays of ln P(argmax = i), i = 0..K−1, for one
    row of ``answers`` (K,); ``cells`` per scale near a kink (fewer: faster,
    still certified, wider)."""
    q = np.asarray(answers, dtype=float).ravel()
    edges, start = _edges(model, q, cells)
    lo, hi = log_integrals(_Winners(model, q), edges, np.arange(q.size), np.full(q.size, np.inf),
                           start=start, what="report-noisy-max integral")
    lo, hi = lo - widen(lo), hi + widen(hi)
    check_ordered(lo, hi, "report-noisy-max log-probability")
    return lo, hi


def value_log_density(model: NoisyMaxModel, answers, y):
    """Certified (lo, hi) arrays of the log density of the reported maximum
    at each ``y`` (m,) for one row of ``answers`` (K,); −inf where the
    density is 0 (below max q for exponential noise)."""
    q = np.asarray(answers, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    out = np.empty(y.size)
    step = max(1, BATCH_ENTRIES // max(q.size, 1))
    for s0 in range(0, y.size, step):
        yy = y[s0:s0 + step]
        z = yy[None, :] - q[:, None]
        lf, _, lF, _ = _terms(model, z, z)
        # Σ_{j≠i} ln F_j without cancelling NEG terms: count the zero factors.
        zeros = (lF <= NEG / 2).sum(axis=0)
        finite_sum = np.where(lF <= NEG / 2, 0.0, lF).sum(axis=0)
        own_zero = lF <= NEG / 2
        rest = np.where((zeros[None, :] - own_zero) > 0, NEG,
                        finite_sum[None, :] - np.where(own_zero, 0.0, lF))
        terms = np.where((lf <= NEG / 2) | (rest <= NEG / 2), -np.inf, lf + rest)
        out[s0:s0 + step] = lse(terms, axis=0)
    lo, hi = out - widen(out), out + widen(out)
    check_ordered(lo, hi, "report-noisy-max log-density")
    return lo, hi


def edge_log_probability(model: NoisyMaxModel, answers, upto: float):
    """Certified (lo, hi) of ln P(max < ``upto``) = Σ_j ln F(upto − q_j) (the
    probability of the reported maximum lying below ``upto``)."""
    q = np.asarray(answers, dtype=float).ravel()
    z = upto - q
    _, _, lF, _ = _terms(model, z, z)
    if np.any(lF <= NEG / 2):
        return -math.inf, -math.inf
    v = float(lF.sum())
    return v - float(widen(v)), v + float(widen(v))


# ------------------------------------------------------------ the pair
DIRECTIONS = ("l>l'", "l'>l")
VALUE_GRID = 4001


def index_pair(model, a, b, cells: int = CELLS_PER_SCALE):
    """Per round t and direction, the certified loss brackets of every index:
    {direction: (low (T, K), high (T, K))}, with the probability brackets
    (lo_a, hi_a, lo_b, hi_b), each (T, K)."""
    br = [index_log_probability(model, a[t], cells) + index_log_probability(model, b[t], cells)
          for t in range(a.shape[0])]
    lo_a, hi_a, lo_b, hi_b = (np.stack([x[i] for x in br]) for i in range(4))
    dirs = {"l>l'": loss_bracket(lo_a, hi_a, lo_b, hi_b),
            "l'>l": loss_bracket(lo_b, hi_b, lo_a, hi_a)}
    return dirs, (lo_a, hi_a, lo_b, hi_b)


def index_pair_epsilon(model, a, b, cells: int = CELLS_PER_SCALE):
    """(certified lower end, upper end, direction, best index per round) of
    the pair's exact ε over every output sequence: per direction the sum
    over rounds of each round's largest loss."""
    dirs, _ = index_pair(model, a, b, cells)
    best = (-math.inf, -math.inf, None, None)
    for d, (low, high) in dirs.items():
        low = np.where(np.isnan(low), -np.inf, low)
        high = np.where(np.isnan(high), -np.inf, high)
        lo_sum, hi_sum = float(low.max(axis=1).sum()), float(high.max(axis=1).sum())
        if lo_sum > best[0]:
            best = (lo_sum, best[1], d, low.argmax(axis=1))
        best = (best[0], max(best[1], hi_sum), best[2], best[3])
    return best


def value_grid(model, a, b) -> np.ndarray:
    """Per round, the fixed grid of reported values certified: across both
    sides' answers and 45 scales beyond (inside the support)."""
    lo = min(a.min(), b.min()) - TAIL_SCALES * model.scale
    hi = max(a.max(), b.max()) + TAIL_SCALES * model.scale
    if model.noise == "exponential":
        lo = max(a.max(), b.max())
    g = np.linspace(lo, hi, VALUE_GRID)
    return g[g > lo] if model.noise == "exponential" else g


def value_round_best(model, qa, qb, ys):
    """{direction: (best certified lower end, its y)} of the density ratio of
    one round over the values ``ys``, with the support edge's ∞ where the
    maxima differ under exponential noise."""
    out = {}
    for d, (num, den) in (("l>l'", (qa, qb)), ("l'>l", (qb, qa))):
        if model.noise == "exponential" and num.max() < den.max():
            lo, _ = edge_log_probability(model, num, float(den.max()))
            if lo > -math.inf:
                out[d] = (math.inf, f"the maximum in [{num.max():.4g}, {den.max():.4g}) "
                                    f"(probability ≥ {math.exp(lo):.3g} on one side, 0 on the "
                                    f"other)")
                continue
        lo_n, hi_n = value_log_density(model, num, ys)
        lo_d, hi_d = value_log_density(model, den, ys)
        low, _ = loss_bracket(lo_n, hi_n, lo_d, hi_d)
        if np.all(np.isnan(low)):
            out[d] = (-math.inf, None)
            continue
        i = int(np.nanargmax(low))
        out[d] = (float(low[i]), f"{ys[i]:.6g}")
    return out


def value_pair_epsilon(model, a, b, samples=None):
    """(certified lower end, direction, the certifying output in words) of
    the largest density ratio over the fixed grid and any ``samples``
    (per round arrays of values), summed over rounds per direction."""
    per_dir = {d: [0.0, []] for d in DIRECTIONS}
    for t in range(a.shape[0]):
        ys = value_grid(model, a[t], b[t])
        if samples is not None:
            ys = np.concatenate([ys, samples[t]])
        best = value_round_best(model, a[t], b[t], ys)
        for d in DIRECTIONS:
            per_dir[d][0] += best[d][0]
            per_dir[d][1].append(best[d][1])
    d = max(DIRECTIONS, key=lambda k: per_dir[k][0])
    return per_dir[d][0], d, per_dir[d][1]
