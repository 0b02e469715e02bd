"""The DP testers' benchmark suite (the mechanisms DP-Sniper and StatDP are
measured on) as online algorithms over a stream of query answers, at the
suite's sizes and parameters, each with the claim its source makes and its
true privacy parameter, derived or cited beside it.

Declared models: the sparse vectors declare a ``SparseVectorModel``,
svt34-parallel a ``ParallelSparseVectors`` and report-noisy-max a
``NoisyMaxModel``, so the ``integral`` mode computes their exact output
probabilities (after checking them against the code's own draws).  Where
the patterns fall short of the true ε (svt1, svt2, svt4, numerical-svt,
report-noisy-max1 and 2) the ``optimised`` attack joins them by default:
the pair maximising the declared model's exact pair ε.

Relations: the suite compares inputs whose every answer moves by at most 1
(``bounded-all``, Δ = 1) for the report-noisy-max, sparse vector and
prefix-sum mechanisms, and inputs that differ in one entry by 1
(``one-round``, Δ = 1: a histogram bin, a count) for the others.  The
continual counters are event-level: one round's value in [0, 1] changes.

Sources: Ding, Wang, Wang, Zhang & Kifer, "Detecting Violations of
Differential Privacy", CCS 2018 (noisy histograms, report-noisy-max);
Lyu, Su & Li, "Understanding the Sparse Vector Technique for Differential
Privacy", PVLDB 2017 (SVT Algs 1–6); Wang, Ding, Wang, Kifer & Zhang,
"Proving Differential Privacy with Shadow Execution", PLDI 2019 (numerical
SVT, prefix sum, SmartSum); Balcer & Vadhan, "Differential Privacy on Finite
Computers", ITCS 2018 (GeoSample); Erlingsson, Pihur & Korolova, "RAPPOR",
CCS 2014; Chan, Shi & Song, "Private and Continual Release of Statistics",
ACM TISSEC 2011 (binary mechanism, two-level counter).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import Algorithm, Claim
from ..noisy_max_model import NoisyMaxModel
from ..sparse_vector_model import ParallelSparseVectors, SparseVectorModel
from ..validate import check_epsilon, check_int, check_positive
from . import mechanisms as m

SUITE = "the DP testers' benchmark suite (DP-Sniper, StatDP)"
ATTACKS = ("patterns",)
# Where the exact pair ε (a declared model's, or the replayed code's) is known
# to fall short of the true ε on the patterns, the optimised pair joins them
# (``attacks.optimised``).
OPTIMISED = ("patterns", "optimised")
BOUNDED = {"relation": "bounded-all", "max_change": 1.0}
SINGLE = {"relation": "one-round", "max_change": 1.0}
DOMAIN = (-10.0, 10.0)


def _integers(lo: int, hi: int, T: int, K: int):
    """A check of the answers as integers in [lo, hi] (counts)."""
    def check(losses):
        arr = np.asarray(losses, dtype=float)
        if arr.shape != (T, K):
            raise ValueError(f"answers must have shape (T={T}, K={K}), got {arr.shape}")
        if not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
                and arr.min() >= lo and arr.max() <= hi):
            raise ValueError(f"answers must be integers in [{lo}, {hi}] (counts)")
        return arr
    return check


def _fixed(name, value, wanted):
    v = check_int(name, value, 1)
    if v != wanted:
        raise ValueError(f"{name} must be {wanted} for this mechanism, got {value!r}")
    return v


def _alg(name, learner, claim, T, K, params, true, why, suite_name, attacks=ATTACKS, **kw):
    extra = {"true_epsilon": true, "true_epsilon_source": why, "suite_name": suite_name,
             **kw.pop("extra", {})}
    return Algorithm(name, learner, claim, T, K, params, default_attacks=attacks, extra=extra,
                     **kw)


# ------------------------------------------------------------------ Laplace
def make_laplace(T=1, K=1, epsilon=0.1) -> Algorithm:
    _fixed("K (answers per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    claim = Claim(eps, 0.0, "transcript", "Dwork & Roth, Thm 3.6: Laplace(Δ/ε) is ε-DP",
                  output="the noisy answers", **BOUNDED)
    return _alg("laplace", m.noisy_release(1, 1 / eps), claim, T, 1, {"epsilon": eps},
                eps * T, "Laplace(1/ε) on each answer moved by at most 1: ε per answer",
                "LaplaceMechanism", loss_range=DOMAIN)


def make_gaussian(T=1, K=1, sigma=1.0) -> Algorithm:
    """The Gaussian mechanism on one answer moved by at most 1, claimed
    μ-GDP with μ = Δ/σ (Dong, Roth & Su 2019, Thm 2.7) — a curve claim: it
    has no finite pure ε.  ``--claim-mu`` below 1/σ audits a σ too small for
    the claim."""
    _fixed("K (answers per round)", K, 1)
    T = check_int("T (horizon)", T, 1)
    sigma = check_positive("sigma", sigma)
    mu = 1.0 / sigma
    claim = Claim.of_curve("gdp", mu * math.sqrt(T), "transcript",
                           "Dong, Roth & Su 2019, Thm 2.7: N(0, σ²) on a query of sensitivity "
                           "Δ is Δ/σ-GDP" + (f"; {T} answers composed (Cor. 3.3: μ√T)"
                                             if T > 1 else ""),
                           output="the noisy answers", **BOUNDED)
    return _alg("gaussian", m.noisy_release(1, sigma, gaussian=True), claim, T, 1,
                {"sigma": sigma}, math.inf,
                "N(0, σ²) has no finite pure ε; its exact curve is μ-GDP, μ = 1/σ",
                "GaussianMechanism", loss_range=DOMAIN,
                extra={"mechanism": {"law": "gaussian", "sensitivity": 1.0, "scale": sigma,
                                     "compositions": T,
                                     "source": "σ on one answer moved by at most 1"}})


def make_noisy_hist(name, scale_of, T=5, K=1, epsilon=0.1) -> Algorithm:
    _fixed("K (answers per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    b = scale_of(eps)
    alg_no = 9 if name == "noisy-hist1" else 10
    claim = Claim(eps, 0.0, "transcript", f"Ding et al. CCS 2018, Alg {alg_no}: noisy "
                  f"histogram, claimed ε-DP (neighbours: one bin count changes by 1)",
                  output="the noisy bin counts", **SINGLE)
    true = 1 / b
    return _alg(name, m.noisy_release(1, b), claim, T, 1, {"epsilon": eps, "noise_scale": b},
                true, f"one bin moves by 1 under Laplace({b:g}): 1/{b:g} = {true:g}",
                "NoisyHist1" if alg_no == 9 else "NoisyHist2",
                check_losses=_integers(0, 10, T, 1), loss_range=(0.0, 10.0))


def make_noisy_hist1(T=5, K=1, epsilon=0.1):
    return make_noisy_hist("noisy-hist1", lambda e: 1 / e, T, K, epsilon)


def make_noisy_hist2(T=5, K=1, epsilon=0.1):
    return make_noisy_hist("noisy-hist2", lambda e: e, T, K, epsilon)


def make_laplace_parallel(T=1, K=1, epsilon=0.1, copies=20) -> Algorithm:
    _fixed("K (answers per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    n = check_int("copies", copies, 1)
    claim = Claim(eps, 0.0, "transcript", f"basic composition (Dwork & Roth Thm 3.14) of {n} "
                  f"Laplace mechanisms with ε/{n} each", output=f"the {n} noisy copies",
                  **BOUNDED)
    return _alg("laplace-parallel", m.noisy_release(1, n / eps, copies=n), claim, T, 1,
                {"epsilon": eps, "copies": n, "epsilon_each": eps / n}, eps * T,
                f"{n} releases of the same answer, each ε/{n}: the losses add up to ε, "
                f"attained when every copy lies beyond both means", "LaplaceParallel",
                loss_range=DOMAIN)


def make_prefix_sum(T=10, K=1, epsilon=0.1) -> Algorithm:
    _fixed("K (answers per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    claim = Claim(T * eps, 0.0, "transcript", f"Wang et al. PLDI 2019 (PrefixSum): Laplace(1/ε) "
                  f"on each of the {T} answers, composed: {T}ε", output="the prefix sums of "
                  "the noisy answers (a bijection of the noisy answers)", **BOUNDED)
    return _alg("prefix-sum", m.noisy_release(1, 1 / eps, prefix=True), claim, T, 1,
                {"epsilon": eps}, T * eps, f"all {T} answers move by 1: {T}·ε, attained",
                "PrefixSum", loss_range=DOMAIN)


# ------------------------------------------------------- truncated geometric
def make_truncated_geometric(T=1, K=1, epsilon=0.1, n=5) -> Algorithm:
    _fixed("T (horizon)", T, 1)
    _fixed("K (answers per round)", K, 1)
    eps = check_epsilon(epsilon)
    n = check_int("n (individuals counted)", n, 1, 12)
    # The suite takes k = ⌈ln(2/ε)⌉ (natural log); Balcer & Vadhan's log is
    # base 2, which gives a larger k and a smaller ε.
    k = math.ceil(math.log(2 / eps))
    table = np.array(m.geometric_pmf_table(n, k))
    with np.errstate(divide="ignore"):
        lt = np.log(table)
    exact = max(float(np.max(lt[c] - lt[c2])) for c in range(n + 1) for c2 in (c - 1, c + 1)
                if 0 <= c2 <= n)
    theorem = math.log(1 + 2.0 ** -k)
    claim = Claim(eps, 0.0, "transcript", f"the suite's target ε for Balcer & Vadhan's GeoSample "
                  f"(Alg 4.8) with k = ⌈ln(2/ε)⌉ = {k}", output="the sampled count", **SINGLE)
    return _alg("truncated-geometric", m.truncated_geometric(n, k), claim, 1, 1,
                {"epsilon": eps, "n": n, "k": k}, exact,
                f"exact max log-ratio of the pmf over neighbouring counts = {exact:.6g}; "
                f"Balcer & Vadhan Thm 4.7: ln(1 + 2^-k) = {theorem:.6g}", "TruncatedGeometric",
                check_losses=_integers(0, n, 1, 1), loss_range=(0.0, float(n)),
                extra={"code_labels": [str(c) for c in range(n + 1)]})   # code c: count c


# ------------------------------------------------------- report noisy max
RNM = {1: ("laplace", "index"), 2: ("exponential", "index"), 3: ("laplace", "value"),
       4: ("exponential", "value")}


def make_report_noisy_max(which, T=1, K=5, epsilon=0.1) -> Algorithm:
    _fixed("T (horizon)", T, 1)
    K, eps = check_int("K (answers)", K, 1), check_epsilon(epsilon)
    noise, report = RNM[which]
    true, why = {
        1: (eps, "Dwork & Roth Claim 3.9 with Laplace(2/ε) for queries moving either way: ε"),
        2: (eps, "report-noisy-max with exponential noise is the permute-and-flip mechanism "
                 "(Ding, Kifer et al. 2021), ε-DP"),
        3: (K * eps / 2, f"the max's density and CDF are products over the {K} answers of "
                         f"Laplace(2/ε) terms, each changing by at most e^(ε/2) when its answer "
                         f"moves by 1; in the lower tail all {K} attain it together: {K}ε/2"),
        4: (math.inf, "the max of answers plus exponential noise has support [max q, ∞), which "
                      "moves with the answers: some outputs are impossible on one side"),
    }[which]
    claim = Claim(eps, 0.0, "actions", f"Ding et al. CCS 2018, Alg {4 + which}: report noisy max"
                  f" ({noise} noise 2/ε, reporting the {'index' if report == 'index' else 'value'}"
                  f"), claimed ε-DP", output="the reported " + ("index" if report == "index"
                                                                else "maximum"), **BOUNDED)
    return _alg(f"report-noisy-max{which}", m.noisy_max(K, 2 / eps, noise, report), claim, 1, K,
                {"epsilon": eps, "noise": noise, "report": report}, true, why,
                f"ReportNoisyMax{which}", loss_range=DOMAIN,
                extra={"noisy_max": NoisyMaxModel(noise, 2 / eps, report)},
                attacks=OPTIMISED if report == "index" else ATTACKS)


# ------------------------------------------------------------ sparse vector
def _svt_parts(which, eps, c, t):
    """(threshold scale, query scale, cutoff, resample, numeric) of Lyu et
    al.'s Alg ``which`` as the suite configures it."""
    e1 = eps / 4 if which == 4 else eps / 2
    e2 = eps - e1
    return {1: (1 / e1, 2 * c / e2, c, False, None),
            2: (c / e1, 2 * c / e2, c, True, None),
            3: (1 / e1, c / e2, c, False, "same"),
            4: (1 / e1, 1 / e2, c, False, None),
            5: (1 / e1, 0.0, None, False, None),
            6: (1 / e1, 1 / e2, None, False, None)}[which]


