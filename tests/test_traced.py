"""Exact evidence from the trace of the code's own continuous draws
(``algorithms.replay.noise``, ``paths``; ``audit.engine.models.affine_release``,
``comparisons``; ``audit.engine.evidence.traced``): mechanisms written as
people write them, no declaration.

Every figure here is exact (no sampling enters it): a failure means a bug,
never bad luck.  The re-execution that confirms each trace draws its
points from a fixed seed, so these tests are deterministic.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms import build
from algorithms.replay.noise import Noisy, NoiseGenerator, NoiseTrace, tracing
from algorithms.replay.paths import confirm, explore, traced_paths
from algorithms.replay.tracer import ReplayRefused, conversions
from audit.engine.audit import audit_algorithm, reconcile
from audit.engine.evidence.traced import traced_pair
from audit.engine.models.affine_release import release_loss
from audit.engine.models.comparisons import NotAStructure, law_of_paths, log_probability
from tests import traced_algos as T

MOD = "tests.traced_algos"


def _alg(name, **kw):
    h, k, _, _ = T.CASES[name]
    kw.setdefault("horizon", h)
    if k > 1:
        kw.setdefault("arms", k)
    return build(f"{MOD}:{name}", **kw)


def _audit(name, attacks=("search",), **kw):
    """The replay mode on the neighbour search's pairs (the optimiser's
    pairs only cost time here: every figure is exact either way)."""
    return audit_algorithm(_alg(name, **kw), attacks=list(attacks), modes=["replay"],
                           trials=2000, seed=0)


def _best(res):
    return max(res.results, key=lambda r: r.epsilon_lower_bound)


# ------------------------------------------------------------ the cases
def test_gaussian_release_under_a_pure_claim_is_an_exact_violation():
    res = _audit("gaussian_sum")
    best = _best(res)
    assert res.verdict == "violation" and best.exact and best.epsilon_lower_bound == math.inf
    assert best.rests_on == ("trace",) and "Gaussian" in best.event


def test_counter_reusing_one_laplace_draw_is_an_exact_violation():
    res = _audit("ReusedNoiseCounter")
    best = _best(res)
    assert res.verdict == "violation" and best.exact and best.epsilon_lower_bound == math.inf
    assert "no noise" in best.event or "cannot cover" in best.event


@pytest.mark.parametrize("name", ["laplace_sum", "exponential_difference_sum", "NoisyStream"])
def test_correct_laplace_releases_attain_their_claim_exactly(name):
    res = _audit(name)
    best = _best(res)
    claim = res.claim.epsilon
    assert res.verdict == "consistent" and best.exact
    assert best.epsilon_lower_bound == pytest.approx(claim, rel=1e-6)


def test_above_threshold_is_exact_and_within_its_claim_at_optimised_pairs():
    res = _audit("above_threshold", attacks=("optimised",))
    best = _best(res)
    assert res.verdict == "consistent" and best.exact and 0 < best.epsilon_lower_bound <= 1.0


def _round_one(T_):
    a = np.zeros((T_, 1))
    b = a.copy()
    b[0, 0] = 1.0
    return a, b


def test_tree_counter_is_exact_at_its_claim_and_one_level_short_at_four_thirds():
    a, b = _round_one(8)
    good = traced_pair(_alg("TreeCounter"), a, b, "output")
    short = traced_pair(_alg("ShortTreeCounter"), a, b, "output")
    assert good.epsilon == pytest.approx(1.0, rel=1e-9)
    assert short.epsilon == pytest.approx(4 / 3, rel=1e-9)
    assert good.details["structure"] == short.details["structure"] == "release"


def test_tree_counter_audit_is_exact_and_never_above_the_truth():
    res = _audit("TreeCounter")
    best = _best(res)
    assert res.verdict == "consistent" and best.exact and best.epsilon_lower_bound <= 1.0 + 1e-9


# ------------------------------------------------------ the table, soundness first
# (the correct releases and the tree counter have their own tests above)
CORRECT = ["gaussian_sum_approx", "above_threshold", "noisy_argmax", "gumbel_max",
           "noisy_threshold_test"]


@pytest.mark.parametrize("name", CORRECT)
def test_a_trace_of_a_correct_mechanism_never_yields_a_violation(name):
    res = _audit(name)
    assert res.verdict == "consistent"
    assert any(r.exact for r in res.results)


@pytest.mark.parametrize("name", ["noisy_argmax_half_noise", "above_threshold_no_query_noise"])
def test_buggy_comparisons_are_exact_violations(name):
    res = _audit(name)
    best = _best(res)
    assert res.verdict == "violation" and best.exact


def test_a_sparse_vector_without_cutoff_over_ten_answers_is_traced_exactly():
    """2¹⁰ output sequences, each its own path: the trace enumerates all
    1 024 of each input (the default input's ten answers) and certifies
    the pair's ε above the claim of 1 — below the 2.5 no pair can exceed
    (``traced_algos.sparse_vector_no_cutoff``)."""
    alg = _alg("sparse_vector_no_cutoff")
    a = np.full((10, 1), 0.5)
    b = np.array([[1.0], [0.0]] * 5)
    got = traced_pair(alg, a, b, "output")
    assert got.exact and got.details["structure"] == "comparisons"
    assert 1.09 < got.epsilon < 1.1 and got.epsilon <= 2.5
    assert len(traced_paths(alg, a).paths) == 1024


def test_data_dependent_scale_is_refused_not_judged():
    res = _audit("data_dependent_scale")
    best = _best(res)
    assert not best.exact and best.epsilon_lower_bound == 0.0
    assert "depends on the input" in best.event


# ----------------------------------------------------------- the structures
def test_gumbel_max_path_probabilities_are_the_exponential_mechanism():
    alg = _alg("gumbel_max")
    q = np.array([[0.0, 1.0, 0.5]])
    law = law_of_paths(explore(alg, q, "output").paths, lambda p: p.discrete())
    w = np.exp(q[0] / 2)
    for i, p in enumerate(w / w.sum()):
        lo, hi = law[(i,)]
        assert lo <= math.log(p) + 1e-9 and math.log(p) - 1e-9 <= hi and hi - lo < 1e-4


def test_sparse_vector_from_the_trace_matches_its_declared_model():
    from audit.engine.models.sparse_vector.integral import exact_pair
    from audit.engine.models.sparse_vector.verify import answers_of, sparse_vector_of
    alg = build("svt1")
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, (alg.horizon, 1)).astype(float)
    b = np.clip(a + rng.choice([-1.0, 1.0], a.shape), 0, 1)
    declared = exact_pair(sparse_vector_of(alg), answers_of(a), answers_of(b))
    traced = traced_pair(alg, a, b, "output")
    assert traced.epsilon == pytest.approx(declared.lower, rel=1e-3, abs=1e-6)


def test_report_noisy_max_from_the_trace_matches_its_declared_model():
    from audit.engine.models.noisy_max.exact import index_pair_epsilon
    from audit.engine.models.noisy_max.verify import noisy_max_of
    for name in ("report-noisy-max1", "report-noisy-max2"):
        alg = build(name)
        a = np.array([[1.0, 1.0, 1.0, 1.0, 1.0]])
        b = np.array([[2.0, 0.0, 0.0, 0.0, 0.0]])
        declared = index_pair_epsilon(noisy_max_of(alg), a, b)[0]
        assert traced_pair(alg, a, b, "output").epsilon == pytest.approx(declared, rel=1e-3)


def test_laplace_transcript_models_reproduced_from_the_trace():
    for name, eps in (("laplace", 0.1), ("noisy-hist1", 0.1), ("noisy-hist2", 10.0)):
        alg = build(name)
        a = np.zeros((alg.horizon, alg.n_arms))
        b = a.copy()
        b[0, 0] = 1.0
        assert traced_pair(alg, a, b, "transcript").epsilon == pytest.approx(eps, rel=1e-9)


def test_release_loss_cases():
    # the LP: two releases sharing one noise, a change on one: ∞; fresh noise: the sum
    A = np.array([[1.0], [1.0]])
    assert release_loss(("laplace",), A, [1.0, 0.0], A, [0.0, 0.0]).epsilon == math.inf
    A = np.eye(2) * 2.0
    got = release_loss(("laplace", "laplace"), A, [1.0, 1.0], A, [0.0, 0.0])
    assert got.epsilon == pytest.approx(1.0)
    # a sum of two noises released once: the cheaper one carries the shift
    A = np.array([[1.0, 4.0]])
    assert release_loss(("laplace", "laplace"), A, [1.0], A, [0.0]).epsilon == \
        pytest.approx(0.25)
    # Gaussian: μ and the exact ε at δ (Balle & Wang): δ(ε) at that ε is δ
    g = release_loss(("normal",), np.array([[2.0]]), [1.0], np.array([[2.0]]), [0.0])
    assert g.epsilon == math.inf and g.mu == pytest.approx(0.5)
    from scipy.stats import norm
    e = g.epsilon_at(1e-3)
    d = norm.cdf(-e / 0.5 + 0.25) - math.exp(e) * norm.cdf(-e / 0.5 - 0.25)
    assert d == pytest.approx(1e-3, rel=1e-6)


def test_a_chain_of_comparisons_is_refused_by_name():
    A = np.array([[1.0, -1.0, 0.0, 0.0], [0.0, 1.0, -1.0, 0.0], [0.0, 0.0, 1.0, -1.0]])
    with pytest.raises(NotAStructure, match="chain"):
        log_probability(("laplace",) * 4, A, np.zeros(3))


# ---------------------------------------------------------- the trace itself
def test_noisy_values_follow_affine_steps_and_record_comparisons():
    tr = NoiseTrace(chosen=[0.5, -1.0])
    gen = NoiseGenerator(tr)
    with tracing(tr), conversions():
        x = gen.laplace(1.0, 2.0, size=2)               # 1 + 2·z
        y = (x * 3 - 1).sum() / 2
        assert isinstance(y, Noisy)
        assert y.const == pytest.approx((3 * 2 - 2) / 2)
        assert list(y.coef) == pytest.approx([3.0, 3.0])
        assert bool(x[0] > x[1])
        (f, c), = tr.constraints
        assert list(f) == pytest.approx([2.0, -2.0]) and c == pytest.approx(0.0)
        with pytest.raises(ReplayRefused, match="applies exp"):
            np.exp(x)
        with pytest.raises(ReplayRefused, match="two noisy"):
            x * x


def _escapes(x, rng, epsilon=1.0):
    v = float(np.sum(x) + rng.laplace(0.0, 1.0 / epsilon))
    return 1 if v > 0.5 else 0          # a branch on a plain float the trace cannot see


_escapes.claim_epsilon = 1.0


def test_reexecution_refuses_a_branch_hidden_in_a_plain_float():
    alg = build("tests.test_traced:_escapes", horizon=2)
    losses = np.zeros((2, 1))
    ps = explore(alg, losses, "output")
    with pytest.raises(ReplayRefused, match="re-executed"):
        confirm(alg, losses, "output", ps)


def test_traced_paths_are_kept_and_confirmed_once():
    alg = _alg("above_threshold")
    x = np.zeros((4, 1))
    first = traced_paths(alg, x)
    assert first.reexecuted > 0 and traced_paths(alg, x) is first


def test_a_declaration_above_the_trace_is_refused():
    from types import SimpleNamespace as NS

    def res(kind, eps, rests=(), structure="comparisons"):
        return NS(kind=kind, exact=True, epsilon_lower_bound=eps, rests_on=rests, notes=[],
                  attack="p", informational=False, details={"structure": structure})
    ev = [NS(index=0), NS(index=0)]
    declared = res("integral", 0.3)
    assert reconcile(ev, [declared, res("replay", 0.1, ("trace",))])
    assert declared.informational and not declared.exact and declared.epsilon_lower_bound == 0
    # within the brackets, or below the trace (a search's lower bound): kept
    assert reconcile(ev, [res("integral", 0.10001), res("replay", 0.1, ("trace",))]) == ()
    assert reconcile(ev, [res("integral", 0.05), res("replay", 0.1, ("trace",))]) == ()
    # a trace that is itself a lower bound (values on a grid) refutes nothing
    assert reconcile(ev, [res("integral", 0.3),
                          res("replay", 0.1, ("trace",), "comparisons+releases")]) == ()


# ------------------------------------------------- values released after comparisons
def test_a_clipped_release_attains_its_claim_exactly():
    alg = _alg("clipped_release")
    got = traced_pair(alg, np.array([[1.0], [0.0], [0.0]]), np.zeros((3, 1)), "output")
    assert got.details["structure"] == "comparisons+releases"
    assert got.epsilon == pytest.approx(1.0, rel=1e-6)


def test_the_noisy_maximum_from_the_trace_matches_its_declared_model():
    from audit.engine.models.noisy_max.exact import value_pair_epsilon
    from audit.engine.models.noisy_max.verify import noisy_max_of
    alg = build("report-noisy-max3")
    a = np.array([[1.0, 1.0, 1.0, 1.0, 1.0]])
    b = np.array([[2.0, 0.0, 0.0, 0.0, 0.0]])
    declared = value_pair_epsilon(noisy_max_of(alg), a, b)[0]
    assert traced_pair(alg, a, b, "output").epsilon == pytest.approx(declared, rel=1e-3)


# ------------------------------------------------------------ rounded releases
def _pair(name, delta=0.0):
    alg = _alg(name)
    a = np.zeros((T.CASES[name][0], 1))
    b = a.copy()
    b[0] = 1.0
    return traced_pair(alg, a, b, "output", delta)


@pytest.mark.parametrize("name", ["rounded_laplace_sum", "rounded_laplace_sum_half_noise",
                                  "truncated_laplace_sum", "rounded_histogram",
                                  "rounded_plain_float"])
def test_rounded_laplace_releases_attain_their_true_epsilon(name):
    """Rounding a Laplace release keeps its pure ε (far in the tail every
    grid interval has the density ratio e^ε throughout): the certified
    figure is the true ε to within the brackets' slack, never above it, and
    the unrounded release's ε bounds it from above."""
    got = _pair(name)
    true = T.CASES[name][2]
    assert got.exact and got.details["structure"] == "rounded"
    assert true - 1e-4 < got.epsilon <= true
    assert got.details["upper"] == pytest.approx(true, rel=1e-9)


@pytest.mark.parametrize("name", ["RoundedTreeCounter", "RoundedShortTreeCounter",
                                  "ArrayTreeCounter"])
def test_rounded_prefix_sums_of_shared_draws_attain_their_true_epsilon(name):
    """A tree counter's rounded counts combine several draws each
    (``models.rounded_cells``): an output's probability is the density's
    integral over the box that rounds to it, in closed form inside one sign
    of every draw.  The figure is the true ε less the rounding's
    floating-point margin (a relative 1e-8 on each end of eight intervals
    0.01 wide, on both sides: below 1e-3), never above it."""
    a, b = _round_one(8)
    got = traced_pair(_alg(name), a, b, "output")
    true = T.CASES[name][2]
    assert got.exact and got.details["structure"] == "rounded"
    assert true - 1e-3 < got.epsilon <= true
    assert got.details["upper"] == pytest.approx(true, rel=1e-9)
    assert "invertible map" in " ".join(got.notes)


def test_a_box_probability_of_shared_draws_is_bracketed_by_its_certified_ends():
    """y = c + F·z over two Laplace draws: the closed form inside one sign
    of each draw, and the unimodal bounds on a box across a sign change,
    against numerical integration of the density (``scipy.integrate``)."""
    from scipy.integrate import dblquad
    from audit.engine.models.rounded_cells import _Side
    F = np.array([[2.0, 0.0], [2.0, 1.5]])
    c = np.array([0.3, -0.2])
    side = _Side(("laplace", "laplace"), F, c)
    G = np.linalg.inv(F)

    def density(y2, y1):
        z = G @ (np.array([y1, y2]) - c)
        return abs(np.linalg.det(G)) * math.exp(-abs(z[0]) - abs(z[1])) / 4
    for lo, hi, exact in (([2.0, 4.0], [2.1, 4.05], True), ([0.25, -0.3], [0.45, 0.0], False)):
        lo, hi = np.array(lo), np.array(hi)
        truth = math.log(dblquad(density, lo[0], hi[0], lo[1], hi[1], epsabs=0, epsrel=1e-10)[0])
        low, up = side.log_p(lo, hi, upper=False), side.log_p(lo, hi, upper=True)
        assert low <= truth + 1e-9 and truth <= up + 1e-9
        assert (abs(up - low) < 1e-12 and abs(low - truth) < 1e-8) if exact else up - low > 0.01
    # the first box keeps one sign of both draws: exact
    assert side._exact(np.array([2.0, 4.0]) - c, np.array([2.1, 4.05]) - c,
                       G @ (np.array([2.05, 4.025]) - c), np.abs(G) @ [0.05, 0.025]) is not None


def test_a_rounded_tree_counter_one_level_short_is_an_exact_violation():
    res = _audit("RoundedShortTreeCounter", attacks=("optimised",))
    best = _best(res)
    assert res.verdict == "violation" and best.exact and best.rests_on == ("trace",)
    assert 4 / 3 - 1e-3 < best.epsilon_lower_bound <= 4 / 3


def test_a_rounded_release_with_half_the_noise_is_an_exact_violation():
    res = _audit("rounded_laplace_sum_half_noise")
    best = _best(res)
    assert res.verdict == "violation" and best.exact and best.rests_on == ("trace",)
    assert 0.9999 < best.epsilon_lower_bound <= 1.0
    assert "exact log-ratio" in best.event


@pytest.mark.parametrize("name,mu_factor", [("rounded_gaussian_sum", 1.0),
                                            ("rounded_gaussian_sum_half_sigma", 2.0)])
def test_a_floored_gaussian_release_at_delta_is_below_the_unrounded_one(name, mu_factor):
    """One Gaussian value floored to whole numbers: its certified ε at δ
    (the grid's hockey-stick divergence) lies just below the unrounded
    Gaussian mechanism's exact figure (rounding is post-processing); the
    correct one is within its claim of 1, half the σ is far above it."""
    from audit.engine.models.affine_release import ReleaseLoss
    mu = mu_factor * 1.0 / (math.sqrt(2 * math.log(1.25 / 1e-5)))
    unrounded = ReleaseLoss(math.inf, "", mu=mu).epsilon_at(1e-5)
    got = _pair(name, 1e-5)
    assert got.exact and got.details["upper"] == pytest.approx(unrounded, rel=1e-9)
    assert unrounded - 0.01 < got.epsilon <= unrounded
    assert (got.epsilon < 1.0) == (mu_factor == 1.0)


def test_a_rounded_gaussian_whose_scale_depends_on_the_input_gets_no_mechanism_figure():
    """σ grows with the sum: the two inputs' forms differ in their noise, so
    no Gaussian mechanism μ′ is read off one side's; nothing is claimed at
    δ (the black-box audit decides)."""
    got = _pair("rounded_gaussian_data_scale", 1e-5)
    assert "mu" not in got.details and not got.exact and got.epsilon == 0.0


def test_rounded_gaussian_values_under_a_pure_claim_are_infinite():
    """Fine rounding of a Gaussian release: the rounded pair dominates the
    Gaussian mechanism of a μ′ just below the unrounded μ, whose pure loss
    is unbounded."""
    got = _pair("rounded_gaussian_pure")
    assert got.exact and got.epsilon == math.inf
    assert 0 < got.details["mu"] < 1 / (math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5)


def test_a_grid_value_that_is_also_an_atom_is_one_output():
    """Clipped to [0, 3], then rounded: the output 3.00 comes from the clip's
    atom and from the values in [2.995, 3) alike; its probability is
    P(y > 2.995) = ½e^{−(2.995 − s)} (Laplace of scale 1 around the sum s),
    not the atom's alone, and the pair's figure is the true ε."""
    from audit.engine.models.rounded_release import _log_p
    alg = _alg("clipped_rounded_release")
    a = np.array([[1.0], [0.0], [0.0]])
    paths = traced_paths(alg, a).paths
    assert len(paths) == 3
    lo, hi = _log_p(paths, (3.0,), upper=False), _log_p(paths, (3.0,), upper=True)
    truth = math.log(0.5) - (2.995 - 1.0)
    assert lo <= truth <= hi and hi - lo < 1e-5
    got = _pair("clipped_rounded_release")
    assert got.exact and 1.0 - 1e-4 < got.epsilon <= 1.0


@pytest.mark.parametrize("name", ["sparse_vector_cutoff", "numerical_sparse_vector"])
def test_a_sparse_vector_that_stops_at_its_cutoff_is_traced_exactly(name):
    """Its answers stop at the first ⊤: outputs of 1 to 4 elements, each
    length its own output; every path found (one per stopping answer, and
    none), the audit exact and within the claim."""
    alg = _alg(name)
    ps = traced_paths(alg, np.full((4, 1), 0.5))
    assert sorted(len(p.outputs) for p in ps.paths) == [1, 2, 3, 4, 4]
    res = _audit(name)
    best = _best(res)
    assert res.verdict == "consistent" and best.exact and 0 < best.epsilon_lower_bound <= 1.0


@pytest.mark.parametrize("name", ["rounded_then_clamped", "clamped_half_noise", "half_grid",
                                  "thresholded_count", "clipped_rounded_count"])
def test_what_code_computes_from_a_rounded_value_is_followed(name):
    """A rounded noisy number the code goes on to compute with — clamps
    (``max(0.0, round(v, 1))``, ``np.clip(np.round(v), 0, 3)``: the
    comparison recorded as the form against the end of a grid value's
    interval), scales back (``np.round(2 * v) /
    2``), or tests (``if round(v) >= 2``) — keeps its exact figure,
    confirmed by re-executing the code: each attains its true ε (these
    are post-processings of a rounded Laplace release, and far in the
    tail its cells keep the ratio e^ε), never above it."""
    got = _pair(name)
    true = T.CASES[name][2]
    assert got.exact and got.details["structure"] == T.CASES[name][3]
    assert true - 1e-4 < got.epsilon <= true


def test_a_clamped_rounded_release_puts_the_clamped_cells_on_one_path():
    """``max(0.0, round(v, 1))``: two paths, the constant 0.0 below the
    clamp's grid value and the rounded value above it — the output 0.0
    is the constant's path plus the cell that rounds to 0.0 exactly."""
    from algorithms.replay.noise import Rounded
    ps = traced_paths(_alg("rounded_then_clamped"), np.zeros((3, 1)))
    outs = sorted((type(p.outputs[0]).__name__, len(p.c)) for p in ps.paths)
    assert outs == [("Rounded", 1), ("float", 1)]
    assert all(isinstance(p.outputs[0], Rounded) or p.outputs[0] == 0.0 for p in ps.paths)


def test_rounded_noise_shifted_by_the_input_is_a_grid_the_input_moves():
    """``x + np.round(noise)``: the output's grid is shifted by the input,
    so 0.5 and 1 reach disjoint values (exact, beyond 20: the only mass on
    the other side is the 10⁻¹⁰ the trace leaves uncovered), and 0 and 1
    are one cell apart (ε 0.5)."""
    alg = build(f"{MOD}:shifted_rounded_noise")
    far = traced_pair(alg, np.array([[0.5]]), np.array([[1.0]]), "output")
    near = traced_pair(alg, np.array([[0.0]]), np.array([[1.0]]), "output")
    assert far.exact and far.epsilon > 20
    assert near.exact and 0.5 - 1e-4 < near.epsilon <= 0.5


def test_a_float_times_an_int_rounding_is_refused_by_reexecution():
    """``0.5 * round(2 * v)``: the float's own multiplication runs first
    and returns a plain float the trace never sees; re-executing the code
    finds outputs the traced path does not give, so no figure."""
    with pytest.raises(ReplayRefused, match="re-executed on plain values"):
        _pair("scaled_from_the_left")


def test_rounded_and_unrounded_values_together_are_refused():
    from audit.engine.models.affine_release import NotExact
    with pytest.raises(NotExact, match="rounded and others unrounded"):
        _pair("rounded_and_raw")


def test_exponentials_shared_between_rounded_values_are_not_read_as_independent():
    """Two rounded values e₁ − e₂ and e₂ − e₃ of three exponential draws:
    each alone is a Laplace draw, but they share e₂, so the product of one
    element's law per value would be wrong (it says 2); the release is
    evaluated as a whole (a star on e₂) instead.  Its true ε: (u, v) =
    (e₁ − e₂, e₂ − e₃) has density e^{v−u}·e^{−3·max(0, −u, v)}/3, and
    moving both by 1 changes the max by at most 1, by 1 far out (u → −∞):
    ε = 3 exactly, rounding keeping nearly all of it."""
    from audit.engine.models.rounded_release import _own_draws

    def chain(x, rng, epsilon=1.0):
        s = float(np.sum(x))
        e = [rng.exponential(1.0 / epsilon) for _ in range(3)]
        return [round(s + e[0] - e[1], 1), round(s + e[1] - e[2], 1)]
    chain.claim_epsilon = 1.0
    chain.floating_point = False
    T.exponential_chain = chain
    try:
        alg = build(f"{MOD}:exponential_chain", horizon=2)
        a, b = np.zeros((2, 1)), np.array([[1.0], [0.0]])
        pa, pb = traced_paths(alg, a).paths[0], traced_paths(alg, b).paths[0]
        assert _own_draws(pa, pb) is None
        got = traced_pair(alg, a, b, "output")
    finally:
        del T.exponential_chain
    assert got.exact and 2.9 < got.epsilon <= 3.0


def test_python_roundings_are_watched_only_while_a_run_is_traced():
    import builtins
    before = (builtins.round, math.floor, math.ceil)
    _pair("rounded_plain_float")
    after = (builtins.round, math.floor, math.ceil)
    assert after == before and not any(hasattr(f, "__wrapped__") for f in after)


def test_roundings_read_the_intervals_of_their_grid():
    from algorithms.replay.noise import grid_value, on_grid, preimage
    assert preimage("round", 0.01, 0.25) == pytest.approx((0.245, 0.255))
    assert preimage("floor", 1.0, -2.0) == (-2.0, -1.0)
    assert preimage("ceil", 1.0, -2.0) == (-3.0, -2.0)
    assert preimage("trunc", 1.0, 0.0) == (-1.0, 1.0)       # toward zero: twice the width at 0
    assert preimage("trunc", 1.0, -2.0) == (-3.0, -2.0)
    assert grid_value("trunc", 1.0, -2.7) == -2.0 and grid_value("round", 0.1, 0.26) == 0.3
    assert on_grid(0.01, 0.29) and not on_grid(0.01, 0.295)


def test_noisy_values_stored_in_the_code_s_own_float_array_are_traced():
    """``noisy = np.zeros(k); noisy[i] = q + Lap``: the array keeps the
    forms (``algorithms.replay.slots``), the argmax is traced, the correct
    one is within its claim and half the noise is an exact violation."""
    for name in ("stored_noisy_argmax", "stored_noisy_argmax_half_noise"):
        res = _audit(name, attacks=("optimised",))
        best = _best(res)
        assert best.exact and best.rests_on == ("trace",)
        assert res.verdict == ("consistent" if T.CASES[name][2] <= 1 else "violation")
        assert best.epsilon_lower_bound <= T.CASES[name][2] + 1e-9


def test_an_audit_whose_trace_every_pair_refused_says_why_in_its_summary():
    """No exact figure where the trace ran: the concise summary says why in
    one line (the reason was shown only with -v)."""
    from audit.engine import audit_algorithm
    alg = build("tests.traced_algos:stored_through_a_row_view", arms=3)
    r = audit_algorithm(alg, ["search"], trials=2000, seed=0)
    assert not any(x.exact for x in r.results)
    line = [ln for ln in r.summary().splitlines() if ln.startswith("  no exact figure: ")]
    assert len(line) == 1 and "re-executed" in line[0], r.summary()


@pytest.mark.parametrize("rounding", ["round", "floor", "ceil", "trunc", "round2"])
def test_a_recorded_comparison_of_a_rounded_number_is_the_comparison_it_stands_for(rounding):
    """Each comparison of a rounded number (scaled and shifted, compared
    with thresholds on and between grid values, both ways) is recorded as
    one comparison of its form: at 400 other values of the draw the
    recorded comparison holds exactly where the code's own comparison of
    its own number agrees with this run's (no randomness: a fixed grid of
    draws)."""
    import operator
    make = {"round": round, "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc,
            "round2": lambda v: round(v, 2)}[rounding]
    ops = (operator.lt, operator.le, operator.gt, operator.ge)
    draws = np.linspace(-3.7, 3.7, 401)
    for a, b in ((1.0, 0.0), (0.5, 0.25), (-2.0, 1.0)):
        for t in (-1.0, -0.5, 0.0, 0.25, 0.75, 1.0, 2.0):
            for op in ops:
                def number(z):
                    return a * make(1.3 * z) + b        # what the code computes
                tr = NoiseTrace(chosen=[0.61])
                with tracing(tr):
                    g = make(NoiseGenerator(tr).laplace(0.0, 1.3))
                    held = op(g * a + b, t)
                assert held == op(number(0.61), t)
                assert len(tr.constraints) == 1, (a, b, t, op)
                f, c = tr.constraints[0]
                for z in draws:
                    if abs(1.3 * z * 100 - round(1.3 * z * 100)) < 1e-6:
                        continue    # on a grid value's interval end: either side
                    assert (c + f[0] * z > 0) == (op(number(z), t) == held), (a, b, t, op, z)


def test_a_chain_of_comparisons_is_refused_before_any_density_is_computed(monkeypatch):
    """``max`` of a list of noisy values releases the running maximum: its
    comparisons chain the draws, which the path probabilities do not
    evaluate; the pair is refused by that check, before the released
    value's densities (hundreds of integrals a pair: an optimiser trying
    many pairs sat in them for minutes)."""
    import audit.engine.evidence.traced as TR

    def never(*a, **k):
        raise AssertionError("densities computed for a pair that is refused")
    monkeypatch.setattr(TR, "pair_density_epsilon", never)
    with pytest.raises(NotAStructure, match="chain"):
        _pair("running_max_value")
