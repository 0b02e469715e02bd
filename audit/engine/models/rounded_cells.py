"""Exact probabilities of a rounded release whose values combine several
noise draws: rounded prefix sums of a continual counter (a tree or hybrid
counter, noisy increments summed), one path with no comparisons.

The release is y = c + F·z (one affine form per rounded element, z the
draws).  Where F is square and invertible over the draws it uses, y has the
density |det F|⁻¹ Π_k f_k((F⁻¹(y − c))_k), and a rounded output q is the
box B(q) of the values that round to it (one interval per element), so

    P(q) = |det F|⁻¹ ∫_B Π_k f_k(z_k(y)) dy.

Over the box each draw z_k = G_k·(y − c) (G = F⁻¹) stays within
±r_k = Σ_t |G_kt|·h_t of its value at the box's centre (h the box's half
widths).  Two ways to bound the integral, both certified:

* every law here is unimodal with its mode at 0, so f_k lies between its
  value at the nearer end of that range to 0 (its largest) and at the far
  end (its smallest): P(q) between vol(B)/|det F| times the products;
* exact, for Laplace and exponential draws whose range keeps one sign:
  ln f_k is then linear in y, the integrand is e^{α·y} over a box, and the
  integral is a product of one-dimensional ones in closed form.

The lower end of a probability is taken on boxes shrunk by the rounding's
floating-point margin (``rounded_release.FUZZ``), the upper on boxes
widened by it.  The pair's figure is the largest certified log-ratio
P(q)/P′(q) over the outputs tried: the outputs whose draws all sit on the
side where the unrounded privacy loss is largest (z_k of the sign of
(G′(c − c′))_k, at several distances from 0).
An output of positive probability whose ratio is certified: a lower bound
on pure ε (and where the exact integrals apply, the unrounded release's ε
itself when F is the same on both inputs).

May import: numpy, ``algorithms.replay.noise`` (the roundings),
``audit.engine.models.comparisons`` (laws, merging exponentials) and
``rounded_release`` (its result and margins).
"""
from __future__ import annotations

import math

import numpy as np

from algorithms.replay.noise import Rounded, grid_value, preimage
from audit.engine.models.comparisons import log_pdf, merge_exponentials
from audit.engine.models.rounded_release import Found, _moved

LOG_LINEAR = {"laplace": -math.log(2.0), "exponential": 0.0}    # ln f = const − s·z
UNIMODAL = ("laplace", "exponential", "normal", "gumbel")       # standard laws, mode at 0
DISTANCES = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)                     # |z_k| tried, in noise scales
INVERSE_TOL = 1e-10     # ‖F·G − I‖ above this: F is not inverted reliably enough


class _Side:
    """One input's release: y = c + F·z over the draws it uses."""

    def __init__(self, laws, F, c):
        self.laws, self.F, self.c = laws, F, c
        self.G = np.linalg.inv(F)
        self.log_det_G = -float(np.linalg.slogdet(F)[1])

    def log_p(self, lo, hi, upper: bool) -> float:
        """Certified lower (``upper`` False) or upper end of ln P(lo < y < hi)."""
        u0, h = (lo + hi) / 2 - self.c, (hi - lo) / 2
        z0, r = self.G @ u0, np.abs(self.G) @ h
        exact = self._exact(lo - self.c, hi - self.c, z0, r)
        if exact is not None:
            return exact
        log_vol = float(np.sum(np.log(hi - lo)))
        ends = np.stack([z0 - r, z0 + r])
        if upper:
            vals = [log_pdf(law, np.clip(0.0, a, b)) for law, a, b in zip(self.laws, *ends)]
        else:
            vals = [min(log_pdf(law, a), log_pdf(law, b)) for law, a, b in zip(self.laws, *ends)]
        return log_vol + self.log_det_G + float(np.sum(vals))

    def _exact(self, lo, hi, z0, r) -> float | None:
        """ln of the integral where every draw's density is log-linear over
        the box (one sign of a Laplace draw, the support of an exponential)."""
        if any(law not in LOG_LINEAR for law in self.laws):
            return None
        s = np.sign(z0)
        lap = np.array([law == "laplace" for law in self.laws])
        if np.any(np.abs(z0) <= r * (1 + 1e-9) + 1e-12) or np.any(~lap & (s < 0)):
            return None
        alpha = -(self.G.T @ s)                 # ln f(y) = Σ consts + α·(y − c) + ln|det G|
        w = hi - lo
        aw = np.abs(alpha) * w
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            one_d = np.where(aw < 1e-12, np.log(w),
                             alpha * np.where(alpha > 0, hi, lo) + np.log(-np.expm1(-aw))
                             - np.log(np.abs(alpha)))
        consts = sum(LOG_LINEAR[law] for law in self.laws)
        return self.log_det_G + consts + float(np.sum(one_d))


