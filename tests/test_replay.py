"""The exact replay (``algorithms.replay``): output laws found by running a
mechanism's own code on chosen uniform draws, never from a declaration,
and the ``replay`` mode that reports a pair's exact ε from them."""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from algorithms import Algorithm, Claim, Learner, build
from algorithms.dp_testers.mechanisms import geometric_cdf, report_bit_table
from algorithms.replay import (ReplayRefused, output_law, pair_epsilon, replay_applies)
from algorithms.simulate import simulate


def _mechanism(feed, n_codes=2, point=None, name="toy", T=1, draws_in_init=None):
    """A one-answer stream mechanism around ``feed(state, row, rng) -> state``
    whose round code is ``state["code"]``."""
    def init(runs, rng):
        state = {"n": runs, "code": np.zeros(runs, dtype=np.int64)}
        if draws_in_init is not None:
            state["x"] = draws_in_init(runs, rng)
        return state

    def act(state, advice, rng):
        return state, state["code"]

    learner = Learner(init, act, lambda s, a, row, rng: feed(s, row, rng), n_codes,
                      feedback="stream", point=point)
    claim = Claim(1.0, 0.0, "actions", "test", relation="one-round", max_change=1.0)
    return Algorithm(name, learner, claim, T, 1, {}, loss_range=(0.0, 1.0))


def _only(law):
    """The law of the one part that reads draws."""
    parts = [p for p in law.parts if len(p) > 1] or list(law.parts)
    assert len(parts) == 1
    return parts[0]


@pytest.mark.parametrize("side", ["left", "right"])
def test_a_searched_integer_draw_has_the_law_of_its_cells(side):
    """``np.searchsorted(table, u)`` of u uniform on the integers 0..9: the
    replayed law equals the count over all ten values, exactly."""
    table = np.array([2, 5, 5, 8])

    def feed(s, row, rng):
        u = rng.integers(0, 10, size=s["n"])
        return {**s, "code": np.searchsorted(table, u, side=side).astype(np.int64)}

    law = _only(output_law(_mechanism(feed, n_codes=5), np.zeros((1, 1))))
    want: dict = {}
    for u in range(10):
        z = int(np.searchsorted(table, u, side=side))
        want[(z,)] = want.get((z,), Fraction(0)) + Fraction(1, 10)
    assert law == want


def test_comparisons_against_computed_thresholds_are_followed():
    """A second draw compared with a threshold chosen by the first
    (randomised response on a randomised bit): P(1) = .3·.2 + .7·.9 up to
    the generator's grid of 2^-53."""
    def feed(s, row, rng):
        u = rng.random(s["n"])
        v = rng.random(s["n"])
        return {**s, "code": np.where(v < np.where(u < 0.3, 0.2, 0.9), 1, 0)}

    law = _only(output_law(_mechanism(feed), np.zeros((1, 1))))
    assert set(law) == {(0,), (1,)} and sum(law.values()) == 1
    assert abs(float(law[(1,)]) - (0.3 * 0.2 + 0.7 * 0.9)) < 1e-15


def _refused(feed, match, **kw):
    alg = _mechanism(feed, **kw)
    with pytest.raises(ReplayRefused, match=match):
        output_law(alg, np.zeros((1, 1)))
    assert not replay_applies(alg)


def test_what_the_replay_cannot_follow_is_refused_by_name():
    """Anything but comparing a uniform draw or a monotone step of one:
    another law, a step that is not monotone (``abs``), arithmetic of two
    draws, a plain number or array made of a continuous draw, a branch on
    it, a numpy function not followed, one run reading another's draw."""
    # a continuous law is no uniform draw: the uniform replay steps aside
    # (ContinuousDraws, a ReplayRefused) and the trace of continuous draws
    # follows it instead (tests/test_traced.py)
    alg = _mechanism(lambda s, row, rng: {**s, "code": (rng.laplace(0, 1, s["n"]) > 0)
                                          .astype(int)})
    with pytest.raises(ReplayRefused, match="rng.laplace"):
        output_law(alg, np.zeros((1, 1)))
    assert replay_applies(alg)
    _refused(lambda s, row, rng: {**s, "code": (np.abs(rng.random(s["n"]) - .5) < .2)
                                  .astype(int)}, "absolute to a uniform draw")
    _refused(lambda s, row, rng: {**s, "code": (rng.random(s["n"]) * rng.random(s["n"]) < .2)
                                  .astype(int)}, "multiply to a uniform draw")
    _refused(lambda s, row, rng: {**s, "code": np.asarray(rng.random(s["n"])) < 0.5},
             "uniform draw itself into a plain number")
    _refused(lambda s, row, rng: {**s, "code": np.asarray(rng.random(s["n"]) < 0.5)},
             "plain number or array")

    def branch(s, row, rng):
        u = rng.random(s["n"])
        if (u < 0.5).any():
            return {**s, "code": np.ones(s["n"], dtype=int)}
        return s
    _refused(branch, "plain number")
    _refused(lambda s, row, rng: {**s, "code": (np.mean(rng.random(s["n"])) < 0.5) + s["code"]},
             "np.mean")

    def crossed(s, row, rng):
        b = rng.random(s["n"]) < 0.5
        return {**s, "code": np.where(b[::-1], 1, 0)}
    _refused(crossed, "another run")


