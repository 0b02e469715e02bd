"""Every algorithm of Asi, Raman & Talwar (ICML 2025), parameterised as the
paper's theorems say, with the privacy claim each theorem makes.

A factory takes (T, K, N, ε, δ) and optional overrides, and returns an
``Algorithm``.  ``log`` is the natural logarithm throughout (the paper's
proofs use e-based Laplace tail bounds).
"""
from __future__ import annotations

import math
from typing import Optional

from ..core import Algorithm, Claim, Learner
from ..validate import (check_arms, check_batch, check_delta, check_epsilon,
                        check_horizon, check_int, check_positive)
from .conversion import experts_from_bandit, private_batched
from .exp3 import exp3_learner
from .exp4 import batched_exp4_learner, ldp_exp4_learner
from .ftpl import ftpl_learner
from .htinf import htinf_learner

PAPER = "Asi, Raman & Talwar, Faster Rates for Private Adversarial Bandits (ICML 2025)"
ARMS = "the arms played I_1..I_T"


def _log1(x: float) -> float:
    """log(x) floored at 1: the corollaries assume εKT ≥ e-ish (ε ≥ 1/T); below
    that the formulas would divide by a non-positive log."""
    return max(math.log(x), 1.0)


def _unit_interval(name: str, value: float) -> float:
    return check_positive(name, value, upper=1.0)


def uniform_play(gamma: float, formula: Optional[float], where: str) -> dict:
    """``Algorithm.extra`` entry saying the actions do not depend on the data:
    with mixing γ = 1 the sampling law (1 − γ)·(learned part) + γ/K (EXP3's
    mixing in Algorithm 3, Algorithm 6 line 6, Algorithm 2 line 8) is 1/K
    every round, whatever the losses (``formula``: the theorem's γ before it
    was capped at 1, None when γ was given)."""
    if gamma < 1.0:
        return {}
    why = (f"{where}: the theorem's γ = {formula:.3g} is capped at 1" if formula is not None
           and formula > 1.0 else f"{where}: γ = 1")
    return {"data_independent": f"{why}: every action is drawn from the uniform law 1/K, "
                               f"whatever the losses; only the released noisy values depend "
                               f"on them"}


# --------------------------------------------------------------------- EXP3
def make_exp3(T, K=2, N=None, epsilon=None, delta=0.0, eta=None, gamma=None) -> Algorithm:
    """EXP3 with mixing (Algorithm 3), which has no privacy proof.

    Defaults η = γ = min(1, 100/T): the App. G.1 / Figure 1 setting
    (γ = η, T = 100/η), where the per-round privacy loss visibly diverges.
    Registered claim: per round ε_t = 2ηK/γ — what the exponential
    weights analysis gives if the importance weights were public (losses ≤ 1,
    estimates ≤ K/γ) — and εT = 2ηKT/γ over T rounds by basic composition.
    """
    T, K = check_horizon(T), check_arms(K)
    if epsilon is not None:
        raise ValueError("epsilon is not a parameter of exp3 (its claim follows from "
                         "eta and gamma); use --param eta=... --param gamma=...")
    eta = _unit_interval("eta", min(1.0, 100.0 / T) if eta is None else eta)
    gamma = _unit_interval("gamma", eta if gamma is None else gamma)
    per_round = 2.0 * eta * K / gamma
    claim = Claim(per_round * T, 0.0, "actions",
                  "exponential-weights analysis with public importance weights "
                  "(ε_t = 2ηK/γ, basic composition); no proof exists — App. G.1",
                  per_round_epsilon=per_round)
    extra = uniform_play(gamma, None, f"T = {T}")
    if extra:   # EXP3 releases nothing: its whole output is the actions
        extra["data_independent"] = (f"γ = 1 at T = {T}: every action is drawn from the "
                                     f"uniform law 1/K, whatever the losses")
    return Algorithm("exp3", exp3_learner(K, eta, gamma), claim, T, K,
                     {"eta": eta, "gamma": gamma}, default_attacks=("g1",), extra=extra)