def _sides(pa, pb):
    """(positions of the rounded elements, their roundings, ℓ's side, ℓ′'s
    side) where the release has the module's shape; None otherwise."""
    if len(pa.c) or len(pb.c) or len(pa.outputs) != len(pb.outputs):
        return None
    J = [j for j, o in enumerate(pa.outputs) if isinstance(o, Rounded)]
    if not J or J != [j for j, o in enumerate(pb.outputs) if isinstance(o, Rounded)]:
        return None
    if any(pa.outputs[j] != pb.outputs[j] for j in range(len(pa.outputs)) if j not in J):
        return None
    rounding = [(pa.outputs[j].op, pa.outputs[j].step) for j in J]
    if [(r, pa.outputs[j].post) for r, j in zip(rounding, J)] != \
            [((pb.outputs[j].op, pb.outputs[j].step), pb.outputs[j].post) for j in J]:
        return None
    if tuple(pa.laws) != tuple(pb.laws):
        return None
    V = max([len(pa.laws)] + [p.outputs[j].coef.size for p in (pa, pb) for j in J])
    laws = tuple(pa.laws) + ("",) * (V - len(pa.laws))

    def matrix(p):
        return np.array([np.concatenate([p.outputs[j].coef, np.zeros(V - p.outputs[j].coef.size)])
                         for j in J])
    (la, Fa), (lb, Fb) = (merge_exponentials(laws, matrix(p)) for p in (pa, pb))
    cols_a = np.flatnonzero(np.any(Fa != 0, axis=0))
    cols_b = np.flatnonzero(np.any(Fb != 0, axis=0))
    if la != lb or not np.array_equal(cols_a, cols_b) or cols_a.size != len(J):
        return None
    used = tuple(la[i] for i in cols_a)
    if any(law not in UNIMODAL for law in used):
        return None
    sides = []
    for p, F in ((pa, Fa), (pb, Fb)):
        F = F[:, cols_a]
        if not np.all(np.isfinite(F)) or abs(np.linalg.slogdet(F)[0]) < 0.5:
            return None
        side = _Side(used, F, np.array([p.outputs[j].const for j in J]))
        if np.abs(F @ side.G - np.eye(len(J))).max() > INVERSE_TOL:
            return None
        sides.append(side)
    return J, rounding, sides[0], sides[1]


def _box(rounding, q, consts, upper: bool):
    iv = np.array([preimage(op, step, v) for (op, step), v in zip(rounding, q)])
    lo, hi = _moved(iv[:, 0], iv[:, 1], np.abs(consts), np.array([s for _, s in rounding]),
                    upper)
    return lo, hi


def invertible(pa, pb) -> Found | None:
    """The largest certified log-ratio of the outputs tried (module
    docstring); None where the release is not of the module's shape."""
    got = _sides(pa, pb)
    if got is None:
        return None
    J, rounding, A, B = got
    size = np.maximum(np.abs(A.c), np.abs(B.c))
    best = Found(-math.inf)
    for d, (x, y, px) in (("l>l'", (A, B, pa)), ("l'>l", (B, A, pb))):
        shift = y.G @ (x.c - y.c)               # z on y's side = G_y·F_x·z + shift
        sign = np.where(shift < 0, -1.0, 1.0)
        for z in (sign * m for m in DISTANCES):
            yv = x.c + x.F @ z
            q = tuple(grid_value(op, step, float(v)) for (op, step), v in zip(rounding, yv))
            lo_x = x.log_p(*_box(rounding, q, size, False), upper=False)
            hi_y = y.log_p(*_box(rounding, q, size, True), upper=True)
            if not math.isfinite(lo_x):
                continue
            r = lo_x - hi_y
            if r > best.epsilon:
                values = {j: px.outputs[j].value(v) for j, v in zip(J, q)}
                out = tuple(values.get(j, o) for j, o in enumerate(px.outputs))
                best = Found(r, d, out, math.exp(lo_x), math.exp(hi_y), log_p=lo_x,
                             log_p_other=hi_y)
    return best
