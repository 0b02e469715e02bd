"""DP-FTRL as an online learner over N experts with linear losses, and its
broken variant.

The algorithm (Kairouz et al. 2021, Algorithm 1 with tree aggregation,
§3–4): the gradient of round t is the loss row ℓ_t ∈ [0, 1]^N (a linear
loss ⟨ℓ_t, x⟩); its noisy prefix sums G̃_t = Σ_{s≤t} ℓ_s + noise come from
the binary tree (``algorithms.tree``: each completed dyadic block released
once with fresh N(0, σ² I_N)); the model played at round t is the FTRL step
with the regulariser (λ/2)‖x‖² over the simplex,
x_t = argmin_{x ∈ Δ_N} ⟨G̃_{t−1}, x⟩ + (λ/2)‖x‖² = Π_Δ(−G̃_{t−1}/λ),
and the expert played is sampled from x_t.

Privacy (Kairouz et al. 2021, §4 and App. D, "single pass", one
participation per record; the accounting of tf_privacy's
``compute_zcdp_single_tree``): one round's gradient lies in at most
H = ⌈log₂ T⌉ + 1 tree nodes and moves each by at most its ℓ₂ sensitivity
L, so the nodes are a Gaussian mechanism of ℓ₂ sensitivity L√H:
ρ-zCDP with ρ = H L² / (2σ²), and the models are post-processing.  Here
L = √N (a row of [0, 1]^N moves by at most √N in ℓ₂), and σ is set from
the claimed ρ: σ = L √(H / (2ρ)).

The broken variant calibrates σ to one node, σ = L/√(2ρ), as if each
gradient entered a single node (the slip of reading the per-node guarantee
as the whole): its nodes are a Gaussian mechanism of ℓ₂ sensitivity L√h
for a round in h released nodes, so round 1 (h = levels released, H at a
power-of-two T with every node read) gives μ = √(2ρh): (hρ)-zCDP, H times
the claim.

True curves (both exact, for the nodes x_1..x_T read: the released ones
complete by round T − 1): the nodes are a Gaussian mechanism, so the
exact profile of a pair whose changed round lies in h of them is μ-GDP
with μ = ‖Δ‖₂ √h / σ; the worst pair (round 1, every coordinate moved by
1) has h = levels(T − 1) = ⌈log₂ T⌉ nodes (T ≥ 2): μ = √(2ρ h / H) for
DP-FTRL, below its claim's √(2ρ); μ = √(2ρh) for the broken variant.
"""
from __future__ import annotations

import math

import numpy as np

from .. import tree
from ..agarwal_singh.full_info import _tree_learner
from ..core import Algorithm, Claim, Gaussian, sample_categorical
from ..validate import check_arms, check_horizon, check_positive

PAPER = ("Kairouz, McMahan, Song, Thakkar, Thakurta & Xu, Practical and Private (Deep) "
         "Learning without Sampling or Shuffling (ICML 2021)")


def nodes_per_gradient(T: int) -> int:
    """H = ⌈log₂ T⌉ + 1: the tree nodes one gradient can lie in (the
    paper's count)."""
    return (int(T) - 1).bit_length() + 1


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto the simplex (the sort
    rule of Held, Wolfe & Crowder; Duchi et al. 2008, Fig. 1)."""
    n = v.shape[1]
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    k = np.arange(1, n + 1)
    ok = u - css / k > 0
    r = n - 1 - np.argmax(ok[:, ::-1], axis=1)          # last index where ok
    theta = css[np.arange(v.shape[0]), r] / (r + 1)
    return np.maximum(v - theta[:, None], 0.0)


def dp_ftrl_learner(N: int, T: int, sigma: float, lam: float):
    """The learner (module docstring); draws: in ``act``, one uniform per
    run to sample the expert; in ``feed``, one (runs, N) normal draw for the
    node round t completes."""
    def gauss(rng, shape):
        return rng.normal(0.0, sigma, shape)

    def choose(G, rng):
        x = project_simplex(-G / lam)
        return x, sample_categorical(x, rng.random(x.shape[0]))

    def no_padding(rng, r, shape):     # DP-FTRL reads the tree's prefix sums as they are
        return 0.0

    return _tree_learner(N, T, tree.levels(T), gauss, no_padding, choose, T - 1,
                         {"law": Gaussian(float(sigma))})


def _build(name, T, K, rho, lam, one_node: bool) -> Algorithm:
    T = check_horizon(T)
    if T < 2:
        raise ValueError(f"T (horizon) must be an integer >= 2 for DP-FTRL, got {T}")
    N = check_arms(K)
    rho = check_positive("rho", rho)
    H = nodes_per_gradient(T)
    L = math.sqrt(N)                        # ℓ₂ sensitivity of one row of [0, 1]^N
    sigma = L / math.sqrt(2 * rho) if one_node else L * math.sqrt(H / (2 * rho))
    lam = check_positive("lam", math.sqrt(T) if lam is None else lam)
    h = tree.levels(T - 1)                  # nodes of round 1 released by T − 1
    true_mu = L * math.sqrt(h) / sigma
    src = (f"{PAPER}, §4 and App. D: a gradient lies in ⌈log₂T⌉ + 1 = {H} tree nodes, ℓ₂ "
           f"sensitivity L = √N each, N(0, σ²) per node: ρ = H L²/(2σ²)")
    if one_node:
        src += " — claimed by a BROKEN implementation (σ calibrated to one node: L/√(2ρ))"
    claim = Claim.of_curve("zcdp", rho, "actions", src,
                           output="the models x_1..x_T and the experts played")
    notes = (f"σ = {sigma:.4g}; exact: round 1 lies in {h} released nodes, μ = {true_mu:.4g}-GDP "
             f"(ρ = μ²/2 = {true_mu ** 2 / 2:.4g})"
             + (f"; BROKEN: σ set for one node, true ρ {true_mu ** 2 / 2:.4g} vs claimed "
                f"{rho:g}" if one_node else ""))
    mechanism = {"law": "gaussian", "sensitivity": L * math.sqrt(H), "scale": sigma,
                 "compositions": 1,
                 "source": f"the tree nodes: one round in ≤ {H} nodes, ℓ₂ ≤ √N each"}
    return Algorithm(name, dp_ftrl_learner(N, T, sigma, lam), claim, T, N,
                     {"rho": rho, "sigma": sigma, "lam": lam, "nodes": H},
                     default_attacks=("as-tree-level", "first-round"), notes=notes,
                     extra={"tree": {"released_until": T - 1, "N": N},
                            "mechanism": mechanism, "true_mu": true_mu,
                            "true_epsilon": math.inf,
                            "true_epsilon_source": f"Gaussian nodes: exactly {true_mu:.4g}-GDP"})


def make_dp_ftrl(T=8, K=2, N=None, epsilon=None, delta=0.0, rho=0.5, lam=None) -> Algorithm:
    """DP-FTRL at ρ-zCDP (default ρ = 0.5), T = 8, two experts."""
    return _build("dp-ftrl", T, K, rho, lam, one_node=False)


def make_dp_ftrl_one_node(T=8, K=2, N=None, epsilon=None, delta=0.0, rho=0.5,
                          lam=None) -> Algorithm:
    """DP-FTRL with σ calibrated to one node (module docstring)."""
    return _build("dp-ftrl-one-node", T, K, rho, lam, one_node=True)
