"""Statistics of coupled runs: a lower confidence bound on ε from blocks of
runs in which both sides of a pair drew the same random numbers.

Why couple.  Two independent samples estimate P = P[A(ℓ) ∈ S] and
Q = P[A(ℓ′) ∈ S] each with its own binomial noise, and the bound on
ln(P/Q) pays for both.  Run both inputs on the *same* seed and most runs
land on the same side of S on both inputs (a shifted input moves a noisy
output a little, not anew): the difference of the two sides' counts
varies far less than either.  Any coupling leaves each side's law as it
is, so the test below is valid whatever the code does with its seed; the
coupling only decides its power.

What it assumes: what every black-box count assumes — the runs of one
side are independent, each with the mechanism's law — and that blocks
with different seeds are independent.  Nothing about how a block's two
sides relate.

The test of "e^ε ≤ c".  Block j has m runs a side; a_j, b_j count the
event S among its numerator-side and denominator-side runs.  Under
(ε, δ)-DP with e^ε ≤ c, P − δ ≤ cQ.  For a truncation B and a bet λ fixed
in advance, each block contributes the factor

    f_j(c) = (1 + λ·(a_j/m − δ − c·min(b_j, B)/m)) / (1 + λ·c·τ/m),

τ = E[(b − B)⁺] for b ~ Binomial(m, q_max).  If Q ≤ q_max, then
E[min(b_j, B)] ≥ mQ − τ (b_j is Binomial(m, Q), and (b − B)⁺ grows with
Q), so E[f_j(c)] ≤ 1 whatever the coupling; f_j ≥ 0 as long as
λ·(δ + cB/m) ≤ 1; and blocks are independent, so E[Π_j f_j(c)] ≤ 1 and
by Markov's inequality Π_j f_j(c) ≥ 1/α with probability ≤ α.  If
instead Q > q_max, the Clopper–Pearson upper bound on Q from the same
blocks' Σ b_j is ≤ q_max with probability ≤ α.  So "reject c when the
Clopper–Pearson bound is ≤ q_max and Π_j f_j(c) ≥ 1/α" errs with
probability ≤ α in either case: one α share.  Every factor falls as c
grows, so the largest rejected c ≤ c_max — found by bisection — gives
ε ≥ ln c with confidence 1 − α (had the true ratio been smaller, c*
itself would have been rejected).

Why truncate: without it, f_j ≥ 0 needs λ ≤ 1/(c + δ) (a block could in
principle count S on every denominator run), and a bet that small cannot
use the coupling's small variance unless blocks are tiny (each block is
one call of the mechanism: overhead).  Truncated at B ≈ the most a block
plausibly counts, λ may be m/(cB) — for a rare event, hundreds of times
larger.

The event, its direction, m, λ, B, q_max and c_max must be fixed before
the blocks are looked at (the evidence fixes them on pilot blocks of
other streams): only power depends on them.

This is testing by betting (Ville's inequality for a product of bets, as
in Waudby-Smith & Ramdas' confidence sets for bounded means), with one
bet fixed in advance so that the bound is monotone in c.

Stopping early.  The running product Π_{j≤k} f_j(c) over the blocks in
their fixed order is a nonnegative supermartingale when e^ε ≤ c and
Q ≤ q_max, so by Ville's inequality it ever reaches 1/α with probability
≤ α: the capital may be read after any block, and the test stopped as
soon as it rejects.  The guard on Q is a Clopper–Pearson bound, valid at
one fixed count only; read at L looks fixed in advance (prefixes of the
blocks, the last of them all blocks), it is taken at α/L each, so that it
certifies a wrong q_max at some look with probability ≤ α.  The bound at
whichever look the test stops is then a lower confidence bound at level
1 − α, still one α share (``coupled_lower_bound``'s ``looks``).  Where the
plan chose two Clopper–Pearson bounds instead, each look spends its own
part of α (``look_level``).

May import: numpy, scipy and ``audit.engine.bounds`` (the Clopper–Pearson
bounds of the independent-runs alternative).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from audit.engine.bounds import _cp_arrays, _eps_lb_array, epsilon_lower_bound, one_sided_bounds

BISECTIONS = 60             # c to ~1e-18 relative: far below any count's resolution
HEADROOM = 1.25             # c_max = the pilot's ratio × this: room above the estimate
LAMBDA_SHARE = 0.999        # λ at most this share of its cap: factors stay positive
Q_MAX_LEVEL = 1e-6          # q_max = the pilot's Clopper–Pearson upper bound at this level …
Q_MAX_HEADROOM = 1.1        # … times this
TAIL = 1e-6                 # B: the Binomial(m, q_max) quantile with this much mass above
                            # (τ, the price of truncating, is then ~1e-6 of a run a block)


@dataclass(frozen=True)
class Design:
    """Everything the test fixes before its blocks: ``m`` runs a block a
    side, the bet ``lam``, the truncation ``trunc`` (B) with its correction
    ``tau`` for ``q_max``, and the ceiling ``c_max``."""

    m: int
    lam: float
    trunc: int
    tau: float
    q_max: float
    c_max: float

    def cap(self, delta: float = 0.0) -> float:
        """The largest bet whose factors stay positive up to c_max."""
        return 1.0 / (delta + self.c_max * self.trunc / self.m)


def _truncated_at(m: int, q_max):
    """B for each q_max: the Binomial(m, q_max) count exceeded with
    probability ≤ ``TAIL``, within [1, m] (m where q_max is 1)."""
    q = np.asarray(q_max, float)
    with np.errstate(invalid="ignore"):
        b = np.clip(stats.binom.isf(TAIL, m, np.minimum(q, 1 - 1e-12)), 1, m)
    return np.where(q >= 1.0, m, b)


def truncation(m: int, q_max: float) -> tuple[int, float]:
    """(B, τ): B the Binomial(m, q_max) count exceeded with probability ≤
    ``TAIL`` (at least 1), τ = E[(b − B)⁺] — summed as Σ_{j ≥ B} P(b > j),
    rounded up."""
    if q_max >= 1.0:
        return m, 0.0
    trunc = int(_truncated_at(m, q_max))
    j = np.arange(trunc, m)
    tau = float(stats.binom.sf(j, m, q_max).sum()) if j.size else 0.0
    # Rounded up by more than the sum's floating-point error (the bound
    # needs τ ≥ the true excess, never below it).
    return trunc, tau * (1 + 1e-9) + 1e-300 if tau > 0 else 0.0


def capital_of(a, b, d: Design, delta: float = 0.0):
    """c ↦ ln Π_j f_j(c) over the blocks (module docstring), −inf where a
    factor is not positive (a bet above its cap); the terms that do not
    depend on c computed once (a bisection evaluates it many times)."""
    w0 = np.asarray(a, float) / d.m - delta
    bt = np.minimum(np.asarray(b, float), d.trunc) / d.m
    n = len(w0)

    def log_capital_at(c: float) -> float:
        f = 1.0 + d.lam * (w0 - c * bt)
        if np.any(f <= 0):
            return -math.inf
        return float(np.log(f).sum() - n * math.log1p(d.lam * c * d.tau / d.m))
    return log_capital_at


def log_capital(a, b, d: Design, c: float, delta: float = 0.0) -> float:
    """ln Π_j f_j(c) over the blocks (``capital_of``)."""
    return capital_of(a, b, d, delta)(c)


def denominator_certified(b, d: Design, alpha: float) -> bool:
    """Whether the Clopper–Pearson upper bound on Q from the blocks' Σ b is
    at most q_max (the case the factors assume)."""
    b = np.asarray(b)
    _, hi = _cp_arrays(int(b.sum()), int(b.size) * d.m, alpha)
    return bool(hi <= d.q_max)


def coupled_lower_bound(a, b, d: Design, alpha: float, delta: float = 0.0,
                        looks: int = 1) -> float:
    """ε_lb from the blocks' counts ``a`` (numerator side) and ``b``
    (denominator side) under the design ``d`` at level ``alpha`` (module
    docstring); 0 where no c ≥ 1 is rejected.  ``looks``: the most times
    the test may be read, at prefixes fixed in advance, before it stops
    (the guard on Q then holds at α/looks each, the capital as it is)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    if not (d.c_max >= 1.0 and 0.0 <= d.lam * (delta + d.c_max * d.trunc / d.m) < 1.0):
        raise ValueError("need c_max >= 1 and 0 <= lam < 1/(delta + c_max·B/m)")
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("a and b must be non-empty 1-d arrays of the same length")
    if np.any(a < 0) or np.any(a > d.m) or np.any(b < 0) or np.any(b > d.m):
        raise ValueError("block counts must lie in [0, m]")
    if looks < 1:
        raise ValueError("looks must be >= 1")
    if d.lam == 0.0 or not denominator_certified(b, d, alpha / looks):
        return 0.0
    c = _largest_rejected(a, b, d, math.log(1.0 / alpha), delta)
    return math.log(c) if c else 0.0


