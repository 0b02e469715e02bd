"""Privacy curves: claims stated as μ-GDP or ρ-zCDP (their δ(ε) curves),
the certified profile of a black-box event test (δ_lb(ε) for every ε from
its two Clopper–Pearson bounds, the trade-off point, μ_lb), and DP-FTRL
(Kairouz et al. 2021) with its broken variant."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from algorithms import build
from audit.cli.main import main
from algorithms.claim_curves import (approx_delta, certified_delta, certified_mu, gdp_delta,
                                     profile_of, reference_point, zcdp_delta)
from algorithms.core import Claim
from algorithms.simulate import simulate
from audit.engine.bounds import one_sided_bounds, select_and_test
from audit.engine.privacy_loss import gaussian_delta

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRID = np.linspace(0.0, 4.0, 81)


def _run(*args):
    p = subprocess.run([sys.executable, "-m", "audit.cli", "run", *args, "--no-store"],
                       capture_output=True, text=True, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def laplace_delta(eps, b: float) -> np.ndarray:
    """Exact δ(ε) of the Laplace mechanism, shift 1 and scale b (ε₀ = 1/b):
    1 − e^{(ε − ε₀)/2} for ε ≤ ε₀, 0 beyond."""
    e0 = 1.0 / b
    return np.maximum(0.0, 1.0 - np.exp((np.asarray(eps) - e0) / 2))


# ---------------------------------------------------------------- curves
def test_gdp_curve_is_the_gaussian_mechanisms():
    """Against dp_accounting's privacy-loss distribution of the Gaussian
    mechanism with σ = 1/μ (pessimistic: never below the true curve, within
    its discretisation of it); the audit's gaussian_delta is this curve."""
    from audit.engine.profiles import MechanismBasis, Profile
    for mu in (0.3, 1.0, 2.5):
        pld = Profile(MechanismBasis("gaussian", 1.0, 1.0 / mu))
        for e in (0.0, 0.5, 1.0, 3.0):
            ref = float(pld.delta(e)[0])
            assert ref - 2e-3 <= float(gdp_delta(e, mu)) <= ref + 1e-12
            assert gaussian_delta(e, mu) == float(gdp_delta(e, mu))


def test_zcdp_curve_lies_above_every_rho_zcdp_gaussian_and_near_it():
    """The Gaussian mechanism with μ = √(2ρ) is ρ-zCDP, so the curve a ρ-zCDP
    claim promises must lie above its δ(ε) (never below: a false violation)
    and, being a conversion, within a small factor of it at moderate ε."""
    for rho in (0.05, 0.5, 2.0):
        g = gdp_delta(GRID, math.sqrt(2 * rho))
        z = zcdp_delta(GRID, rho)
        assert np.all(z >= g - 1e-12)
        mid = (g > 1e-3) & (g < 0.3)
        assert np.all(z[mid] <= 6 * g[mid])


def test_approx_curve_passes_through_its_point_and_the_reference_point_lies_on_the_curve():
    assert approx_delta(1.0, 1.0, 1e-3) == pytest.approx(1e-3)
    assert approx_delta(0.0, 1.0, 0.0) == pytest.approx((math.e - 1) / (1 + math.e))
    for kind, v in (("gdp", 1.0), ("zcdp", 0.5), ("gdp", 0.05)):
        eps, delta = reference_point(kind, v)
        c = Claim.of_curve(kind, v, "transcript", "test")
        assert (c.epsilon, c.delta) == (eps, delta)
        assert float(c.delta_at(eps)) <= delta + 1e-9


def test_group_scaling_of_curve_claims():
    c = Claim.of_curve("gdp", 0.5, "actions", "s").scaled_for_group(3)
    assert c.curve == ("gdp", 1.5)
    c = Claim.of_curve("zcdp", 0.5, "actions", "s").scaled_for_group(2)
    assert c.curve == ("zcdp", 2.0)


def test_bad_curve_claims_are_refused_by_name():
    with pytest.raises(ValueError, match="μ must be a finite number > 0"):
        Claim.of_curve("gdp", 0.0, "actions", "s")
    with pytest.raises(ValueError, match="claim curve must be one of gdp, zcdp"):
        Claim.of_curve("rdp", 1.0, "actions", "s")


def test_certified_mu_of_exact_probabilities_is_mu():
    """A threshold event of the Gaussian mechanism is a most powerful test:
    its exact (P, Q) lie on G_μ, so μ_lb of the exact figures is μ."""
    for mu in (0.5, 1.0, 2.0):
        for c in (-0.5, 0.3, 1.7):
            p, q = ndtr(mu - c), ndtr(-c)
            assert certified_mu(p, q) == pytest.approx(mu, rel=1e-9)
    assert certified_mu(0.2, 0.3) == 0.0 and certified_mu(0.5, 0.0) == math.inf


