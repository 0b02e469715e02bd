"""The DP testers' benchmark mechanisms: each vectorised learner equals its
per-run reference draw for draw, the claims carry their relation and true
ε, and the exact sparse-vector integrals agree with simulation and certify
what they should."""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms import REGISTRY, build
from algorithms.dp_testers.mechanisms import bloom_bits, geometric_cdf, murmur3_32
import dataclasses

from algorithms.simulate import simulate
from audit.engine.models.sparse_vector.integral import log_probability, outputs
from tests import reference_dp_testers as ref

NAMES = ["laplace", "truncated-geometric", "noisy-hist1", "noisy-hist2", "report-noisy-max1",
         "report-noisy-max2", "report-noisy-max3", "report-noisy-max4", "svt1", "svt2", "svt3",
         "svt4", "svt5", "svt6", "numerical-svt", "rappor", "one-time-rappor",
         "laplace-parallel", "svt34-parallel", "prefix-sum", "binary-counter", "smart-sum"]


def inputs(alg, seed):
    """A fixed input in the mechanism's domain (integers where it counts)."""
    lo, hi = alg.loss_range
    x = np.random.default_rng(seed).uniform(lo, hi, (alg.horizon, alg.n_arms))
    return np.round(x) if alg.check_losses is not None else x


def run_one(alg, losses, seed):
    pts = range(alg.horizon) if alg.learner.point is not None else ()
    return simulate(alg, losses, 1, np.random.default_rng(seed), point_rounds=pts)


def reference(name, alg, L, rng):
    """(codes, points) of one reference run."""
    T = alg.horizon
    p = alg.params
    if name in ("laplace", "noisy-hist1", "noisy-hist2", "laplace-parallel", "prefix-sum"):
        b = 1 / p["epsilon"] if name in ("laplace", "prefix-sum") else \
            p.get("noise_scale", p["copies"] / p["epsilon"] if "copies" in p else None)
        y = ref.ref_noisy_release(L.tolist(), b, p.get("copies", 1), name == "prefix-sum", rng)
        return [0] * T, y
    if name == "truncated-geometric":
        return [ref.ref_geometric(int(L[0, 0]), geometric_cdf(p["n"], p["k"], int(L[0, 0])),
                                  rng)], None
    if name.startswith("report-noisy-max"):
        out = ref.ref_noisy_max(L[0].tolist(), 2 / p["epsilon"], p["noise"], p["report"], rng)
        return ([out], None) if p["report"] == "index" else ([0], [[out]])
    if name in ("rappor", "one-time-rappor"):
        bits = bloom_bits(int(L[0, 0]), p["hashes"], p["size"]).tolist()
        return [0], [ref.ref_rappor(bits, p["f"], p.get("p"), p.get("q"), rng)]
    if name == "binary-counter":
        return [0] * T, [[c] for c in ref.ref_binary_counter(L[:, 0].tolist(),
                                                             p["levels"] / p["epsilon"], rng)]
    if name == "smart-sum":
        return [0] * T, [[c] for c in ref.ref_smart_sum(L[:, 0].tolist(), 1 / p["epsilon"],
                                                        p["block"], rng)]
    if name == "svt34-parallel":
        from algorithms.dp_testers.catalog import _svt_parts
        a = ref.RefSparseVector(p["threshold"], *_svt_parts(3, p["epsilon"], p["c"], 1.0))
        b = ref.RefSparseVector(p["threshold"], *_svt_parts(4, p["epsilon"], p["c"], 1.0))
        a.start(rng)
        b.start(rng)
        codes, pts = [], []
        for q in L[:, 0]:
            ca, va = a.step(q, rng)
            cb, _ = b.step(q, rng)
            codes.append(3 * ca + cb)
            pts.append([va])
        return codes, pts
    m = alg.extra["sparse_vector"]
    s = ref.RefSparseVector(m.threshold, m.threshold_scale, m.query_scale, m.cutoff,
                            m.resample, m.numeric, m.numeric_scale)
    s.start(rng)
    steps = [s.step(q, rng) for q in L[:, 0]]
    return [c for c, _ in steps], ([[v] for _, v in steps] if m.numeric else None)


