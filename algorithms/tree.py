"""Tree-based aggregation (the binary mechanism), vectorised over runs.

Used by Agarwal & Singh (ICML 2017, Algorithm 2 "TreeBasedAgg", which calls
PrivateSum of Jain et al. 2012) and by Ene, Nguyen & Vladu (AAAI 2021,
Algorithm 1's private sums).  Rounds are 1-based here as in the papers.

The tree over rounds 1..T has ``levels(T) = ⌊log₂ T⌋ + 1`` levels: level j
holds the dyadic blocks of 2^j consecutive rounds.  A block's noisy sum is
released once, the round it completes (round t completes the level-j block
with j = the index of t's lowest set bit), with fresh noise.  The noisy prefix
sum after round t adds the released blocks named by t's set bits, so it
carries popcount(t) noise draws.

Privacy arithmetic (why ``levels`` and not ⌈log₂ T⌉): one round lies in exactly
one block per level, and every block of round 1 completes by T when T is a
power of two (the root [1, T] completes at t = T).  So a change to one round's
vector moves up to ``levels(T)`` released blocks; with per-block noise of ℓ₁
scale Δ·levels(T)/ε the whole release is ε-DP.  ⌈log₂ T⌉ equals levels(T)
except when T is a power of two, where it is one short: the off-by-one the
papers' "log T" hides.  ``blocks_touched`` counts it exactly.

State (all arrays carry a leading runs axis):
``alpha (runs, L, d)`` exact sums of the open blocks, ``noisy (runs, L, d)``
the released value of the latest completed block per level, ``t`` rounds added.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

Noise = Callable[[tuple], np.ndarray]   # shape -> draws (consumes the caller's rng)


def levels(T: int) -> int:
    """⌊log₂ T⌋ + 1: the number of levels holding a block that completes by T."""
    if T < 1:
        raise ValueError(f"T (horizon) must be >= 1, got {T}")
    return int(T).bit_length()


def lowest_bit(t: int) -> int:
    return (t & -t).bit_length() - 1


def popcount(t: int) -> int:
    return bin(t).count("1")


def blocks_touched(s: int, T: int) -> int:
    """How many released blocks contain round s (1-based) in a tree run to T:
    the ℓ₁ sensitivity multiplier of a change at round s.  Round 1 is the
    worst case (levels(T) blocks)."""
    n = 0
    for j in range(levels(T)):
        end = ((s - 1) // 2 ** j + 1) * 2 ** j   # last round of s's level-j block
        # Round `end` releases only its lowest-bit level; a level-j block
        # ending at a multiple of 2^(j+1) is absorbed into its parent unseen.
        n += end <= T and lowest_bit(end) == j
    return n


def init(runs: int, T: int, d: int) -> dict:
    L = levels(T)
    return {"t": 0, "T": int(T), "alpha": np.zeros((runs, L, d)), "noisy": np.zeros((runs, L, d))}


def add(tree: dict, x: np.ndarray, noise: Noise) -> tuple[dict, int, np.ndarray]:
    """Add round t's vector ``x`` ((runs, d) or (d,)), release the block it
    completes with ``noise((runs, d))`` added.  Returns the new tree, the
    level of the released block and its released value (runs, d)."""
    t = tree["t"] + 1
    if t > tree["T"]:
        raise ValueError(f"tree built for T={tree['T']} rounds, got round {t}")
    alpha, noisy = tree["alpha"].copy(), tree["noisy"].copy()
    j = lowest_bit(t)
    # The new block at level j is round t plus the lower open blocks it absorbs.
    alpha[:, j] = alpha[:, :j].sum(axis=1) + x
    alpha[:, :j] = 0.0
    noisy[:, j] = alpha[:, j] + noise(alpha[:, j].shape)
    return {"t": t, "T": tree["T"], "alpha": alpha, "noisy": noisy}, j, noisy[:, j]


def prefix(tree: dict) -> np.ndarray:
    """The noisy prefix sum Σ_{s≤t} x_s (PrivateSum's output): the released
    blocks named by the set bits of t; popcount(t) noise draws."""
    t = tree["t"]
    bits = [j for j in range(tree["alpha"].shape[1]) if t >> j & 1]
    return tree["noisy"][:, bits].sum(axis=1)


def padded_prefix(tree: dict, noise: Noise, draws: int) -> np.ndarray:
    """Agarwal & Singh Algorithm 2 lines 4–6: top the prefix sum up with
    ``draws − popcount(t)`` fresh draws so every released prefix carries the
    same number of draws.  Fresh draws touch no data (post-processing)."""
    t = tree["t"]
    q = popcount(t)
    if q > draws:
        raise ValueError(f"round {t} needs {q} blocks but only {draws} draws are allowed")
    out = prefix(tree)
    shape = out.shape
    for _ in range(draws - q):
        out = out + noise(shape)
    return out