def test_truncated_geometric_law_is_its_integer_cdf_exactly():
    """The suite's GeoSample (one integer draw on [1, d], the count by
    inverse CDF): for every true count c the replayed law is
    (F(z) − F(z−1))/d as exact rationals, with no declaration read."""
    alg = build("truncated-geometric")
    n, k = alg.params["n"], alg.params["k"]
    for c in range(n + 1):
        law = _only(output_law(alg, np.array([[float(c)]]), "transcript"))
        f = geometric_cdf(n, k, c)
        want = {(z, float(z)): Fraction(f[z] - (f[z - 1] if z else 0), f[-1])
                for z in range(n + 1) if f[z] - (f[z - 1] if z else 0) > 0}
        assert law == want, c


def test_rappor_bits_replayed_agree_with_the_paper_and_with_simulation():
    """RAPPOR (permanent then instantaneous randomised response per Bloom
    bit): 20 independent parts, each bit's law the paper's P(1 | b) up to
    the 2^-53 grid; and with 200 000 simulated reports of value 3, each
    bit's frequency within 5 standard errors of the replayed probability
    (20 checks at 5.7·10⁻⁷ each: a false failure has probability below
    2·10⁻⁵)."""
    alg = build("rappor")
    p = alg.params
    table = report_bit_table(p["f"], p["p"], p["q"])
    law = output_law(alg, np.array([[3.0]]), "transcript")
    from algorithms.dp_testers.mechanisms import bloom_bits
    bits = bloom_bits(3, p["hashes"], p["size"])
    ones = {}
    for group, part in zip(law.groups, law.parts):
        if len(part) == 1:
            continue        # the code: always 0
        j = int(law.labels[group[0]].split("[")[1].rstrip("]"))
        one = sum((v for y, v in part.items() if y[0] == 1), Fraction(0))
        assert abs(float(one) - table[int(bits[j])][1]) < 1e-15, j
        ones[j] = float(one)
    assert sorted(ones) == list(range(p["size"]))
    tr = simulate(alg, np.array([[3.0]]), 200_000, np.random.default_rng(7), point_rounds=(0,))
    freq = tr.points[0].mean(axis=0)
    for j, q in ones.items():
        assert abs(freq[j] - q) < 5 * math.sqrt(q * (1 - q) / 200_000), (j, freq[j], q)


def test_the_replay_reads_no_declaration():
    """A RAPPOR whose declared table is wrong (its bits said to be kept with
    probability 0.99) is replayed to the same exact ε as the true one: the
    law comes from the code."""
    from algorithms.core import Finite
    alg = build("one-time-rappor")
    model = alg.learner.transcript
    wrong = model._replace(law=Finite(((0.99, 0.01), (0.01, 0.99))))
    liar = dataclasses.replace(alg, learner=alg.learner._replace(transcript=wrong))
    a, b = np.array([[4.0]]), np.array([[5.0]])
    true = pair_epsilon(output_law(alg, a, "transcript"), output_law(alg, b, "transcript"))
    told = pair_epsilon(output_law(liar, a, "transcript"), output_law(liar, b, "transcript"))
    assert told.epsilon == true.epsilon
    # 8 Bloom bits differ between 4 and 5, each worth ln((1 − f/2)/(f/2))
    f = alg.params["f"]
    assert abs(true.epsilon - 8 * math.log((1 - f / 2) / (f / 2))) < 1e-12


def test_replay_mode_finds_the_violation_and_never_accuses_a_correct_claim():
    """truncated-geometric with the suite's k = ⌈ln(2/ε)⌉ is not 0.1-DP: the
    replay certifies ln(9/8) = 0.117783 exactly (Balcer & Vadhan's ln(1 +
    2^-k), k = 3).  RAPPOR is exactly its claimed ε on its worst pair (the
    optimised pair, 8 Bloom bits apart): the exact figure equals the claim
    and the verdict is consistent."""
    from audit.engine.audit import audit_algorithm
    r = audit_algorithm(build("truncated-geometric"), modes=["replay"])
    best = max(r.results, key=lambda x: x.epsilon_lower_bound)
    assert best.exact and best.kind == "replay" and r.verdict == "violation"
    assert abs(best.epsilon_lower_bound - math.log(9 / 8)) < 1e-9
    assert best.rests_on == ("reexecution",)
    r = audit_algorithm(build("rappor"), modes=["replay"])
    best = max(r.results, key=lambda x: x.epsilon_lower_bound)
    assert best.attack == "optimised" and best.exact
    assert abs(best.epsilon_lower_bound - r.claim.epsilon) < 1e-9
    assert r.verdict == "consistent"