# --------------------------------------------------------- validity, power
def _held_out_profile(draw, n: int, rng, alpha: float):
    """One audit of one pair in miniature: thresholds y > c (both
    directions) chosen on n runs a side, tested on n others."""
    cuts = np.linspace(-3.0, 4.0, 36)
    sel_a, sel_b, hold_a, hold_b = (draw(rng, shift, n) for shift in (1.0, 0.0, 1.0, 0.0))
    count = lambda y: (y[:, None] > cuts[None, :]).sum(axis=0)   # noqa: E731
    t = select_and_test(count(sel_a), count(sel_b), n, count(hold_a), count(hold_b), n,
                        [f"y > {c:.3g}" for c in cuts], alpha)
    return t.numerator.lower, t.denominator.upper


@pytest.mark.parametrize("law", ["laplace", "gaussian"])
def test_certified_profile_lies_below_the_true_curve_at_the_nominal_rate(law):
    """200 seeds: the profile certified from one held-out test exceeds the
    true curve at some ε only if one of its two bounds failed, probability
    ≤ 2α = 0.1 a seed.  Exceedances ≤ 38 of 200: a false failure has
    probability P(Bin(200, 0.1) > 38) < 1e-5."""
    b, mu = 1.0, 1.0
    if law == "laplace":
        draw = lambda rng, s, n: s + rng.laplace(0.0, b, n)          # noqa: E731
        truth = laplace_delta(GRID, b)
    else:
        draw = lambda rng, s, n: s + rng.normal(0.0, 1.0 / mu, n)    # noqa: E731
        truth = gdp_delta(GRID, mu)
    over, best = 0, []
    for seed in range(200):
        p_lo, q_hi = _held_out_profile(draw, 4000, np.random.default_rng(seed), 0.05)
        lower = certified_delta(p_lo, q_hi, GRID)
        over += bool(np.any(lower > truth + 1e-12))
        best.append(float(lower[0]) if law == "laplace" else certified_mu(p_lo, q_hi))
    assert over <= 38, over
    # Not vacuous: the Laplace's chosen event certifies much of its δ(0) =
    # 1 − e^{−1/2} ≈ 0.39; the Gaussian's a good part of μ = 1.
    assert np.median(best) > (0.2 if law == "laplace" else 0.5), np.median(best)


def test_certified_profile_reaches_the_true_curve_at_a_large_budget():
    """10⁶ runs a side, the event most powerful at ε = 0.5 (the likelihood
    ratio's level set): δ_lb(0.5) within 0.01 of the true δ(0.5), for both
    laws (CP at α = 1e-3: the bounds are ~0.003 from the counts)."""
    n, e = 1_000_000, 0.5
    rng = np.random.default_rng(7)
    # Gaussian μ = 1: the level set of L = y − 1/2 at e is y > e + 1/2.
    y1, y0 = 1.0 + rng.standard_normal(n), rng.standard_normal(n)
    c = e + 0.5
    p = one_sided_bounds(int((y1 > c).sum()), n, 1e-3).lower
    q = one_sided_bounds(int((y0 > c).sum()), n, 1e-3).upper
    assert abs(float(certified_delta(p, q, e)) - float(gdp_delta(e, 1.0))) < 0.01
    # Laplace b = 1: the loss |y| − |y − 1| = 2y − 1 on [0, 1] exceeds e
    # on y > (1 + e)/2.
    z1, z0 = 1.0 + rng.laplace(0.0, 1.0, n), rng.laplace(0.0, 1.0, n)
    c = (1 + e) / 2
    p = one_sided_bounds(int((z1 > c).sum()), n, 1e-3).lower
    q = one_sided_bounds(int((z0 > c).sum()), n, 1e-3).upper
    assert abs(float(certified_delta(p, q, e)) - float(laplace_delta(e, 1.0))) < 0.01


def test_profile_of_a_curve_claim_says_where_it_is_exceeded():
    p, q = ndtr(2.0 - 1.0), ndtr(-1.0)        # a μ = 2 Gaussian's threshold event
    prof = profile_of(p, q, "gdp", 1.0)
    assert prof["above_claim"] and prof["mu_lower"] == pytest.approx(2.0)
    assert profile_of(p, q, "gdp", 2.5)["above_claim"] is False
    # μ = 2 is exactly 2-zCDP: its exact event never rises above that curve
    # (the conversion is valid), and does rise above a 0.5-zCDP claim's.
    assert profile_of(p, q, "zcdp", 2.0)["above_claim"] is False
    assert profile_of(p, q, "zcdp", 0.5)["above_claim"] is True