@pytest.mark.parametrize("name", NAMES)
def test_vectorised_equals_reference(name):
    alg = build(name)
    for seed in range(4):
        L = inputs(alg, seed)
        tr = run_one(alg, L, 100 + seed)
        codes, points = reference(name, alg, L, np.random.default_rng(100 + seed))
        assert tr.actions[0].tolist() == codes, (name, seed)
        if points is not None:
            got = np.array([tr.points[t][0] for t in range(alg.horizon)])
            assert np.allclose(got, np.array(points, dtype=float), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_registered_with_relation_and_true_epsilon(name):
    alg = build(name)
    assert REGISTRY[name].factory is not None
    assert alg.claim.relation in ("one-round", "bounded-all")
    assert alg.learner.reads_first and alg.default_attacks[0] == "patterns"
    # The optimised pair joins where a declared model's exact pair ε is computed.
    assert set(alg.default_attacks) <= {"patterns", "optimised"}
    assert "true_epsilon" in alg.extra and alg.extra["true_epsilon_source"]


def test_murmur3_vectors_and_the_suites_bloom_filters():
    assert murmur3_32(b"", 0) == 0
    assert murmur3_32(b"", 1) == 0x514E28B7
    assert murmur3_32(b"hello", 0) == 0x248BFA47
    assert murmur3_32(b"Hello, world!", 0) == 0xC0363E43
    assert bloom_bits(1, 4, 20).sum() in (1, 2, 3, 4)


def test_truncated_geometric_pmf_and_its_true_epsilon():
    alg = build("truncated-geometric")
    table = np.array(alg.learner.transcript.law.table)
    assert np.allclose(table.sum(axis=1), 1.0)
    # Balcer & Vadhan Thm 4.7 at the suite's k = 3: ln(1 + 1/8).
    assert alg.extra["true_epsilon"] == pytest.approx(math.log(9 / 8), abs=1e-12)
    # The sampler follows the table: 200 000 draws, each cell within 6 standard
    # errors (a false failure has probability < 1e-7 over the 6 cells).
    tr = simulate(alg, np.array([[2.0]]), 200_000, np.random.default_rng(7))
    freq = np.bincount(tr.actions[:, 0], minlength=6) / 200_000
    se = np.sqrt(table[2] * (1 - table[2]) / 200_000)
    assert np.all(np.abs(freq - table[2]) <= 6 * se + 1e-12)


@pytest.mark.parametrize("name", ["svt1", "svt2", "svt4", "svt6"])
def test_integrals_agree_with_simulation(name):
    """Each output with ≥ 100 expected runs of 400 000 is within 6 standard
    errors of n·P (P the bracket's middle; brackets are ~1e-5 wide).  Over
    ≤ 1024 outputs a false failure has probability < 1e-5."""
    alg = build(name)
    m = alg.extra["sparse_vector"]
    q = np.array([2.0] + [0.0] * 9)
    codes = outputs(m, 10)
    lo, hi = log_probability(m, q, codes)
    assert np.exp(lo).sum() <= 1 <= np.exp(hi).sum()
    assert np.max(hi - lo) < 1e-3
    n = 400_000
    tr = simulate(alg, q[:, None], n, np.random.default_rng(11))
    w = 3 ** np.arange(10)[::-1]
    counts = ((tr.actions.astype(np.int64) @ w)[:, None] == (codes @ w)[None, :]).sum(axis=0)
    p = np.exp((lo + hi) / 2)
    big = p * n >= 100
    z = (counts[big] / n - p[big]) / np.sqrt(p[big] * (1 - p[big]) / n)
    assert np.abs(z).max() < 6


def test_svt5_has_outputs_impossible_on_one_side_and_svt1_stays_within_epsilon():
    """Exact facts: without query noise some outputs of one side are
    impossible on the other (infinite loss); Lyu et al.'s Alg 1 at ε = 0.1
    has every output's loss ≤ 0.1 (to the bracket) on the suite's patterns."""
    from attacks.testers import pattern_pairs
    svt5, svt1 = build("svt5"), build("svt1")
    m5 = svt5.extra["sparse_vector"]
    a, b = np.ones(10), np.array([0.0] * 5 + [1.0] * 5)
    codes = outputs(m5, 10)
    _, hi_a = log_probability(m5, a, codes)
    lo_b, _ = log_probability(m5, b, codes)
    # ⊥⊥⊥⊥⊥⊤⊤⊤⊤⊤: possible when the answers are 0 then 1, impossible on all ones.
    assert np.any(np.isfinite(lo_b) & np.isneginf(hi_a))
    m1 = svt1.extra["sparse_vector"]
    for _, la, lb in pattern_pairs(svt1):
        codes = outputs(m1, 10)
        lo1, _ = log_probability(m1, la[:, 0], codes)
        _, hi2 = log_probability(m1, lb[:, 0], codes)
        assert np.max(lo1 - hi2) <= 0.1 + 1e-9


def test_svt3_density_of_a_released_value():
    """Alg 3 releases the compared value y with ⊤: its density is
    f_ν(y − q)·P(ρ ≤ y − T, the ⊥ rounds before), with no extra P(⊤) factor.
    (1) ⊥ on rounds 1–9 then a low y at round 10, answers 0 vs 1: every round
    contributes exactly 1/b_ν = 0.05, so the exact loss is 0.5.
    (2) P(⊤ at round 1 with y in (10, 12)) from the integrated density agrees
    with 400 000 runs within 6 standard errors (false failure < 1e-8)."""
    alg = build("svt3")
    m = alg.extra["sparse_vector"]
    codes = np.array([[0] * 9 + [1]])
    vals = np.array([[0.0] * 9 + [-30.0]])
    lo_a, hi_a = log_probability(m, np.zeros(10), codes, vals)
    lo_b, hi_b = log_probability(m, np.ones(10), codes, vals)
    assert lo_a - hi_b == pytest.approx(0.5, abs=1e-6) and hi_a - lo_b == pytest.approx(0.5, abs=1e-6)
    q = np.zeros(10)
    tr = simulate(alg, q[:, None], 400_000, np.random.default_rng(3), point_rounds=range(10))
    y = tr.points[0][:, 0]
    freq = float(np.mean((tr.actions[:, 0] == 1) & (y > 10) & (y < 12)))
    grid = np.linspace(10, 12, 81)
    first = np.array([[1] + [2] * 9])
    dens = [float(np.exp(log_probability(m, q, first, np.array([[g] + [0.0] * 9]))[0][0]))
            for g in grid]
    p = float(np.trapezoid(dens, grid))
    assert abs(freq - p) < 6 * math.sqrt(p * (1 - p) / 400_000)


# ------------------------------------------- sparse vector: bounded enumeration
SVT_NAMES = ["svt1", "svt2", "svt3", "svt4", "svt5", "svt6", "numerical-svt"]


def _model(name, **kw):
    return build(name, **kw).extra["sparse_vector"]


@pytest.mark.parametrize("cutoff,n", [(None, 1), (None, 9), (1, 12), (2, 9), (3, 7), (7, 5),
                                      (5, 5)])
def test_output_count_is_combinatorial_and_outputs_are_well_formed(cutoff, n):
    """The count Σ_{k ≤ c} C(n, k) (2^n without a cutoff) equals the number of
    distinct well-formed sequences among all 3^n code strings."""
    import itertools
    from algorithms.sparse_vector_model import SparseVectorModel
    from audit.engine.models.sparse_vector.integral import output_count, well_formed
    m = SparseVectorModel(1.0, 2.0, 4.0, cutoff)
    every = outputs(m, n)
    assert len(every) == output_count(m, n) == len({tuple(r) for r in every.tolist()})
    assert well_formed(m, every).all()
    brute = np.array(list(itertools.product((0, 1, 2), repeat=n)))
    assert int(well_formed(m, brute).sum()) == output_count(m, n)
    assert every.tolist() == sorted(every.tolist())


def test_large_outputs_are_counted_not_enumerated():
    from audit.engine.models.sparse_vector.integral import ENUMERATION_LIMIT, enumerable, output_count
    m1, m6 = _model("svt1"), _model("svt6")
    assert output_count(m1, 1000) == 1001 and enumerable(m1, 1000)
    assert output_count(m6, 24) == 2 ** 24 > ENUMERATION_LIMIT
    assert not enumerable(m6, 24) and not enumerable(_model("numerical-svt"), 10)
    with pytest.raises(ValueError, match="enumerated at most"):
        outputs(m6, 24)
    # svt1 at T = 24 (2^24 code strings, 25 outputs): instant, all of them.
    assert len(outputs(m1, 24)) == 25


def test_long_horizon_stays_within_bounded_memory():
    """svt1 at T = 1000: all 1001 outputs on a pattern's answers, certified,
    with numpy's peak allocation (traced) under 64 MB."""
    import tracemalloc
    from audit.engine.models.sparse_vector.integral import all_outputs_log_probability
    m = _model("svt1", horizon=1000)
    q = np.ones(1000)
    q[500:] = 0.0
    tracemalloc.start()
    try:
        codes, lo, hi = all_outputs_log_probability(m, q)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(codes) == 1001
    assert np.all(lo <= hi)
    assert np.exp(lo).sum() <= 1 <= np.exp(hi).sum()
    assert peak < 64 * 2 ** 20, peak


@pytest.mark.parametrize("eps", [100.0, 1e4])
@pytest.mark.parametrize("name", ["svt1", "svt2", "svt4", "svt5", "svt6"])
def test_large_epsilon_brackets_are_ordered_and_bracket_one(name, eps):
    """At large ε the scales are tiny next to the answers' kinks: the grid
    still holds every kink and the tails decay, so every bracket is ordered
    and the total probability is bracketed around 1 on every pattern."""
    from attacks.testers import pattern_pairs
    from audit.engine.models.sparse_vector.integral import all_outputs_log_probability
    alg = build(name, epsilon=eps)
    m = alg.extra["sparse_vector"]
    for _, a, b in pattern_pairs(alg):
        for q in (a[:, 0], b[:, 0]):
            _, lo, hi = all_outputs_log_probability(m, q)
            assert np.all(lo <= hi)
            assert np.exp(lo).sum() <= 1 <= np.exp(hi).sum()


def test_svt1_at_epsilon_100_audits_end_to_end(tmp_path):
    """``audit run svt1 --epsilon 100 --mode integral``: exit 0, every pair's
    exact ε (the patterns' and the optimised pair's) a bracket with
    lo ≤ hi, at most the claim (Alg 1 is ε-DP)."""
    from audit import jsondoc
    from audit.cli.main import main
    out = tmp_path / "r.json"
    assert main(["run", "svt1", "--epsilon", "100", "--mode", "integral", "--trials", "2000",
                 "--jobs", "1", "--no-store", "--quiet", "--json", str(out)]) == 0
    doc = jsondoc.loads(out.read_text())
    pairs = [a["details"]["pair_epsilon"] for a in doc["attacks"] if a["kind"] == "integral"]
    assert len(pairs) == 9          # the 8 patterns and the optimised pair
    for lo, hi in pairs:
        assert 0 <= lo <= hi <= 100 * (1 + 1e-6)
    assert 0 < doc["epsilon_lower_bound"] <= 100


@pytest.mark.parametrize("name", SVT_NAMES)
def test_brackets_are_always_ordered(name):
    """On random answers (and, for numeric models, simulated outputs), every
    certified bracket has lo ≤ hi, with the output counts bracketing 1."""
    alg = build(name)
    m = alg.extra["sparse_vector"]
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = rng.uniform(-10, 10, 10)
        if m.finite_outputs:
            codes = outputs(m, 10)
            lo, hi = log_probability(m, q, codes)
            assert np.exp(lo).sum() <= 1 <= np.exp(hi).sum()
        else:
            tr = simulate(alg, q[:, None], 200, rng, point_rounds=range(10))
            codes = tr.actions
            values = np.stack([tr.points[t][:, 0] for t in range(10)], axis=1)
            lo, hi = log_probability(m, q, codes, values)
            assert np.all(np.isfinite(lo))
        assert not np.any(np.isnan(lo)) and not np.any(np.isnan(hi))
        assert np.all(lo <= hi)


def test_an_unordered_bracket_is_an_internal_error(monkeypatch):
    """An inverted bracket can only come from a bug: log_probability raises
    instead of returning it."""
    from audit.engine.models.sparse_vector import integral as svt_integral
    real = svt_integral._segment_bounds

    def inverted(*args):
        lo, hi = real(*args)
        return hi + 1.0, lo
    monkeypatch.setattr(svt_integral, "_segment_bounds", inverted)
    m = _model("svt1")
    with pytest.raises(AssertionError, match="not ordered"):
        log_probability(m, np.zeros(10), outputs(m, 10))
    with pytest.raises(AssertionError, match="not ordered"):
        svt_integral.check_ordered(np.array([0.0, -1.0]), np.array([0.0, np.nan]), "test")


def test_outputs_too_many_to_enumerate_are_sampled():
    """svt6 at T = 24 (2^24 outputs): the integral evidence samples outputs,
    integrates each distinct one exactly, and certifies the largest loss;
    the sparse-vector-identity check replays the declared model on every
    pilot run's own draws."""
    from audit.engine import audit_algorithm
    alg = build("svt6", horizon=24)
    res = audit_algorithm(alg, ["patterns"], trials=200, modes=["integral"], seed=3)
    assert all(c.passed for c in res.declaration_checks)
    assert [c.check for c in res.declaration_checks] == ["sparse-vector-identity"] * 8
    found = [r for r in res.results if r.kind == "integral"]
    assert len(found) == 8
    for r in found:
        d = r.details
        assert d["enumerated"] is False and 0 < d["distinct_outputs"] <= 400
        assert d["outputs_log2"] == pytest.approx(24)
        assert any("sampled instead" in n for n in r.notes)
    # Alg 6 is not 0.1-DP: a sampled output certifies it (half-half).
    assert res.violation and max(r.epsilon_lower_bound for r in found) > 0.1


# ------------------------------------------------- released values in one pass
def test_svt3_outputs_in_one_pass_agree_with_each_alone():
    """Alg 3's sampled outputs (each with its own limit y − T) bracketed in
    one pass over one grid, and each output bracketed alone on a grid
    refined around its own limit (the grid each output had before the
    one-pass integration): every pair of brackets overlaps (both hold the
    same true value), and the one-pass bracket is at most 1 % wider (the
    cells sit elsewhere; on these outputs it is up to 5× narrower than the
    former per-output integration and never wider)."""
    alg = build("svt3")
    m = alg.extra["sparse_vector"]
    q = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 2.0, 1.0, 0.0, 2.0, 1.0])
    tr = simulate(alg, q[:, None], 60, np.random.default_rng(8), point_rounds=range(10))
    codes = tr.actions.astype(np.int64)
    values = np.stack([tr.points[t][:, 0] for t in range(10)], axis=1)
    lo, hi = log_probability(m, q, codes, values)
    for i in range(len(codes)):
        l1, h1 = log_probability(m, q, codes[i:i + 1], values[i:i + 1])
        assert max(lo[i], l1[0]) <= min(hi[i], h1[0]), i
        assert hi[i] - lo[i] <= (h1[0] - l1[0]) * 1.01 + 1e-12, i


