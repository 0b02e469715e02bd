"""Deliberately broken variants of the ICML 2025 algorithms, one or more per
family, registered under ``mutant-`` with the claim of the correct algorithm
so that audits must catch them.  Each is a realistic implementation slip;
its true privacy level is stated where it can be computed."""
from __future__ import annotations

from ..core import Algorithm, Claim
from .catalog import (make_ldp_exp4,
                      make_private_batched_exp4, make_private_experts, make_private_exp3,
                      make_private_ftpl)
from .conversion import experts_from_bandit, private_batched
from .exp3 import exp3_learner
from .exp4 import batched_exp4_learner, ldp_exp4_learner
from .ftpl import ftpl_learner
from .htinf import htinf_learner


def _broken_claim(ok: Algorithm, bug: str) -> Claim:
    """The correct algorithm's privacy proof, for the object it proves
    private: the noisy values fed to the inner learner (transcript).  A
    mutant is a code slip that breaks that proof; whether its arms also
    leak is for the black-box events to show."""
    c = ok.claim
    return Claim(c.epsilon, c.delta, "transcript",
                 f"{c.source} — claimed by a BROKEN implementation ({bug}); judged on the "
                 f"noisy values its proof makes private",
                 output="the arms and the noisy values fed to the inner learner")


def _conversion_mutant(name, ok, base_factory, bug, truth, **wrapper_kwargs) -> Algorithm:
    p, T, K = ok.params, ok.horizon, ok.n_arms
    claim = _broken_claim(ok, bug)

    def build(base):
        learner = private_batched(base, p["tau"], p["epsilon"], T, **wrapper_kwargs)
        return Algorithm(name, learner, claim, T, K, dict(p), rebuild=build, base_arms=K,
                         default_attacks=("canary", "batch-edge"),
                         notes=f"bug: {bug}; true privacy: {truth}")

    alg = build(base_factory(p))
    alg.extra.update(_uniform(ok))   # the registered base only, not the canary
    return alg


def _uniform(ok: Algorithm) -> dict:
    """The correct algorithm's data-independence note (``catalog.uniform_play``):
    a mutant with the same γ plays uniformly too."""
    return {k: v for k, v in ok.extra.items() if k == "data_independent"}


def make_mutant_batch_sum(T, K=2, N=None, epsilon=0.25, delta=0.0, **params) -> Algorithm:
    """Algorithm 1 around EXP3 feeding the batch *sum* instead of the batch
    mean, noise unchanged at Lap(1/(τε)): sensitivity 1 instead of 1/τ, so
    the truth is (τε)-DP (ε = 1 at the default ε = 0.25, τ = 4)."""
    ok = make_private_exp3(T, K, N, epsilon, delta, **params)
    tau = ok.params["tau"]
    return _conversion_mutant("mutant-batch-sum", ok,
                              lambda p: exp3_learner(K, p["eta"], p["gamma"]),
                              "batch sum fed instead of batch mean",
                              f"{tau * ok.params['epsilon']:g}-DP (τε)", aggregate="sum")


def make_mutant_noise_tau(T, K=2, N=None, epsilon=0.25, delta=0.0, **params) -> Algorithm:
    """Algorithm 1 around FTPL whose noise scale divides by τ once too often:
    Lap(1/(τ²ε)) on the batch mean (sensitivity 1/τ), so the truth is
    (τε)-DP.  (The issue's "noise scale missing the 1/τ", read literally —
    Lap(1/ε) instead of Lap(1/(τε)) — only adds noise and cannot leak; this is
    the leaking form of the same slip with the batch-size factor.)"""
    ok = make_private_ftpl(T, K, N, epsilon, delta, **params)
    tau, eps = ok.params["tau"], ok.params["epsilon"]
    return _conversion_mutant("mutant-noise-tau", ok,
                              lambda p: ftpl_learner(K, p["eta"], p["M"]),
                              "noise scale 1/(τ²ε) instead of 1/(τε)", f"{tau * eps:g}-DP (τε)",
                              noise_scale=1.0 / (tau * tau * eps))