def test_a_refused_replay_claims_nothing():
    """The replay evidence on a pair whose code it cannot follow (here a
    mechanism whose uniform draws are followed on its midpoint but which
    draws Laplace noise instead for large answers, and the trace of
    continuous draws refuses uniform ones beside them) reports ε_lb 0, not
    exact, with why."""
    from attacks.base import Scenario
    from audit.engine.evidence.replay import ReplayEvidence

    def feed(s, row, rng):
        if row[0] > 0.75:
            return {**s, "code": (rng.laplace(0, 1, s["n"]) > 0).astype(np.int64)}
        return {**s, "code": (rng.random(s["n"]) < 0.5).astype(np.int64)}

    alg = _mechanism(feed)
    assert replay_applies(alg)
    sc = Scenario("toy", alg, np.array([[0.9]]), np.array([[0.1]]), None, 1)
    res = ReplayEvidence(sc, 0, alg.claim).conclude([], 0.05)
    assert res.epsilon_lower_bound == 0 and not res.exact
    assert "rng.random as well as continuous noise" in res.event


def test_randomness_the_replay_cannot_see_is_refused():
    """Draws from numpy's global functions, a generator the code builds, or
    Python's ``random`` would make a replayed cell's output a matter of
    chance: refused by name.  An output that depends on a run's place
    among the runs (not on its draws) is refused by the run-order check."""
    _refused(lambda s, row, rng: {**s, "code": (np.random.random(s["n"]) < 0.5).astype(int)},
             "numpy.random.random")
    _refused(lambda s, row, rng: {
        **s, "code": (np.random.default_rng(0).random(s["n"]) < 0.5).astype(int)},
        "numpy.random.default_rng")
    import random
    _refused(lambda s, row, rng: {**s, "code": np.full(s["n"], int(random.random() < 0.5))},
             "random.random")

    def by_place(s, row, rng):
        u = rng.random(s["n"])
        return {**s, "code": np.where(u < 0.5, 1, 0) + (np.arange(s["n"]) % 2)}
    _refused(by_place, "another run order", n_codes=3)
    # the global sources work again after a replay
    assert 0 <= np.random.random() < 1 and 0 <= random.random() < 1


def test_the_optimiser_on_the_replayed_code_stays_in_the_relation_and_finds_the_worst_pair():
    """RAPPOR's one answer is an integer of [−10, 10]: the optimiser scores
    every neighbouring pair (and its corner search), each accepted candidate
    passes the claim's relation and the domain check, and the best pair's
    exact ε is the worst the relation allows: 8 Bloom bits apart, ε equal to
    the paper's ε1 (the true ε)."""
    from attacks.optimised import optimise
    from audit.engine.models.objective import pair_objective
    alg = build("rappor")
    objective = pair_objective(alg)
    assert objective is not None
    (a, b, value, start, _), trace = optimise(alg, objective)
    accepted = [(x, y) for (x, y), ok in zip(trace.pairs, trace.accepted) if ok]
    assert len(accepted) >= 20
    for x, y in accepted:
        assert alg.claim.not_neighbours(x, y) is None
        alg.check_losses(x)
        alg.check_losses(y)
    assert start.startswith("from-") and abs(value - alg.claim.epsilon) < 1e-9


def test_a_drawn_index_is_refused_and_nothing_released_is_one_output():
    """Indexing a table with a value computed from the draws is refused
    (the replay cannot see which entry is read); NaN (nothing released) is
    one output on both sides, never a fresh one per run — so a pair whose
    code releases NaN half the time on both sides has ε 0, not ∞."""
    table = np.array([10, 20])
    _refused(lambda s, row, rng: {**s, "code": table[(rng.random(s["n"]) < .5).astype(int)]},
             "plain number or array")

    def feed(s, row, rng):
        u = rng.random(s["n"])
        return {**s, "code": s["code"], "x": np.where(u < 0.5, np.nan, 1.0)[:, None]}

    alg = _mechanism(feed, point=lambda s: s["x"])
    a, b = np.zeros((1, 1)), np.ones((1, 1))
    la, lb = output_law(alg, a), output_law(alg, b)
    assert {y for part in la.parts for y in part} == {(0,), (None,), (1.0,)}
    assert pair_epsilon(la, lb).epsilon == 0.0


# ------------------------------------------------ functions as written
FN = "tests.as_written_algos"


