"""The neighbouring relations (one-round, bounded-all with a bound Δ) and the
stream order of mechanisms over query answers: claims name their relation,
attacks build pairs for it, and the engine refuses a pair that is not
neighbouring under it (exit 2, one line)."""
from __future__ import annotations

import numpy as np
import pytest

from algorithms.core import Claim
from algorithms.simulate import simulate
from attacks import ATTACKS
from attacks.testers import pattern_pair, pattern_pairs
from tests.stream_algos import noisy_answers
from tests.cli import audit_here
from tests.test_exit_codes import FAST, one_error_line


def test_bounded_all_needs_a_bound_and_names_it():
    with pytest.raises(ValueError, match="max_change must be set"):
        Claim(0.1, 0.0, "actions", "x", relation="bounded-all")
    with pytest.raises(ValueError, match="relation must be one of one-round, bounded-all"):
        Claim(0.1, 0.0, "actions", "x", relation="add-remove")
    c = Claim(0.1, 0.0, "actions", "x", relation="bounded-all", max_change=1)
    assert c.relation_words == "bounded-all, Δ = 1"
    assert c.as_dict()["max_change"] == 1
    assert c.scaled_for_group(1) is c


def test_not_neighbours_under_each_relation():
    a = np.ones((4, 1))
    every = a + 1.0
    one = a.copy()
    one[2] = 0.0
    far = a.copy()
    far[0] = 3.0
    bounded = Claim(0.1, 0.0, "actions", "x", relation="bounded-all", max_change=1.0)
    event = Claim(0.1, 0.0, "actions", "x", relation="one-round", max_change=1.0)
    unbounded = Claim(0.1, 0.0, "actions", "x")
    assert bounded.not_neighbours(a, every) is None
    assert bounded.not_neighbours(a, one) is None
    assert "changes by 2" in bounded.not_neighbours(a, far)
    assert "identical" in bounded.not_neighbours(a, a)
    assert "differ at 4 rounds" in event.not_neighbours(a, every)
    assert event.not_neighbours(a, one) is None
    assert "allows at most 1" in event.not_neighbours(a, far)
    assert unbounded.not_neighbours(a, far) is None


def test_patterns_follow_the_testers_suite():
    a, b = pattern_pair("one-above-rest-below", 5, 1.0)
    assert a.tolist() == [1] * 5 and b.tolist() == [2, 0, 0, 0, 0]
    a, b = pattern_pair("crossed", 4, 1.0)
    assert a.tolist() == [1, 1, 0, 0] and b.tolist() == [0, 0, 1, 1]
    alg = noisy_answers(10, 1, None, 0.1, 0.0)
    names = [n for n, _, _ in pattern_pairs(alg)]
    assert names == ["one-above", "one-below", "one-above-rest-below", "one-below-rest-above",
                     "half-half", "all-above", "all-below", "crossed"]
    single = noisy_answers(5, 1, None, 0.1, 0.0, claim_relation="one-round")
    assert [n for n, _, _ in pattern_pairs(single)] == ["one-above", "one-below"]
    for _, a, b in pattern_pairs(alg) + pattern_pairs(single):
        assert a.shape == b.shape == (alg.horizon if a.shape[0] == 10 else 5, 1)


def test_a_stream_mechanism_answers_the_row_it_has_read():
    """feedback="stream": round t's output depends on round t's answer."""
    alg = noisy_answers(3, 1, None, 1.0, 0.0, scale=0.01)
    tr = simulate(alg, np.array([[5.0], [-5.0], [5.0]]), 50, np.random.default_rng(1),
                  point_rounds=(0, 1, 2))
    assert tr.actions[:, 0].all() and not tr.actions[:, 1].any() and tr.actions[:, 2].all()
    assert np.allclose(tr.points[1], -5.0, atol=0.2)


def test_patterns_pairs_are_neighbours_and_the_per_round_claim_is_refuted():
    """Each answer costs ε, three answers move together under bounded-all:
    the true ε is 3ε, so the audit must find a violation of ε.  The black-box
    bound is valid at 95%; at true 3ε = 3 vs claim 1 with 40 000 runs the
    all-above pair's events show ≈ 2, so a miss would take a > 10σ fluctuation."""
    from audit.engine.audit import audit_algorithm
    alg = noisy_answers(3, 1, None, 1.0, 0.0)
    for sc in ATTACKS["patterns"].scenarios(alg):
        assert alg.claim.not_neighbours(sc.losses_a, sc.losses_b) is None
    r = audit_algorithm(alg, attacks=["patterns"], trials=40_000, seed=3)
    assert r.verdict == "violation" and r.epsilon_lower_bound > 1.0


def test_a_pair_outside_the_relation_is_refused_with_exit_2():
    """first-round moves one loss by 1; a claim with Δ = 0.5 does not allow it."""
    r = audit_here("run", "tests.stream_algos:greedy_half_step", "--horizon", "20",
                  "--epsilon", "1", "--attack", "first-round", "--trials", "1000", *FAST)
    assert r.returncode == 2
    line = one_error_line(r)
    assert "not a neighbouring pair" in line and "allows at most 0.5" in line


def test_learner_attacks_are_refused_for_a_mechanism_with_exit_2():
    r = audit_here("run", "svt1", "--attack", "tbe-first-round", "--trials", "1000", *FAST)
    assert r.returncode == 2
    assert "mechanism over a stream of answers" in one_error_line(r)
