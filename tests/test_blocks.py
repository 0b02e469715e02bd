"""The blocked generator (``audit.execution.blocks``): a vectorised learner
run on many blocks at once, block j's rows drawn from block j's seed,
plays, block for block, exactly what it plays run on each block's seed
alone — for every registered algorithm that says so (``Entry.row_draws``)
on its first default pair — and a
draw that cannot be cut by row is refused, never made from a shared
stream."""
from __future__ import annotations

import numpy as np
import pytest

from algorithms import build
from algorithms.registry import REGISTRY
from algorithms.simulate import simulate
from audit.engine.scenarios import scenarios_for
from audit.execution.blocks import BlockedGenerator, NotBlockable

M, BLOCKS, ROUNDS = 8, 5, 40


def _seeds():
    return [np.random.SeedSequence(123, spawn_key=(j,)) for j in range(BLOCKS)]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_blocked_runs_equal_each_block_run_alone(name):
    alg = build(name)
    if not alg.extra["row_draws"]:
        pytest.skip(f"{name} says its draws depend on its runs' data (Entry.row_draws)")
    seen = set()
    for sc in scenarios_for(alg, None, search=False, events=False)[0]:
        # An attack's own algorithm that does not say so runs block by block.
        if id(sc.algorithm) in seen or not sc.algorithm.extra.get("row_draws"):
            continue
        seen.add(id(sc.algorithm))
        rounds = min(ROUNDS, sc.losses_a.shape[0])
        for losses in (sc.losses_a, sc.losses_b):
            g = BlockedGenerator(_seeds(), M)
            try:
                whole = simulate(sc.algorithm, losses, M * BLOCKS, g, advice=sc.advice,
                                 rounds=rounds)
            except Exception:
                assert g.failed, "only a refused draw may stop a blocked run"
                continue        # run block by block in the audit: nothing to compare
            alone = [simulate(sc.algorithm, losses, M, np.random.default_rng(s),
                              advice=sc.advice, rounds=rounds).actions for s in _seeds()]
            np.testing.assert_array_equal(whole.actions, np.concatenate(alone), sc.label)


def test_parameters_that_vary_by_run_are_cut_with_the_rows():
    loc = np.arange(M * BLOCKS, dtype=float)[:, None] * 100 + np.arange(3)
    got = BlockedGenerator(_seeds(), M).laplace(loc, 0.5)
    want = np.concatenate([np.random.default_rng(s).laplace(loc[j * M:(j + 1) * M], 0.5)
                           for j, s in enumerate(_seeds())])
    np.testing.assert_array_equal(got, want)
    ints = BlockedGenerator(_seeds(), M).integers(0, 5, size=(M * BLOCKS, 2))
    assert ints.shape == (M * BLOCKS, 2) and ints.max() < 5


@pytest.mark.parametrize("call", [
    lambda g: g.random(),                       # one number for all runs
    lambda g: g.random(7),                      # not one row a run
    lambda g: g.normal(0, 1, size=(3, M * BLOCKS)),
    lambda g: g.choice(M * BLOCKS, size=M * BLOCKS, replace=False),
    lambda g: g.permutation(10),
    lambda g: g.bit_generator,
    lambda g: g.random(M * BLOCKS, out=np.empty(M * BLOCKS)),
])
def test_draws_that_cannot_be_cut_are_refused(call):
    g = BlockedGenerator(_seeds(), M)
    with pytest.raises(NotBlockable):
        call(g)
    assert g.failed