def test_a_function_as_written_is_replayed_branches_and_all():
    """Randomized response written as people write it — one call per run,
    ``if rng.random() < p: return bit`` — is replayed through its branch
    (a branch on a comparison is the same on a whole cell; everything the
    run returns then depends on it): the correct one's exact ε equals its
    claim 1 (consistent: the claim attained, not exceeded), the buggy one's
    is ln(1 + 2e) = 1.862 (a violation, no statistical error), and the one
    drawing from Python's global ``random`` has the same law as the one on
    its generator."""
    from audit.engine.audit import audit_algorithm
    laws = {}
    for fn in ("randomized_response", "buggy_randomized_response",
               "global_randomized_response"):
        alg = build(f"{FN}:{fn}", horizon=1)
        assert replay_applies(alg), fn
        laws[fn] = output_law(alg, np.array([[1.0]]))
        r = audit_algorithm(alg, trials=2000, modes=["replay"])
        best = max(r.results, key=lambda x: x.epsilon_lower_bound)
        assert best.exact and best.kind == "replay", fn
        if fn.startswith("buggy"):
            assert abs(best.epsilon_lower_bound - math.log(1 + 2 * math.e)) < 1e-9
            assert r.verdict == "violation"
        else:
            assert abs(best.epsilon_lower_bound - 1.0) < 1e-9 and r.verdict == "consistent"
    assert laws["randomized_response"].parts == laws["global_randomized_response"].parts


def _function_mechanism(fn):
    """A one-answer mechanism around ``fn(x, rng)`` called once per run."""
    def whole(losses, runs, rng):
        raise AssertionError("the replay calls one_run")

    def one_run(losses, rng, seed):
        return fn(np.asarray(losses, dtype=float)[:, 0], rng)
    learner = Learner(None, None, None, 2, feedback="stream", whole=whole, one_run=one_run)
    claim = Claim(1.0, 0.0, "actions", "test", relation="one-round", max_change=1.0)
    return Algorithm("fn", learner, claim, 1, 1, {}, loss_range=(0.0, 1.0))


def test_what_a_function_does_that_the_replay_cannot_follow_is_refused():
    """One call per run: a loop on its draws that the replay's choices do not
    end (at the lowest grid value every draw is below 0.5), a continuous
    value of a draw made a plain number, state kept from one call to the
    next (found by the run-order check), and an exception."""
    def geometric(x, rng):
        n = 0
        while rng.random() < 0.5:
            n += 1
        return n

    calls = {"n": 0}

    def counting(x, rng):
        calls["n"] += 1
        return int(rng.random() < 0.5) + calls["n"]

    def raises(x, rng):
        if rng.random() < 0.5:
            raise ZeroDivisionError("boom")
        return 0

    for fn, match in ((geometric, "more than 10000 uniforms"),
                      (lambda x, rng: float(rng.random() * 2), "plain number"),
                      (counting, "another run order"), (raises, "ZeroDivisionError")):
        alg = _function_mechanism(fn)
        with pytest.raises(ReplayRefused, match=match):
            output_law(alg, np.zeros((1, 1)))


from random import random as _bound_random              # noqa: E402 - bound before any replay
from numpy.random import random_sample as _bound_np     # noqa: E402
_KEPT = np.random.default_rng(5)


def test_randomness_behind_names_bound_before_the_audit_is_caught():
    """What the seal cannot reach by name still shows: a draw from Python's
    or numpy's global state through a name imported earlier moves that
    state (refused on every call), a generator the code keeps moves its
    own (the replay evidence compares every live bit generator's state and
    claims nothing), and a draw returned as it is (``max(u, 0.5)``, not
    constant on a cell) is refused."""
    for fn, match in ((lambda x, rng: int(_bound_random() < 0.5), "global random state"),
                      (lambda x, rng: int(_bound_np() < 0.5), "global random state"),
                      (lambda x, rng: max(rng.random(), 0.5), "uniform draw itself")):
        with pytest.raises(ReplayRefused, match=match):
            output_law(_function_mechanism(fn), np.zeros((1, 1)))
    from attacks.base import Scenario
    from audit.engine.evidence.replay import ReplayEvidence
    alg = _function_mechanism(lambda x, rng: int(rng.random() < 0.5) + int(_KEPT.random() < 1))
    sc = Scenario("toy", alg, np.array([[0.9]]), np.array([[0.1]]), None, 1)
    res = ReplayEvidence(sc, 0, alg.claim).conclude([], 0.05)
    assert res.epsilon_lower_bound == 0 and not res.exact
    assert "keeps drew" in res.event


def test_log_ratios_of_tiny_exact_probabilities_neither_underflow_nor_round_away():
    """A part of many draws has probabilities far below the smallest double:
    its log-ratio is still exact to double precision, and q = 0 < p is ∞."""
    from algorithms.replay import log_ratio
    p, q = Fraction(3, 10 ** 400), Fraction(2, 10 ** 400)
    assert abs(log_ratio(p, q) - math.log(1.5)) < 1e-15
    assert log_ratio(Fraction(1, 2), Fraction(0)) == math.inf
    assert log_ratio(Fraction(1, 3), Fraction(1, 3)) == 0.0