def _largest_rejected(a, b, d: Design, need: float, delta: float, scale: float = 1.0,
                      steps: int = BISECTIONS) -> float:
    """The largest c in [1, c_max] with ``scale`` · ln Π_j f_j(c) ≥ ``need``
    (0 where c = 1 falls short): the capital falls as c grows, so the
    rejected c form an interval and a bisection finds its end."""
    capital = capital_of(a, b, d, delta)

    def rejected(c):
        return capital(c) * scale >= need
    if not rejected(1.0):
        return 0.0
    if rejected(d.c_max):
        return d.c_max
    lo, hi = 1.0, d.c_max
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rejected(mid) else (lo, mid)
    return lo


@dataclass(frozen=True)
class Plan:
    """What the pilot fixed for the held-out blocks: the candidate (its
    column in the pilot's count matrix), its direction (True: the second
    side is the numerator), the test — ``coupled`` (the design's bet) or
    not (two Clopper–Pearson bounds at α/2 on the blocks' totals, where the
    pilot predicts more from them: an event seen on one side only, or one
    the coupling does not keep together) — and the ε the pilot predicts
    (for reading only)."""

    column: int
    swapped: bool
    design: Design
    predicted: float
    coupled: bool = True


def independent_lower_bound(a, b, m: int, alpha: float, delta: float = 0.0) -> float:
    """ε_lb from the blocks' totals alone, as from independent runs: a
    Clopper–Pearson lower bound on P and upper bound on Q at α/2 each (the
    same one α share).  Valid for any coupling: each side's runs are
    independent of one another, whichever seeds they share with the other
    side's."""
    n = int(np.size(a)) * m
    lo = one_sided_bounds(int(np.sum(a)), n, alpha / 2).lower
    hi = one_sided_bounds(int(np.sum(b)), n, alpha / 2).upper
    return epsilon_lower_bound(lo, hi, delta)