# ------------------------------------------------------------ the audits
def test_gaussian_mechanism_mu_gdp_claims(tmp_path):
    """σ = 1 is exactly 1-GDP: claimed 1-GDP it is consistent; claimed
    0.5-GDP (σ too small for the claim) a violation; the profile is in the
    result document where the test's bounds are Clopper–Pearson ones."""
    rc, out, err = _run("gaussian", "--trials", "20000", "--mode", "black-box", "--quiet")
    assert rc == 0, out + err
    assert "1-GDP" in out
    doc = tmp_path / "r.json"
    rc, out, err = _run("gaussian", "--claim-mu", "0.5", "--trials", "20000", "--mode",
                        "black-box", "--runs", "independent", "--json", str(doc), "--quiet")
    assert rc == 1, out + err
    d = json.loads(doc.read_text())
    assert d["claim"]["curve"]["kind"] == "gdp" and d["claim"]["curve"]["value"] == 0.5
    prof = [a["privacy_profile"] for a in d["attacks"] if a["privacy_profile"]]
    assert prof and max(p["mu_lower"] for p in prof) > 0.5
    assert any(p["above_claim"] for p in prof)


def test_gaussian_under_a_rho_zcdp_claim_too_small_is_a_violation():
    rc, out, err = _run("gaussian", "--claim-rho", "0.2", "--trials", "20000", "--mode",
                        "black-box", "--quiet")
    assert rc == 1, out + err
    assert "0.2-zCDP" in out


def test_a_curve_claim_alone_judges_code_that_states_no_claim():
    """``--claim-rho`` is the whole claim: code that states none (and takes
    no ε) is audited under it, with no ε asked for; code that takes an ε
    with no value of its own is refused (exit 2), never built at a stand-in."""
    code = main(["run", "tests.as_written_algos:GaussianCommit", "--claim-rho", "0.5",
                 "--horizon", "6", "--trials", "500", "--no-store", "--quiet"])
    assert code == 0
    # code that takes an ε is not built at a stand-in: it is asked for
    assert main(["run", "tests.as_written_algos:GaussianCommitAtEpsilon", "--claim-rho", "0.5",
                 "--horizon", "6", "--trials", "500", "--no-store", "--quiet"]) == 2


def test_curve_flags_are_one_claim():
    rc, out, err = _run("gaussian", "--claim-mu", "1", "--claim-epsilon", "1", "--trials", "100")
    assert rc == 2 and "give one claim" in err


def test_dp_ftrl_matches_its_per_run_reference():
    """The vectorised learner and a plain per-run loop from the paper's
    description (tree nodes, prefix sums, projected FTRL step, the expert
    sampled from x_t), on one stream: the same experts and points."""
    from tests.reference_dp_ftrl import ref_dp_ftrl
    alg = build("dp-ftrl", horizon=16, arms=3)
    p = alg.params
    for seed in range(3):
        L = np.random.default_rng(seed).random((16, 3))
        tr = simulate(alg, L, 1, np.random.default_rng(50 + seed), point_rounds=range(16))
        experts, points = ref_dp_ftrl(L, p["sigma"], p["lam"], np.random.default_rng(50 + seed))
        assert tr.actions[0].tolist() == experts
        got = np.array([tr.points[t][0] for t in range(16)])
        np.testing.assert_allclose(got, np.array(points), rtol=1e-12, atol=1e-12)


def test_dp_ftrl_parameters_follow_the_theorem():
    for T, H in ((8, 4), (16, 5), (10, 5)):
        a = build("dp-ftrl", horizon=T, arms=2)
        assert a.params["nodes"] == H
        # ρ = H L²/(2σ²), L = √N
        assert H * 2 / (2 * a.params["sigma"] ** 2) == pytest.approx(a.claim.curve[1])
        b = build("dp-ftrl-one-node", horizon=T, arms=2)
        assert 2 / (2 * b.params["sigma"] ** 2) == pytest.approx(b.claim.curve[1])


def test_dp_ftrl_consistent_and_its_one_node_variant_violated():
    rc, out, err = _run("dp-ftrl", "--attack", "search", "--mode", "black-box", "--trials",
                        "20000", "--quiet")
    assert rc == 0, out + err
    rc, out, err = _run("dp-ftrl-one-node", "--attack", "search", "--mode", "black-box",
                        "--trials", "20000", "--quiet")
    assert rc == 1, out + err


def test_an_epsilon_over_a_curve_claim_is_a_pure_claim():
    """--claim-epsilon over a curve claim does not inherit the δ its tests
    aimed at: the Gaussian under a pure 0.5 claim is refuted (exactly: its
    loss is unbounded)."""
    base = build("gaussian").claim
    c = Claim.override(base, 0.5, None, "test")
    assert (c.epsilon, c.delta, c.curve) == (0.5, 0.0, None)
    rc, out, err = _run("gaussian", "--claim-epsilon", "0.5", "--trials", "4000", "--quiet")
    assert rc == 1, out + err