def test_numpys_global_uniform_draws_of_a_function_are_routed_to_the_replay():
    """A function drawing from ``np.random.random`` and ``np.random.randint``
    (numpy's global state, as people write it): both reach the replay, and
    the law is exact — P(1) = 1/4 for ``random() < 0.25`` and for
    ``randint(0, 4) == 3``; numpy's global state does not move.  (The drawn
    integer returned as it is would be refused, as any draw in the
    output.)"""
    state = np.random.get_state()[1].copy()
    law = _only(output_law(_function_mechanism(
        lambda x, rng: int(np.random.random() < 0.25)), np.zeros((1, 1))))
    assert law == {(1,): Fraction(1, 4), (0,): Fraction(3, 4)}
    law = _only(output_law(_function_mechanism(
        lambda x, rng: int(np.random.randint(0, 4) == 3)), np.zeros((1, 1))))
    assert law == {(1,): Fraction(1, 4), (0,): Fraction(3, 4)}
    assert np.array_equal(np.random.get_state()[1], state)


# ------------------------------------ a draw's own value, monotone steps
def _law_of(fn):
    return _only(output_law(_function_mechanism(fn), np.zeros((1, 1))))


def _first(pred) -> int:
    """The first grid index k with pred(k), pred monotone (false, then
    true) on Python floats, by bisection: the reference for a cut."""
    lo, hi = 0, 2 ** 53
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _first_at_least(g, t) -> int:
    """The first grid index k with g(k) ≥ t, g non-decreasing."""
    return _first(lambda k: g(k) >= t)


def test_draws_are_numbered_per_kind_so_paths_may_draw_different_kinds():
    """Which draw comes next may depend on a branch (a uniform on one path,
    an integer on the other): each kind's n-th draw is one variable, and
    the law is exact — P(1) = 1/4·1/2 + 3/4·1/4 = 5/16."""
    def kinds(x, rng):
        if rng.random() < 0.25:
            return int(rng.random() < 0.5)
        return int(rng.integers(0, 4) == 1)
    assert _law_of(kinds) == {(1,): Fraction(5, 16), (0,): Fraction(11, 16)}


def test_a_drawn_integer_in_the_output_is_cut_at_every_value():
    """``np.random.randint(0, 4)`` returned as it is, a shifted one, a table
    entry it indexes, ``random.choice`` and ``rng.choice`` without weights:
    uniform laws, exactly; with weights, ``rng.choice`` is the uniform
    searched in the normalised cumulative sums, as numpy makes it."""
    quarter = {(j,): Fraction(1, 4) for j in range(4)}
    assert _law_of(lambda x, rng: np.random.randint(0, 4)) == quarter
    assert _law_of(lambda x, rng: rng.integers(0, 4) + 10) == {
        (j + 10,): Fraction(1, 4) for j in range(4)}
    assert _law_of(lambda x, rng: [5, 6, 7, 8][rng.integers(4)]) == {
        (j,): Fraction(1, 4) for j in (5, 6, 7, 8)}
    import random
    assert _law_of(lambda x, rng: random.choice("abcd")) == {
        (c,): Fraction(1, 4) for c in "abcd"}
    assert _law_of(lambda x, rng: rng.choice(np.array([3, 1, 4, 1]))) == {
        (3,): Fraction(1, 4), (1,): Fraction(1, 2), (4,): Fraction(1, 4)}
    p = np.array([0.1, 0.6, 0.3])
    law = _law_of(lambda x, rng: np.random.choice(3, p=p))
    cdf = p.cumsum() / p.cumsum()[-1]
    # side="right": index j where cdf[j-1] <= u < cdf[j], counted on the grid
    edges = [0] + [_first_at_least(lambda k: k / 2 ** 53, c) for c in cdf[:-1]] + [2 ** 53]
    assert law == {(j,): Fraction(edges[j + 1] - edges[j], 2 ** 53) for j in range(3)}