def plan_lower_bound(a, b, p: Plan, alpha: float, delta: float = 0.0, looks: int = 1,
                     last: bool = True) -> float:
    """ε_lb of the held-out blocks' counts under the test the plan chose:
    the coupled bet, or the two Clopper–Pearson bounds on the totals.  A
    test read at up to ``looks`` prefixes fixed in advance (stopped at the
    first that certifies a violation, else at the ``last``, every block):
    the bet as ``coupled_lower_bound``'s looks; the Clopper–Pearson test at
    ``look_level`` of α at the look it is read (Bonferroni over the looks)."""
    if p.coupled:
        return coupled_lower_bound(a, b, p.design, alpha, delta, looks)
    return independent_lower_bound(a, b, p.design.m, alpha * look_level(looks, last), delta)


def look_level(looks: int, last: bool) -> float:
    """The share of α a Clopper–Pearson test read at ``looks`` prefixes
    spends at one of them: all of it where it is read once; else half at
    the last look (every block: where a consistent verdict is read, so it
    keeps most of its power) and the other half split over the earlier
    ones (where only a clear violation stops it).  The shares sum to 1."""
    if looks < 1:
        raise ValueError("looks must be >= 1")
    if looks == 1:
        return 1.0
    return 0.5 if last else 0.5 / (looks - 1)


def caution(alpha: float, candidates: int) -> float:
    """Standard errors a candidate's pilot estimate is taken low when
    ranking: the normal quantile at α/(2 × candidates), as if every
    candidate's estimate had to hold at once.  The best point estimate of
    many is often the luckiest (a rare event's ratio overestimated), not
    the strongest; ranked this way, an event wins by what the pilot can
    vouch for (the independent test's selection ranks the same way)."""
    return float(stats.norm.isf(alpha / (2 * max(1, candidates))))


def _predicted_independent(sx, sy, n_sel, n_test, alpha, delta, z_sel):
    """``independent_lower_bound`` at n_test runs a side, computed on the
    rates the pilot can vouch for: each side's Clopper–Pearson bound on the
    pilot's counts at the tail ``z_sel`` standard normal deviates out (the
    numerator's lower, the denominator's upper).  An event never seen on the denominator side gets the
    upper bound a zero count allows, not a standard error it does not
    have: the leak of a value one input never reaches stays visible."""
    # z_sel/√2 a side: with equal errors the two shifts add up to z_sel
    # standard errors of ln(p/q), as the bet's prediction takes its mean.
    tail = float(stats.norm.sf(z_sel / math.sqrt(2)))
    p, _ = _cp_arrays(sx, n_sel, tail)
    _, q = _cp_arrays(sy, n_sel, tail)
    lo, _ = _cp_arrays(np.floor(p * n_test), n_test, alpha / 2)
    _, hi = _cp_arrays(np.ceil(q * n_test), n_test, alpha / 2)
    return _eps_lb_array(lo, hi, delta)


def _q_max(count: np.ndarray, n: int) -> np.ndarray:
    _, hi = _cp_arrays(count, n, Q_MAX_LEVEL)
    return np.minimum(1.0, hi * Q_MAX_HEADROOM)


