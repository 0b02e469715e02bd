"""Privacy claims as curves: the δ(ε) profile a μ-GDP or ρ-zCDP claim
promises, and the one point of it an audit's event test aims at.

* μ-GDP (Dong, Roth & Su 2019, Cor. 2.13): the profile of the Gaussian
  mechanism with sensitivity/σ = μ, exactly:
  δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ).  Its trade-off curve is
  G_μ(α) = Φ(Φ⁻¹(1 − α) − μ); a test with false-positive rate α and
  false-negative rate β below it refutes the claim.
* ρ-zCDP (Bun & Steinke 2016): Rényi divergence ≤ ρα at every order α > 1;
  the δ(ε) it implies is Canonne, Kamath & Steinke 2020, Prop. 12
  (Asoodeh et al.'s improvement of Mironov's conversion), minimised over a
  fine grid of orders — every order gives a valid bound, so the grid's
  minimum is a valid curve, never below the exact conversion.
* (ε₀, δ₀): the profile of Kairouz et al.'s canonical mechanism,
  δ(ε) = δ₀ + (1 − δ₀)(e^ε₀ − e^ε)₊/(1 + e^ε₀), which every (ε₀, δ₀)-DP
  mechanism lies under.

May import: numpy and scipy.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

KINDS = ("gdp", "zcdp")
# The δ an event test aims at on a curve claim (its reference point): the
# claim's δ(ε) there is resolved by ~10⁴ runs a side, where the Gaussian
# curves of different μ are far apart.
REFERENCE_DELTA = 0.05
# Orders α of the zCDP conversion: log-spaced over (1, 10⁴].
_ORDERS = 1.0 + np.logspace(-4, 4, 2001)


def gdp_delta(eps, mu: float) -> np.ndarray:
    """δ(ε) of μ-GDP (exact), elementwise in ε ≥ 0."""
    e = np.asarray(eps, dtype=float)
    if mu <= 0:
        return np.zeros_like(e)
    a, b = mu / 2 - e / mu, -mu / 2 - e / mu
    with np.errstate(over="ignore"):
        d = ndtr(a) - np.exp(e + log_ndtr(b))
    return np.maximum(0.0, d)


def zcdp_delta(eps, rho: float) -> np.ndarray:
    """δ(ε) implied by ρ-zCDP: min over orders α of
    exp((α − 1)(αρ − ε)) (1 − 1/α)^(α−1) / α, capped at 1."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    if rho <= 0:
        return np.zeros_like(e)
    a = _ORDERS[:, None]
    log_d = (a - 1) * (a * rho - e[None, :]) + (a - 1) * np.log1p(-1 / a) - np.log(a)
    d = np.minimum(1.0, np.exp(np.min(log_d, axis=0)))
    return d.reshape(np.shape(eps))


def approx_delta(eps, epsilon: float, delta: float) -> np.ndarray:
    """δ(ε) every (ε₀, δ₀)-DP mechanism lies under (module docstring)."""
    e = np.asarray(eps, dtype=float)
    # (e^ε₀ − e^ε)/(1 + e^ε₀), written so that a large ε₀ does not overflow.
    with np.errstate(over="ignore"):
        share = np.maximum(0.0, 1.0 - np.exp(np.minimum(e - epsilon, 0.0))) \
            / (1.0 + math.exp(-min(epsilon, 700.0)))
    return delta + (1 - delta) * share


def curve_delta(kind: str, value: float, eps) -> np.ndarray:
    if kind == "gdp":
        return gdp_delta(eps, value)
    if kind == "zcdp":
        return zcdp_delta(eps, value)
    raise ValueError(f"claim curve must be one of {', '.join(KINDS)}, got {kind!r}")