def test_monotone_steps_of_a_uniform_are_cut_where_the_codes_arithmetic_says():
    """``2u < 1``, ``rng.uniform(a, b) < t``, ``random.uniform``, a uniform
    scaled by e + 1 against e, ``int(3u)`` and ``math.floor``: each cut is
    where the code's own floating-point arithmetic changes the outcome — the
    same as a bisection in Python floats finds (an independent reference) —
    and every probability is a grid count over 2^53."""
    import random
    assert _law_of(lambda x, rng: int(2 * rng.random() < 1)) == {
        (1,): Fraction(1, 2), (0,): Fraction(1, 2)}
    for a, b, t in ((0.2, 1.7, 1.0), (-3.0, 0.5, -1.1), (0.0, 1.0, 1 / 3)):
        c = _first_at_least(lambda k: a + (b - a) * (k / 2 ** 53), t)
        want = {(1,): Fraction(c, 2 ** 53), (0,): Fraction(2 ** 53 - c, 2 ** 53)}
        assert _law_of(lambda x, rng: int(rng.uniform(a, b) < t)) == want
        assert _law_of(lambda x, rng: int(np.random.uniform(a, b) < t)) == want
        assert _law_of(lambda x, rng: int(random.uniform(a, b) < t)) == want
    e = math.e
    c = _first_at_least(lambda k: (k / 2 ** 53) * (e + 1), math.nextafter(e, math.inf))
    assert _law_of(lambda x, rng: int(rng.random() * (e + 1) > e)) == {
        (0,): Fraction(c, 2 ** 53), (1,): Fraction(2 ** 53 - c, 2 ** 53)}
    law = _law_of(lambda x, rng: int(3 * rng.random()))
    cuts = [0] + [_first_at_least(lambda k: 3 * (k / 2 ** 53), j) for j in (1, 2)] + [2 ** 53]
    assert law == {(j,): Fraction(cuts[j + 1] - cuts[j], 2 ** 53) for j in range(3)}
    assert _law_of(lambda x, rng: math.floor(3 * rng.random())) == law


def test_steps_that_could_leave_the_grids_order_are_refused():
    """A step must be monotone on the whole grid: integer arithmetic that
    wraps around is no step (the draw is then cut at every value, refused
    here for its 2^62 values), floating arithmetic that overflows to ∞,
    division of a constant by a draw, and a continuous value in the output
    are refused."""
    for fn, match in ((lambda x, rng: int(rng.integers(0, 2 ** 62) * 4 < 5),
                       "multiply to a uniform draw itself"),
                      (lambda x, rng: int(rng.random() * 1e308 * 10 < 1), "overflows"),
                      (lambda x, rng: int(1 / rng.random() < 2), "uniform draw itself"),
                      (lambda x, rng: rng.uniform(0, 1), "uniform draw itself is part")):
        with pytest.raises(ReplayRefused, match=match):
            output_law(_function_mechanism(fn), np.zeros((1, 1)))


def test_k_ary_randomized_response_and_a_scaled_coin_as_written():
    """k-ary randomized response on numpy's global state (its output a drawn
    integer) and a binary mechanism comparing a scaled uniform: exact ε
    equal to the claim 1 (up to the 2^-53 grid), consistent; the k-ary one
    that lies among all k categories is an exact violation, ln(1 + 4e/3) =
    1.531 (k = 4)."""
    from audit.engine.audit import audit_algorithm
    for fn, want in (("k_randomized_response", 1.0), ("scaled_coin", 1.0),
                     ("buggy_k_randomized_response", math.log(1 + 4 * math.e / 3))):
        alg = build(f"{FN}:{fn}", horizon=1)
        assert replay_applies(alg), fn
        r = audit_algorithm(alg, trials=2000, modes=["replay"])
        best = max(r.results, key=lambda x: x.epsilon_lower_bound)
        assert best.exact and best.kind == "replay", fn
        assert abs(best.epsilon_lower_bound - want) < 1e-9, (fn, best.epsilon_lower_bound)
        assert r.verdict == ("violation" if fn.startswith("buggy") else "consistent"), fn


def test_a_monotone_step_searched_in_a_table_is_cut_where_its_arithmetic_says():
    """``np.searchsorted(edges, 3u + 0.25)``: the cuts are the code's own
    arithmetic crossing each edge, not the raw draw's."""
    edges = np.array([1.0, 2.0])
    law = _law_of(lambda x, rng: int(np.searchsorted(edges, 3 * rng.random() + 0.25)))
    g = lambda k: 3 * (k / 2 ** 53) + 0.25                        # noqa: E731
    cuts = [0] + [_first(lambda k: g(k) > e) for e in edges] + [2 ** 53]
    assert law == {(j,): Fraction(cuts[j + 1] - cuts[j], 2 ** 53) for j in range(3)}


def test_the_exponential_mechanism_drawn_with_choice_is_replayed_exactly():
    """``rng.choice(n, p=weights)`` as the exponential mechanism is written:
    on 3 answers that may all move by 1, the pair (1, 0, 0) / (0, 1, 1)
    gives exactly ln(e^½(1 + 2e^½)/(e^½ + 2)) = 0.664 for the correct one
    (consistent with ε = 1) and ln(e(1 + 2e)/(e + 2)) = 1.311 without the ½
    (an exact violation)."""
    from audit.engine.audit import audit_algorithm
    h = math.exp(0.5)
    for fn, want in (("exponential_mechanism", math.log(h * (1 + 2 * h) / (h + 2))),
                     ("buggy_exponential_mechanism",
                      math.log(math.e * (1 + 2 * math.e) / (math.e + 2)))):
        alg = build(f"{FN}:{fn}", horizon=3)
        la = output_law(alg, np.array([[1.0], [0.0], [0.0]]))
        lb = output_law(alg, np.array([[0.0], [1.0], [1.0]]))
        assert abs(pair_epsilon(la, lb).epsilon - want) < 1e-9, fn
        r = audit_algorithm(alg, trials=2000, modes=["replay"])
        best = max(r.results, key=lambda x: x.epsilon_lower_bound)
        assert best.exact and best.epsilon_lower_bound >= want - 1e-9, fn
        assert r.verdict == ("violation" if fn.startswith("buggy") else "consistent"), fn


