"""Judging a neighbouring pair from certified brackets of its outputs'
probabilities (or densities), as every exact model's evidence does: the
privacy loss of an output as a bracket, the best certified loss over
outputs and directions, and the certified lower bound on
δ(ε) = Σ_o (P(o) − e^ε P′(o))₊ with the ε at which it reaches a δ.

An output impossible on the numerator side has no loss (NaN, skipped);
one possible only on the numerator side has loss +∞.

May import: numpy.
"""
from __future__ import annotations

import math

import numpy as np


def loss_bracket(lo_num, hi_num, lo_den, hi_den):
    """Certified [lower, upper] of ln P_num − ln P_den, elementwise: an output
    impossible on the numerator side has no loss (NaN, skipped), one possible
    only there +∞."""
    with np.errstate(invalid="ignore"):
        low = np.where(np.isneginf(hi_den), np.inf, lo_num - hi_den)
        high = np.where(np.isneginf(lo_den), np.inf, hi_num - lo_den)
    impossible = np.isneginf(hi_num)
    return np.where(impossible, np.nan, low), np.where(impossible, np.nan, high)


def best_loss(dirs: dict):
    """(direction, index, value) of the largest certified lower end of a
    loss over the directions of ``dirs`` (direction → (low, high));
    (None, None, −inf) when there is none."""
    best_dir, best_i, best = None, None, -math.inf
    for d, (low, _) in dirs.items():
        if np.all(np.isnan(low)):
            continue
        i = int(np.nanargmax(low))
        if low[i] > best:
            best_dir, best_i, best = d, i, float(low[i])
    return best_dir, best_i, best


def delta_lower(lo_num, hi_den, eps: float) -> float:
    """Certified lower bound on Σ_o (P_num(o) − e^ε P_den(o))₊."""
    p = np.exp(lo_num)
    q = np.exp(hi_den)
    return float(np.clip(p - math.exp(eps) * q, 0.0, None).sum())


def epsilon_at_delta(lo_num, hi_den, delta: float) -> float:
    """The largest ε with certified δ_lb(ε) > δ (0 when none): bisection on
    the decreasing function ε ↦ δ_lb(ε)."""
    if delta_lower(lo_num, hi_den, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while delta_lower(lo_num, hi_den, hi) > delta:
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_lower(lo_num, hi_den, mid) > delta else (lo, mid)
    return lo


def top_outputs(name, lo_num, hi_num, lo_den, hi_den, direction: str, k: int = 8,
                measure: str = "probability") -> dict:
    """The ``k`` outputs with the largest certified loss (lower end) in one
    direction, for the report's figure: each output's name (``name(i)``),
    its log-probability (or log-density, ``measure``) bracket on the
    numerator's side and on the denominator's, and its loss bracket.  The
    first row is the output that certifies the pair's bound under pure ε."""
    lo_num, hi_num, lo_den, hi_den = (np.asarray(x, dtype=float).ravel()
                                      for x in (lo_num, hi_num, lo_den, hi_den))
    low, high = loss_bracket(lo_num, hi_num, lo_den, hi_den)
    key = np.where(np.isnan(low), -np.inf, low)
    order = [int(i) for i in np.argsort(-key, kind="stable")[:k] if not np.isnan(low[i])]
    return {"direction": direction, "measure": measure,
            "rows": [{"output": str(name(i)),
                      "log_numerator": [float(lo_num[i]), float(hi_num[i])],
                      "log_denominator": [float(lo_den[i]), float(hi_den[i])],
                      "loss": [float(low[i]), float(high[i])]} for i in order]}