SVT_TRUE = {
    1: "Lyu et al. Thm 2 (Alg 1): ε-DP",
    2: "Lyu et al. (Alg 2, Dwork & Roth's version): ε-DP",
    3: "Lyu et al. (Alg 3, Roth's notes): releases the noisy answer with ⊤ and is not ε'-DP for "
       "any finite ε' as the number of queries grows; no closed form for 10 queries",
    4: "Lyu et al. (Alg 4, Stoddard et al.): ((1 + 6c)/4)·ε-DP",
    5: "no query noise: given ρ the output is a deterministic function of the answers, so some "
       "outputs are impossible on one side (Lyu et al.: ∞-DP)",
    6: "Lyu et al. (Alg 6, Chen et al.): no cutoff, not ε'-DP for any finite ε' as the number of "
       "queries grows; no closed form for 10 queries",
}


def make_svt(which, T=10, K=1, epsilon=0.1, c=1, t=None) -> Algorithm:
    _fixed("K (answers per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    c = check_int("c (cutoff)", c, 1)
    t = (0.5 if which == 1 else 1.0) if t is None else float(t)
    rho, nu, cutoff, resample, numeric = _svt_parts(which, eps, c, t)
    model = SparseVectorModel(t, rho, nu, cutoff, resample, numeric)
    true = {1: eps, 2: eps, 3: None, 4: (1 + 6 * c) / 4 * eps, 5: math.inf, 6: None}[which]
    claim = Claim(eps, 0.0, "actions", f"Lyu, Su & Li PVLDB 2017, Alg {which}: claimed ε-DP by "
                  "its source", output="the answers ⊥/⊤ (and aborted)" + (
                      ", with the noisy answer of each ⊤" if numeric else ""), **BOUNDED)
    learner = m.sparse_vector(t, rho, nu, cutoff, resample, numeric)
    return _alg(f"svt{which}", learner, claim, T, 1,
                {"epsilon": eps, "c": c, "threshold": t, "threshold_noise_scale": rho,
                 "query_noise_scale": nu}, true, SVT_TRUE[which],
                f"SparseVectorTechnique{which}", loss_range=DOMAIN,
                extra={"sparse_vector": model},
                attacks=OPTIMISED if which in (1, 2, 4) else ATTACKS)


def make_numerical_svt(T=10, K=1, epsilon=0.1, c=2, t=1.0) -> Algorithm:
    _fixed("K (answers per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    c, t = check_int("c (cutoff)", c, 1), float(t)
    model = SparseVectorModel(t, 3 / eps, 6 * c / eps, c, False, "fresh", 3 * c / eps)
    claim = Claim(eps, 0.0, "actions", "Wang et al. PLDI 2019 (NumericalSVT): ε-DP (ε/3 for "
                  "the threshold, ε/3 for the comparisons, ε/3 for the released values)",
                  output="⊥/⊤/aborted, with a fresh noisy answer for each ⊤", **BOUNDED)
    return _alg("numerical-svt", m.sparse_vector(t, 3 / eps, 6 * c / eps, c, False, "fresh",
                                                  3 * c / eps), claim, T, 1,
                {"epsilon": eps, "c": c, "threshold": t}, eps,
                "Wang et al. PLDI 2019: ε-DP", "NumericalSVT", loss_range=DOMAIN,
                extra={"sparse_vector": model}, attacks=OPTIMISED)


def make_svt34_parallel(T=10, K=1, epsilon=0.1, c=2, t=1.0) -> Algorithm:
    _fixed("K (answers per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    c, t = check_int("c (cutoff)", c, 1), float(t)
    three = m.sparse_vector(t, *_svt_parts(3, eps, c, t))
    four = m.sparse_vector(t, *_svt_parts(4, eps, c, t))
    model = ParallelSparseVectors(SparseVectorModel(t, *_svt_parts(3, eps, c, t)),
                                  SparseVectorModel(t, *_svt_parts(4, eps, c, t)), 3)
    claim = Claim(2 * eps, 0.0, "actions", "basic composition of Lyu et al.'s Algs 3 and 4, each "
                  "claimed ε-DP by its source", output="both mechanisms' answers (code "
                  "3·SVT3 + SVT4) and SVT3's noisy answers", **BOUNDED)
    return _alg("svt34-parallel", m.parallel_sparse_vectors(three, four), claim, T, 1,
                {"epsilon": eps, "c": c, "threshold": t}, None,
                "Alg 3 is not ε'-DP for any finite ε' as queries grow (Lyu et al.); Alg 4 is "
                f"((1 + 6c)/4)ε = {(1 + 6 * c) / 4 * eps:g}-DP; no closed form for the pair",
                "SVT34Parallel", loss_range=DOMAIN, extra={"parallel_sparse_vectors": model})


# -------------------------------------------------------------------- RAPPOR
def _rappor_true(table, hashes, size, lo=-10, hi=10):
    r = float(np.log(table[1][1] / table[0][1]))
    worst = 0
    for v in range(lo, hi):
        worst = max(worst, int(np.sum(m.bloom_bits(v, hashes, size)
                                      != m.bloom_bits(v + 1, hashes, size))))
    return worst * r, worst


def make_rappor(T=1, K=1, epsilon=None, hashes=4, size=20, f=0.75, p=0.45, q=0.55,
                one_time=False) -> Algorithm:
    _fixed("T (horizon)", T, 1)
    _fixed("K (answers per round)", K, 1)
    h, size = check_int("hashes", hashes, 1), check_int("size", size, 1)
    f = check_positive("f", f, 1.0)
    if one_time:
        table = m.report_bit_table(f)
        claimed = 2 * h * math.log((1 - f / 2) / (f / 2))
        source = "Erlingsson, Pihur & Korolova CCS 2014, ε∞ = 2h ln((1 − f/2)/(f/2)) (steps 1–2)"
        learner = m.rappor(h, size, f)
        params = {"hashes": h, "size": size, "f": f}
    else:
        p, q = check_positive("p", p, 1.0), check_positive("q", q, 1.0)
        table = m.report_bit_table(f, p, q)
        qs, ps = table[1][1], table[0][1]
        claimed = h * math.log(qs * (1 - ps) / (ps * (1 - qs)))
        source = ("Erlingsson, Pihur & Korolova CCS 2014, ε1 = h ln(q*(1 − p*)/(p*(1 − q*))) "
                  "for one report (steps 1–3)")
        learner = m.rappor(h, size, f, p, q)
        params = {"hashes": h, "size": size, "f": f, "p": p, "q": q}
    true, bits = _rappor_true(table, h, size)
    claim = Claim(claimed, 0.0, "transcript", source, output="the reported bits", **SINGLE)
    name = "one-time-rappor" if one_time else "rappor"
    return _alg(name, learner, claim, 1, 1, params, true,
                f"the Bloom filters of neighbouring values differ in at most {bits} of the 2h = "
                f"{2 * h} bits (hash collisions), each worth ln(P(1|1)/P(1|0))",
                "OneTimeRappor" if one_time else "Rappor",
                check_losses=_integers(-10, 10, 1, 1), loss_range=DOMAIN, attacks=OPTIMISED)


def make_one_time_rappor(T=1, K=1, epsilon=None, hashes=4, size=20, f=0.95) -> Algorithm:
    return make_rappor(T, K, epsilon, hashes, size, f, one_time=True)


# ------------------------------------------------------------------ counters
def make_binary_counter(T=16, K=1, epsilon=0.1) -> Algorithm:
    _fixed("K (values per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    levels = T.bit_length()             # ⌊log2 T⌋ + 1 p-sums can contain a round
    # Round s lies in the level-j p-sum released at t = the multiple of 2^j
    # at or after s, if t ≤ T: count the levels with such a t.
    most = max(sum(1 for j in range(levels) if ((s - 1) // 2 ** j + 1) * 2 ** j <= T)
               for s in range(1, T + 1))
    claim = Claim(eps, 0.0, "transcript", f"Chan, Shi & Song, Binary Mechanism: each p-sum "
                  f"with Laplace(L/ε), L = ⌊log2 T⌋ + 1 = {levels} p-sums per value",
                  output="the released noisy p-sums (the counts are their sums)")
    return _alg("binary-counter", m.binary_counter(levels / eps), claim, T, 1,
                {"epsilon": eps, "levels": levels}, eps * most / levels,
                f"a value lies in at most {most} released p-sums: ε·{most}/{levels}",
                None, loss_range=(0.0, 1.0))


def make_smart_sum(T=16, K=1, epsilon=0.1, block=4) -> Algorithm:
    _fixed("K (values per round)", K, 1)
    T, eps = check_int("T (horizon)", T, 1), check_epsilon(epsilon)
    block = check_int("block", block, 1)
    twice = any((i + 1) % block for i in range(T)) and any((i + 1) % block == 0 for i in range(T))
    claim = Claim(2 * eps, 0.0, "transcript", "SmartSum (Chan, Shi & Song's two-level counter, "
                  "as in the LightDP/ShadowDP benchmarks): Laplace(1/ε) per release, each value "
                  "in at most two releases: 2ε", output="the released noisy values (the "
                  "running counts are their sums)")
    return _alg("smart-sum", m.smart_sum(1 / eps, block), claim, T, 1,
                {"epsilon": eps, "block": block}, 2 * eps if twice else eps,
                "a value inside a block enters its own release and the block's sum: 2ε",
                None, loss_range=(0.0, 1.0))


def _svt_factory(i):
    def make(T=10, K=1, epsilon=0.1, c=1, t=None):
        return make_svt(i, T, K, epsilon, c, t)
    make.__name__ = f"make_svt{i}"
    return make


def _rnm_factory(i):
    def make(T=1, K=5, epsilon=0.1):
        return make_report_noisy_max(i, T, K, epsilon)
    make.__name__ = f"make_report_noisy_max{i}"
    return make


SVT_FACTORIES = {i: _svt_factory(i) for i in range(1, 7)}
RNM_FACTORIES = {i: _rnm_factory(i) for i in range(1, 5)}