def test_numerical_svt_fresh_numbers_enumerated_bound_every_sampled_output():
    """numerical-svt releases fresh numbers: the pair's exact ε over every
    code sequence (each fresh number at the numerator's answer) is at least
    the certified loss of every sampled output, and its certifying output,
    recomputed through the general density path, gives the same bracket."""
    from audit.engine.models.sparse_vector.integral import exact_pair
    from attacks.testers import pattern_pairs
    alg = build("numerical-svt")
    m = alg.extra["sparse_vector"]
    _, la, lb = pattern_pairs(alg)[4]
    a, b = la[:, 0], lb[:, 0]
    pair = exact_pair(m, a, b)
    tr = simulate(alg, la, 300, np.random.default_rng(9), point_rounds=range(10))
    codes = tr.actions.astype(np.int64)
    values = np.stack([tr.points[t][:, 0] for t in range(10)], axis=1)
    lo_a, hi_a = log_probability(m, a, codes, values)
    lo_b, hi_b = log_probability(m, b, codes, values)
    assert np.max(lo_a - hi_b) <= pair.upper + 1e-12
    num, den = (a, b) if pair.direction == "l>l'" else (b, a)
    l1, h1 = log_probability(m, num, pair.codes[None], pair.values[None])
    l2, h2 = log_probability(m, den, pair.codes[None], pair.values[None])
    assert max(l1[0] - h2[0], pair.lower) <= min(h1[0] - l2[0], pair.best_upper) + 1e-9


