"""Algorithms 1 and 3 of Agarwal & Singh (ICML 2017) for prediction with
expert advice: Follow-the-Regularized-Leader (entropic regulariser) and
Follow-the-Perturbed-Leader, both reading the losses only through the noisy
prefix sums L̃_t of Algorithm 2 (TreeBasedAgg = the binary mechanism of
``algorithms.tree`` plus the padding of Algorithm 2 lines 4–6).

Full information: ``feed`` receives the whole loss row ℓ_t, in the paper's
[−1, 1]^N or in [0, 1]^N (``Algorithm.loss_range``); nothing here assumes a
sign (exponential weights and the argmin take any real prefix sums).
Rounds are 1-based in comments, as in the paper.

Padding (Algorithm 2 lines 4–6): L̃_t adds r_t = ⌈log T⌉ − popcount(t)
fresh draws of 𝒟 to the tree's prefix sum (at t = 0 all ⌈log T⌉ draws,
Algorithm 1 lines 2–3).  Only their sum is ever used, and it is drawn in one
step with the same law: for Lap(λ), λ(G − G′) with G, G′ ~ Gamma(r_t, 1)
(a Laplace variable is λ(E − E′) with E, E′ ~ Exp(1), and r_t exponentials
sum to a Gamma(r_t)); for 𝒩(0, σ²), σ√r_t·𝒩(0, 1).  That is 2 (resp. 1)
draws instead of r_t per coordinate; ``tree.padded_prefix`` is the literal
r_t-draw version, and the tests check both have one law.

Draw order (the per-run references in tests/reference_agarwal_singh.py use
the same one): in ``act`` of round t, the padding of L̃_{t−1} (``pad``), then
(FTRL only) one uniform per run to sample the played expert from x_t; in
``feed``, one ``(runs, N)`` draw of 𝒟 for the tree node that round t
completes (Jain et al.'s PrivateSum, Algorithm 2 line 1).
"""
from __future__ import annotations

import math

import numpy as np

from .. import tree
from ..core import Gaussian, Learner, TranscriptModel, sample_categorical, softmax_rows


def block_sums(losses: np.ndarray, last: int) -> np.ndarray:
    """The exact values of the tree nodes released in rounds 1..last, in
    release order: round t releases the node of level j = lowest set bit of t,
    i.e. Σ ℓ_s over s = t − 2^j + 1 .. t.  Shape (last, N)."""
    c = np.vstack([np.zeros((1, losses.shape[1])), np.cumsum(losses[:last], axis=0)])
    t = np.arange(1, last + 1)
    width = t & -t
    return c[t] - c[t - width]


def laplace_pad(lam: float):
    """The sum of r iid Lap(λ) draws of the given shape, as λ(G − G′)."""
    def pad(rng, r, shape):
        return lam * (rng.standard_gamma(r, shape) - rng.standard_gamma(r, shape))
    return pad


def gauss_pad(sigma: float):
    """The sum of r iid 𝒩(0, σ²) draws of the given shape, as σ√r·𝒩(0, 1)."""
    def pad(rng, r, shape):
        return sigma * math.sqrt(r) * rng.standard_normal(shape)
    return pad


