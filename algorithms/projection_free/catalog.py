"""PRIVATEBANDIT (Algorithm 1) of Ene, Nguyen & Vladu (AAAI 2021) with the
noise scales of Lemma 7 (Laplace) and Lemma 10 (Gaussian), and variants with
the scales derived from what the code actually sums.

Factories take (T, K, epsilon[, delta]) with K = n, the dimension of the
domain (loss rows have width n + 2, see ``bandit``).  ``log T`` in the
paper's formulas is read as log₂ T: Theorem 4's tree has log T levels, and
log₂ T ≥ levels(T_round) = ⌊log₂ √T⌋ + 1 for every T ≥ 4 — the reading the
proof needs (ln T is below levels(T_round) at T = 16).

Sensitivity, from the code.  One changed round t in batch R changes g̃_R by
(n/ζ)(f_t(y_t) − f′_t(y_t)) u_t.  Both losses vanish somewhere in D and are
L-Lipschitz, and y_t = x̃ + ζu_t is within ζ of x̃ ∈ D, so
|f_t(y_t)| ≤ L(D + ζ) (not LD: the played point leaves D), and a linear
f′ = −f makes the difference 2L(D + ζ).  ‖u_t‖₂ = 1 and ‖u_t‖₁ ≤ √n, so

    Δ₁ = 2 (n/ζ) L (D + ζ) √n,      Δ₂ = 2 (n/ζ) L (D + ζ)

per released block, and batch R lies in B = max_R blocks_touched(R, T_round)
released blocks (= levels(T_round) when T_round is a power of two).

What is audited.  Lemma 7 and Lemma 10 claim privacy of the played points
(Definition 2); their proofs go through Theorem 4's partial sums, of which the
points read s̃_0..s̃_P (``bandit.last_read_batch``).  The registered claim is
therefore at transcript scope over the tree blocks released at batches 1..P,
the blocks that reach played points; the blocks released after P (the root
among them) are never read and are not part of the transcript.  B above
counts blocks over the whole tree, so the derived scales cover the
transcript with room to spare when the last blocks hold batch R.
"""
from __future__ import annotations

import math

from ..core import Algorithm, Claim
from ..tree import blocks_touched
from ..validate import check_delta, check_epsilon, check_horizon, check_int, check_positive
from .bandit import (check_rows, get_domain, last_read_batch, prefix_draws,
                     private_bandit)

PAPER = "Ene, Nguyen & Vladu, Projection-Free Bandit Optimization with Privacy Guarantees (AAAI 2021)"
# Theorem 4 is about what the algorithm plays; the tree blocks are the object
# of Lemmas 7 and 10, the proof's route to it.
OUTPUT = "the points played x_1..x_T (Theorem 4)"
PROOF_OBJECT = "; the tree blocks the played points read are the proof's object"
ATTACKS = ("pfb-first-round", "pfb-batch-edge", "pfb-tree-level")


def box_parameters(T: int, n: int, D: float, L: float) -> dict:
    """Algorithm 1 line 1: T_batch = T/T_round with T_round = T^{1/2} (here
    T_batch = ⌈√T⌉, T_round = ⌊T/T_batch⌋), η = D/(T^{3/4} n^{1/2} L),
    ζ = T^{−1/4}."""
    tbatch = math.ceil(math.sqrt(T))
    return {"tbatch": tbatch, "eta": D / (T ** 0.75 * math.sqrt(n) * L), "zeta": T ** -0.25}


def max_blocks(n_rounds: int) -> int:
    """B: the most released blocks one batch lies in (tree over the batches)."""
    return max(blocks_touched(r, n_rounds) for r in range(1, n_rounds + 1))


def sensitivities(n: int, zeta: float, D: float, L: float) -> tuple[float, float]:
    """(Δ₁, Δ₂) of one batch sum between neighbours (module docstring)."""
    d2 = 2.0 * (n / zeta) * L * (D + zeta)
    return d2 * math.sqrt(n), d2


def laplace_scale_paper(T: int, n: int, L: float, epsilon: float) -> float:
    """Lemma 7: coordinate-wise Lap(0, T^{1/2} n L log T / ε)."""
    return math.sqrt(T) * n * L * math.log2(T) / epsilon


def laplace_scale_derived(n_rounds: int, n: int, zeta: float, D: float, L: float,
                          epsilon: float) -> float:
    """Laplace mechanism on B blocks: λ = B Δ₁ / ε."""
    return max_blocks(n_rounds) * sensitivities(n, zeta, D, L)[0] / epsilon