def make_mutant_overlap(T, K=2, N=4, epsilon=0.25, delta=0.0, **params) -> Algorithm:
    """Algorithm 5 around an Algorithm 1 whose batches overlap by one round
    (each window starts one round early), around HTINF: the last loss of a
    batch is fed twice, so a change there moves two releases: (2ε)-DP."""
    ok = make_private_experts(T, K, N, epsilon, delta, **params)
    p = ok.params
    claim = _broken_claim(ok, "overlapping batches feed one loss twice")

    def build(base):
        inner = private_batched(base, p["tau"], p["epsilon"], T, overlap=True)
        return Algorithm("mutant-overlap", experts_from_bandit(inner, K), claim, T, K, dict(p),
                         n_experts=ok.n_experts, rebuild=build, base_arms=ok.n_experts,
                         default_attacks=("canary", "batch-edge"),
                         notes=f"bug: overlapping batches; true privacy: {2 * p['epsilon']:g}-DP (2ε)")

    return build(htinf_learner(ok.n_experts, p["sigma"]))


def make_mutant_ldp_after(T, K=2, N=4, epsilon=1.0, delta=0.0, **params) -> Algorithm:
    """Algorithm 6 adding its Lap(1/ε) noise *after* importance weighting
    (to ℓ_t(I_t)/Q_t(I_t), sensitivity up to K/γ) where the proof of
    Theorem 4.4 needs it before (sensitivity 1): truth (εK/γ)-DP."""
    ok = make_ldp_exp4(T, K, N, epsilon, delta, **params)
    p = ok.params
    learner = ldp_exp4_learner(K, ok.n_experts, p["eta"], p["gamma"], p["epsilon"],
                               noise_after_weighting=True)
    truth = p["epsilon"] * K / p["gamma"]
    return Algorithm("mutant-ldp-after", learner, _broken_claim(ok, "noise after importance weighting"),
                     ok.horizon, K, dict(p), n_experts=ok.n_experts,
                     default_attacks=("first-round", "rare-arm"), extra=_uniform(ok),
                     notes=f"bug: noise added after importance weighting; true privacy: "
                           f"{truth:.4g}-DP (εK/γ)")


def make_mutant_exp4_noise(T, K=2, N=4, epsilon=1.0, delta=1e-6, gamma=0.05, eta=2.0,
                           **params) -> Algorithm:
    """Algorithm 2 whose noise scale omits the K/γ factor of line 14's
    sensitivity: Lap(3√(N log(1/δ))/(τε)).  Each coordinate then costs K/γ
    times the budget the proof of Theorem 4.5 allots it.

    Default γ = 0.05 (K/γ = 40): at the theorem's γ, capped at 1 for small T,
    the missing factor is only K = 2 and hides in the slack of advanced
    composition — the correct algorithm's exact transcript loss is at most
    Nε/(3√(N log 1/δ)) ≈ 0.18ε for N = 4, δ = 1e-6, so doubling it stays
    below ε.  With γ = 0.05 and a learner that quickly avoids a bad arm
    (η = 2; Theorem 4.5's privacy holds for every η), the ``rare-arm`` pair
    meets 1/Q_t(I_t) ≈ K/γ and the exact loss reaches several ε."""
    ok = make_private_batched_exp4(T, K, N, epsilon, delta, gamma=gamma, eta=eta, **params)
    p = ok.params
    scale = p["noise_scale"] * p["gamma"] / K
    learner = batched_exp4_learner(K, ok.n_experts, p["eta"], p["gamma"], p["tau"], scale)
    return Algorithm("mutant-exp4-noise", learner, _broken_claim(ok, "noise scale missing K/γ"),
                     ok.horizon, K, {**p, "noise_scale": scale}, n_experts=ok.n_experts,
                     default_attacks=("rare-arm", "batch-edge"), extra=_uniform(ok),
                     notes=f"bug: noise scale missing K/γ = {K / p['gamma']:.3g}")
