"""Certified integrals of log-concave functions of one variable, shared by
the models whose output probabilities are such integrals: the sparse
vector's over its threshold noise (``models.sparse_vector.integral``) and
report-noisy-max's over the winning noisy value (``models.noisy_max.exact``).

A *family* is m integrands g_1..g_m on the real line (its rows), each
log-concave, smooth between known kinks.  It gives, at any points, ln g and
its derivative (one-sided: the branch of every kinked term is read at a
``side`` point inside the cell, so values at a cell's ends are the limits
from inside it):

* ``tables(points, side)``: whatever the rows share at those points;
* ``rows(tables, sl)``: (ln g, d ln g) of the rows ``sl`` there, each
  (rows, points);
* ``pointwise(rows, points, side)``: (ln g, d ln g) of row ``rows[k]`` at
  ``points[k]`` (one row per point);
* ``n``: the number of rows; ``width``: numbers its tables hold per point
  (sizes the blocks).

``log_integrals`` brackets ln ∫_{−∞}^{lim} g_row for any number of queries
(row, lim), lim = +∞ for the whole line.  The line is cut into cells whose
edges include every kink (``grid``), so inside a cell ln g is smooth and
concave: it lies above the chord between the cell's ends (a lower bound)
and below both end tangents (an upper bound), and both integrate in closed
form on any cell.  The cells are fine (``CELLS_PER_SCALE`` a noise scale)
within ``FINE_SCALES`` scales of every kink and grow geometrically
(``GROWTH`` a cell) away from them; the grid reaches ``TAIL_SCALES``
largest scales beyond the outermost kink, and each tail beyond it is
bounded above by the integral of the tangent at the end (its slope must
point into decay: else an internal error) and below by 0.  A *support
edge* ``start`` (the integrand is 0 below it, e.g. exponential noise) has
no tail, and the cells shrink geometrically towards it (by ``EDGE_RATIO``
down to ``EDGE_DEPTH`` of a fine cell), because there ln g may fall to −∞;
a cell with ln g = −∞ at one end is bounded above by the tangent at the
other end alone (a concave function lies below every tangent) and below
by 0.  A query's limit cuts its cell: the part below it is one more cell.
``limit_edges`` lays fine cells over the limits of many queries at once
(no coarser near any limit than a grid refined around that limit alone),
so one pass serves them all.

Sums are taken in log space, and brackets are widened by a relative
``SLACK`` (``widen``), far above the rounding error of the terms summed.
A bracket with its lower end above its upper end, or NaN, is an internal
error (``check_ordered``), never a result.  Work is done in blocks of
cells and batches of rows: no array holds much more than
``BATCH_ENTRIES`` numbers, whatever the number of cells or rows.

May import: numpy.
"""
from __future__ import annotations

import math

import numpy as np

LN2 = math.log(2.0)
CELLS_PER_SCALE = 80        # cells per unit of the smallest noise scale near a kink
FINE_SCALES = 5.0           # the fine cells reach this many smallest scales from a kink
GROWTH = 0.01               # then each cell is 1% wider than the last
TAIL_SCALES = 45.0          # the grid ends 45 largest scales beyond the outermost kink
EDGE_RATIO = 1.1            # towards a support edge each cell is 1/1.1 of the next
EDGE_DEPTH = 1e-12          # down to this fraction of a fine cell
SLACK = 1e-10               # relative widening of every bracket (floating point)
NEG = -1e300                # log 0 in matrix products (avoids 0·(−inf) = NaN)
BATCH_ENTRIES = 2 ** 16     # numbers in one array of one pass (512 kB)


# ------------------------------------------------------------ Laplace terms
def laplace_log_cdf(x, b):
    """ln P(Lap(b) < x) and its derivative, stable in both tails."""
    x = np.asarray(x, dtype=float)
    neg = x < 0
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x) / b)
    val = np.where(neg, x / b - LN2, np.log1p(-0.5 * e))
    der = np.where(neg, 1.0 / b, 0.5 * e / b / (1 - 0.5 * e))
    return val, der


def laplace_log_sf(x, b):
    """ln P(Lap(b) ≥ x) and its derivative."""
    v, d = laplace_log_cdf(-np.asarray(x, dtype=float), b)
    return v, -d


# --------------------------------------------------------------------- grid
def offsets(h0: float, reach: float, cells: int = CELLS_PER_SCALE) -> np.ndarray:
    """Distances from a kink of the cell edges on one side of it, up to
    ``reach``: steps of h0 for FINE_SCALES·(h0·cells) (h0 is a scale over
    ``cells``), then each step GROWTH wider than the last."""
    fine = int(round(FINE_SCALES * cells))
    near = np.arange(fine + 1) * h0
    if near[-1] >= reach:
        return near[near < reach]
    k = math.ceil(math.log1p(GROWTH * (reach - near[-1]) / h0) / math.log1p(GROWTH)) + 1
    far = near[-1] + h0 * np.expm1(np.arange(1, k + 1) * math.log1p(GROWTH)) / GROWTH
    out = np.concatenate([near, far])
    return out[out < reach]


