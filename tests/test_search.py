"""The neighbour search (``attacks.search``): it finds the one revealing
pair, its joint events matter, it is what an algorithm without attacks is
audited with, it keeps the audit valid, and its pilot never draws from an
audit's streams.  Budgets are small; every audit has a fixed seed."""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from algorithms import Algorithm, Claim, Learner
from attacks import ATTACKS
from attacks.events import JointActionAt, Union
from attacks.search import PILOT_STREAM, candidate_rounds, pilot_rng
from audit.engine import audit_algorithm
from audit.engine.audit import audit_scenarios
from audit.engine.scenarios import attack_names, scenarios_for

SEARCH = ATTACKS["search"]


def late_leaker(T: int, t_star: int, p: float = 0.9, epsilon: float = 1.0) -> Algorithm:
    """Ignores every loss but arm 1's at round t* (0-based; it plays arm 1
    there, so it sees it), then plays arm 2 with probability p after a loss
    ≥ 1/2 and 1 − p otherwise: ln(p/(1 − p)) ≈ 2.2 a round, against ε = 1."""
    def init(runs, rng):
        return {"t": 0, "bit": np.zeros(runs, dtype=bool)}

    def act(state, advice, rng):
        runs = state["bit"].shape[0]
        if state["t"] < t_star:
            return state, rng.integers(0, 2, runs)
        if state["t"] == t_star:
            return state, np.zeros(runs, dtype=np.int64)
        return state, (rng.random(runs) < np.where(state["bit"], p, 1 - p)).astype(np.int64)

    def feed(state, actions, losses, rng):
        bit = losses >= 0.5 if state["t"] == t_star else state["bit"]
        return {"t": state["t"] + 1, "bit": bit}

    return Algorithm("late-leaker", Learner(init, act, feed, 2),
                     Claim(epsilon, 0.0, "actions", "false: leaks round t*"), T, 2, {})


# Rounds t*+1 and t*+2 play one of three ordered pairs of the three arms:
# (1,2), (2,3), (3,1) on one side, (2,1), (3,2), (1,3) on the other.  Each
# action is uniform and the pair's multiset is the same on both sides, so
# every single-round event, switch and arm count has one distribution on
# both sides; only a joint event {I_s = a and I_u = b} tells them apart.
FORWARD = np.array([[0, 1], [1, 2], [2, 0]])
BACKWARD = FORWARD[:, ::-1]


def joint_leaker(T: int = 12, t_star: int = 5, epsilon: float = 1.0) -> Algorithm:
    """Full information, three arms; reads only arm 1's loss at round t*."""
    def init(runs, rng):
        return {"t": 0, "bit": np.zeros(runs, dtype=bool), "pair": np.zeros((runs, 2), int)}

    def act(state, advice, rng):
        runs, t = state["bit"].shape[0], state["t"]
        if t in (t_star + 1, t_star + 2):
            if t == t_star + 1:
                k = rng.integers(0, 3, runs)
                state = {**state, "pair": np.where(state["bit"][:, None], FORWARD[k],
                                                   BACKWARD[k])}
            return state, state["pair"][:, t - t_star - 1]
        return state, rng.integers(0, 3, runs)

    def feed(state, actions, losses, rng):
        bit = np.full(state["bit"].shape, losses[0] >= 0.5) if state["t"] == t_star \
            else state["bit"]
        return {**state, "t": state["t"] + 1, "bit": bit}

    return Algorithm("joint-leaker", Learner(init, act, feed, 3, feedback="full"),
                     Claim(epsilon, 0.0, "actions", "false: leaks jointly"), T, 3, {})


def randomized_response(T: int = 10, t_star: int = 4, epsilon: float = 1.0) -> Algorithm:
    """Exactly ε-DP: after round t* it plays arm 2 with probability
    e^ε/(1 + e^ε) if arm 1's loss at t* was ≥ 1/2, else 1/(1 + e^ε), once;
    every other action is uniform and independent of the losses."""
    q = np.exp(epsilon) / (1 + np.exp(epsilon))

    def init(runs, rng):
        return {"t": 0, "bit": np.zeros(runs, dtype=bool)}

    def act(state, advice, rng):
        runs = state["bit"].shape[0]
        if state["t"] == t_star + 1:
            return state, (rng.random(runs) < np.where(state["bit"], q, 1 - q)).astype(np.int64)
        return state, rng.integers(0, 2, runs)

    def feed(state, actions, losses, rng):
        bit = np.full(state["bit"].shape, losses[0] >= 0.5) if state["t"] == t_star \
            else state["bit"]
        return {"t": state["t"] + 1, "bit": bit}

    return Algorithm("randomized-response", Learner(init, act, feed, 2, feedback="full"),
                     Claim(epsilon, 0.0, "actions", "randomized response, exact"), T, 2, {})