# ------------------------------------------------- Algorithm 1 conversions
def _conversion(name, T, K, epsilon, base_factory, tau, params, source,
                regret_bound=None, extra=None) -> Algorithm:
    """Algorithm 1 around ``base_factory(rounds)``; ``rebuild`` swaps the
    base learner, which Lemma 3.3 allows because it holds for every B."""
    # Lemma 3 is about the arms Algorithm 1 plays; the noisy batch losses fed
    # to the inner learner are the proof's object (privacy + post-processing).
    claim = Claim(epsilon, 0.0, "actions", f"{PAPER}, Lemma 3.3 ({source})", output=ARMS)

    def build(base: Learner) -> Algorithm:
        learner = private_batched(base, tau, epsilon, T)
        return Algorithm(name, learner, claim, T, K, params,
                         rebuild=build, base_arms=K,
                         default_attacks=("canary", "first-round", "batch-edge"),
                         extra={"regret_bound": regret_bound} if regret_bound else {})

    alg = build(base_factory())
    # Only the registered base learner plays uniformly; the canary (rebuild) does not.
    alg.extra.update(extra or {})
    return alg


def _tau_default(epsilon, T, tau):
    # Theorem 3.1 / every corollary: τ = ⌈1/ε⌉.
    return check_batch(math.ceil(1.0 / epsilon) if tau is None else tau, T)


def make_private_exp3(T, K=2, N=None, epsilon=1.0, delta=0.0, tau=None, eta=None,
                      gamma=None) -> Algorithm:
    """Algorithm 1 around EXP3 (Corollary E.1): τ = ⌈1/ε⌉,
    η = √(log K / (22 εKT log²(εKT))), γ = 4ηK log(εKT)."""
    T, K, epsilon = check_horizon(T), check_arms(K), check_epsilon(epsilon)
    tau = _tau_default(epsilon, T, tau)
    L = _log1(epsilon * K * T)
    eta = _unit_interval("eta", math.sqrt(math.log(K) / (22 * epsilon * K * T * L ** 2))
                         if eta is None else eta)
    formula = 4 * eta * K * L if gamma is None else None
    gamma = _unit_interval("gamma", min(1.0, formula) if gamma is None else gamma)
    bound = ("36·√(tK log K)·log(Kt)/√ε + 4/ε", "Corollary E.1",
             lambda t: 36 * math.sqrt(t * K * math.log(K)) * math.log(K * t) / math.sqrt(epsilon)
             + 4 / epsilon)
    return _conversion("private-exp3", T, K, epsilon, lambda: exp3_learner(K, eta, gamma),
                       tau, {"epsilon": epsilon, "tau": tau, "eta": eta, "gamma": gamma},
                       "Corollary E.1", bound,
                       extra=uniform_play(gamma, formula, f"Corollary E.1 at T = {T}"))


def make_private_ftpl(T, K=2, N=None, epsilon=1.0, delta=0.0, tau=None, eta=None,
                      M=None) -> Algorithm:
    """Algorithm 1 around FTPL with geometric resampling (Algorithm 4,
    Corollary E.3 / Lemma E.4 with λ = 1): τ = ⌈1/ε⌉, M = ⌈√(εKT)⌉,
    η = min{√(log K/(εKT + 10εKT log²(εKT))), 1/(M(1 + 4 log(εT)))}."""
    T, K, epsilon = check_horizon(T), check_arms(K), check_epsilon(epsilon)
    tau = _tau_default(epsilon, T, tau)
    n = epsilon * K * T
    M = check_int("M", math.ceil(math.sqrt(n)) if M is None else M, 1)
    if eta is None:
        eta = min(math.sqrt(math.log(K) / (n + 10 * n * _log1(n) ** 2)),
                  1.0 / (M * (1 + 4 * max(math.log(epsilon * T), 0.0))))
    eta = check_positive("eta", eta)
    return _conversion("private-ftpl", T, K, epsilon, lambda: ftpl_learner(K, eta, M),
                       tau, {"epsilon": epsilon, "tau": tau, "eta": eta, "M": M},
                       "Corollary E.3")


