"""Coupled runs are the default black-box test: over 200 seeds, the default
black-box evidence on correct code as written whose claim is tight (its
true ε equals the claim) exceeds the claim at most at the nominal rate —
with the default for code as written, a sequential test that stops as
soon as it certifies a violation (the worst case for a sequential test:
every stop is an exceedance).

Each audit runs at 70 % confidence (α = 0.3, so that exceedances would
show at a rate a test can see) on a small budget; the bound is near the
truth there, so a test that read its pilot twice, a wrong factor or a
coupling that broke the blocks' independence would exceed far more often
than α.  With exceedances at exactly α the count passes ``LIMIT`` with
probability below 1e-6 (``stats.binom.sf``): that is this test's own
false-failure probability.

The pairs (the optimised attack's, the neighbour search's) are chosen on
no stream of the audit's seed, so they are built once and each seed runs
the evidence ``audit_algorithm`` runs by default on them
(``audit_scenarios(coupled=None)``), as a default audit at that seed
would (without the learned witness, whose training would cost most of the
time: a witness is one more event of the same test)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from algorithms import build
from audit.engine.audit import audit_scenarios
from audit.engine.evidence.coupled import CoupledTestResult
from audit.engine.scenarios import scenarios_for

SEEDS, ALPHA, TRIALS = 200, 0.3, 2_000
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
    claim = alg.claim
    scenarios, _ = scenarios_for(alg, [attack], search=attack == "search", trials=TRIALS)
    found = []
    for seed in range(SEEDS):
        results = audit_scenarios(scenarios, claim, TRIALS, confidence=1 - ALPHA, seed=seed,
                                  coupled=None, witness=False, stop_early=True)
        assert all(isinstance(r, CoupledTestResult) for r in results), "the default is coupled"
        assert all(r.looks > 1 for r in results), "and sequential"
        found.append(max(r.epsilon_lower_bound for r in results))
    over = sum(lb > claim.epsilon for lb in found)
    assert over <= LIMIT, f"{over} of {SEEDS} above the claim (limit {LIMIT} at α = {ALPHA})"
    # Not vacuous: the bounds come near the claim, so an invalid test would show.
    assert np.median(found) > 0.6 * claim.epsilon