def grid(points, h0: float, reach: float, start=None, limits=(),
         cells: int = CELLS_PER_SCALE) -> np.ndarray:
    """The cell edges: every point (kink), fine near them (step ``h0``),
    coarse far away, from ``reach`` below the lowest point (or from the
    support edge ``start``, refined geometrically towards it) to ``reach``
    above the highest; ``limits`` (queries' upper limits) add
    ``limit_edges`` and stretch the range to cover them.  ``h0`` is the
    smallest scale over ``cells`` (a coarser grid, ``cells`` <
    CELLS_PER_SCALE, is still certified, only wider)."""
    pts = np.asarray(points, dtype=float)
    pts = np.unique(pts[np.isfinite(pts)])
    if start is not None:
        pts = np.unique(np.append(pts[pts > start], float(start)))
    lim = np.asarray(limits, dtype=float)
    lim = lim[np.isfinite(lim)]
    lo_end = (pts[0] - reach) if start is None else float(start)
    hi_end = pts[-1] + reach
    if lim.size:
        if start is None:
            lo_end = min(lo_end, float(lim.min()) - reach)
        hi_end = max(hi_end, float(lim.max()) + h0)
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
                cache[reach_side] = offsets(h0, reach_side, cells)
            pieces.append(p + sign * cache[reach_side])
    if start is not None:
        n = math.ceil(math.log(1 / EDGE_DEPTH) / math.log(EDGE_RATIO))
        pieces.append(float(start) + h0 * EDGE_RATIO ** -np.arange(1.0, n + 1))
    if lim.size:
        pieces.append(limit_edges(lim, h0, reach, cells))
    edges = np.unique(np.concatenate(pieces))
    return edges[(edges >= lo_end) & (edges <= hi_end)]


def limit_edges(lims, h0: float, reach: float, cells: int = CELLS_PER_SCALE) -> np.ndarray:
    """Fine cells over many upper limits at once: the limits are grouped
    into clusters (split where two neighbours are more than two fine
    regions apart); each cluster gets a lattice of step ``h0`` from its
    lowest limit to past its highest, and below its lowest limit the edges
    of a kink there (fine, then growing).  Below any limit L of a cluster
    the spacing is then at most what a grid refined around L alone has:
    h0 up to L from the cluster's lowest limit, and below that the growing
    steps counted from a point no farther from it than L.  The lattice
    costs at most two fine regions per limit."""
    lims = np.unique(np.asarray(lims, dtype=float))
    lims = lims[np.isfinite(lims)]
    if not lims.size:
        return np.zeros(0)
    split = 2 * FINE_SCALES * cells * h0
    below = offsets(h0, reach, cells)
    pieces = []
    for cluster in np.split(lims, np.flatnonzero(np.diff(lims) > split) + 1):
        low, high = float(cluster[0]), float(cluster[-1])
        n = int(math.ceil((high - low) / h0)) + 1
        pieces += [low + h0 * np.arange(n + 1), low - below]
    return np.concatenate(pieces)