def _predicted(sx, sy, sxx, syy, sxy, k_sel, m, k_test, alpha, delta, c_max, cap, z_sel):
    """Predicted ε for every candidate from its pilot moments (sums over
    k_sel blocks of x, y, x², y², xy): the second-order growth of the best
    bet below ``cap``, with the mean taken ``z_sel`` standard errors low,
    bisected in c for all candidates at once."""
    need = math.log(1.0 / alpha) / k_test
    ex, ey = sx / k_sel, sy / k_sel
    exx, eyy, exy = sxx / k_sel, syy / k_sel, sxy / k_sel

    def growth(c):
        mu = (ex - c * ey) / m - delta
        second = (exx - 2 * c * exy + c * c * eyy) / m ** 2 \
            - 2 * delta * (ex - c * ey) / m + delta ** 2      # E[W²]
        mu = mu - z_sel * np.sqrt(np.maximum(second - mu * mu, 0.0) / k_sel)   # caution()
        lam = np.clip(np.where(second > 0, mu / np.maximum(second, 1e-300), 0.0), 0.0, cap)
        return lam * mu - lam * lam * second / 2

    lo, hi = np.ones_like(c_max), c_max.copy()
    ok = growth(lo) >= need
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        g = growth(mid) >= need
        lo, hi = np.where(g, mid, lo), np.where(g, hi, mid)
    c = np.where(growth(c_max) >= need, c_max, lo)
    return np.where(ok, np.log(c), 0.0)


def plan(a, b, m: int, k_test: int, alpha: float, delta: float = 0.0) -> Plan:
    """Choose, on pilot blocks, the candidate, direction and design whose
    test on ``k_test`` held-out blocks of ``m`` runs is predicted strongest.

    ``a``, ``b``: pilot counts, shape (blocks, candidates), of each
    candidate event on the two sides of the pair (same seed per block).
    Every candidate is ranked by its moments (cheap); the winner's bet is
    then tuned on its own pilot blocks (the log growth itself, over a
    grid).  Only power depends on this; validity holds for any plan fixed
    before the held-out blocks."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 2:
        raise ValueError("pilot counts must be (blocks >= 2, candidates) on both sides")
    k_sel = a.shape[0]
    z_sel = caution(alpha, 2 * a.shape[1])
    best = None
    for swapped, (x, y) in enumerate(((a, b), (b, a))):
        sx, sy = x.sum(0), y.sum(0)
        c_max = np.maximum((sx + 0.5) / (sy + 0.5) * HEADROOM, 1.0 + 1e-9)
        q_max = _q_max(sy, k_sel * m)
        cap = LAMBDA_SHARE / (delta + c_max * _truncated_at(m, q_max) / m)   # Design.cap
        eps = _predicted(sx, sy, (x * x).sum(0), (y * y).sum(0), (x * y).sum(0), k_sel, m,
                         k_test, alpha, delta, c_max, cap, z_sel)
        indep = _predicted_independent(sx, sy, k_sel * m, k_test * m, alpha, delta, z_sel)
        # Where nothing is predicted, the event whose pilot ratio leans
        # furthest (what a reader of a 0 wants to see), not an event every
        # run shows on both sides.
        lean = np.log((sx + 0.5) / (sy + 0.5))
        for coupled, score in ((True, eps), (False, indep)):
            # Ties go to the likelier event (it reads more easily and its
            # prediction rests on more counts), then to the coupled test.
            j = int(np.lexsort((sx + sy, np.where(score > 0, 0.0, lean), score))[-1])
            if best is None or score[j] > best[0]:
                best = (float(score[j]), j, bool(swapped), float(c_max[j]), float(q_max[j]),
                        coupled)
    eps, j, swapped, c_max, q_max, coupled = best
    x, y = (b[:, j], a[:, j]) if swapped else (a[:, j], b[:, j])
    trunc, tau = truncation(m, q_max)
    base = Design(m, 0.0, trunc, tau, q_max, c_max)
    design = _tune(x, y, base, k_test, alpha, delta) if coupled else base
    return Plan(j, swapped, design, eps, coupled)


def _tune(x, y, base: Design, k_test: int, alpha: float, delta: float) -> Design:
    """The design with the bet maximising the pilot's own predicted bound
    (its blocks' mean log growth scaled to ``k_test`` blocks), over a
    geometric grid up to the cap."""
    cap = LAMBDA_SHARE * base.cap(delta)
    scale = k_test / len(x)
    need = math.log(1.0 / alpha)
    best, best_c = Design(**{**base.__dict__, "lam": cap}), 0.0
    for lam in np.geomspace(cap / 1e4, cap, 60):
        d = Design(**{**base.__dict__, "lam": float(lam)})
        c = _largest_rejected(x, y, d, need, delta, scale, steps=40)
        if c > best_c:
            best, best_c = d, c
    return best


def max_coupled_epsilon(d: Design) -> float:
    """The most a coupled test with this design can show."""
    return math.log(d.c_max)
