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
from algorithms.simulate import simulate
from audit.engine.svt_integral import log_probability, outputs
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
    assert alg.learner.reads_first and alg.default_attacks == ("patterns",)
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
