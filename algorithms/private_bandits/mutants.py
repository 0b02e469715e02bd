"""Deliberately broken variants of the ICML 2025 algorithms, registered with
the claim of the correct algorithm so that audits must catch them."""
from __future__ import annotations

from ..core import Algorithm, Claim
from ..validate import check_arms, check_epsilon, check_horizon
from .catalog import PAPER, _tau_default, make_private_exp3
from .conversion import private_batched
from .exp3 import exp3_learner


def make_mutant_batch_sum(T, K=2, N=None, epsilon=0.25, delta=0.0, tau=None, eta=None,
                          gamma=None) -> Algorithm:
    """Algorithm 1 around EXP3 that feeds the batch *sum* instead of the batch
    mean, noise unchanged at Lap(1/(τε)).  The released value then has
    sensitivity 1, not 1/τ, so the true guarantee is only (τε)-DP while ε-DP
    is claimed.  With the default ε = 0.25 (τ = 4) the truth is ε = 1."""
    ok = make_private_exp3(T, K, N, epsilon, delta, tau=tau, eta=eta, gamma=gamma)
    p = ok.params
    claim = Claim(p["epsilon"], 0.0, "transcript",
                  f"{PAPER}, Lemma 3.3 — claimed by a BROKEN implementation (batch sum)")
    T, K, tau = ok.horizon, ok.n_arms, p["tau"]

    def build(base):
        return Algorithm("mutant-batch-sum", private_batched(base, tau, p["epsilon"], T, aggregate="sum"),
                         claim, T, K, dict(p), rebuild=build, base_arms=K,
                         default_attacks=("canary",),
                         notes=f"bug: batch sum fed instead of batch mean; true ε = τε = {tau * p['epsilon']:g}")

    return build(exp3_learner(K, p["eta"], p["gamma"]))
