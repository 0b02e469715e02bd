"""Exact probabilities of the paths of traced code through its comparisons
of noisy values (``algorithms.replay.paths``), with a certified error.

A path is the set of standard noise values z (independent, each Laplace,
normal, exponential or Gumbel: ``algorithms.replay.noise.LAWS``) with
A·z + c > 0.  Its variables split into components linked by the
comparisons they share; the probability is the product over components:

* one variable: its comparisons make an interval, whose probability is a
  difference of the law's CDF, in closed form (in log space);
* a *star* — one variable (the hub: a sparse vector's threshold noise, the
  winner's noise of an argmax) in every comparison of two variables, each
  other variable (a leaf) compared with the hub or with constants only:
  given the hub's value r, each leaf lies in an interval whose ends are
  affine in r, so the probability is ∫ f_hub(r) Π_leaves P(leaf in its
  interval | r) dr over the hub's own interval.  The integrand is
  log-concave (the marginal of a log-concave density over a convex set,
  Prékopa), smooth between kinks (where two of a leaf's bounds cross, where
  a bound passes a law's kink, the hub's kink), and
  ``audit.engine.models.log_concave`` brackets its integral;
* anything else (a comparison of three variables, a chain of comparisons
  with no common variable) is refused, naming it.

Brackets are (lo, hi) of the natural log, widened by ``SLACK``.

May import: numpy, scipy.special, ``audit.engine.models.log_concave``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from audit.engine.models.log_concave import (CELLS_PER_SCALE, NEG, SLACK, TAIL_SCALES,
                                             check_ordered, grid, laplace_log_cdf,
                                             log_integrals, widen)

LN2 = math.log(2.0)
FLOOR = -650.0          # ln of what a star's upper bound adds for the region taken as 0
HALF_LN_2PI = 0.5 * math.log(2 * math.pi)


class NotAStructure(Exception):
    """The path's comparisons are not of a structure evaluated exactly."""


# ------------------------------------------------------------ standard laws
def log_cdf(law: str, x):
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if law == "laplace":
            return laplace_log_cdf(x, 1.0)[0]
        if law == "normal":
            return log_ndtr(x)
        if law == "exponential":
            return np.where(x > 0, np.log(-np.expm1(-np.maximum(x, 0.0))), -np.inf)
        return -np.exp(-x)                                   # Gumbel (max)


def log_sf(law: str, x):
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if law == "laplace":
            return laplace_log_cdf(-x, 1.0)[0]
        if law == "normal":
            return log_ndtr(-x)
        if law == "exponential":
            return np.where(x > 0, -x, 0.0)
        return np.log(-np.expm1(-np.exp(-x)))


def log_pdf(law: str, x):
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if law == "laplace":
            return -np.abs(x) - LN2
        if law == "normal":
            return -0.5 * x * x - HALF_LN_2PI
        if law == "exponential":
            return np.where(x >= 0, -x, -np.inf)
        return -x - np.exp(-x)


def dlog_pdf(law: str, x, side):
    """d/dx ln f at x, on the branch of ``side`` at a kink."""
    x = np.asarray(x, dtype=float)
    if law == "laplace":
        return np.where(np.asarray(side) < 0, 1.0, -1.0) * np.ones_like(x)
    if law == "normal":
        return -x
    if law == "exponential":
        return np.where(np.asarray(side) >= 0, -1.0, 0.0) * np.ones_like(x)
    with np.errstate(over="ignore"):
        return -1.0 + np.exp(-x)


def kinks_of(law: str) -> tuple:
    return (0.0,) if law in ("laplace", "exponential") else ()


