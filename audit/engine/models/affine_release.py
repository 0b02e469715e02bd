"""The exact privacy loss of a release affine in independent noise: y = b + A·z
on one input and b′ + A·z on its neighbour (``algorithms.replay.paths``: a
path with no comparison, its outputs' affine forms), z standard Laplace or
normal variables.

With Δ = b − b′:

* Δ = 0: the two laws are the same, ε = 0.
* Δ outside the range of A: some direction v (vᵀA = 0, vᵀΔ ≠ 0) of the
  release carries no noise at all — noise reused where it should be fresh,
  a path with no noise — and vᵀy differs surely: ε = ∞.
* Laplace noise only: ε = N(Δ) = min{‖d‖₁ : A·d = Δ}, a linear program.
  Upper bound: y′ = b′ + A·z has the law of b + A·(z − d) for any such d,
  so the pair is a post-processing of (z, z − d), whose pure ε is ‖d‖₁.
  Lower bound: the LP's dual optimum v (|vᵀa_i| ≤ 1 for every column,
  vᵀΔ = N(Δ)) post-processes y to s = vᵀy = vᵀb + Σ (vᵀa_i) z_i, a sum of
  independent Laplace variables of which those with |vᵀa_i| = 1 set the
  tail: the density ratio of s and s shifted by N(Δ) tends to e^{N(Δ)} in
  the tail.  So ε = N(Δ) exactly, approached in the far tail of vᵀy
  (the event reported).
* Normal noise only (and Δ in the range): pure ε = ∞ (a Gaussian shift has
  an unbounded loss); the pair is the Gaussian mechanism of
  μ = √(Δᵀ(AAᵀ)⁺Δ), whose exact δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
  (Balle & Wang 2018, Theorem 8) gives the exact ε at a claimed δ.
* Both: ∞ where Δ is outside the range of the Laplace columns (a
  projection carries Gaussian noise alone); otherwise refused (no exact
  loss of the mixture here).

Two exponential draws of one scale that enter only as their difference are
one Laplace draw (their difference is Laplace); any other exponential or
Gumbel draw in a release is refused.

May import: numpy, scipy, ``audit.engine.models.comparisons`` (the exponential pairs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq, linprog
from scipy.stats import norm

from audit.engine.models.comparisons import merge_exponentials

TOL = 1e-9


class NotExact(Exception):
    """The release is not of a structure with an exact loss here."""


@dataclass
class ReleaseLoss:
    epsilon: float              # the exact pure ε of the pair (∞ possible)
    why: str                    # in words: where it comes from
    mu: float | None = None     # Gaussian noise only: the pair's μ
    direction: list = field(default_factory=list)   # v: the telling projection vᵀy
    shift: float = 0.0          # vᵀΔ

    def epsilon_at(self, delta: float) -> float:
        """The pair's exact ε at δ: Gaussian noise, by Balle & Wang's δ(ε);
        pure ε otherwise."""
        if self.mu is None or delta <= 0:
            return self.epsilon
        mu = self.mu
        if mu == 0:
            return 0.0

        def d(eps):
            return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        if d(0.0) <= delta:
            return 0.0
        hi = 1.0
        while d(hi) > delta:
            hi *= 2
        return brentq(lambda e: d(e) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12)


def _in_range(M: np.ndarray, d: np.ndarray) -> bool:
    if not M.size:
        return not np.any(d)
    x, *_ = np.linalg.lstsq(M, d, rcond=None)
    return np.linalg.norm(M @ x - d) <= TOL * (np.linalg.norm(d) + np.abs(M).max())


def release_loss(laws, A_a, b_a, A_b, b_b) -> ReleaseLoss:
    """The exact loss of the release pair (module docstring), or NotExact."""
    A_a, A_b = np.atleast_2d(A_a), np.atleast_2d(A_b)
    if A_a.shape != A_b.shape or not np.allclose(A_a, A_b, rtol=TOL, atol=TOL * np.abs(A_a).max()):
        raise NotExact("the noise added to the release depends on the input (its scale or "
                       "where it goes differs between the two inputs)")
    b_a, b_b = np.asarray(b_a, dtype=float), np.asarray(b_b, dtype=float)
    delta = b_a - b_b
    laws, A = merge_exponentials(laws, A_a)
    laws = list(laws)
    cols = np.flatnonzero(np.any(A != 0, axis=0))
    other = sorted({laws[i] for i in cols} - {"laplace", "normal"})
    if other:
        raise NotExact(f"{' and '.join(other)} noise in a release (exact losses of releases "
                       f"cover Laplace and Gaussian noise, and a difference of two exponentials)")
    scale = np.abs(b_a).max(initial=0) + np.abs(b_b).max(initial=0) + 1.0
    if np.all(np.abs(delta) <= TOL * scale):
        return ReleaseLoss(0.0, "the release has the same law on both inputs")
    lap = [i for i in cols if laws[i] == "laplace"]
    gau = [i for i in cols if laws[i] == "normal"]
    if not _in_range(A[:, cols], delta):
        v = _uncovered(A[:, cols], delta)
        return ReleaseLoss(math.inf, "a change of the release that no noise covers (a "
                           "direction of the output that carries no noise differs between the "
                           "inputs)", direction=v.tolist(), shift=float(v @ delta))
    if gau and not _in_range(A[:, lap], delta):
        v = _uncovered(A[:, lap], delta) if lap else delta / np.linalg.norm(delta)
        G = A[:, gau]
        mu = None if lap else float(math.sqrt(max(0.0, delta @ np.linalg.pinv(G @ G.T) @ delta)))
        return ReleaseLoss(math.inf, "a Gaussian shift of the release (pure ε is infinite: the "
                           "Gaussian privacy loss is unbounded)", mu=mu,
                           direction=v.tolist(), shift=float(v @ delta))
    if gau:
        raise NotExact("Laplace and Gaussian noise together in one release (no exact loss of "
                       "the mixture here)")
    return _laplace(A[:, lap], delta)


def _uncovered(M: np.ndarray, d: np.ndarray) -> np.ndarray:
    """A unit v with vᵀM = 0 and vᵀd > 0 (d outside M's range)."""
    if M.size:
        x, *_ = np.linalg.lstsq(M, d, rcond=None)
        r = d - M @ x
    else:
        r = d.copy()
    return r / np.linalg.norm(r)


def _laplace(M: np.ndarray, d: np.ndarray) -> ReleaseLoss:
    m, n = M.shape
    # min Σ t  s.t.  M(p − q) = d, p, q ≥ 0  (‖x‖₁ with x = p − q)
    res = linprog(np.ones(2 * n), A_eq=np.hstack([M, -M]), b_eq=d, bounds=[(0, None)] * (2 * n),
                  method="highs")
    if res.status != 0:
        raise NotExact(f"the release's linear program failed ({res.message})")
    eps = float(res.fun)
    v = np.asarray(res.eqlin.marginals, dtype=float) if res.eqlin is not None else np.zeros(m)
    if v @ d < 0:
        v = -v
    return ReleaseLoss(eps, "Laplace noise: the least total shift of the noise, in scales, that "
                       "turns one input's release into the other's (exact: attained in the "
                       "tail of the projection below)", direction=v.tolist(),
                       shift=float(v @ d))