def gaussian_sigma_paper(T: int, n: int, L: float, epsilon: float, delta: float) -> float:
    """Lemma 10, read as σ = T^{1/4} n^{1/2} L √(log T · log(T/δ)) ·
    √(1 + T^{1/2}/n) · log((n + T)/δ) / ε (the PDF text loses the radicals;
    this is M √(log T log(T/δ₁))/ε with the proof's M = T^{1/4} n^{1/2} L ×
    √((1 + T_batch/n) log((n+T)/δ₀))-type factor of Lemma 9; logs of δ natural)."""
    return (T ** 0.25 * math.sqrt(n) * L * math.sqrt(math.log2(T) * math.log(T / delta))
            * math.sqrt(1 + math.sqrt(T) / n) * math.log((n + T) / delta) / epsilon)


# dp_accounting's root search stops within 1e-12 of the exact σ on either
# side; this relative margin puts the returned σ on the private side.
SIGMA_MARGIN = 1e-9


# dp_accounting's get_sigma_gaussian(ε, δ) at the registered defaults, the
# very float it returns (tests/test_listing.py compares them): building
# pfb-gaussian-derived at its defaults, as `audit list` does, then needs no
# dp_accounting, whose import takes a second.
KNOWN_UNIT_SIGMA = {(1.0, 1e-05): 3.7306316348159374}


def gaussian_sigma(sens: float, epsilon: float, delta: float) -> float:
    """Smallest σ (up to ``SIGMA_MARGIN``) for which N(0, σ²) on a query of ℓ₂
    sensitivity ``sens`` is (ε, δ)-DP: the analytic Gaussian mechanism
    (Balle & Wang 2018, Thm 8: Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) ≤ δ),
    computed by ``dp_accounting`` (imported here: it takes a second) unless
    ``KNOWN_UNIT_SIGMA`` holds its answer."""
    unit = KNOWN_UNIT_SIGMA.get((float(epsilon), float(delta)))
    if unit is None:
        from dp_accounting import get_sigma_gaussian
        unit = float(get_sigma_gaussian(epsilon, delta))
    return sens * unit * (1 + SIGMA_MARGIN)


def gaussian_sigma_derived(n_rounds: int, n: int, zeta: float, D: float, L: float,
                           epsilon: float, delta: float) -> float:
    """All B blocks of a batch move by the same vector: joint ℓ₂ sensitivity
    √B Δ₂; σ from the analytic Gaussian mechanism (``gaussian_sigma``)."""
    return gaussian_sigma(math.sqrt(max_blocks(n_rounds)) * sensitivities(n, zeta, D, L)[1],
                          epsilon, delta)