def log_interval(law: str, lo, hi):
    """ln P(lo < Z < hi), elementwise (−∞ where hi ≤ lo)."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    lo, hi = np.broadcast_arrays(lo, hi)
    out = np.full(lo.shape, -np.inf)
    ok = hi > lo
    right = ok & (lo >= 0)              # both in the right half: through the survival function
    left = ok & ~right
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if right.any():
            a, b = log_sf(law, lo[right]), log_sf(law, hi[right])
            out[right] = a + np.log(-np.expm1(np.minimum(b - a, 0.0)))
        if left.any():
            a, b = log_cdf(law, hi[left]), log_cdf(law, lo[left])
            out[left] = a + np.log(-np.expm1(np.minimum(b - a, 0.0)))
    return np.where(np.isnan(out), -np.inf, out)


def merge_exponentials(laws, A):
    """Two exponential draws of one scale that enter every row only as
    their difference (columns a and −a) are one Laplace draw (their
    difference is Laplace): (laws, A) with the pair as one column."""
    laws, A = list(laws), np.array(A, dtype=float, copy=True)
    exp = [i for i, l in enumerate(laws) if l == "exponential" and A.size and A[:, i].any()]
    used = set()
    for i in exp:
        if i in used:
            continue
        for j in exp:
            if j != i and j not in used and np.allclose(A[:, j], -A[:, i], rtol=1e-12, atol=0):
                laws[i] = "laplace"
                A[:, j] = 0.0
                used.update((i, j))
                break
    return tuple(laws), A


# ---------------------------------------------------------------- structure
def components(A: np.ndarray) -> list:
    """The variables the comparisons link, in groups (each a sorted list)."""
    V = A.shape[1]
    parent = list(range(V))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    used = set()
    for row in A:
        nz = np.flatnonzero(row)
        if nz.size > 2:
            raise NotAStructure(f"a comparison involves {nz.size} noise draws at once (only "
                                f"comparisons of one draw, or of two with one in all of them, "
                                f"are evaluated exactly)")
        used.update(nz.tolist())
        for k in nz[1:]:
            parent[find(int(k))] = find(int(nz[0]))
    groups: dict = {}
    for v in sorted(used):
        groups.setdefault(find(v), []).append(v)
    return list(groups.values())


class _Star:
    """The integrand of one star (a family of one row for ``log_integrals``):
    the hub's density on its interval times each leaf's probability of its
    interval given the hub's value r."""

    n = 1
    width = 1

    def __init__(self, hub_law, hub_lo, hub_hi, leaves):
        # leaves: (law, lower lines [(slope, intercept)], upper lines) in the leaf's
        # standard value as functions of r
        self.hub_law, self.hub_lo, self.hub_hi, self.leaves = hub_law, hub_lo, hub_hi, leaves

    def kinks(self) -> list:
        pts = list(kinks_of(self.hub_law))
        pts += [x for x in (self.hub_lo, self.hub_hi) if math.isfinite(x)]
        for law, lows, ups in self.leaves:
            lines = lows + ups
            for i, (a1, b1) in enumerate(lines):
                if a1 != 0:
                    pts += [(k - b1) / a1 for k in kinks_of(law)]
                for a2, b2 in lines[i + 1:]:
                    if a1 != a2:
                        pts.append((b2 - b1) / (a1 - a2))
        return [p for p in pts if math.isfinite(p)]

    def scales(self) -> list:
        out = [1.0]
        for _, lows, ups in self.leaves:
            out += [1.0 / abs(a) for a, _ in lows + ups if a != 0]
        return out

    def eval(self, r, side):
        r = np.asarray(r, dtype=float)
        side = np.broadcast_to(np.asarray(side, dtype=float), r.shape)
        L = log_pdf(self.hub_law, r)
        D = dlog_pdf(self.hub_law, r, side)
        dead = (side <= self.hub_lo) | (side >= self.hub_hi) | ~np.isfinite(L)
        for law, lows, ups in self.leaves:
            lp, d = _leaf_factor(law, tuple(lows), tuple(ups), r, side)
            dead |= ~np.isfinite(lp)
            L = L + lp
            D = D + d
        # where the integrand is below e^-700 (a Gumbel's far left, where its
        # log-density's slope overflows) it is taken as 0 — the bound above
        # adds back more than that region can hold (``FLOOR``)
        dead |= L < -700.0
        return np.where(dead, NEG, L), np.where(dead, 0.0, D)

    # the family interface of ``log_integrals``
    def tables(self, points, side):
        return self.eval(points, side)

    def rows(self, tables, sl):
        L, D = tables
        return L[None, :], D[None, :]

    def pointwise(self, rows, points, side):
        L, D = self.eval(points, side)
        return L, D


# The paths of one input share their leaves' factors: a sparse vector's
# 2ⁿ paths differ only in which side of the threshold each answer fell,
# so its 2n distinct factors are computed once on the grid they share.
_FACTORS: dict = {}
MAX_FACTORS = 512


def _leaf_factor(law, lows: tuple, ups: tuple, r, side) -> tuple:
    """ln P(leaf in its interval | hub = r) and its derivative in r, the
    leaf's interval the envelope of ``lows`` and ``ups`` (memoised on the
    exact arguments: a pure function of them)."""
    key = (law, lows, ups, r.shape, r.tobytes(), side.tobytes())
    got = _FACTORS.get(key)
    if got is None:
        lo, dlo = _envelope(list(lows), r, side, max)
        hi, dhi = _envelope(list(ups), r, side, min)
        lp = log_interval(law, lo, hi)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            fh = np.where(np.isfinite(hi), np.exp(log_pdf(law, hi) - lp), 0.0)
            fl = np.where(np.isfinite(lo), np.exp(log_pdf(law, lo) - lp), 0.0)
            d = fh * dhi - fl * dlo
        got = (lp, np.where(np.isfinite(d), d, 0.0))
        for a in got:
            a.flags.writeable = False
        if len(_FACTORS) >= MAX_FACTORS:
            _FACTORS.clear()
        _FACTORS[key] = got
    return got


def _envelope(lines, r, side, pick):
    """The max (lower bounds) or min (upper bounds) of lines a·r + b at r,
    and its slope on the branch of ``side``; ∓∞ with slope 0 if none."""
    if not lines:
        inf = -np.inf if pick is max else np.inf
        return np.full(r.shape, inf), np.zeros(r.shape)
    a = np.array([l[0] for l in lines])[:, None]
    b = np.array([l[1] for l in lines])[:, None]
    at_side = a * side[None, :] + b
    k = np.argmax(at_side, axis=0) if pick is max else np.argmin(at_side, axis=0)
    vals = a * r[None, :] + b
    v = vals.max(axis=0) if pick is max else vals.min(axis=0)
    return v, a[k, 0]


