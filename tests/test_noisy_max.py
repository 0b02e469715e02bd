"""Report-noisy-max's exact model (audit.engine.models.noisy_max) and the
``optimised`` attack: the certified probabilities and densities agree with
simulation and with an independent closed form, declarations are verified
by identity, brackets are always ordered, and the optimiser never leaves
the claim's relation."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from algorithms import build
from algorithms.noisy_max_model import NoisyMaxModel
from algorithms.simulate import simulate
from attacks.optimised import optimise
from attacks.testers import pattern_pairs
from audit.engine import audit_algorithm
from audit.engine.models.noisy_max import exact
from audit.engine.models.noisy_max.exact import (edge_log_probability, index_log_probability,
                                                 index_pair_epsilon, value_log_density)
from audit.engine.models.objective import pair_objective


def _laplace_noisy_max_closed_form(gap: float, b: float, others: int) -> float:
    """P(argmax = i) for Laplace(b) noise when i's answer is ``gap`` below
    the ``others`` other answers, all equal: the integral of
    f(u + gap) F(u)^n over u < −gap, −gap ≤ u < 0 and u ≥ 0, each in closed
    form (n = others; derived by hand, independent of the model's code)."""
    n, s = others, gap
    below = math.exp(-n * s / b) / (2 ** (n + 1) * (n + 1))
    middle = math.exp(-s / b) * (1 - math.exp(-(n - 1) * s / b)) / (2 ** (n + 1) * (n - 1))
    above = math.exp(-s / b) * (1 - 2.0 ** -(n + 1)) / (n + 1)
    return below + middle + above


@pytest.mark.parametrize("which", [1, 2])
def test_index_probabilities_agree_with_simulation(which):
    """Every index's certified probability (the bracket's middle; brackets
    are ~3e-5 relative, far below the standard errors) against 200 000 runs
    of the registered mechanism on a fixed input: |z| < 5 for each of the 5
    outputs.  A false failure has probability < 5 × 5.8e-7 ≈ 3e-6 per law
    (normal approximation of the binomial counts, each above 10 000)."""
    alg = build(f"report-noisy-max{which}")
    m = alg.extra["noisy_max"]
    q = np.array([[3.0, -2.0, 0.5, 2.5, -7.0]])
    lo, hi = index_log_probability(m, q[0])
    assert np.all(lo <= hi) and np.exp(lo).sum() <= 1 <= np.exp(hi).sum()
    n = 200_000
    tr = simulate(alg, q, n, np.random.default_rng(21))
    counts = np.bincount(tr.actions[:, 0], minlength=5)
    p = np.exp((lo + hi) / 2)
    z = (counts / n - p) / np.sqrt(p * (1 - p) / n)
    assert np.abs(z).max() < 5, z


def test_index_brackets_hold_an_independent_closed_form():
    """Laplace noise, one answer a gap below four equal others: the
    certified bracket of P(argmax = 1) holds the hand-derived closed form
    (which sums to 1/K at gap 0), at several gaps."""
    m = NoisyMaxModel("laplace", 20.0, "index")
    assert _laplace_noisy_max_closed_form(0.0, 20.0, 4) == pytest.approx(0.2, abs=1e-15)
    for gap in (0.0, 1.5, 7.0, 18.0, 20.0, 60.0):
        lo, hi = index_log_probability(m, np.array([-gap, 0.0, 0.0, 0.0, 0.0]))
        ref = math.log(_laplace_noisy_max_closed_form(gap, 20.0, 4))
        assert lo[0] <= ref <= hi[0], (gap, lo[0], ref, hi[0])


@pytest.mark.parametrize("which", [3, 4])
def test_value_density_agrees_with_simulation(which):
    """The maximum's density, integrated on a fine grid between thresholds,
    against the closed-form CDF Π_j F(y − q_j) (to 1e-6) and against the
    frequencies of 200 000 runs (|z| < 5 for each of 6 intervals; a false
    failure has probability < 6 × 5.8e-7 ≈ 4e-6)."""
    alg = build(f"report-noisy-max{which}")
    m = alg.extra["noisy_max"]
    q = np.array([3.0, -2.0, 0.5, 2.5, -7.0])
    n = 200_000
    tr = simulate(alg, q[None, :], n, np.random.default_rng(22), point_rounds=range(1))
    y = tr.points[0][:, 0]
    edges = np.quantile(y, [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
    for lo_y, hi_y in zip(edges[:-1], edges[1:]):
        grid = np.linspace(lo_y, hi_y, 4001)
        lo, hi = value_log_density(m, q, grid)
        assert np.all(lo <= hi)
        p = float(np.trapezoid(np.exp((lo + hi) / 2), grid))
        cdf = [math.exp(edge_log_probability(m, q, v)[0]) for v in (lo_y, hi_y)]
        assert p == pytest.approx(cdf[1] - cdf[0], rel=1e-6, abs=1e-9)
        freq = float(np.mean((y > lo_y) & (y <= hi_y)))
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / n), (lo_y, hi_y, freq, p)


def test_exponential_support_edge_gives_an_infinite_certificate_on_a_set_the_code_produces():
    """With exponential noise the maximum is at least max q: when the maxima
    differ, [M, M′) has positive probability on one side (the code produces
    it: 200 000 runs agree with Π_j F(M′ − q_j) within 5 standard errors,
    false failure < 6e-7) and density 0 on the other, so ε = ∞."""
    alg = build("report-noisy-max4")
    m = alg.extra["noisy_max"]
    a = np.zeros(5)
    lo, hi = edge_log_probability(m, a, 20.0)
    p = math.exp((lo + hi) / 2)
    assert lo <= hi and 0 < p < 1
    n = 200_000
    tr = simulate(alg, a[None, :], n, np.random.default_rng(23), point_rounds=range(1))
    freq = float(np.mean(tr.points[0][:, 0] < 20.0))
    assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / n)
    best, d, where = exact.value_pair_epsilon(m, a[None, :], np.full((1, 5), 1.0))
    assert best == math.inf and d == "l>l'" and "[0, 1)" in where[0]
    # Below every maximum the density is exactly 0 (−∞ in log), never NaN.
    lo_d, hi_d = value_log_density(m, a, np.array([-1.0, -1e-9]))
    assert np.all(np.isneginf(lo_d)) and np.all(np.isneginf(hi_d))


def test_value_laplace_lower_tail_attains_k_epsilon_over_two():
    """Variant 3 (Laplace, value): below every answer the density ratio of
    'all answers moved by Δ' is exactly e^{KΔ/b} = e^{Kε/2}: the grid
    certifies the true ε to the bracket."""
    alg = build("report-noisy-max3")
    m = alg.extra["noisy_max"]
    best, _, _ = exact.value_pair_epsilon(m, np.ones((1, 5)), np.full((1, 5), 2.0))
    assert best == pytest.approx(alg.extra["true_epsilon"], abs=1e-7)
    assert best <= alg.extra["true_epsilon"] * (1 + 1e-8)


def test_optimised_input_reaches_the_closed_form_of_report_noisy_max1():
    """Over the domain [−10, 10] with Δ = 1, the worst pair of Laplace
    report-noisy-max moves the long shot up and every other answer down by
    Δ, as far apart as the domain allows (gap 20 on ℓ′, 18 on ℓ): its ε is
    ln P(18)/P(20) by the closed form, just below ε = 0.1 (the limit of an
    infinite gap).  The optimised pair's certified exact ε reaches it within
    1 %, and the pair's exact bracket holds it."""
    alg = build("report-noisy-max1")
    m = alg.extra["noisy_max"]
    b = m.scale
    closed = math.log(_laplace_noisy_max_closed_form(18.0, b, 4)
                      / _laplace_noisy_max_closed_form(20.0, b, 4))
    # Moving the long shot less far apart gives less (the family's sup is at the edge).
    assert closed > math.log(_laplace_noisy_max_closed_form(8.0, b, 4)
                             / _laplace_noisy_max_closed_form(10.0, b, 4))
    res = audit_algorithm(alg, ["optimised"], trials=1000, modes=["integral"], seed=0)
    r = [x for x in res.results if x.kind == "integral"][0]
    assert r.exact and abs(r.epsilon_lower_bound - closed) <= 0.01 * closed
    lo, hi = r.details["pair_epsilon"]
    assert lo <= closed <= hi
    assert any("the optimised pair" in n and "ℓ′ = [" in n for n in r.notes)
    assert "--attack optimised" in res.command


def _adversarial(alg):
    """An objective that rewards leaving the domain and moving by more
    than Δ: it pulls every candidate out of the relation."""
    lo, hi = alg.loss_range

    def f(a, b):
        return float(np.abs(a - b).sum() + np.abs(a).sum() + np.abs(b).sum() - hi * a.size)
    return f


@pytest.mark.parametrize("relation", ["bounded-all", "one-round"])
def test_the_optimiser_never_leaves_the_relation(relation):
    """Every candidate the search projects — under an objective that pulls
    candidates out of the domain and past Δ, and under the real exact
    objective — is in the domain, moves each value by at most Δ, and (unless
    both sides are equal, which is never evaluated) passes
    Claim.not_neighbours; under one-round it changes one row only."""
    for name in ("report-noisy-max1", "svt1"):
        alg = build(name)
        if relation == "one-round":
            alg = dataclasses.replace(alg, claim=dataclasses.replace(alg.claim,
                                                                      relation="one-round"))
        lo, hi = alg.loss_range
        objectives = [_adversarial(alg)]
        if relation == "bounded-all":
            objectives.append(pair_objective(alg))
        for objective in objectives:
            (a, b, value, _, evaluations), trace = optimise(alg, objective, budget=300)
            assert evaluations > 0 and len(trace.pairs) == len(trace.accepted)
            for (x, y), ok in zip(trace.pairs, trace.accepted):
                assert np.all((x >= lo) & (x <= hi) & (y >= lo) & (y <= hi))
                assert np.all(np.abs(x - y) <= 1.0 + 1e-12)
                assert ok == (not np.array_equal(x, y))
                if ok:
                    assert alg.claim.not_neighbours(x, y) is None
                if relation == "one-round":
                    assert np.sum(np.any(x != y, axis=1)) <= 1
            assert alg.claim.not_neighbours(a, b) is None and value > 0
    # The checks above can fail: a pair moved by 2Δ is refused by the relation.
    alg = build("svt1")
    assert alg.claim.not_neighbours(np.zeros((10, 1)), np.full((10, 1), 2.0)) is not None


@pytest.mark.parametrize("name", ["report-noisy-max1", "report-noisy-max2", "report-noisy-max3",
                                  "report-noisy-max4"])
@pytest.mark.parametrize("factor", [0.5, 1.1])
def test_a_declaration_off_by_a_common_factor_is_refused(name, factor):
    """The declared scale f× what the code draws: no recorded draw has it,
    so noisy-max-identity refuses (identity), and the integral mode is
    never used (no exact figure from an unverified number)."""
    alg = build(name)
    m = alg.extra["noisy_max"]
    alg.extra = {**alg.extra, "noisy_max": dataclasses.replace(m, scale=m.scale * factor)}
    with pytest.raises(ValueError, match="refused: declaration check noisy-max-identity"):
        audit_algorithm(alg, ["patterns"], trials=1000, seed=0, modes=["integral"])
    # The correct declaration passes.
    res = audit_algorithm(build(name), ["patterns"], trials=1000, seed=0, modes=["integral"])
    assert all(c.passed and c.rests_on == "identity" for c in res.declaration_checks)


def test_a_declaration_of_the_other_law_or_report_is_refused():
    from attacks.testers import Patterns
    from audit.engine.models.noisy_max.verify import checks
    for which, change in ((1, {"noise": "exponential"}), (2, {"noise": "laplace"}),
                          (1, {"report": "value"}), (3, {"report": "index"})):
        alg = build(f"report-noisy-max{which}")
        alg.extra = {**alg.extra, "noisy_max": dataclasses.replace(alg.extra["noisy_max"],
                                                                   **change)}
        sc = Patterns().scenarios(alg, events=False)[0]
        c = checks(alg, sc, 0, 0)[0]
        assert not c.passed and c.rests_on == "identity", (which, change)


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
@pytest.mark.parametrize("scale", [20.0, 0.02, 2e3])
def test_brackets_are_always_ordered(noise, scale):
    """Random answers (with ties), every scale from far below to far above
    the answers' spread: every index bracket is ordered, brackets a total
    of 1, and every density bracket is ordered (−∞ only below the support)."""
    m = NoisyMaxModel(noise, scale, "index")
    v = NoisyMaxModel(noise, scale, "value")
    rng = np.random.default_rng(7)
    for k in range(6):
        q = rng.uniform(-10, 10, 5)
        if k % 2:
            q[1:3] = q[0]
        lo, hi = index_log_probability(m, q)
        assert not np.any(np.isnan(lo) | np.isnan(hi)) and np.all(lo <= hi)
        assert np.exp(lo).sum() <= 1 <= np.exp(hi).sum()
        y = np.concatenate([q, rng.uniform(-30, 30, 50)])
        lo, hi = value_log_density(v, q, y)
        assert not np.any(np.isnan(lo) | np.isnan(hi)) and np.all(lo <= hi)
        inside = (y > q.max()) | (noise == "laplace")
        below = (y < q.max()) & (noise == "exponential")
        assert np.all(np.isfinite(lo[inside])) and np.all(np.isneginf(hi[below]))


def test_an_unordered_bracket_is_an_internal_error(monkeypatch):
    real = exact.log_integrals

    def inverted(*args, **kw):
        lo, hi = real(*args, **kw)
        return hi + 1.0, lo
    monkeypatch.setattr(exact, "log_integrals", inverted)
    with pytest.raises(AssertionError, match="not ordered"):
        index_log_probability(NoisyMaxModel("laplace", 20.0, "index"), np.zeros(5))


def test_pattern_pairs_exact_epsilon_never_exceeds_the_true_epsilon():
    """Variants 1 and 2 are ε-DP: on every pattern pair the certified lower
    end of the exact ε is at most ε (the claims hold), and the pair's
    reported upper end is at least its lower end."""
    for which in (1, 2):
        alg = build(f"report-noisy-max{which}")
        m = alg.extra["noisy_max"]
        for _, a, b in pattern_pairs(alg):
            lo, hi, _, _ = index_pair_epsilon(m, a, b)
            assert lo <= hi and lo <= alg.claim.epsilon


def test_a_default_optimised_attack_that_does_not_apply_is_left_out():
    """svt1 at T = 100 reads more answers than the optimiser searches: the
    default audit leaves the attack out (its reproduce command does not
    name it), while naming it is refused with the reason."""
    from audit.engine.scenarios import scenarios_for
    scs, names = scenarios_for(build("svt1", horizon=100), None, search=False, events=False)
    assert names == ["patterns"] and all(sc.label.startswith("patterns:") for sc in scs)
    _, names = scenarios_for(build("svt1"), None, search=False, events=False)
    assert names == ["patterns", "optimised"]
    with pytest.raises(ValueError, match="at most 64 answers"):
        scenarios_for(build("svt1", horizon=100), ["optimised"], search=False, events=False)


def test_the_searchs_black_box_pairs_get_no_integral_evidence():
    """The neighbour search audits a copy stripped of every declared model
    (its pairs are black-box only): no integral mode for report-noisy-max
    or the parallel sparse vectors there."""
    from attacks.search import black_box_only
    from attacks.testers import Patterns
    from audit.engine.evidence.whitebox import applicable_modes
    for name in ("report-noisy-max1", "svt34-parallel", "svt1"):
        alg = build(name)
        sc = Patterns().scenarios(alg, events=False)[0]
        assert "integral" in applicable_modes(sc)
        sc.algorithm = black_box_only(alg)
        assert "integral" not in applicable_modes(sc)
