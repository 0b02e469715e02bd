"""The forward recursion of a scalar state model (``audit.engine.models.scalar_state.recursion``):
its certified brackets contain an independent exact reference (nested
numerical integration) and simulated frequencies of the code it models,
they narrow as the grid is refined, the declaration checks refuse wrong
models, and on tbe-adaptive-n2 it certifies a run event whose log-ratio
exceeds the claimed ε = 1 on the chosen experts alone."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, stats

from algorithms import build
from algorithms.state_model import LaplaceDifference, ScalarStateModel
from algorithms.simulate import simulate
from attacks import ATTACKS
from attacks.events import ActionRun
from audit.engine import audit_algorithm
from audit.engine.models import check_declarations
from audit.engine.evidence import applicable_modes
from audit.engine.models.scalar_state.recursion import (Grid, certify_runs, estimate_runs, marginal_bounds,
                                    run_bounds, state_model_of)


def _n2():
    alg = build("tbe-adaptive-n2")
    return alg, ATTACKS["tbe-expert-run"].scenarios(alg)[0], state_model_of(alg)


def _reference_runs(model: ScalarStateModel, losses, arm: int, depth: int) -> list[float]:
    """P(J_t = arm for t = 2 … 1 + k), k = 1 … depth, by nested adaptive
    quadrature over the law of each u_t (density of step·D plus the clip
    atoms), written from the model's definition, not from the grid code."""
    b, step, lo, hi = model.noise.scale, model.step, model.lo, model.hi

    def p(u):
        return float(model.action_probs(np.array([u]))[0, arm])

    def density(x):          # D = Laplace(b) − Laplace(b)
        a = abs(x) / b
        return (1 + a) * math.exp(-a) / (4 * b)

    def expect(f, u, s):
        """E f(clip(u + s + step·D))."""
        c = u + s
        body, _ = integrate.quad(lambda y: f(y) * density((y - c) / step) / step, lo, hi,
                                 points=[min(max(c, lo), hi)], limit=400, epsabs=1e-13,
                                 epsrel=1e-11)
        p_lo = float(model.noise.cdf((lo - c) / step))
        p_hi = float(model.noise.sf((hi - c) / step))
        return body + f(lo) * p_lo + f(hi) * p_hi

    shifts = [float(model.shift(np.asarray(r, dtype=float))) for r in losses]

    def value(k):
        # V_k(u) = p(u); V_j(u) = p(u)·E V_{j+1}(u') over rounds 2 … 1 + k.
        def v(j, u):
            if j == k:
                return p(u)
            return p(u) * expect(lambda y: v(j + 1, y), u, shifts[j])
        return expect(lambda y: v(1, y), model.start, shifts[0])

    return [value(k) for k in range(1, depth + 1)]


@pytest.mark.parametrize("side", [0, 1])
def test_brackets_contain_the_quadrature_reference(side):
    """Deterministic: the reference is accurate to ~1e-10, the brackets are
    certified (no false failure)."""
    alg, sc, model = _n2()
    losses = (sc.losses_a, sc.losses_b)[side]
    ref = _reference_runs(model, losses[:3], arm=1, depth=2)
    grid = Grid(model.lo, model.hi, 2001)
    rb = run_bounds(model, losses, 3, 1, 1, grid)
    for k in range(2):
        lo, hi = math.exp(rb.log_lo[k]), math.exp(rb.log_hi[k])
        assert lo <= ref[k] <= hi, (k, lo, ref[k], hi)
        assert hi - lo < 0.01 * ref[k]
    est = estimate_runs(model, losses, 3, 1, 1, grid)
    np.testing.assert_allclose(np.exp(est), ref, rtol=1e-3)


def test_brackets_narrow_as_the_grid_is_refined():
    alg, sc, model = _n2()
    widths = []
    for n in (501, 2001, 8001):
        rb = run_bounds(model, sc.losses_a, 12, 1, 1, Grid(model.lo, model.hi, n))
        assert np.all(rb.log_lo <= rb.log_hi)
        widths.append(float(rb.log_hi[-1] - rb.log_lo[-1]))
    assert widths[0] > widths[1] > widths[2] > 0
    assert widths[2] < widths[0] / 8


