"""Coupled runs are the default black-box test: over 200 seeds, the default
audit of correct code as written whose claim is tight (its true ε equals
the claim) exceeds the claim at most at the nominal rate.

Each audit runs at 70 % confidence (α = 0.3, so that exceedances would
show at a rate a test can see) on a small budget; the bound is near the
truth there, so a test that read its pilot twice, a wrong factor or a
coupling that broke the blocks' independence would exceed far more often
than α.  With exceedances at exactly α the count passes ``LIMIT`` with
probability below 1e-6 (``stats.binom.sf``): that is this test's own
false-failure probability."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from algorithms import build
from audit.engine import audit_algorithm

SEEDS, ALPHA = 200, 0.3
LIMIT = next(j for j in range(SEEDS) if stats.binom.sf(j, SEEDS, ALPHA) < 1e-6)


@pytest.mark.parametrize("name, build_kw, attack", [
    # randomized response on one bit, as a function: true ε = claim = 1
    ("tests.as_written_algos:randomized_response", {}, "optimised"),
    # randomized response per round, as a stream class: true ε = claim = 1
    ("tests.as_written_algos:RandomizedResponseStream", {"horizon": 2, "epsilon": 1.0},
     "search"),
])
def test_default_coupled_audits_exceed_a_tight_claim_at_most_at_the_nominal_rate(
        name, build_kw, attack):
    alg = build(name, **build_kw)
    claim = alg.claim.epsilon
    found, runs = [], set()
    for seed in range(SEEDS):
        r = audit_algorithm(alg, [attack], trials=2_000, confidence=1 - ALPHA, seed=seed,
                            modes=["black-box"], witness=False)
        found.append(r.epsilon_lower_bound)
        runs.update(type(x).__name__ for x in r.results)
    assert runs == {"CoupledTestResult"}, "the default must be coupled runs"
    over = sum(lb > claim for lb in found)
    assert over <= LIMIT, f"{over} of {SEEDS} above the claim (limit {LIMIT} at α = {ALPHA})"
    # Not vacuous: the bounds come near the claim, so an invalid test would show.
    assert np.median(found) > 0.6 * claim