# ------------------------------------------------------------ cell brackets
def lse(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m, axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def log_int_exp_linear(va, slope, width):
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


def cell_bounds(LA, LB, DA, DB, w):
    """ln of the lower (chord) and upper (min of the end tangents) integrals
    of exp(ln g) over each cell, from its end values and one-sided slopes.
    Where ln g = −∞ at one end only (a support edge), the chord gives 0 and
    the tangent at the other end alone bounds it above; −∞ at both ends is
    a cell where g is 0."""
    LA, LB = np.maximum(LA, NEG), np.maximum(LB, NEG)
    dead_a, dead_b = LA <= NEG / 2, LB <= NEG / 2
    DA = np.where(dead_a, 0.0, DA)
    DB = np.where(dead_b, 0.0, DB)
    with np.errstate(over="ignore", invalid="ignore"):
        slope = (LB - LA) / w
    lower = np.where(dead_a | dead_b, -np.inf, log_int_exp_linear(LA, slope, w))
    # The end tangents cross at s* (from a), clipped to the cell.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s_star = np.where(DA > DB, (LB - LA - DB * w) / (DA - DB), w)
    s_star = np.clip(np.nan_to_num(s_star, nan=0.0), 0.0, w)
    s_star = np.where(dead_a, 0.0, np.where(dead_b, w, s_star))
    up1 = np.where(s_star > 0, log_int_exp_linear(LA, DA, np.maximum(s_star, 1e-300)), -np.inf)
    rest = w - s_star
    vb_back = LB - DB * rest          # the tangent at b evaluated at a + s*
    up2 = np.where(rest > 0, log_int_exp_linear(np.where(dead_b, NEG, vb_back), DB,
                                                np.maximum(rest, 1e-300)), -np.inf)
    return lower, np.logaddexp(up1, up2)


def widen(x):
    """The relative SLACK of a log value (at least SLACK absolute)."""
    return SLACK * np.maximum(1.0, np.abs(np.where(np.isfinite(x), x, 0.0)))


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


# -------------------------------------------------------------- integrals
def _tail(family, rows, edge, inner, direction: int, what: str):
    """Upper bounds (log) on the tail beyond ``edge`` of each row (below it
    for direction −1, above for +1), by the tangent at the edge; 0 (−∞) for
    a row that is 0 there."""
    L, D = family.rows(family.tables(np.array([edge]), np.array([inner])), rows)
    L, D = L[:, 0], D[:, 0]
    live = L > NEG / 2
    decays = D > 0 if direction < 0 else D < 0
    if np.any(live & ~decays):
        raise ArithmeticError(f"{what}: the tangent at an end of the grid does not decay "
                              f"although every kink is inside it")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(live, L - np.log(np.where(live, np.abs(D), 1.0)), -np.inf)


def log_integrals(family, edges, rows, lims, start: bool = False, what: str = "integral"):
    """Certified (lo, hi) of ln ∫_{−∞}^{lims[q]} g_{rows[q]}(r) dr for every
    query q (lims[q] = +∞: the whole line), on the cells ``edges``, which
    must hold every kink of every row and every finite limit.  ``start``:
    the integrand is 0 below ``edges[0]`` (a support edge: no lower tail).
    Not widened: the caller adds its SLACK."""
    edges = np.asarray(edges, dtype=float)
    rows = np.asarray(rows, dtype=np.int64)
    lims = np.asarray(lims, dtype=float)
    nq, ncell = rows.size, len(edges) - 1
    finite = np.isfinite(lims)
    if np.any(finite & ((lims < edges[0]) | (lims > edges[-1]))):
        raise ValueError(f"{what}: an upper limit lies outside the grid")
    # Query q takes the cells [0, k) whole and cuts cell k at its limit.
    k = np.where(finite, np.minimum(np.searchsorted(edges, lims, side="right") - 1, ncell - 1),
                 ncell)
    lo = np.full(nq, -np.inf)
    hi = np.full(nq, -np.inf)
    run_lo = np.full(family.n, -np.inf)
    run_hi = np.full(family.n, -np.inf)
    block = int(min(ncell, 4096, max(64, BATCH_ENTRIES // max(family.width, 1))))
    batch = max(1, BATCH_ENTRIES // block)
    for c0 in range(0, ncell, block):
        c1 = min(c0 + block, ncell)
        a, b = edges[c0:c1], edges[c0 + 1:c1 + 1]
        mid = (a + b) / 2
        w = (b - a)[None, :]
        tab_a, tab_b = family.tables(a, mid), family.tables(b, mid)
        here = np.flatnonzero(finite & (k > c0) & (k <= c1))   # prefixes ending in this block
        for r0 in range(0, family.n, batch):
            r1 = min(r0 + batch, family.n)
            LA, DA = family.rows(tab_a, slice(r0, r1))
            LB, DB = family.rows(tab_b, slice(r0, r1))
            lower, upper = cell_bounds(LA, LB, DA, DB, w)
            sel = here[(rows[here] >= r0) & (rows[here] < r1)]
            if sel.size:
                cum_lo = np.logaddexp.accumulate(lower, axis=1)
                cum_hi = np.logaddexp.accumulate(upper, axis=1)
                r, c = rows[sel] - r0, k[sel] - 1 - c0
                lo[sel] = np.logaddexp(run_lo[rows[sel]], cum_lo[r, c])
                hi[sel] = np.logaddexp(run_hi[rows[sel]], cum_hi[r, c])
            run_lo[r0:r1] = np.logaddexp(run_lo[r0:r1], lse(lower))
            run_hi[r0:r1] = np.logaddexp(run_hi[r0:r1], lse(upper))
    whole = ~finite
    lo[whole], hi[whole] = run_lo[rows[whole]], run_hi[rows[whole]]
    # Tails beyond the ends: below the tangent at the end, whose slope must
    # point into decay (up on the left, down on the right).
    if not start:
        used = np.unique(rows)
        tail = np.full(family.n, -np.inf)
        tail[used] = _tail(family, used, edges[0], (edges[0] + edges[1]) / 2, -1, what)
        hi = np.logaddexp(hi, tail[rows])
    if whole.any():
        used = np.unique(rows[whole])
        tail = np.full(family.n, -np.inf)
        tail[used] = _tail(family, used, edges[-1], (edges[-2] + edges[-1]) / 2, 1, what)
        hi[whole] = np.logaddexp(hi[whole], tail[rows[whole]])
    # The cut cell of each finite query: [edges[k], lim].
    cut = np.flatnonzero(finite)
    step = max(1, BATCH_ENTRIES // max(family.width, 1))
    for s0 in range(0, cut.size, step):
        q = cut[s0:s0 + step]
        a, b = edges[k[q]], lims[q]
        keep = b > a
        q, a, b = q[keep], a[keep], b[keep]
        if not q.size:
            continue
        side = (a + b) / 2
        LA, DA = family.pointwise(rows[q], a, side)
        LB, DB = family.pointwise(rows[q], b, side)
        lower, upper = cell_bounds(LA, LB, DA, DB, b - a)
        lo[q] = np.logaddexp(lo[q], lower)
        hi[q] = np.logaddexp(hi[q], upper)
    lo = np.where(lo <= NEG / 2, -np.inf, lo)
    hi = np.where(hi <= NEG / 2, -np.inf, hi)
    return lo, hi