def test_brackets_contain_simulated_frequencies_of_the_code():
    """200 000 runs a side of the vectorised learner; every run event and
    every marginal of a 16-round prefix must pass an exact binomial test
    against its bracket at level 1e-6 (Bonferroni over all 2·(15 + 32)
    tests): false failure probability ≤ 1e-6."""
    alg, sc, model = _n2()
    grid = Grid(model.lo, model.hi, 2001)
    runs, rounds = 200_000, 16
    pvals = []
    for side, losses in enumerate((sc.losses_a, sc.losses_b)):
        acts = simulate(alg, losses, runs, np.random.default_rng(40 + side),
                        rounds=rounds).actions
        rb = run_bounds(model, losses, rounds, 1, 1, grid)
        streak = np.cumprod(acts[:, 1:] == 1, axis=1).sum(axis=1)
        lo_m, hi_m = marginal_bounds(model, losses, rounds, grid)
        cases = [(int((streak >= j + 1).sum()), math.exp(rb.log_lo[j]), math.exp(rb.log_hi[j]))
                 for j in range(rounds - 1)]
        cases += [(int((acts[:, t] == i).sum()), lo_m[t, i], hi_m[t, i])
                  for t in range(rounds) for i in range(2)]
        for c, lo, hi in cases:
            assert lo <= hi
            p_hi = stats.binom.sf(c - 1, runs, hi) if hi < 1 else 1.0
            p_lo = stats.binom.cdf(c, runs, lo) if lo > 0 else 1.0
            pvals.append(min(1.0, 2 * min(p_hi, p_lo)))
    assert min(pvals) * len(pvals) >= 1e-6


def test_certified_run_event_on_tbe_adaptive_n2_exceeds_the_claim():
    """Exact (deterministic): the run "expert 2 at every round 2..k" under
    ℓ₁ = (1, 0) vs (0, 1) has a certified log-ratio above ε = 1 for the
    chosen experts, Theorem B.2's claim at N = 2, η = 1."""
    alg, sc, model = _n2()
    res = certify_runs(model, sc.losses_a, sc.losses_b, sc.rounds, [1],
                       grid=Grid(model.lo, model.hi, 4001))
    best = res.best
    assert best.epsilon_lower_bound > alg.claim.epsilon
    assert best.end + 1 >= 8 and best.start == 1
    lo, hi = best.log_ratio_interval
    assert lo == pytest.approx(best.epsilon_lower_bound) and hi - lo < 0.05
    # the symmetric direction: expert 1 runs under ℓ′ = (0, 1) give the same bracket
    mirror = [c for c in res.certificates
              if (c.arm, c.end, c.direction) == (1 - best.arm, best.end,
                                                 "l'>l" if best.direction == "l>l'" else "l>l'")]
    assert mirror and mirror[0].epsilon_lower_bound == pytest.approx(best.epsilon_lower_bound,
                                                                     abs=1e-6)


def test_audit_of_tbe_adaptive_n2_is_an_exact_violation_on_the_actions():
    """The recursion mode alone: declarations pass (false refusal ≤ 3e-6),
    and its certificate refutes ε = 1 with no statistical error."""
    alg = build("tbe-adaptive-n2")
    r = audit_algorithm(alg, attacks=["tbe-expert-run"], trials=1000, modes=["recursion"])
    assert not r.refused
    (w,) = r.results
    assert w.kind == "recursion" and w.exact and w.violation and w.shares == 0
    assert w.epsilon_lower_bound > 1.0
    assert r.verdict == "violation"


def test_recursion_applies_where_a_state_model_is_declared():
    alg, sc, model = _n2()
    # actions claim on a transcript learner: the transcript pld (reported as
    # the proof's intermediate object) and the recursion on the actions
    assert applicable_modes(sc) == ["pld", "recursion"]
    reg = build("tbe-adaptive")
    assert applicable_modes(ATTACKS["tbe-first-round"].scenarios(reg)[0]) == ["pld", "recursion"]
    wide = build("tbe-adaptive", arms=3)
    assert state_model_of(wide) is None
    assert applicable_modes(ATTACKS["tbe-first-round"].scenarios(wide)[0]) == ["pld"]
    from attacks.search import black_box_only
    searched = dataclasses.replace(sc, label="search:round-1",
                                   algorithm=black_box_only(sc.algorithm))
    assert applicable_modes(searched) == []