# ------------------------------- generators the code builds, classes as written
def test_generators_built_from_the_given_seed_are_replayed_and_a_fixed_seed_is_not():
    """A function given an integer seed builds ``default_rng(seed)``: its
    draws are the replay's (exact ε = 1, its claim); one that builds
    ``RandomState(42)`` has no randomness from one call to the next, and
    the replay refuses it rather than substitute fresh draws; Python's
    ``random.Random(seed)`` and an unseeded ``default_rng()`` are routed."""
    import random
    alg = build(f"{FN}:seeded_randomized_response", horizon=1)
    assert replay_applies(alg)
    la, lb = output_law(alg, np.array([[1.0]])), output_law(alg, np.array([[0.0]]))
    assert abs(pair_epsilon(la, lb).epsilon - 1.0) < 1e-9
    alg = build(f"{FN}:fixed_seed_randomized_response", horizon=1)
    assert not replay_applies(alg)
    with pytest.raises(ReplayRefused, match="from a seed of its own"):
        output_law(alg, np.array([[1.0]]))
    for make in (lambda: np.random.default_rng().random(),
                 lambda: random.Random().random(),
                 lambda: np.random.Generator(np.random.PCG64()).random()):
        assert _law_of(lambda x, rng: int(make() < 0.25)) == {
            (1,): Fraction(1, 4), (0,): Fraction(3, 4)}


def test_a_bandit_class_as_written_is_replayed_and_agrees_with_its_simulation():
    """A two-armed bandit class on ``random.Random(seed)``, driven one object
    per run as the black-box audit drives it: the replayed law of its 3
    arms equals the frequencies of 40 000 simulated runs within 5 standard
    errors (8 sequences: a false failure below 10^-5), and the exact ε of a
    changed first round is ε = 1 for the correct class and ln(1 + 2e) =
    1.862 for the one whose lie is a fair draw — an exact violation."""
    from audit.engine.audit import audit_algorithm
    losses = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    alg = build(f"{FN}:BuggyStickyCoin", horizon=3, epsilon=1.0)
    # the tracer against the simulation: no re-execution needed here (its
    # 64 cells cost 90 000 re-executed runs a law; tests/test_confirm.py)
    law = _only(output_law(alg, losses, confirm=False))
    n = 40_000
    arms = simulate(alg, losses, n, np.random.default_rng(3)).actions
    seqs, counts = np.unique(arms, axis=0, return_counts=True)
    seen = {tuple(int(a) for a in s): c for s, c in zip(seqs, counts)}
    assert sum(law.values()) == 1 and set(seen) <= set(law)
    for y, p in law.items():
        p = float(p)
        assert abs(seen.get(y, 0) / n - p) < 5 * math.sqrt(p * (1 - p) / n), y
    changed = losses.copy()
    changed[0] = [1.0, 0.0]
    for cls, want in (("StickyCoin", 1.0), ("BuggyStickyCoin", math.log(1 + 2 * math.e))):
        alg = build(f"{FN}:{cls}", horizon=3, epsilon=1.0)
        pair = pair_epsilon(output_law(alg, losses), output_law(alg, changed))
        assert abs(pair.epsilon - want) < 1e-9, cls
        if cls.startswith("Buggy"):
            continue        # its confirmed pair above is the certificate; the audit is costly
        r = audit_algorithm(alg, trials=2000, modes=["replay"])
        best = max(r.results, key=lambda x: x.epsilon_lower_bound)
        assert best.exact and abs(best.epsilon_lower_bound - want) < 1e-9, cls
        assert r.verdict == "consistent", cls


def test_a_stream_mechanism_class_is_replayed():
    """``release(value)`` per round on numpy's global state: one changed
    round of three gives exactly ε = 1."""
    alg = build(f"{FN}:RandomizedResponseStream", horizon=3, epsilon=1.0)
    a = np.array([[0.0], [1.0], [0.0]])
    b = np.array([[1.0], [1.0], [0.0]])
    assert abs(pair_epsilon(output_law(alg, a), output_law(alg, b)).epsilon - 1.0) < 1e-9


