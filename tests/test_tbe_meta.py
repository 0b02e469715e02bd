"""Theorem 4.1 of Asi, Raman & Saha (tbe-meta): the meta-expert table as the
proof builds it, and the vectorised reduction against a per-run reference
(Algorithm 1's reference run on the meta-losses, the expert of the chosen
meta-expert played) on one random stream."""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.registry import build
from algorithms.simulate import simulate
from algorithms.tracking_experts.meta import meta_experts
from tests.reference_tracking_experts import ref_lazy


def ref_meta(losses, table, b, rng):
    """ℬ per run: 𝒜 (Algorithm 1's reference) on ℓ̃_t(e) = ℓ_t(e(t)), then J_t = E_t(t)."""
    T = len(losses)
    meta_losses = [[losses[t][table[e][t]] for e in range(len(table))] for t in range(T)]
    chosen = ref_lazy(meta_losses, b, rng)
    return [table[chosen[t]][t] for t in range(T)]


@pytest.mark.parametrize("T,N,S", [(4, 2, 1), (6, 3, 2), (5, 2, 0)])
def test_meta_experts_are_the_proofs(T, N, S):
    """|ℰ| = Σ_{c ≤ S} C(T, c) N^{c+1}; every row switches at most S times;
    every sequence with at most S switches is a row."""
    table = meta_experts(T, N, S)
    assert table.shape == (sum(math.comb(T, c) * N ** (c + 1) for c in range(S + 1)), T)
    switches = (np.diff(table, axis=1) != 0).sum(axis=1)
    assert switches.max() <= S
    import itertools
    wanted = {seq for seq in itertools.product(range(N), repeat=T)
              if sum(a != b for a, b in zip(seq, seq[1:])) <= S}
    assert {tuple(r) for r in table} == wanted


@pytest.mark.parametrize("T,N,S", [(8, 2, 1), (6, 3, 2)])
def test_meta_reduction_matches_reference_on_same_stream(T, N, S):
    alg = build("tbe-meta", horizon=T, arms=N, params={"S": S})
    table = meta_experts(T, N, S)
    losses = np.random.default_rng(4).random((T, N))
    for seed in range(5):
        tr = simulate(alg, losses, 1, np.random.default_rng(seed))
        ref = ref_meta(losses, table, alg.params["noise_scale"], np.random.default_rng(seed))
        np.testing.assert_array_equal(tr.actions[0], ref)