# -------------------------------------------------------- svt34-parallel
def test_parallel_sparse_vectors_agree_with_simulation():
    """svt34-parallel at T = 4: each joint code sequence's certified
    probability — the product of the two halves' (SVT3's codes alone are a
    sparse vector releasing nothing) — against 200 000 runs: |z| < 5 for
    every one of the 121 outputs expected at least 100 times (a false
    failure has probability < 121 × 5.8e-7 ≈ 7e-5); and SVT3's released
    value: P(the first ⊤⊥⊥⊥ with y in (15, 25), the second ⊥⊥⊥⊥) from the
    integrated density, within 5 standard errors (< 6e-7)."""
    import dataclasses
    from audit.engine.models.sparse_vector import parallel
    alg = build("svt34-parallel", horizon=4)
    pm = alg.extra["parallel_sparse_vectors"]
    q = np.array([2.0, -1.0, 0.5, 1.0])
    codes_only = dataclasses.replace(pm, first=dataclasses.replace(pm.first, numeric=None))
    first, second = outputs(codes_only.first, 4), outputs(pm.second, 4)
    joint = (3 * first[:, None, :] + second[None, :, :]).reshape(-1, 4)
    lo, hi = parallel.log_probability(codes_only, q, joint)
    assert np.all(lo <= hi) and np.exp(lo).sum() <= 1 <= np.exp(hi).sum()
    n = 200_000
    tr = simulate(alg, q[:, None], n, np.random.default_rng(12), point_rounds=range(4))
    w = 9 ** np.arange(4)[::-1]
    counts = ((tr.actions.astype(np.int64) @ w)[:, None] == (joint @ w)[None, :]).sum(axis=0)
    p = np.exp((lo + hi) / 2)
    big = p * n >= 100
    z = (counts[big] / n - p[big]) / np.sqrt(p[big] * (1 - p[big]) / n)
    assert big.sum() > 20 and np.abs(z).max() < 5
    y = tr.points[0][:, 0]
    out = np.array([[3, 0, 0, 0]])      # the first: ⊤⊥⊥⊥, the second: ⊥⊥⊥⊥
    hit = np.all(tr.actions == out, axis=1)
    freq = float(np.mean(hit & (y > 15) & (y < 25)))
    grid = np.linspace(15, 25, 201)
    dens = [float(np.exp(parallel.log_probability(pm, q, out, np.array([[g, 0, 0, 0]]))[0][0]))
            for g in grid]
    prob = float(np.trapezoid(dens, grid))
    assert abs(freq - prob) < 5 * math.sqrt(prob * (1 - prob) / n)


