"""The tree-based aggregation component against a plain definition by dyadic
blocks, and its privacy arithmetic (levels, draws per prefix, sensitivity)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms import tree


def _ref_blocks(t: int):
    """The dyadic blocks (level, first, last), 1-based inclusive, whose union
    is 1..t, read off t's binary digits from the top (Jain et al.'s
    PrivateSum)."""
    out, start = [], 1
    for j in reversed(range(t.bit_length())):
        if t >> j & 1:
            out.append((j, start, start + 2 ** j - 1))
            start += 2 ** j
    return out


@pytest.mark.parametrize("T", [1, 2, 3, 7, 8, 9, 16, 100, 128, 1000, 1024])
def test_levels_is_floor_log2_plus_one(T):
    assert tree.levels(T) == math.floor(math.log2(T)) + 1
    # ⌈log₂ T⌉ is one short exactly at powers of two (and T = 1).
    assert (tree.levels(T) == math.ceil(math.log2(T))) == (T & (T - 1) != 0)


@pytest.mark.parametrize("T", [5, 8, 13, 16, 33])
def test_prefix_sums_without_noise_are_exact_and_use_popcount_blocks(T):
    rng = np.random.default_rng(T)
    x = rng.random((T, 3))
    st = tree.init(2, T, 3)
    zero = lambda shape: np.zeros(shape)
    for t in range(1, T + 1):
        st, j, released = tree.add(st, x[t - 1], zero)
        first = t - 2 ** j + 1
        np.testing.assert_allclose(released[0], x[first - 1:t].sum(axis=0))  # block just completed
        np.testing.assert_allclose(tree.prefix(st)[1], x[:t].sum(axis=0))
        assert [b[0] for b in _ref_blocks(t)] == [k for k in reversed(range(tree.levels(T)))
                                                  if t >> k & 1]


def test_noisy_prefix_matches_the_block_definition_on_the_same_draws():
    """Each block's noise is drawn once, when it completes; the prefix sum of
    round t is the true sum plus the noise of exactly the blocks of t."""
    T, d = 23, 2
    rng = np.random.default_rng(5)
    x = rng.random((T, d))
    draws = {}
    st = tree.init(1, T, d)
    for t in range(1, T + 1):
        z = rng.laplace(size=(1, d))
        st, j, _ = tree.add(st, x[t - 1], lambda shape, z=z: z)
        draws[(j, t - 2 ** j + 1)] = z[0]
        want = x[:t].sum(axis=0) + sum(draws[(lv, first)] for lv, first, _ in _ref_blocks(t))
        np.testing.assert_allclose(tree.prefix(st)[0], want)


@pytest.mark.parametrize("T", [6, 8, 16, 31, 32])
def test_padded_prefix_always_carries_the_same_number_of_draws(T):
    """Algorithm 2 line 6: with unit draws and zero data, the padded prefix
    counts its draws; it must equal levels(T) at every round, including t = T
    when T is a power of two."""
    L = tree.levels(T)
    st = tree.init(1, T, 1)
    one = lambda shape: np.ones(shape)
    for t in range(1, T + 1):
        st, _, _ = tree.add(st, np.zeros(1), one)
        assert tree.padded_prefix(st, one, L)[0, 0] == L
    with pytest.raises(ValueError, match="draws"):
        tree.padded_prefix(st, one, tree.popcount(T) - 1)


@pytest.mark.parametrize("T", [7, 8, 12, 16, 1000, 1024])
def test_sensitivity_counts_blocks_that_complete_by_T(T):
    """A change at round 1 moves one released block per level; every level's
    block of round 1 completes by T, so the count is levels(T), which exceeds
    ⌈log₂ T⌉ when T is a power of two."""
    assert tree.blocks_touched(1, T) == tree.levels(T)
    assert max(tree.blocks_touched(s, T) for s in range(1, min(T, 300) + 1)) == tree.levels(T)
    # Brute force: run the tree with unit data at round s and count the
    # releases that moved.
    for s in (2, 3, T // 2, T // 2 + 1, T):
        moved = 0
        st = tree.init(1, T, 1)
        for t in range(1, T + 1):
            st, _, released = tree.add(st, np.full(1, float(t == s)),
                                       lambda shape: np.zeros(shape))
            moved += released[0, 0] != 0
        assert tree.blocks_touched(s, T) == moved


def test_vectorised_runs_are_independent_rows():
    T = 9
    st = tree.init(3, T, 2)
    rng = np.random.default_rng(0)
    for t in range(T):
        st, _, _ = tree.add(st, np.ones(2), lambda shape: rng.laplace(size=shape))
    p = tree.prefix(st)
    assert p.shape == (3, 2) and len(np.unique(p[:, 0])) == 3


def test_tree_refuses_rounds_past_T():
    st = tree.init(1, 2, 1)
    z = lambda shape: np.zeros(shape)
    st, _, _ = tree.add(st, np.zeros(1), z)
    st, _, _ = tree.add(st, np.zeros(1), z)
    with pytest.raises(ValueError, match="T=2"):
        tree.add(st, np.zeros(1), z)
