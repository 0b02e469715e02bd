"""Exact densities of traced code whose output is a noisy value on some
paths of its comparisons: a sparse vector that releases its noisy answer
above the threshold, report-noisy-max releasing the noisy maximum, a
clipped release (an atom at each end, a density between).

On a path P each released value is ``c_j + a_j·z_k`` of one draw k of its
own (``NotExact`` otherwise): the released values y pin those draws,
z_k = (y_j − c_j)/a_j, and the path's density at y is

    Π_j f_k(z_k)/|a_j| · P(P's comparisons hold | the pinned draws),

the last factor a path probability with the pinned draws' values moved
into the comparisons' constants (``comparisons.log_probability``: certified
brackets).  The output (its plain elements, which elements are released,
and y) has density the sum over the paths that give it.  A density ratio
at a point where both densities are continuous (inside the paths' regions,
where these are) is a lower bound on pure ε: sets of positive probability
around y approach it.  The points tried: each path's own point, points
spread inside it, and a grid along each released value's noise scale.

May import: numpy, ``audit.engine.models.comparisons``.
"""
from __future__ import annotations

import math

import numpy as np

from audit.engine.models.comparisons import log_pdf, log_probability

GRID = np.arange(-6.0, 6.5, 1.0)        # scales around each path's point, per released value
BUDGET = 240                            # points tried per direction, spread over the paths
QUICK_BUDGET = 24                       # … where an optimiser compares many pairs


class NotPinned(Exception):
    """A released value is not one draw of its own on some path."""


def _pins(path) -> tuple:
    """(released output elements, the draw each pins, its constant, its
    coefficient)."""
    J = [j for j, o in enumerate(path.outputs) if isinstance(o, tuple)]
    ks, cs, as_ = [], [], []
    for j in J:
        c, f = path.outputs[j]
        nz = np.flatnonzero(f)
        if nz.size != 1:
            raise NotPinned("a value released after a comparison combines several noise draws")
        ks.append(int(nz[0]))
        cs.append(float(c))
        as_.append(float(f[nz[0]]))
    if len(set(ks)) != len(ks):
        raise NotPinned("two released values share one noise draw after a comparison")
    return tuple(J), np.array(ks, dtype=int), np.array(cs), np.array(as_)


def group(path) -> tuple:
    """What a path's output is, less the released values themselves."""
    return (tuple(None if isinstance(o, tuple) else o for o in path.outputs),)


def log_density(path, y: np.ndarray) -> tuple:
    """Certified (lo, hi) of ln of the path's density at released values y."""
    J, ks, cs, as_ = _pins(path)
    z = (np.asarray(y, dtype=float) - cs) / as_
    head = 0.0
    for k, zk, a in zip(ks, z, as_):
        lp = float(log_pdf(path.laws[k], zk))
        if not math.isfinite(lp):
            return -math.inf, -math.inf
        head += lp - math.log(abs(a))
    V = len(path.laws)
    A = np.zeros((len(path.c), V))
    A[:, :path.A.shape[1]] = path.A
    c = path.c + A[:, ks] @ z
    A[:, ks] = 0.0
    lo, hi = log_probability(path.laws, A, c)
    return head + lo, head + hi


def _points(path) -> list:
    """Released values to try on one path: its own, and a grid along each
    released value's scale around it."""
    J, ks, cs, as_ = _pins(path)
    y0 = cs + as_ * path.z[ks]
    pts = [y0]
    for i in range(len(J)):
        for t in GRID:
            y = y0.copy()
            y[i] += t * abs(as_[i])
            pts.append(y)
    return pts


def pair_density_epsilon(paths_a, paths_b, quick: bool = False) -> tuple:
    """The largest certified log density ratio over the tried outputs, both
    directions: (ε lower end, direction, the output's group, y, lo, hi);
    ``quick``: the fewer points an optimiser's objective affords."""
    budget = QUICK_BUDGET if quick else BUDGET
    best = (0.0, None, None, None, None, None)
    for d, (xs, ys) in (("l>l'", (paths_a, paths_b)), ("l'>l", (paths_b, paths_a))):
        released = [p for p in xs if p.noisy_outputs]
        per = max(2, budget // max(1, len(released)))
        for p in released:
            g = group(p)
            J = _pins(p)[0]
            same_x = [q for q in xs if q.noisy_outputs and group(q) == g and _pins(q)[0] == J]
            same_y = [q for q in ys if q.noisy_outputs and group(q) == g and _pins(q)[0] == J]
            if not same_y:
                continue
            pts = _points(p)
            if len(pts) > per:          # the path's own point, and the grid thinned evenly
                pts = [pts[0]] + [pts[i] for i in np.linspace(1, len(pts) - 1, per - 1).astype(int)]
            for y in pts:
                lo = np.logaddexp.reduce([log_density(q, y)[0] for q in same_x])
                hi = np.logaddexp.reduce([log_density(q, y)[1] for q in same_y])
                if lo == -math.inf or hi == -math.inf:
                    continue
                if lo - hi > best[0]:
                    best = (lo - hi, d, g, y, lo, hi)
    return best