def curve_epsilon(kind: str, value: float, delta: float) -> float:
    """The smallest ε with δ(ε) ≤ ``delta`` on the curve (bisection; the
    curves decrease in ε), rounded up: +inf for δ = 0 where the curve never
    reaches it (a Gaussian's loss is unbounded)."""
    def d(e):
        return float(curve_delta(kind, value, e))

    if value <= 0 or d(0.0) <= delta:
        return 0.0
    if delta <= 0:
        return math.inf
    lo, hi = 0.0, 1.0
    while d(hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def reference_point(kind: str, value: float) -> tuple[float, float]:
    """(ε_ref, δ_ref) on the curve: the point an event test aims at
    (``REFERENCE_DELTA``, or the curve's δ(0) where that is smaller)."""
    d0 = float(curve_delta(kind, value, 0.0))
    delta = min(REFERENCE_DELTA, d0)
    return curve_epsilon(kind, value, delta), delta


def scaled(kind: str, value: float, k: int) -> float:
    """Group privacy for k changed records: kμ for GDP (Dong, Roth & Su,
    Thm 2.14), k²ρ for zCDP (Bun & Steinke, Prop. 27)."""
    return value * k if kind == "gdp" else value * k * k


def words(kind: str, value: float) -> str:
    return f"{value:g}-GDP" if kind == "gdp" else f"{value:g}-zCDP"


# ------------------------------------------------ what one event certifies
def certified_delta(p_lo: float, q_hi: float, eps) -> np.ndarray:
    """δ(ε) ≥ P(S) − e^ε Q(S) ≥ p_lo − e^ε q_hi, for every ε at once (the
    same two bounds): the certified profile of one event."""
    e = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore"):
        return np.maximum(0.0, p_lo - np.exp(e) * q_hi)


def certified_mu(p_lo: float, q_hi: float) -> float:
    """The μ-GDP lower bound of one event: the test 'output in S' has
    false-positive rate α = Q(S) ≤ q_hi and false-negative rate
    β = 1 − P(S) ≤ 1 − p_lo; μ-GDP needs β ≥ G_μ(α) ≥ G_μ(q_hi) (G_μ
    decreases), so μ ≥ Φ⁻¹(p_lo) − Φ⁻¹(q_hi)."""
    if p_lo <= 0 or q_hi >= 1 or p_lo <= q_hi:
        return 0.0
    if q_hi <= 0:
        return math.inf
    return max(0.0, float(ndtri(p_lo) - ndtri(q_hi)))


def grid_for(p_lo: float, q_hi: float, top: float = 0.0, points: int = 161) -> np.ndarray:
    """ε from 0 to past where one event's certified δ reaches 0 (and past
    ``top``, a claim's ε of interest)."""
    end = math.log(p_lo / q_hi) if p_lo > 0 and q_hi > 0 else 0.0
    hi = max(end * 1.05, top * 1.2, 0.5)
    return np.linspace(0.0, hi if math.isfinite(hi) else 50.0, points)


def profile_of(p_lo: float, q_hi: float, kind=None, value=None, top: float = 0.0) -> dict:
    """One event's certified profile: δ_lb on a grid of ε, the trade-off
    point (α ≤ q_hi, β ≤ 1 − p_lo), μ_lb, and with a curve claim its δ(ε)
    on the same grid and whether δ_lb rises above it anywhere."""
    grid = grid_for(p_lo, q_hi, top)
    lower = certified_delta(p_lo, q_hi, grid)
    out = {"epsilon": grid.tolist(), "delta_lower": lower.tolist(),
           "tradeoff": {"false_positive_upper": float(q_hi),
                        "false_negative_upper": float(1 - p_lo)},
           "mu_lower": certified_mu(p_lo, q_hi)}
    if kind is not None:
        claimed = curve_delta(kind, value, grid)
        gap = lower - claimed
        i = int(np.argmax(gap))
        above = bool(gap[i] > 0)
        if kind == "gdp":       # the exact test (the curves' duality), not the grid's
            above = above or out["mu_lower"] > value
        out.update({"claim_delta": np.asarray(claimed).tolist(), "above_claim": above,
                    "largest_gap": float(gap[i]), "at_epsilon": float(grid[i])})
    return out