@pytest.mark.parametrize("factor", [0.5, 1.1])
def test_parallel_declaration_off_by_a_common_factor_is_refused(factor):
    """Both halves' scales f× what the code draws: no draw has them, refused
    by parallel-sparse-vector-identity; the correct one passes and its exact
    evidence certifies more than the composed claim 2ε (Alg 3 leaks)."""
    import dataclasses
    from audit.engine import audit_algorithm
    alg = build("svt34-parallel")
    pm = alg.extra["parallel_sparse_vectors"]

    def scaled(h):
        return dataclasses.replace(h, threshold_scale=h.threshold_scale * factor,
                                   query_scale=h.query_scale * factor)
    alg.extra = {**alg.extra, "parallel_sparse_vectors": dataclasses.replace(
        pm, first=scaled(pm.first), second=scaled(pm.second))}
    with pytest.raises(ValueError, match="refused: declaration check parallel-sparse-vector"):
        audit_algorithm(alg, ["patterns"], trials=1000, seed=0, modes=["integral"])
    res = audit_algorithm(build("svt34-parallel"), ["patterns"], trials=1000, seed=0,
                          modes=["integral"])
    assert all(c.passed and c.rests_on == "identity" for c in res.declaration_checks)
    found = [r for r in res.results if r.kind == "integral"]
    assert len(found) == 8 and all(r.exact for r in found)
    assert res.violation and max(r.epsilon_lower_bound for r in found) > 0.2