def _black_box(sc, **changes):
    """The scenario with the given fields replaced and no learned witness
    (when the engine offers one), so that only its event family decides."""
    if any(f.name == "learned" for f in dataclasses.fields(sc)):
        changes["learned"] = False
    return dataclasses.replace(sc, **changes)


def test_search_finds_the_one_late_round_and_refutes_the_claim():
    """Round 37 of 40 is the only round whose loss the learner reads; every
    finalist changes it (arm 1 at round 37), and the default audit (the
    search alone: the learner names no attacks) refutes ε = 1.  True ε per
    round after it is ln 9 ≈ 2.2, so at 10⁴ held-out runs per side ε_lb ≈ 2
    (a miss would need the pilot to rank 3 of the 36 other rounds, with
    score 0, above ones of score ≈ 4 on hundreds of runs)."""
    alg = late_leaker(T=40, t_star=36)
    scenarios = SEARCH.scenarios(alg)
    assert 1 <= len(scenarios) <= 3
    for sc in scenarios:
        assert sc.differing_rounds().tolist() == [36]
        assert sc.label.startswith("search:round-37-")
        assert sc.losses_a[36, 0] != sc.losses_b[36, 0]
        assert any("score" in n and "place" in n for n in sc.notes)
    r = audit_algorithm(alg, trials=20_000, seed=0)
    assert r.verdict == "violation"
    assert r.epsilon_lower_bound > 1.5
    assert all(res.label.startswith("search:round-37-") for res in r.results)


def test_search_reaches_a_late_round_of_a_longer_horizon():
    """T = 300: the structured set (not every round) holds the late round
    298, the last but one, and the pilot ranks it first."""
    alg = late_leaker(T=300, t_star=297)
    assert 297 in candidate_rounds(alg) and len(candidate_rounds(alg)) < 60
    (first, *_) = SEARCH.scenarios(alg)
    assert first.differing_rounds().tolist() == [297]


def test_joint_leak_needs_the_joint_events():
    """Two actions, each uniform on both sides, coupled differently.  The
    default audit catches it.  The search's own pairs, black-box with their
    own family, give ε_lb ≥ 1.5 (true: ∞; the joint event has probability
    1/3 vs 0); with the joint events removed the same pairs cannot exceed
    ε = 1 except through a bound failing (probability ≤ 0.05 at this fixed
    seed: single-round events have one distribution on both sides)."""
    alg = joint_leaker()
    r = audit_algorithm(alg, trials=20_000, seed=1)
    assert r.verdict == "violation"
    scenarios = [_black_box(sc) for sc in SEARCH.scenarios(alg)]
    assert all(sc.differing_rounds().tolist() == [5] for sc in scenarios)
    joint = audit_scenarios(scenarios, alg.claim, trials=20_000, seed=1)
    assert max(res.epsilon_lower_bound for res in joint) > 1.5
    assert " and I_" in max(joint, key=lambda res: res.epsilon_lower_bound).test.event
    single = [_black_box(sc, events=Union(tuple(p for p in sc.events.parts
                                                 if not isinstance(p, JointActionAt))))
              for sc in scenarios]
    assert all(" and " not in label for sc in single for label in sc.events.labels)
    alone = audit_scenarios(single, alg.claim, trials=20_000, seed=1)
    assert all(res.epsilon_lower_bound <= alg.claim.epsilon for res in alone)