def htinf_sigma(tau: int, epsilon: float) -> float:
    """σ for HTINF on Lap(λ)-noised losses, λ = 1/(τε): the paper's moment
    bound E|ℓ̃|² ≤ 2 + 4λ² (App. D) in HTINF's convention E|ℓ|^α ≤ σ^α gives
    σ = √(2 + 4λ²), i.e. √6 at λ = 1 (the paper states σ = 6, also valid)."""
    lam = 1.0 / (tau * epsilon)
    return math.sqrt(2.0 + 4.0 * lam ** 2)


def make_private_htinf(T, K=2, N=None, epsilon=1.0, delta=0.0, tau=None,
                       sigma=None) -> Algorithm:
    """Algorithm 1 around HTINF with α = 2 (Corollary 3.2): τ = ⌈1/ε⌉."""
    T, K, epsilon = check_horizon(T), check_arms(K), check_epsilon(epsilon)
    tau = _tau_default(epsilon, T, tau)
    sigma = check_positive("sigma", htinf_sigma(tau, epsilon) if sigma is None else sigma)
    bound = ("208·√(tK/ε) + 2/ε", "Corollary 3.2 (proof, App. D)",
             lambda t: 208 * math.sqrt(t * K / epsilon) + 2 / epsilon)
    return _conversion("private-htinf", T, K, epsilon, lambda: htinf_learner(K, sigma),
                       tau, {"epsilon": epsilon, "tau": tau, "sigma": sigma},
                       "Corollary 3.2", bound)


def make_private_experts(T, K=2, N=4, epsilon=1.0, delta=0.0, tau=None,
                         sigma=None) -> Algorithm:
    """Algorithm 5 around Algorithm 1 around HTINF over the N experts
    (Theorem 4.2 / Corollary 4.3): τ = ⌈1/ε⌉, σ as in Corollary 3.2."""
    T, K, epsilon = check_horizon(T), check_arms(K), check_epsilon(epsilon)
    N = check_int("N (experts)", N, 2)
    tau = _tau_default(epsilon, T, tau)
    sigma = check_positive("sigma", htinf_sigma(tau, epsilon) if sigma is None else sigma)
    claim = Claim(epsilon, 0.0, "actions",
                  f"{PAPER}, Theorem 4.2 (Lemma 3.3 + post-processing by Algorithm 5)",
                  output="the experts' arms played I_1..I_T (Theorem 4.2)")
    params = {"epsilon": epsilon, "tau": tau, "sigma": sigma}

    def build(base: Learner) -> Algorithm:
        learner = experts_from_bandit(private_batched(base, tau, epsilon, T), K)
        return Algorithm("private-experts", learner, claim, T, K, params, n_experts=N,
                         rebuild=build, base_arms=N,
                         default_attacks=("canary", "first-round", "batch-edge"))

    return build(htinf_learner(N, sigma))


# ------------------------------------------------------------------ EXP4
def make_ldp_exp4(T, K=2, N=4, epsilon=1.0, delta=0.0, eta=None, gamma=None) -> Algorithm:
    """Algorithm 6 (Theorem 4.4): η = √(log N / (3TK(1 + 10 log²(KT)/ε²))),
    γ = 4ηK log(KT)/ε (capped at 1)."""
    T, K, epsilon = check_horizon(T), check_arms(K), check_epsilon(epsilon)
    N = check_int("N (experts)", N, 2)
    L = _log1(K * T)
    eta = check_positive("eta", math.sqrt(math.log(N) / (3 * T * K * (1 + 10 * L ** 2 / epsilon ** 2)))
                         if eta is None else eta)
    formula = 4 * eta * K * L / epsilon if gamma is None else None
    gamma = _unit_interval("gamma", min(1.0, formula) if gamma is None else gamma)
    # Local DP is a claim about each round's report itself: the transcript.
    claim = Claim(epsilon, 0.0, "transcript", f"{PAPER}, Theorem 4.4 (ε-local DP)",
                  output="each round's report, the noisy loss estimate the learner sees "
                         "(Theorem 4.4, local DP), and the arms")
    return Algorithm("ldp-exp4", ldp_exp4_learner(K, N, eta, gamma, epsilon), claim, T, K,
                     {"epsilon": epsilon, "eta": eta, "gamma": gamma}, n_experts=N,
                     default_attacks=("first-round", "rare-arm"),
                     extra=uniform_play(gamma, formula, f"Theorem 4.4 at T = {T}"))