def _build(name, T, K, epsilon, delta, domain, L, tbatch, cg_iters, noise, variant, notes=""):
    T, n, epsilon = check_horizon(T), check_int("K (dimension n)", K, 2), check_epsilon(epsilon)
    dom = get_domain(domain)
    L = check_positive("L (Lipschitz constant)", L)
    box = box_parameters(T, n, dom.diameter, L)
    tbatch = check_int("tbatch", box["tbatch"] if tbatch is None else tbatch, 1, T)
    cg_iters = check_int("cg_iters", tbatch if cg_iters is None else cg_iters, 1)
    n_rounds = T // tbatch
    zeta, eta = box["zeta"], box["eta"]
    B = max_blocks(n_rounds)
    d1, d2 = sensitivities(n, zeta, dom.diameter, L)
    mechanism = None
    if noise == "laplace":
        if variant == "paper":
            scale = laplace_scale_paper(T, n, L, epsilon)
            src = (f"{PAPER}, Lemma 7 (Lap(T^1/2 n L log T / ε), Theorem 4), for the tree blocks "
                   f"the played points read")
        else:
            scale = laplace_scale_derived(n_rounds, n, zeta, dom.diameter, L, epsilon)
            src = (f"{PAPER}, Algorithm 1 with Lemma 7's mechanism re-derived: "
                   f"Lap(B·Δ₁/ε), Δ₁ = 2(n/ζ)L(D+ζ)√n, B = {B} blocks")
            mechanism = {"law": "laplace", "sensitivity": B * d1, "scale": scale,
                         "compositions": 1,
                         "source": f"one batch moves B = {B} released blocks by ≤ Δ₁ = "
                                   f"2(n/ζ)L(D+ζ)√n each in ℓ₁ (module docstring)"}
        claim = Claim(epsilon, 0.0, "actions", src + PROOF_OBJECT, output=OUTPUT)
    else:
        delta = check_delta(delta, allow_zero=False)
        if variant == "paper":
            scale = gaussian_sigma_paper(T, n, L, epsilon, delta)
            src = (f"{PAPER}, Lemma 10 (Gaussian tree aggregation, Lemma 9), for the tree blocks "
                   f"the played points read")
        else:
            scale = gaussian_sigma_derived(n_rounds, n, zeta, dom.diameter, L, epsilon, delta)
            src = (f"{PAPER}, Algorithm 1 with Lemma 10's mechanism re-derived: analytic Gaussian "
                   f"on ℓ₂ sensitivity √B·Δ₂, Δ₂ = 2(n/ζ)L(D+ζ), B = {B}")
        # Both Gaussian variants rest on the Gaussian mechanism over the
        # released blocks (Lemma 10 with the paper's σ, or the analytic σ);
        # its ℓ₂ sensitivity is derived from the code (module docstring).
        mechanism = {"law": "gaussian", "sensitivity": math.sqrt(B) * d2, "scale": scale,
                     "compositions": 1,
                     "source": f"one batch moves B = {B} released blocks by the same vector, "
                               f"ℓ₂ ≤ Δ₂ = 2(n/ζ)L(D+ζ) (module docstring)"}
        # The claim is about the played points; the released blocks (the
        # transcript, of which the points are post-processing plus public
        # randomness) are the proof's intermediate object.
        claim = Claim(epsilon, delta, "actions", src + PROOF_OBJECT, output=OUTPUT)
    learner = private_bandit(n, T, dom, L, tbatch, eta, zeta, cg_iters, noise, scale)
    params = {"epsilon": epsilon, "domain": dom.name, "L": L, "tbatch": tbatch,
              "n_rounds": n_rounds, "eta": eta, "zeta": zeta, "cg_iters": cg_iters,
              "noise": noise, "scale": scale,
              # Theorem 4: draws in every prefix sum; blocks 1..P reach played points.
              "prefix_draws": prefix_draws(n_rounds), "last_read_batch": last_read_batch(T, tbatch)}
    if noise == "gaussian":
        params["delta"] = delta
    extra = {"domain": dom, "diameter": dom.diameter}
    if mechanism is not None:
        extra["mechanism"] = mechanism
    return Algorithm(name, learner, claim, T, n, params, default_attacks=ATTACKS, notes=notes,
                     check_losses=lambda losses: check_rows(losses, n, L, dom),
                     extra=extra)


def make_pfb_laplace(T, K=4, epsilon=1.0, delta=0.0, domain="l1ball", L=1.0, tbatch=None,
                     cg_iters=None) -> Algorithm:
    """Algorithm 1 with Lemma 7's Laplace scale λ = T^{1/2} n L log₂T / ε."""
    return _build("pfb-laplace", T, K, epsilon, delta, domain, L, tbatch, cg_iters,
                  "laplace", "paper")


def make_pfb_laplace_derived(T, K=4, epsilon=1.0, delta=0.0, domain="l1ball", L=1.0, tbatch=None,
                             cg_iters=None) -> Algorithm:
    """Algorithm 1 with λ = B Δ₁/ε, Δ₁ = 2(n/ζ)L(D+ζ)√n (module docstring)."""
    return _build("pfb-laplace-derived", T, K, epsilon, delta, domain, L, tbatch, cg_iters,
                  "laplace", "derived")


def make_pfb_gaussian(T, K=4, epsilon=1.0, delta=1e-5, domain="l1ball", L=1.0, tbatch=None,
                      cg_iters=None) -> Algorithm:
    """Algorithm 1 with Lemma 10's Gaussian σ."""
    return _build("pfb-gaussian", T, K, epsilon, delta, domain, L, tbatch, cg_iters,
                  "gaussian", "paper")


def make_pfb_gaussian_derived(T, K=4, epsilon=1.0, delta=1e-5, domain="l1ball", L=1.0,
                              tbatch=None, cg_iters=None) -> Algorithm:
    """Algorithm 1 with the analytic-Gaussian σ for ℓ₂ sensitivity √B·Δ₂."""
    return _build("pfb-gaussian-derived", T, K, epsilon, delta, domain, L, tbatch, cg_iters,
                  "gaussian", "derived")