def test_search_is_added_to_the_defaults_and_runs_alone_without_any(capsys):
    """Unless attacks are named, the search follows the algorithm's own; an
    algorithm that names none is audited with the search alone (no error),
    through ``audit run`` on a user's factory."""
    from algorithms import build
    from audit.cli.main import main
    assert attack_names(build("private-exp3"), None) == ["canary", "first-round", "batch-edge",
                                                         "search"]
    assert attack_names(build("private-exp3"), ["canary"]) == ["canary"]
    code = main(["run", "tests.user_algos:no_attacks", "--horizon", "30", "--trials", "2000",
                 "--no-store", "-v"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "search:round-" in out.out and "--attack search" in out.out
    assert "names no default attacks" not in out.err


def test_inapplicable_default_search_is_left_out():
    """A one-round horizon leaves the search no round to change: added by
    default it is left out (the algorithm's own attack runs), named it is an
    error, and as the only attack the audit says what to do."""
    import pytest
    alg = late_leaker(T=1, t_star=0)
    with pytest.raises(ValueError, match="names no default attacks.*--attack"):
        scenarios_for(alg, None)
    with pytest.raises(ValueError, match="horizon of at least 2"):
        scenarios_for(alg, ["search"])
    alg.default_attacks = ("first-round",)
    found, names = scenarios_for(alg, None)
    assert names == ["first-round"] and [sc.label for sc in found] == ["first-round"]


def test_search_keeps_the_audit_valid_over_many_seeds():
    """An exactly ε-DP randomized response (ε = 1, tight on the pair the
    search finds) audited with the search's finalists at 200 seeds: each
    audit exceeds ε = 1 with probability ≤ 1 − confidence = 0.05 (its
    finalists are fixed by the seed-independent pilot, and all 2 bounds of
    each finalist share the α).  Even with every audit at exactly that rate,
    more than ``limit`` = 27 of 200 exceed it with probability 9.6e-7
    (binom.sf): this test's own false-failure probability.  It fails only if
    the rate is clearly above 0.05; the pairs do carry the leak (mean ε_lb
    ≈ 0.85 at this budget), so a broken bound would show.  The learned
    witness is left out: this checks the search's pairs and events."""
    alg = randomized_response()
    scenarios = [_black_box(sc) for sc in SEARCH.scenarios(alg)]
    assert all(sc.differing_rounds().tolist() == [4] for sc in scenarios)
    n = 200
    limit = next(k for k in range(n) if stats.binom.sf(k, n, 0.05) < 1e-6)
    results = [audit_scenarios(scenarios, alg.claim, trials=2000, seed=s) for s in range(n)]
    best = [max(res.epsilon_lower_bound for res in found) for found in results]
    assert limit < 0.15 * n
    assert sum(b > alg.claim.epsilon for b in best) <= limit
    assert np.mean(best) > 0.5           # the pairs carry the leak: the test can fail


def test_pilot_streams_are_not_the_audits():
    """Every random stream the learner sees in the search's pilot is one of
    the pilot's SeedSequence([0x5EA2C4, key, side]), and none of them is a
    stream any chunk of the audit draws from, even at the audit seed
    0x5EA2C4 (recorded from the generators the learner is handed)."""
    seen = []
    base = late_leaker(T=12, t_star=3)

    def init(runs, rng):
        ss = rng.bit_generator.seed_seq
        seen.append((tuple(np.atleast_1d(ss.entropy).tolist()), tuple(ss.spawn_key),
                     ss.generate_state(4).tobytes()))
        return base.learner.init(runs, rng)

    alg = dataclasses.replace(base, learner=base.learner._replace(init=init))
    scenarios = [_black_box(sc) for sc in SEARCH.scenarios(alg)]
    pilot = list(seen)
    assert pilot and all(e[0] == PILOT_STREAM and len(e) == 3 and key == ()
                         for e, key, _ in pilot)
    seen.clear()
    audit_scenarios(scenarios, alg.claim, trials=30_000, seed=PILOT_STREAM, jobs=1)
    audit_runs = list(seen)
    assert len(audit_runs) >= 2 * len(scenarios) * 3          # 3 chunks of 10000 a side
    assert not {s for *_, s in pilot} & {s for *_, s in audit_runs}
    # And the streams themselves, for other seeds and indices than this run's.
    audit_states = {np.random.SeedSequence([seed, i, side]).spawn(3)[c].generate_state(4)
                    .tobytes() for seed in (0, 1, PILOT_STREAM, 2 ** 40 + 7)
                    for i in range(8) for side in range(10) for c in range(3)}
    pilot_states = {pilot_rng(key, side).bit_generator.seed_seq.generate_state(4).tobytes()
                    for key in range(1000) for side in (0, 1)}
    assert not audit_states & pilot_states


def test_unit_range_search_pairs_are_unchanged():
    """An algorithm on [0, 1] (the default loss range) gets the search's
    original backgrounds and changes, bit for bit: zeros, ones, the gap
    instance, the fixed uniform sequence; changed coordinates 1 vs 0.  So
    its pilot, finalists and audit are unchanged.  Deterministic."""
    from attacks.instances import gap
    from attacks.search import _Space
    from algorithms import build
    alg = build("private-exp3", horizon=64)
    space = _Space(alg)
    T, K = 64, 2
    assert space.backgrounds() == ("zeros", "ones", "gap", "random")
    assert np.array_equal(space.background("zeros"), np.zeros((T, K)))
    assert np.array_equal(space.background("ones"), np.ones((T, K)))
    assert np.array_equal(space.background("gap"), gap(T, K).losses)
    uniform = np.random.default_rng([PILOT_STREAM, 0, 0, 0xB6]).random((T, K))
    assert np.array_equal(space.background("random"), uniform)
    for c in space.variants(3):
        if c.background not in space.backgrounds():
            continue            # the moving backgrounds: test_moving_backgrounds
        a, b, _ = space.pair(c)
        want_a = space.background(c.background).copy()
        want_b = want_a.copy()
        want_a[3, list(c.up)], want_b[3, list(c.up)] = 1.0, 0.0
        want_a[3, list(c.down)], want_b[3, list(c.down)] = 0.0, 1.0
        assert np.array_equal(a, want_a) and np.array_equal(b, want_b)
        assert c.describe(space.lo, space.hi) == c.describe()


def test_moving_backgrounds_abandon_and_revisit_the_changed_arm():
    """The backgrounds built around a pair (``drift``, ``revisit-g``): the
    changed arm at lo before its round and the others at hi; revisit-g puts
    it at hi and the others at lo for g rounds, then back; drift moves it
    linearly to hi (and the others to lo) over DRIFT_SPAN rounds.  Only
    those that fit the horizon are candidates.  Deterministic."""
    from attacks.search import DRIFT_SPAN, REVISIT_GAPS, _Space
    from algorithms import build
    alg = build("private-exp3", horizon=64)
    space = _Space(alg)
    t = 5
    by_name = {c.background: c for c in space.variants(t) if c.change == "arm-1"}
    assert set(by_name) >= {"drift", "revisit-4", "revisit-16", "revisit-48"} - {
        bg for bg in ("revisit-48",) if t + 1 + 48 + 12 > 64}
    c = by_name["revisit-16"]
    a, b, _ = space.pair(c)
    assert np.all(a[:t, 0] == 0) and np.all(a[:t, 1] == 1)
    assert np.all(a[t + 1:t + 17, 0] == 1) and np.all(a[t + 1:t + 17, 1] == 0)
    assert np.all(a[t + 17:, 0] == 0) and np.all(a[t + 17:, 1] == 1)
    assert (a[t, 0], b[t, 0]) == (1.0, 0.0) and c.rounds >= t + 1 + 16
    d, _, _ = space.pair(by_name["drift"])
    assert d[t + DRIFT_SPAN, 0] == 1.0 and d[t + 1, 0] == 1 / DRIFT_SPAN
    rows = np.arange(64) != t                  # the changed row aside
    assert np.allclose(d[rows, 0] + d[rows, 1], 1.0)
    short = _Space(build("private-exp3", horizon=20))
    assert not {c.background for c in short.variants(3)} & {f"revisit-{g}" for g in
                                                            REVISIT_GAPS if g > 4}


def test_the_pilot_of_code_as_written_is_the_same_on_two_workers():
    """The search's pilot of a class run one call per run spreads each
    rung's batches over worker processes (``process_map``); every batch
    keeps its stream key, so the finalists, their pilot runs and the
    row-rounds counted are exactly those of one process."""
    from algorithms import build
    from audit.execution.executor import process_map
    alg = build("tests.as_written_algos:NoisyEpsGreedy", horizon=6, epsilon=1.0)
    # A small pilot (a test, not an audit): 2 000 runs a side's share.
    here = ATTACKS["search"].scenarios(alg, trials=2_000)
    two = ATTACKS["search"].scenarios(alg, trials=2_000, pmap=process_map(2))
    assert [s.label for s in here] == [s.label for s in two] and here
    for a, b in zip(here, two):
        assert a.notes == b.notes and a.events.labels == b.events.labels