def test_parallel_halves_must_use_distinct_draws():
    """A code whose two halves share one threshold draw is not two
    independent sparse vectors: the second half's replay may not use the
    first's draws, so the declaration is refused."""
    from algorithms.dp_testers import mechanisms as mech
    from attacks.testers import Patterns
    from audit.engine.models.sparse_vector import parallel
    alg = build("svt34-parallel")
    pm = alg.extra["parallel_sparse_vectors"]
    half = mech.sparse_vector(1.0, pm.second.threshold_scale, pm.second.query_scale,
                              pm.second.cutoff)

    def shared(first):
        def init(runs, rng):
            s = first.init(runs, rng)
            return {**s, "twin": dict(s)}
        def feed(state, actions, row, rng):
            new = first.feed(state, actions, row, rng)
            return {**new, "twin": half.feed(state["twin"], actions, row, rng)}
        def act(state, advice, rng):
            _, c = first.act(state, advice, rng)
            _, d = half.act(state["twin"], advice, rng)
            return state, 3 * c + d
        return first._replace(init=init, feed=feed, act=act, n_arms=9, point=None)
    twin = dataclasses.replace(pm, first=pm.second)
    alg.learner = shared(half)
    alg.extra = {**alg.extra, "parallel_sparse_vectors": twin}
    sc = Patterns().scenarios(alg, events=False)[0]
    c = parallel.checks(alg, sc, 0, 0)[0]
    assert not c.passed and "second sparse vector" in c.what