WRONG = {
    "noise scale": lambda m: dataclasses.replace(m, noise=LaplaceDifference(0.8)),
    "shift sign": lambda m: dataclasses.replace(m, shift=lambda row: -m.shift(row)),
    "arms swapped": lambda m: dataclasses.replace(
        m, action_probs=lambda u: m.action_probs(u)[:, ::-1], monotone=(-1, 1)),
    "step": lambda m: dataclasses.replace(m, step=0.9),
}


@pytest.mark.parametrize("what", sorted(WRONG))
def test_declaration_checks_refuse_a_wrong_state_model(what):
    """Fixed seeds.  Each wrong model is refused by a deterministic check
    (identity or monotone); the correct one passes all three (the identity
    and monotone checks never refuse a correct model; state-recursion does
    w.p. ≤ 1e-6)."""
    alg, sc, model = _n2()
    good = {c.check: c for c in check_declarations(sc, 0, 0, modes=["recursion"])}
    assert set(good) == {"state-draw-identity", "state-monotone", "state-recursion"}
    assert all(c.passed for c in good.values())
    bad_alg = dataclasses.replace(alg, extra={"state_model": WRONG[what](model)})
    bad_sc = dataclasses.replace(sc, algorithm=bad_alg)
    bad = check_declarations(bad_sc, 0, 0, modes=["recursion"])
    assert any(not c.passed and c.rests_on in ("identity", "replay") for c in bad), what


def test_wrong_state_model_switches_the_recursion_off():
    alg, sc, model = _n2()
    bad_alg = dataclasses.replace(alg, extra={"state_model": WRONG["noise scale"](model)})
    with pytest.raises(ValueError, match="state-"):
        audit_algorithm(bad_alg, attacks=["tbe-expert-run"], trials=1000, modes=["recursion"])


def test_action_run_counts_match_a_loop():
    rng = np.random.default_rng(2)
    acts = rng.integers(0, 3, size=(500, 9))
    acts[:40, 2:] = 1
    fam = ActionRun(2, (2, 3, 5, 8), (0, 1, 2))
    got = fam.count(acts)
    want = [sum(all(row[t] == a for t in range(2, k + 1)) for row in acts)
            for a in (0, 1, 2) for k in (2, 3, 5, 8)]
    assert got.tolist() == want
    assert len(fam.labels) == got.size and fam.labels[5] == "I_t = 2 for every t in 3..4"


def test_state_model_rejects_bad_fields():
    m = _n2()[2]
    with pytest.raises(ValueError, match="step"):
        dataclasses.replace(m, step=0.0)
    with pytest.raises(ValueError, match="lo must be < hi"):
        dataclasses.replace(m, lo=1.0, hi=1.0)
    with pytest.raises(ValueError, match="start"):
        dataclasses.replace(m, start=100.0)
    with pytest.raises(ValueError, match="scale"):
        LaplaceDifference(-1.0)


@pytest.mark.parametrize("eta", [1.0, 2.0])
def test_no_certificate_above_the_claim_on_the_corrected_algorithm(eta):
    """tbe-adaptive-fixed (Laplace(N/ε), ε-DP for the whole transcript, so
    for the experts too): no run event may certify more than ε = 1 — a
    certificate above it would mean the bounds are not bounds
    (deterministic)."""
    alg = build("tbe-adaptive-fixed", params={"eta": eta})
    sc = ATTACKS["tbe-expert-run"].scenarios(alg)[0]
    model = state_model_of(alg)
    res = certify_runs(model, sc.losses_a, sc.losses_b, 30, [1, 2],
                       grid=Grid(model.lo, model.hi, 2001))
    assert 0.3 < res.best.epsilon_lower_bound <= alg.claim.epsilon