def batched_exp4_noise_scale(K, N, delta, gamma, tau, epsilon) -> float:
    """Algorithm 2 line 14: Lap(3K√(N log(1/δ))/(γτε)).  Each coordinate has
    sensitivity K/(γτ) (Q_t ≥ γ/K); advanced composition over the N
    coordinates then gives (ε, δ) (proof of Theorem 4.5)."""
    return 3 * K * math.sqrt(N * math.log(1 / delta)) / (gamma * tau * epsilon)


def make_private_batched_exp4(T, K=2, N=4, epsilon=1.0, delta=1e-6, tau=None, eta=None,
                              gamma=None) -> Algorithm:
    """Algorithm 2 (Theorem 4.5) with
    η = (N log(1/δ))^{1/6} log^{1/3}(NT) log^{1/3}(N) / (T^{1/3} K^{1/2} ε^{1/3}),
    τ = (N log(1/δ))^{1/3} log^{2/3}(NT) T^{1/3} / (ε^{2/3} log^{1/3}(N))  (rounded up, ≤ T),
    γ = max{η^{1/3}N^{1/3}K^{2/3}log^{2/3}(NT)/(ε^{2/3}τ^{2/3}), 12ηK√(N log(1/δ)) log(NT)/(ετ)}
    (capped at 1).

    Registered at T = 10 000 (K = 2, N = 4, ε = 1, δ = 10⁻⁶; τ = 356, 28
    batches, η ≈ 0.157, γ ≈ 0.833).  The second term of γ decreases like
    T^{−2/3} up to logs and first drops below 1 at T = 7 398 (γ = 0.9986); below
    that γ is capped at 1 and Q_t ≡ 1/K (at T = 1000: γ = 3.29 before the
    cap), so the actions do not depend on the data (``uniform_play``).  Just
    past the threshold the learned part of Q_t weighs 1 − γ ≈ 0.001; T = 10⁴
    is the first round horizon past it, where that weight (≈ 0.17) is one an
    audit can see.  The pairs simulate only three batches past their change
    (at most about 1 800 rounds), so it costs little more than T = 1000."""
    T, K, epsilon = check_horizon(T), check_arms(K), check_epsilon(epsilon)
    N = check_int("N (experts)", N, 2)
    delta = check_delta(delta, allow_zero=False)
    ld, lnt, ln = math.log(1 / delta), math.log(N * T), math.log(N)
    if tau is None:
        tau = min(T, math.ceil((N * ld) ** (1 / 3) * lnt ** (2 / 3) * T ** (1 / 3)
                               / (epsilon ** (2 / 3) * ln ** (1 / 3))))
    tau = check_batch(tau, T)
    if eta is None:
        eta = (N * ld) ** (1 / 6) * lnt ** (1 / 3) * ln ** (1 / 3) / (
            T ** (1 / 3) * K ** 0.5 * epsilon ** (1 / 3))
    eta = check_positive("eta", eta)
    formula = None
    if gamma is None:
        formula = max(eta ** (1 / 3) * N ** (1 / 3) * K ** (2 / 3) * lnt ** (2 / 3)
                      / (epsilon ** (2 / 3) * tau ** (2 / 3)),
                      12 * eta * K * math.sqrt(N * ld) * lnt / (epsilon * tau))
        gamma = min(1.0, formula)
    gamma = _unit_interval("gamma", gamma)
    scale = batched_exp4_noise_scale(K, N, delta, gamma, tau, epsilon)
    claim = Claim(epsilon, delta, "actions", f"{PAPER}, Theorem 4.5; the noisy batch losses "
                  f"are the proof's object", output=ARMS)
    return Algorithm("private-batched-exp4",
                     batched_exp4_learner(K, N, eta, gamma, tau, scale), claim, T, K,
                     {"epsilon": epsilon, "delta": delta, "tau": tau, "eta": eta,
                      "gamma": gamma, "noise_scale": scale}, n_experts=N,
                     default_attacks=("rare-arm", "batch-edge"),
                     extra=uniform_play(gamma, formula, f"Theorem 4.5 at T = {T}"))
