"""The one evidence interface: α shares add up to exactly 1 − confidence for
any mix of kinds, exact kinds take none, result objects have named fields,
a readable repr and a dict form, and every kind samples through the one
sampler on the documented streams ``[seed, scenario, stream]``."""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms import build
from attacks import ATTACKS
from audit.engine import audit_algorithm
from audit.engine.evidence import (KINDS, EventTestEvidence, EventTestResult,
                                   LossDistributionEvidence, WhiteBoxResult, alpha_per_share)
from audit.engine.evidence.event_test import _count_task
from audit.execution.runs import DEFAULT_CHUNK, chunk_sizes, run_chunk

MIXES = [
    ("exp3", None, ["black-box", "per-round", "search", "pld"]),
    ("exp3", None, ["black-box", "search"]),
    ("exp3", None, ["pld", "per-round"]),
    ("private-exp3", ["canary", "first-round"], ["black-box"]),
    ("private-exp3", ["canary", "first-round"], ["pld"]),
    ("private-exp3", ["canary"], ["black-box", "pld"]),
]


@pytest.mark.parametrize("name,attacks,modes", MIXES)
def test_alpha_shares_sum_to_one_minus_confidence(name, attacks, modes):
    alg = build(name, horizon=12) if name == "exp3" else build(name, horizon=40)
    r = audit_algorithm(alg, attacks, trials=400, confidence=0.9, seed=1, modes=modes)
    assert {x.kind for x in r.results} == set(modes)
    spent = sum(x.alpha_spent for x in r.results)
    assert spent == pytest.approx(0.1, rel=1e-12)
    assert r.n_tests == sum(x.shares for x in r.results)
    for x in r.results:
        # 1 bound per black-box pair on coupled runs (the default), 2 on independent ones
        assert x.shares == {"black-box": 1, "pld": 2, "search": 0, "per-round": 0}[x.kind]
        assert (x.alpha > 0) == (x.shares > 0)


def test_exact_kinds_alone_spend_nothing():
    r = audit_algorithm(build("exp3", horizon=12), trials=400, seed=1,
                        modes=["search", "per-round"])
    assert r.n_tests == 0 and sum(x.alpha_spent for x in r.results) == 0
    assert all(x.exact for x in r.results)


def test_alpha_per_share_counts_every_fallible_bound():
    alg = build("private-exp3", horizon=40)
    scs = ATTACKS["first-round"].scenarios(alg)
    ev = [EventTestEvidence(scs[0], 0, alg.claim), LossDistributionEvidence(scs[0], 0, alg.claim),
          KINDS["black-box"](scs[0], 1, alg.claim)]
    assert alpha_per_share(ev, 0.95) == pytest.approx(0.05 / 6)
    assert alpha_per_share([], 0.95) == 0.0


def test_results_have_named_fields_a_readable_repr_and_a_dict():
    r = audit_algorithm(build("exp3", horizon=12), trials=400, seed=1, coupled=False)
    black = next(x for x in r.results if isinstance(x, EventTestResult))
    white = next(x for x in r.results if isinstance(x, WhiteBoxResult) and x.kind == "search")
    for x in (black, white):
        text = repr(x)
        assert text.startswith(type(x).__name__ + "(label=")
        assert "epsilon_lower_bound=" in text and "verdict=" in text
        assert "\n" not in text and len(text) < 400
        d = x.as_dict()
        assert d["epsilon_lower_bound"] == x.epsilon_lower_bound
    assert "counts=" in repr(black) and "alpha=" in repr(black)
    assert black.as_dict()["bounds"]["bounds_used"] == 2


def test_black_box_counts_come_from_the_documented_streams():
    """The counts of a black-box pair equal those of the count task run by
    hand on ``SeedSequence([seed, scenario index, side])`` cut into
    DEFAULT_CHUNK chunks: the evidence adds no randomness of its own."""
    alg = build("private-exp3", horizon=40)
    seed, trials = 9, 2 * DEFAULT_CHUNK + 300
    r = audit_algorithm(alg, ["first-round", "canary"], trials=trials, seed=seed,
                        modes=["black-box"], jobs=2, coupled=False)
    scs = ATTACKS["first-round"].scenarios(alg) + ATTACKS["canary"].scenarios(alg)
    for index, (sc, res) in enumerate(zip(scs, r.results)):
        labels = sc.events.labels
        e = labels.index(res.test.event)
        held = []
        for side, losses in enumerate((sc.losses_a, sc.losses_b)):
            sizes = chunk_sizes(trials)
            seeds = np.random.SeedSequence([seed, index, side]).spawn(len(sizes))
            task = _count_task(sc, losses)
            held.append(sum(int(run_chunk(task, n, ss)[2][e]) for n, ss in zip(sizes, seeds)))
        num, den = held if res.test.direction == "l>l'" else held[::-1]
        assert (res.test.numerator.count, res.test.denominator.count) == (num, den)


def test_bounds_tighten_with_two_shares_per_pair():
    """One pair on independent runs at confidence c: each bound is at α =
    (1 − c)/2, the two the selected event uses (not 4 over both
    directions)."""
    r = audit_algorithm(build("private-exp3", horizon=40), ["canary"], trials=2000, seed=0,
                        modes=["black-box"], confidence=0.95, coupled=False)
    (res,) = r.results
    assert res.alpha == pytest.approx(0.025) and math.isclose(res.alpha_spent, 0.05)


def test_transcript_evidence_against_an_actions_claim_is_the_intermediate_object():
    """tbe-adaptive's noisy losses leak Nε = 2 (an exact certificate at
    transcript scope).  Judged against a claim about the chosen experts
    (the actions), the same evidence is reported as the proof's intermediate
    object: never a violation and not part of ε_lb (deterministic given the
    seed: the certificate is exact)."""
    import dataclasses
    from algorithms import build
    from algorithms.core import Claim
    from audit.engine import audit_algorithm
    on_actions = build("tbe-adaptive")
    assert on_actions.claim.scope == "actions"
    alg = dataclasses.replace(on_actions, claim=Claim(on_actions.claim.epsilon, 0.0,
                                                      "transcript", on_actions.claim.source))
    transcript = audit_algorithm(alg, attacks=["tbe-first-round"], trials=2000, seed=0,
                                 modes=["pld"])
    (t,) = transcript.results
    assert t.violation and t.exact and not t.intermediate
    res = audit_algorithm(on_actions, attacks=["tbe-first-round"], trials=2000, seed=0,
                          modes=["pld"])
    (r,) = res.results
    assert r.intermediate and r.epsilon_lower_bound == t.epsilon_lower_bound
    assert not r.violation and res.verdict == "consistent" and res.epsilon_lower_bound == 0
    assert r.as_dict()["verdict"] == "intermediate"
    assert "intermediate object" in res.summary()