def test_two_generators_from_the_given_seed_are_refused():
    """Two generators built from one seed draw the same numbers: replaying
    them as independent would misstate the law, so the second is refused."""
    def twice(x, seed):
        u = np.random.default_rng(seed).random()
        v = np.random.RandomState(seed).random_sample()
        return int(u < 0.5) + int(v < 0.5)

    def one_run(losses, rng, seed):
        return twice(losses[:, 0], seed)
    learner = Learner(None, None, None, 3, feedback="stream", whole=lambda *a: None,
                      one_run=one_run)
    alg = Algorithm("twice", learner, Claim(1.0, 0.0, "actions", "test"), 1, 1, {},
                    loss_range=(0.0, 1.0))
    with pytest.raises(ReplayRefused, match="same numbers"):
        output_law(alg, np.zeros((1, 1)))


def test_a_batched_function_on_numpys_global_state_is_replayed():
    """``f(x, n_samples)`` drawing ``np.random.uniform(size=n)`` and
    ``np.random.randint(…, size=n)`` for all runs at once, as DP testers'
    benchmarks write mechanisms: replayed over the runs axis, exact ε 1
    (its claim) for k-ary randomized response and ln(1 + 4e/3) for the
    one lying among all k categories."""
    for fn, want in (("batched_k_randomized_response", 1.0),
                     ("buggy_batched_k_randomized_response", math.log(1 + 4 * math.e / 3))):
        alg = build(f"{FN}:{fn}", horizon=1)
        assert replay_applies(alg), fn
        la, lb = output_law(alg, np.array([[0.0]])), output_law(alg, np.array([[1.0]]))
        assert abs(pair_epsilon(la, lb).epsilon - want) < 1e-9, fn


def test_a_dp_library_style_mechanism_class_is_replayed():
    """``randomise(value)`` on a ``RandomState(random_state)`` built in the
    constructor, as DP libraries write mechanisms: a stream class, its
    generator built from the seed the audit hands it, exact ε = 1."""
    alg = build(f"{FN}:CoinMechanism", horizon=1, epsilon=1.0)
    assert replay_applies(alg)
    la, lb = output_law(alg, np.array([[1.0]])), output_law(alg, np.array([[0.0]]))
    assert abs(pair_epsilon(la, lb).epsilon - 1.0) < 1e-9


def test_pythons_random_choices_is_followed_as_python_makes_it():
    """``random.choices`` without weights is ``floor(random() · n)``, with
    weights the uniform scaled by their total and bisected into their
    cumulative sums — Python's own algorithm, so the law is exact: cut
    where Python's float arithmetic (the reference bisection here) says."""
    import random
    law = _law_of(lambda x, rng: random.choices("abc")[0])
    cuts = [0] + [_first(lambda k, j=j: math.floor((k / 2 ** 53) * 3.0) >= j)
                  for j in (1, 2)] + [2 ** 53]
    assert law == {(c,): Fraction(cuts[j + 1] - cuts[j], 2 ** 53) for j, c in enumerate("abc")}
    w = [0.2, 0.5, 0.3]
    law = _law_of(lambda x, rng: random.choices(range(3), weights=w)[0])
    import bisect
    import itertools
    cum = list(itertools.accumulate(w))
    total = cum[-1] + 0.0
    cuts = [0] + [_first(lambda k, j=j: bisect.bisect(cum, (k / 2 ** 53) * total, 0, 2) >= j)
                  for j in (1, 2)] + [2 ** 53]
    assert law == {(j,): Fraction(cuts[j + 1] - cuts[j], 2 ** 53) for j in range(3)}


def test_a_cheap_replay_gets_its_pair_optimised_by_default_and_a_costly_one_not():
    """The optimiser replays the code for every pair it tries: a function of
    3 cells gets the ``optimised`` attack by default, randomized response on
    each of 10 answers (2^10 joint cells, one call per run) does not —
    its exact figure still comes from the search's pairs, where it can be
    confirmed: there, confirming a law would re-execute the code 1 435 648
    times over 10 rounds, and the replay steps aside with that reason."""
    assert build(f"{FN}:exponential_mechanism", horizon=3).default_attacks == ("optimised",)
    alg = build(f"{FN}:randomized_response_each", horizon=10)
    assert alg.default_attacks == () and replay_applies(alg)
    with pytest.raises(ReplayRefused, match="re-execute the code 1,435,648 times"):
        output_law(alg, np.full((10, 1), 0.5))


def test_only_a_kept_generator_that_drew_refuses_the_replay():
    """The replay refuses where a numpy generator alive before it drew
    during it (randomness it does not choose); a generator freed in between
    — the garbage collector frees cycles at any moment, as it did after an
    audit of objects copied per run — or built in between says nothing."""
    import gc
    from algorithms.replay.tracer import generator_states, kept_generator_drew

    class Holder:
        pass
    kept = np.random.default_rng(1)
    cycle = Holder()
    cycle.rng, cycle.me = np.random.default_rng(2), cycle
    before = generator_states()
    del cycle
    gc.collect()
    fresh = np.random.default_rng(3)
    fresh.random()
    assert not kept_generator_drew(before)
    kept.random()
    assert kept_generator_drew(before)