def test_corner_events_count_what_their_labels_say():
    """``PointCorner`` counts, for m = 1, 2, …, the runs whose first m
    listed coordinates all lie on their listed sides: checked against a
    direct count on random points (no randomness in the check itself)."""
    from attacks.testers import PointCorner
    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 6))
    fam = PointCorner((0,), ((4, 1, 5),), ((0.1, -0.2, 0.3),), ((True, False, True),))
    want, inside = [], np.ones(500, dtype=bool)
    for i, c, up in zip((4, 1, 5), (0.1, -0.2, 0.3), (True, False, True)):
        inside &= (x[:, i] > c) if up else (x[:, i] <= c)
        want.append(int(inside.sum()))
    assert fam.count(np.zeros((500, 1)), [x]).tolist() == want
    assert len(fam.labels) == 3 and fam.labels[1] == "x_1[5] > 0.1 and x_1[2] <= -0.2"


def test_count_events_count_what_their_labels_say():
    """``PointCount`` counts, for each m (4, 8, … below the listed
    coordinates, and all of them) and m/2 < k < m, the runs with at least k
    of their first m listed coordinates on their listed sides: checked
    against a direct count on random points (no randomness in the check)."""
    from attacks.testers import PointCount
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2000, 12))
    coords = (7, 0, 3, 11, 5, 9)
    ths = tuple(rng.normal(scale=0.3, size=6).round(3).tolist())
    ups = (True, False, True, True, False, True)
    fam = PointCount((0,), (coords,), (ths,), (ups,), "on the side favouring ℓ")
    side = np.stack([(x[:, i] > c) if up else (x[:, i] <= c)
                     for i, c, up in zip(coords, ths, ups)], axis=1)
    want = [int((side[:, :m].sum(axis=1) >= k).sum()) for m in (4, 6) for k in range(m // 2 + 1, m)]
    assert fam.count(np.zeros((2000, 1)), [x]).tolist() == want
    assert len(fam.labels) == len(want) == 3
    assert fam.labels[0].startswith("at least 3 of 4 coordinates of x_1 on the side favouring ℓ "
                                    "(x_1[8] > ")


def test_many_small_moves_are_counted_together():
    """laplace-parallel releases 20 Laplace copies of one answer, each
    moving the ratio by ε/20 = 0.005: no pilot can tell which way one copy
    moves, and the sum of the raw copies reaches the ratio only far in its
    tail.  The count of copies on one side of their thresholds is the
    likelihood ratio's own statistic (at least 14 of 20: the ratio e^0.045
    with probability 0.06).  Measured on this pair alone at 2·10⁶ runs a
    side: the best sum event 0.0167 and 0.0148 (seeds 0, 1; count events
    left out), the count events 0.0224, 0.0248, 0.0274, 0.0302 (seeds 0–3).
    Fixed seed 0; asserted: a count event is tested and its bound exceeds
    0.019, above what the sums reached; the count's bound has a standard
    deviation of about 0.003 across seeds, so a seed missing it by chance is
    a 2-standard-deviation event, and seed 0 is fixed."""
    from audit.engine.audit import audit_algorithm
    alg = build("laplace-parallel")
    r = audit_algorithm(alg, trials=2_000_000, confidence=0.9, modes=["black-box"],
                        pairs=["patterns:one-above"], jobs=1, seed=0)
    t = r.results[0].test
    assert t.event.startswith("at least ") and " of 20 coordinates of x_1 " in t.event, t.event
    assert t.epsilon_lower_bound > 0.019, t


def test_rappor_corner_leads_with_the_bits_the_pair_moves():
    """One-time RAPPOR on 4 → 5, whose Bloom filters differ in all 8 bits
    (each moving the report by ln(0.525/0.475) ≈ 0.1): the corner events'
    first 8 coordinates are exactly those bits, each on the side its value's
    filter favours.  From 32 000 pilot runs a side a bit that does not move
    has |log-ratio| of about 0.011 (one standard error), a moving one 0.1,
    so a wrong ranking needs a 9-standard-error fluke (< 10⁻¹⁵); the pilot's
    streams are fixed, so this is deterministic."""
    from attacks.testers import PointCorner, stream_events
    alg = build("one-time-rappor")
    a, b = np.array([[4.0]]), np.array([[5.0]])
    fam = stream_events(alg, a, b, key=1)
    lean_a = next(p for p in fam.parts if isinstance(p, PointCorner))
    ba, bb = bloom_bits(4, 4, 20).astype(bool), bloom_bits(5, 4, 20).astype(bool)
    moved = set(np.flatnonzero(ba != bb).tolist())
    assert len(moved) == 8
    first = lean_a.coords[0][:8]
    assert set(first) == moved
    assert all(up == bool(ba[i]) for i, up in zip(first, lean_a.above[0][:8]))


def test_a_one_answer_integer_domain_is_searched_whole():
    """The stream search of a one-answer mechanism over a small integer
    domain tries every neighbouring pair (v, v ± 1), each inside the domain
    and accepted by the claim's relation; a larger input is sampled."""
    from attacks.testers import enumerable, search_candidates
    alg = build("rappor")
    cands = search_candidates(alg)
    pairs = {(float(a[0, 0]), float(b[0, 0])) for _, a, b in cands}
    assert pairs == {(v, w) for v in range(-10, 11) for w in (v - 1, v + 1) if -10 <= w <= 10}
    assert len(cands) == len(pairs)
    assert all(alg.claim.not_neighbours(a, b) is None for _, a, b in cands)
    assert enumerable(alg) and not enumerable(build("noisy-hist1"))


def test_part_sequences_count_each_part_of_the_codes():
    """``PartSequenceIs`` reads digit ``part`` of each code in the declared
    mixed radix (first part most significant) and counts whole sequences of
    it: checked against a direct count on random codes of two parts of
    sizes 3 and 4 (no randomness in the check)."""
    from attacks.testers import PartSequenceIs, code_part, part_sequence_families
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 12, size=(3000, 3))
    first, second = codes // 4, codes % 4
    assert np.array_equal(code_part(codes, (3, 4), 0), first)
    assert np.array_equal(code_part(codes, (3, 4), 1), second)
    seqs = ((0, 1, 2), (2, 2, 2), (1, 0, 1))
    fam = PartSequenceIs(seqs, 3, part=0, sizes=(3, 4))
    want = [int((first == np.array(s)).all(axis=1).sum()) for s in seqs]
    assert fam.count(codes).tolist() == want
    assert fam.labels[0] == "part 1 of 2 of each code: J = (1,2,3)"
    fams = part_sequence_families(codes, (3, 4))
    assert [(f.part, f.n_codes) for f in fams] == [(0, 3), (1, 4)]
    # every part's listed sequences are distinct and its most frequent ones
    top = fams[1].sequences[0]
    assert (second == np.array(top)).all(axis=1).sum() == max(
        (second == row).all(axis=1).sum() for row in second[:200])
    assert part_sequence_families(codes, ()) == [] and part_sequence_families(codes, (12,)) == []


def test_two_sparse_vectors_side_by_side_are_caught_black_box():
    """svt34-parallel (Lyu et al.'s Algs 3 and 4 side by side, claimed
    0.2-DP by basic composition; the half-half pair's exact ε is 0.486)
    declares its code as two parts (3·SVT3 + SVT4).  Its 3 136 joint code
    sequences are too many for the telling ones to be frequent in a pilot,
    but SVT4's 56 sequences on their own carry most of the ratio (an oracle
    union of them certifies 0.277 at 3.2·10⁶ runs a side).  Measured on the
    half-half pair alone, black-box, no witness, 2·10⁶ runs a side: 0.2255,
    0.2406, 0.2649, 0.2561 at seeds 0–3 (s.d. about 0.018; without the part
    events 0.15 at seed 0).  Fixed seed 0; asserted: the violation of the
    claim (ε_lb > 0.2) on a union of SVT4's sequences."""
    from audit.engine.audit import audit_algorithm
    alg = build("svt34-parallel")
    assert alg.learner.code_parts == (3, 3)
    r = audit_algorithm(alg, trials=2_000_000, confidence=0.9, modes=["black-box"],
                        pairs=["patterns:half-half"], jobs=1, seed=0, witness=False)
    t = r.results[0].test
    assert "part 2 of 2 of each code" in t.event, t.event
    assert t.epsilon_lower_bound > 0.2, t
    assert r.verdict == "violation"
