"""Statistical core of the privacy audit: turn event counts into a certified
lower bound on epsilon.

Why exact Clopper-Pearson: the audit's claim is "epsilon is at least X with
confidence 1 - beta". Only an exact (conservative) binomial bound keeps that
claim valid at every sample size, including the tails (0/n, n/n) where the
strongest evidence lives and normal approximations fail.

May import: numpy and scipy only (it knows nothing of algorithms).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

DIRECTIONS = ("l>l'", "l'>l")


@dataclass(frozen=True)
class Bound:
    """One-sided CP bounds; each side holds with prob >= 1 - alpha on its own,
    so a caller that uses one side of several Bounds pays alpha per side used."""

    lower: float
    upper: float
    count: int
    trials: int
    alpha: float

    def __repr__(self) -> str:
        return (f"Bound({self.count}/{self.trials}: [{self.lower:.6g}, "
                f"{self.upper:.6g}] one-sided each at alpha={self.alpha:.3g})")


def _cp_arrays(count, trials, alpha):
    """Vectorised one-sided CP. Identical to
    proportion_confint(count, trials, alpha=2*alpha, method="beta") (which
    calls beta.ppf/isf at alpha/2), but usable on ~1e5 events at once, which
    the selection step needs."""
    k = np.asarray(count, dtype=float)
    n = np.broadcast_to(np.asarray(trials, dtype=float), k.shape)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("need 0 <= count <= trials")
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = stats.beta.ppf(alpha, k, n - k + 1)
        hi = stats.beta.isf(alpha, k + 1, n - k)
    lo = np.where(k == 0, 0.0, lo)  # exact edges: also covers trials == 0
    hi = np.where(k == n, 1.0, hi)
    return lo, hi


def one_sided_bounds(count, trials, alpha: float):
    """Exact one-sided (1 - alpha) CP bounds on a success probability.

    Returns a Bound for scalar input, or a (lower, upper) array pair for array
    input. trials == 0 carries no information, hence [0, 1]."""
    if not 0.0 < alpha < 0.5:
        raise ValueError("alpha must be in (0, 0.5)")
    lo, hi = _cp_arrays(count, trials, alpha)
    if np.ndim(count) == 0 and np.ndim(trials) == 0:
        return Bound(float(lo), float(hi), int(count), int(trials), float(alpha))
    return lo, hi


def _eps_lb_array(p_lo, q_hi, delta):
    p_lo, q_hi = np.asarray(p_lo, float), np.asarray(q_hi, float)
    num = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(num / q_hi)
    eps = np.where(q_hi <= 0, np.inf, eps)
    return np.where((num <= 0) | ~(eps > 0), 0.0, eps)


def epsilon_lower_bound(p_lo: float, q_hi: float, delta: float = 0.0) -> float:
    """(eps, delta)-DP forces P[A(l) in S] <= e^eps P[A(l') in S] + delta, so
    eps >= ln((p - delta)/q); plugging in p_lo <= p and q_hi >= q keeps this
    a valid lower bound. Clamped at 0: eps >= 0 is trivially
    true and a negative value would be meaningless."""
    return float(_eps_lb_array(p_lo, q_hi, delta))


@dataclass(frozen=True)
class EventTest:
    """The held-out evidence for one chosen event S; selection_score is kept
    only as a diagnostic, never as evidence (it is biased by selection)."""

    event: str
    direction: str
    numerator: Bound
    denominator: Bound
    epsilon_lower_bound: float
    selection_score: float

    def as_dict(self) -> dict:
        def b(x: Bound) -> dict:
            return {"count": x.count, "trials": x.trials, "lower": x.lower,
                    "upper": x.upper, "alpha": x.alpha}
        return {"event": self.event, "direction": self.direction,
                "numerator": b(self.numerator),
                "denominator": b(self.denominator),
                "epsilon_lower_bound": self.epsilon_lower_bound,
                "selection_score": self.selection_score}


def select_and_test(counts_a_sel, counts_b_sel, n_sel: int, counts_a_hold,
                    counts_b_hold, n_hold: int, labels: Sequence[str],
                    alpha: float, delta: float = 0.0) -> EventTest:
    """Choose the most damning (event, direction) on the selection half, then
    certify it on the independent held-out half.

    Why split: searching ~1e5 events and reporting the best one's bound on the
    same data would be a multiple-comparisons fallacy. Because the held-out
    runs are independent of the choice, the final bound needs only one
    numerator-lower and one denominator-upper bound, each at level alpha.

    alpha is the caller's Bonferroni share per bound:
    alpha = (1 - confidence) / (attacks * 2 directions * 2 bounds), so that
    the whole audit's claim holds with probability >= confidence.
    """
    arrs = [np.asarray(c, dtype=np.int64) for c in
            (counts_a_sel, counts_b_sel, counts_a_hold, counts_b_hold)]
    E = len(labels)
    if E == 0 or any(a.shape != (E,) for a in arrs):
        raise ValueError("count arrays must all have shape (len(labels),)")
    a_sel, b_sel, a_hold, b_hold = arrs

    # The candidates are ranked by bounds that hold simultaneously for all
    # 2E of them (alpha / 2E each): ranked at the test's own alpha, the
    # largest of many noisy small-count bounds is inflated by the search (a
    # winner's curse: a lucky far tail wins the selection and fails on the
    # held-out half). The choice never affects validity, only power.
    alpha_sel = alpha / (2 * E)
    lo_a, hi_a = _cp_arrays(a_sel, n_sel, alpha_sel)
    lo_b, hi_b = _cp_arrays(b_sel, n_sel, alpha_sel)
    score = np.concatenate([_eps_lb_array(lo_a, hi_b, delta),
                            _eps_lb_array(lo_b, hi_a, delta)])
    # Tie-break (and all-zero fallback) so a plausible event is still tested.
    smooth = np.log((a_sel + 0.5) / (b_sel + 0.5))
    smooth = np.concatenate([smooth, -smooth])
    best = int(np.lexsort((smooth, score))[-1])  # last key is primary
    d, e = divmod(best, E)

    num, den = (a_hold, b_hold) if d == 0 else (b_hold, a_hold)
    nb = one_sided_bounds(int(num[e]), int(n_hold), alpha)
    db = one_sided_bounds(int(den[e]), int(n_hold), alpha)
    return EventTest(str(labels[e]), DIRECTIONS[d], nb, db,
                     epsilon_lower_bound(nb.lower, db.upper, delta),
                     float(score[best]))


def max_detectable_epsilon(n_hold: int, alpha: float, delta: float = 0.0) -> float:
    """Ceiling on what the audit can certify with this held-out budget
    (all n runs hit S on one side, none on the other). Reported next to
    eps_lb so "small eps_lb" can be told apart from "underpowered audit";
    roughly ln(n / ln(1/alpha))."""
    p_lo = one_sided_bounds(n_hold, n_hold, alpha).lower  # alpha**(1/n)
    q_hi = one_sided_bounds(0, n_hold, alpha).upper       # 1 - alpha**(1/n)
    return epsilon_lower_bound(p_lo, q_hi, delta)