def _one_variable(law, rows_a, rows_c) -> tuple:
    lo, hi = -np.inf, np.inf
    for a, c in zip(rows_a, rows_c):
        if a > 0:
            lo = max(lo, -c / a)
        else:
            hi = min(hi, -c / a)
    v = float(log_interval(law, lo, hi))
    return v, v


def log_probability(laws, A, c) -> tuple:
    """Certified (lo, hi) of ln P(A·z + c > 0) for independent standard
    variables of ``laws``; ``NotAStructure`` where the comparisons are not
    of the structures in the module docstring."""
    A = np.asarray(A, dtype=float)
    c = np.asarray(c, dtype=float)
    if A.size and A.shape[1] < len(laws):
        A = np.hstack([A, np.zeros((A.shape[0], len(laws) - A.shape[1]))])
    laws, A = merge_exponentials(laws, A)
    for row, k in zip(A, c):
        if not row.any() and not k > 0:
            return -np.inf, -np.inf
    lo_sum, hi_sum = 0.0, 0.0
    for group in (components(A) if len(c) else []):
        rows = [i for i in range(len(c)) if np.any(A[i, group])]
        if len(group) == 1:
            v = group[0]
            lo, hi = _one_variable(laws[v], A[rows, v], c[rows])
        else:
            lo, hi = _star(laws, A[rows][:, group], c[rows], [laws[v] for v in group])
        lo_sum += lo
        hi_sum += hi
        if hi_sum == -np.inf:
            return -np.inf, -np.inf
    w = widen(np.array([lo_sum, hi_sum]))
    return float(lo_sum - w[0]), float(hi_sum + w[1])


def _star(all_laws, A, c, laws) -> tuple:
    pairs = [set(np.flatnonzero(row).tolist()) for row in A if np.count_nonzero(row) == 2]
    hubs = set(range(A.shape[1])).intersection(*pairs) if pairs else set()
    if not hubs:
        raise NotAStructure("the comparisons link noise draws in a chain with no draw common "
                            "to all of them (only a star — a threshold's or a winner's noise "
                            "compared with each other draw — is evaluated exactly)")
    h = min(hubs)
    hub_lo, hub_hi = -np.inf, np.inf
    leaves: dict = {}
    for row, k in zip(A, c):
        nz = np.flatnonzero(row)
        if nz.size == 1 and nz[0] == h:
            if row[h] > 0:
                hub_lo = max(hub_lo, -k / row[h])
            else:
                hub_hi = min(hub_hi, -k / row[h])
            continue
        leaf = int(nz[nz != h][0])
        a_l, a_h = row[leaf], row[h]
        # a_l·z_l + a_h·r + k > 0  ⇔  z_l > (−a_h·r − k)/a_l  (a_l > 0), < for a_l < 0
        line = (-a_h / a_l, -k / a_l)
        lows, ups = leaves.setdefault(leaf, ([], []))
        (lows if a_l > 0 else ups).append(line)
    if hub_hi <= hub_lo:
        return -np.inf, -np.inf
    star = _Star(laws[h], hub_lo, hub_hi, [(laws[l], lw, up) for l, (lw, up) in leaves.items()])
    kinks = star.kinks() or [0.0]
    scales = star.scales()
    h0 = min(scales) / CELLS_PER_SCALE
    reach = TAIL_SCALES * max(scales)
    start = None
    if laws[h] == "exponential" or math.isfinite(hub_lo):
        start = max(0.0 if laws[h] == "exponential" else -np.inf, hub_lo)
    kinks = [p for p in kinks if start is None or p > start]
    if not kinks:
        kinks = [start + 1.0] if start is not None else [0.0]
    edges = grid(kinks, h0, reach, start=start)
    lo, hi = log_integrals(star, edges, np.array([0]), np.array([np.inf]),
                           start=start is not None, what="a path's probability")
    # the region taken as 0: below e^-700 on a grid of total width below
    # e^50 (45 scales of at most e^40 each way)
    hi = np.logaddexp(hi, FLOOR)
    # an integrand exactly exponential on its cells makes chord and tangent
    # one line: the two ends may then cross by a rounding error
    w = widen(np.concatenate([lo, hi]))
    lo, hi = lo - w[:1], hi + w[1:]
    check_ordered(lo, hi, "a path's probability")
    return float(lo[0]), float(hi[0])


def law_of_paths(paths, key) -> dict:
    """Per output (``key(path)``): the certified (lo, hi) of the natural log
    of its probability, the sum over its paths."""
    got: dict = {}
    for p in paths:
        lo, hi = log_probability(p.laws, p.A, p.c)
        k = key(p)
        a, b = got.get(k, (-np.inf, -np.inf))
        got[k] = (np.logaddexp(a, lo), np.logaddexp(b, hi))
    return got


__all__ = ["NotAStructure", "SLACK", "law_of_paths", "log_probability"]
