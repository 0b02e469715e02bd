"""Input checks shared by every algorithm factory.

Each check raises ``ValueError`` whose message names the parameter and the
allowed range, so the command line can print it as a one-line error.
"""
from __future__ import annotations

import math

import numpy as np


def check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not float(value).is_integer():
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be an integer {rng}, got {value!r}")
    return v


def check_arms(K) -> int:
    return check_int("K (arms)", K, 2)


def check_horizon(T) -> int:
    return check_int("T (horizon)", T, 1)


def check_epsilon(eps) -> float:
    eps = float(eps)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be a finite number > 0, got {eps!r}")
    return eps


def check_delta(delta, allow_zero: bool = True) -> float:
    delta = float(delta)
    if not (0.0 <= delta < 1.0) or (delta == 0.0 and not allow_zero):
        lo = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"delta must be in {lo}, got {delta!r}")
    return delta


def check_positive(name: str, value, upper: float | None = None) -> float:
    v = float(value)
    if not (v > 0 and math.isfinite(v)) or (upper is not None and v > upper):
        rng = "> 0" if upper is None else f"in (0, {upper}]"
        raise ValueError(f"{name} must be a finite number {rng}, got {value!r}")
    return v


def check_batch(tau, T) -> int:
    tau = check_int("tau (batch size)", tau, 1)
    if tau > T:
        raise ValueError(f"tau (batch size) must be in [1, T={T}], got {tau}")
    return tau


def check_losses(losses, T: int | None = None, K: int | None = None,
                 loss_range: tuple = (0.0, 1.0)) -> np.ndarray:
    """The losses as a float array ``(T, K)``, every entry in ``loss_range``
    (the algorithm's ``Algorithm.loss_range``, [lo, hi] per coordinate)."""
    arr = np.asarray(losses, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"losses must be an array of shape (T, K), got shape {arr.shape}")
    if T is not None and arr.shape[0] != T or K is not None and arr.shape[1] != K:
        raise ValueError(f"losses must have shape (T={T}, K={K}), got {arr.shape}")
    lo, hi = loss_range
    if not np.all(np.isfinite(arr)) or arr.min() < lo or arr.max() > hi:
        bad = arr[~np.isfinite(arr) | (arr < lo) | (arr > hi)].flat[0]
        raise ValueError(f"losses must lie in [{lo:g}, {hi:g}] (the algorithm's loss range), "
                         f"got {bad:g}")
    return arr


def check_advice(advice, T: int, N: int, K: int) -> np.ndarray:
    arr = np.asarray(advice, dtype=float)
    if arr.shape != (T, N, K):
        raise ValueError(f"advice must have shape (T={T}, N={N}, K={K}), got {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or not np.allclose(arr.sum(-1), 1.0, atol=1e-9):
        raise ValueError("advice rows must be probability distributions over the K arms "
                         "(non-negative, summing to 1)")
    return arr
