import json
import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from audit.engine.bounds import (Bound, EventTest, epsilon_lower_bound,
                            max_detectable_epsilon, one_sided_bounds,
                            select_and_test)


@pytest.mark.parametrize("alpha", [0.0125, 0.05, 0.1])
@pytest.mark.parametrize("n", [1, 7, 50, 1000])
def test_one_sided_matches_statsmodels(n, alpha):
    for k in range(0, n + 1, max(1, n // 13)):
        b = one_sided_bounds(k, n, alpha)
        lo, hi = proportion_confint(k, n, alpha=2 * alpha, method="beta")
        assert isinstance(b, Bound)
        assert b.lower == pytest.approx(lo, rel=1e-12, abs=1e-15)
        assert b.upper == pytest.approx(hi, rel=1e-12, abs=1e-15)
        assert (b.count, b.trials, b.alpha) == (k, n, alpha)
    # vectorised path agrees with the scalar one
    ks = np.arange(n + 1)
    lo_v, hi_v = one_sided_bounds(ks, n, alpha)
    lo_s, hi_s = proportion_confint(ks, n, alpha=2 * alpha, method="beta")
    np.testing.assert_allclose(lo_v, lo_s, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hi_v, hi_s, rtol=1e-12, atol=1e-15)


def test_one_sided_edges_exact():
    n, alpha = 200, 0.05
    b0 = one_sided_bounds(0, n, alpha)
    assert b0.lower == 0.0
    assert b0.upper == pytest.approx(1 - alpha ** (1 / n), rel=1e-10)
    bn = one_sided_bounds(n, n, alpha)
    assert bn.upper == 1.0
    assert bn.lower == pytest.approx(alpha ** (1 / n), rel=1e-12)
    e = one_sided_bounds(0, 0, alpha)
    assert (e.lower, e.upper) == (0.0, 1.0)
    assert "0/0" in repr(e)
    with pytest.raises(ValueError):
        one_sided_bounds(5, 4, alpha)


@pytest.mark.parametrize("p", [0.01, 0.3, 0.5])
def test_one_sided_coverage(p):
    # CP is conservative, so P(lower > p) <= alpha and P(upper < p) <= alpha.
    # Even if the true rate were exactly alpha, the false-failure probability
    # is binom.sf(255, 4000, 0.05) ~= 5.3e-5 (and the seed is fixed anyway).
    alpha, n, reps = 0.05, 200, 4000
    rng = np.random.default_rng(12345)
    k = rng.binomial(n, p, size=reps)
    lo, hi = one_sided_bounds(k, n, alpha)
    slack = alpha + 4 * math.sqrt(alpha * (1 - alpha) / reps)
    assert np.mean(lo > p) <= slack
    assert np.mean(hi < p) <= slack


def test_epsilon_lower_bound_edges():
    assert epsilon_lower_bound(0.5, 0.25) == pytest.approx(math.log(2))
    assert epsilon_lower_bound(0.5, 0.1, delta=0.1) == pytest.approx(math.log(4))
    assert epsilon_lower_bound(0.1, 0.05, delta=0.1) == 0.0  # p_lo <= delta
    assert epsilon_lower_bound(0.05, 0.01, delta=0.2) == 0.0
    assert epsilon_lower_bound(0.2, 0.4) == 0.0  # would be negative
    assert epsilon_lower_bound(0.3, 0.0) == math.inf
    assert epsilon_lower_bound(0.1, 0.0, delta=0.1) == 0.0


def _planted(E=50, n=5000, hot=17, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.integers(100, 200, size=E)
    a, b = base.copy(), base.copy()
    b[hot] = 2000
    return a, b, n


def test_select_picks_planted_event_and_uses_holdout_only():
    a, b, n = _planted()
    labels = [f"ev{i}" for i in range(50)]
    alpha = 0.05 / 8
    res = select_and_test(a, b, n, a, b, n, labels, alpha)
    assert isinstance(res, EventTest)
    assert (res.event, res.direction) == ("ev17", "l'>l")
    assert res.numerator.count == 2000 and res.denominator.count == a[17]
    expected = math.log(one_sided_bounds(2000, n, alpha).lower
                        / one_sided_bounds(int(a[17]), n, alpha).upper)
    assert res.epsilon_lower_bound == pytest.approx(expected)
    assert res.epsilon_lower_bound > 1.5
    json.dumps(res.as_dict())

    # Same selection counts, weaker held-out evidence: same choice, smaller bound.
    b_hold = b.copy()
    b_hold[17] = 400
    res2 = select_and_test(a, b, n, a, b_hold, n, labels, alpha)
    assert (res2.event, res2.direction) == ("ev17", "l'>l")
    assert res2.selection_score == res.selection_score
    assert 0 < res2.epsilon_lower_bound < res.epsilon_lower_bound
    # Held-out shows no effect at all: no certified leakage.
    res3 = select_and_test(a, b, n, a, a, n, labels, alpha)
    assert res3.event == "ev17" and res3.epsilon_lower_bound == 0.0

    # Mirror image: the direction flips.
    res4 = select_and_test(b, a, n, b, a, n, labels, alpha)
    assert (res4.event, res4.direction) == ("ev17", "l>l'")


def test_select_all_zero_scores_fallback():
    # No event is significant on the selection half; the smoothed ratio still
    # picks the most lopsided one rather than an arbitrary index.
    a = np.array([10, 10, 13, 10])
    b = np.array([10, 11, 10, 10])
    res = select_and_test(a, b, 100, a, b, 100, list("wxyz"), 0.01)
    assert res.selection_score == 0.0
    assert (res.event, res.direction) == ("y", "l>l'")
    # ...but a significant score beats a larger yet insignificant raw ratio.
    a, b = np.array([3000, 3]), np.array([2000, 0])
    res = select_and_test(a, b, 5000, a, b, 5000, ["big", "tiny"], 0.01)
    assert res.event == "big" and res.selection_score > 0


def test_select_finds_one_planted_event_among_a_hundred_thousand():
    """100 000 null events (p = q = 0.1 at n = 10 000 per side) and one
    planted event (0.5 vs 0.1) whose log-ratio ln 5 ≈ 1.6 is far above the
    largest null one (sd ≈ 0.045 per event, so the maximum of 10⁵ is about
    0.2): selection picks it, in the l>l′ direction, and the held-out half
    certifies it.  Deterministic given the seed (its null maximum exceeding
    1.6 has probability far below 10⁻¹⁰⁰).  Speed at this size is measured
    by benchmarks, not asserted here."""
    rng = np.random.default_rng(1)
    E, n = 100_000, 10_000
    c = [rng.binomial(n, 0.1, size=E) for _ in range(4)]
    c[0][12345], c[2][12345] = rng.binomial(n, 0.5, size=2)
    res = select_and_test(c[0], c[1], n, c[2], c[3], n, [str(i) for i in range(E)], 0.01)
    assert res.event == "12345" and res.direction == "l>l'"
    assert 1.4 < res.epsilon_lower_bound < math.log(5)


def test_selection_is_not_won_by_a_lucky_small_count():
    """The winner's curse: one common event (p = 0.1 vs 0.1·e^-0.1, a true
    log-ratio 0.1) among 2 000 rare null events (Poisson(3) counts on both
    sides at n = 10⁶).  Ranked at the test's own α = 0.05, a rare event's
    lucky draw (8 runs vs 0) scores above the common event's 0.09 and wins
    on every one of these 20 seeds (checked when this test was written),
    then fails on the held-out half.  Ranked by bounds holding for all 2E
    candidates at once (α/2E), the common event wins: a null event would
    need about 30 runs against 0 (Poisson(3) tail < 10⁻¹⁵), and the common
    event's held-out bound is about 0.09, below 0.05 only with a 6-standard-
    error fall (< 10⁻⁹ over the 20 seeds)."""
    n, E = 10**6, 2001
    for seed in range(20):
        rng = np.random.default_rng(seed)
        c = [rng.poisson(3, size=E) for _ in range(4)]
        c[0][0], c[2][0] = rng.binomial(n, 0.1, size=2)
        c[1][0], c[3][0] = rng.binomial(n, 0.1 * math.exp(-0.1), size=2)
        res = select_and_test(c[0], c[1], n, c[2], c[3], n, [str(i) for i in range(E)], 0.05)
        assert (res.event, res.direction) == ("0", "l>l'"), seed
        assert res.epsilon_lower_bound > 0.05


def test_max_detectable_epsilon():
    n, alpha = 500_000, 0.0125
    m = max_detectable_epsilon(n, alpha)
    assert m == pytest.approx(math.log(n / math.log(80)), abs=0.01)
    exact = math.log(alpha ** (1 / n) / (1 - alpha ** (1 / n)))
    assert m == pytest.approx(exact, rel=1e-9)
    vals = [max_detectable_epsilon(k, alpha) for k in (10, 100, 1000, 10**4, 10**5, 10**6)]
    assert all(x < y for x, y in zip(vals, vals[1:]))
    assert max_detectable_epsilon(1000, alpha, delta=0.01) < max_detectable_epsilon(1000, alpha)
    # Nothing the estimator returns can exceed the ceiling.
    res = select_and_test(np.array([1000]), np.array([0]), 1000,
                          np.array([1000]), np.array([0]), 1000, ["all"], alpha)
    assert res.epsilon_lower_bound == pytest.approx(max_detectable_epsilon(1000, alpha))


def test_validity_under_null():
    """True eps = 0 (identical event probabilities on both sides).

    eps_lb > 0 needs p_lo > q_hi, hence p_lo > p or q_hi < p; each has
    probability <= alpha = 0.0125 on the independent held-out half, so the
    per-trial false-positive rate is <= 0.025. We assert <= 0.06 of 300
    trials (<= 18 hits); the false-failure probability is at most
    scipy.stats.binom.sf(18, 300, 0.025) ~= 2.4e-4.
    """
    alpha = 0.05 / 4
    n, E, trials = 2000, 20, 300
    hits = 0
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.001, 0.5, size=E)
        a_s, b_s, a_h, b_h = (rng.binomial(n, p) for _ in range(4))
        res = select_and_test(a_s, b_s, n, a_h, b_h, n,
                              [str(i) for i in range(E)], alpha)
        hits += res.epsilon_lower_bound > 0
    assert hits / trials <= 0.06