def _tree_learner(N: int, T: int, draws: int, noise_fn, pad_fn, choose, released_until: int,
                  transcript_law: dict) -> Learner:
    """Shared skeleton of Algorithms 1 and 3.

    ``noise_fn(rng, shape)`` draws 𝒟, ``pad_fn(rng, r, shape)`` the sum of
    r draws of 𝒟; ``choose(Ltilde, rng) -> (x, actions)``
    is line 5 of the box; ``draws`` is the number of 𝒟-draws every L̃_t
    carries (the paper's ⌈log T⌉).  Nodes completed in rounds
    ≤ ``released_until`` count as released (the transcript); a node
    completed later feeds only L̃_t with t > released_until, which no output
    uses.  ``transcript_law`` is the noise law of the nodes, as
    ``TranscriptModel`` keywords (``scale=λ`` for Laplace, ``law=Gaussian(σ)``).
    """

    def init(runs, rng):
        return {"tree": tree.init(runs, T, N), "x": np.full((runs, N), 1.0 / N),
                "released": np.full((runs, N), np.nan)}

    def act(state, advice, rng):
        # Algorithm 1/3 line 5 uses L̃_{t−1}: the tree after t − 1 rounds,
        # padded to ``draws`` draws (Algorithm 2 lines 4–6; lines 2–3 at t = 1,
        # where the tree is empty and prefix() is 0).
        tr = state["tree"]
        r = draws - tree.popcount(tr["t"])
        if r < 0:
            raise ValueError(f"round {tr['t']} needs {draws - r} nodes but only {draws} draws "
                             "are allowed")
        Lt = tree.prefix(tr)
        if r > 0:
            Lt = Lt + pad_fn(rng, r, Lt.shape)
        x, actions = choose(Lt, rng)
        return {**state, "x": x}, actions

    def feed(state, actions, row, rng):
        noise = lambda shape: noise_fn(rng, shape)
        tr, _, value = tree.add(state["tree"], row, noise)
        rel = value if tr["t"] <= released_until else np.full_like(value, np.nan)
        return {**state, "tree": tr, "released": rel}

    def means(actions, losses, aux=None, advice=None):
        # The nodes do not depend on the actions (full information).
        last = min(actions.shape[1], released_until)
        m = block_sums(np.asarray(losses, dtype=float), last)
        return np.broadcast_to(m, (actions.shape[0],) + m.shape)

    # The released nodes are a fixed (non-adaptive) product mechanism: their
    # means are the losses' block sums whatever was played (history-free).
    transcript = TranscriptModel(released=lambda s: s["released"], means=means,
                                 history_free=True, **transcript_law)

    return Learner(init=init, act=act, feed=feed, n_arms=N, feedback="full",
                   point=lambda s: s["x"],
                   incurred=lambda s, row: s["x"] @ np.asarray(row, dtype=float),
                   transcript=transcript)


def ftrl_experts_learner(N: int, T: int, eta: float, lam: float, draws: int,
                         released_until: int) -> Learner:
    """Algorithm 1 with R(x) = Σ x_i log x_i over the simplex and 𝒟 = Lap^N(λ).

    Line 5, argmin_x η⟨x, L̃_{t−1}⟩ + Σ x_i log x_i over Δ_N, has the closed
    form x_t ∝ exp(−η L̃_{t−1}) (exponential weights on the noisy sums).  The
    played expert is sampled from x_t with one uniform per run, so both the
    points x_t (``point``) and the experts (actions) can be audited; the
    expert is post-processing of x_t.  The Laplace-noised tree nodes are a
    transcript whose privacy loss the white-box mode computes exactly.
    """
    def laplace(rng, shape):
        return rng.laplace(0.0, lam, shape)

    def choose(Lt, rng):
        x = softmax_rows(-eta * Lt)
        return x, sample_categorical(x, rng.random(x.shape[0]))

    return _tree_learner(N, T, draws, laplace, laplace_pad(lam), choose, released_until,
                         {"scale": float(lam)})


def ftpl_learner(N: int, T: int, sigma: float, draws: int, released_until: int) -> Learner:
    """Algorithm 3 over the simplex with 𝒟 = 𝒩(0, σ² I_N).

    Line 5, argmin_{x ∈ Δ_N} ⟨x, L̃_{t−1}⟩, is the vertex of the expert with
    the smallest noisy cumulative loss (ties have probability 0; argmin takes
    the lowest index).  The output is that expert (x_t = e_{I_t}).

    The structure allows an exact transcript: L̃_{t−1} is the released tree
    nodes (each = its block sum + fresh N(0, σ²I)) plus padding draws that
    touch no data, and the expert is a function of L̃_{t−1} alone; so the
    nodes completed by ``released_until`` are a Gaussian transcript whose
    means (block sums) do not depend on what was played.
    """
    def gauss(rng, shape):
        return rng.normal(0.0, sigma, shape)

    def choose(Lt, rng):
        a = np.argmin(Lt, axis=1)
        x = np.zeros_like(Lt)
        x[np.arange(Lt.shape[0]), a] = 1.0
        return x, a

    return _tree_learner(N, T, draws, gauss, gauss_pad(sigma), choose, released_until,
                         {"law": Gaussian(float(sigma))})
