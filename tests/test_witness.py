"""Learned witnesses (``audit.engine.witness``): a classifier's score over
whole trajectories as events of the black-box test, trained on streams of
their own.  Power on a toy whose ε is known, a leak that shows only jointly
across two rounds, disjoint streams, validity over many seeds, the same
result for any number of workers and on resume, and bounded features."""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from algorithms import build
from algorithms.core import Algorithm, Claim, Learner
from attacks import ATTACKS, Scenario
from attacks.events import ActionAt, standard_events
from audit.engine.audit import audit_scenarios
from audit.engine.evidence import EventTestEvidence, collect
from audit.engine.evidence.event_test import wants_witness
from audit.engine.features import MAX_DIM, for_pair
from audit.engine.sampling import Sampler
from audit.engine.witness import TRAINING_STREAMS, thresholds_from, training_runs
from audit.execution.executor import Executor
from audit.execution.runs import chunk_sizes
from audit.execution.store import Store


def xor_response(epsilon: float) -> Algorithm:
    """A toy full-information learner whose leak shows only jointly: at round
    1 it sees x = the loss of arm 1 and keeps b = x with probability
    e^ε/(1 + e^ε) (randomized response), else 1 − x; it then plays
    I_2 = u and I_3 = u XOR b with u a fair coin.  Each action alone is a fair
    coin on both sides; the pair (I_2, I_3) reveals b.  The output is a
    bijection of (u, b) with u independent, so the mechanism is exactly ε-DP
    and {I_2 ≠ I_3} attains ε."""
    keep = np.exp(epsilon) / (1 + np.exp(epsilon))

    def init(runs, rng):
        zero = np.zeros(runs, dtype=np.int64)
        return {"t": 0, "u": zero, "b": zero}

    def act(state, advice, rng):
        t = state["t"]
        a = (np.zeros_like(state["u"]) if t == 0 else state["u"] if t == 1
             else state["u"] ^ state["b"])
        return {**state, "t": t + 1}, a

    def feed(state, actions, losses, rng):
        if state["t"] != 1:
            return state
        runs = actions.shape[0]
        x = int(losses[0] > 0.5)
        b = np.where(rng.random(runs) < keep, x, 1 - x)
        return {**state, "u": rng.integers(0, 2, runs), "b": b}

    return Algorithm("xor-response", Learner(init, act, feed, 2, feedback="full"),
                     Claim(epsilon, 0.0, "actions", "randomized response"), 3, 2,
                     {"epsilon": epsilon})


def toy_pair(epsilon: float, learned, events=None) -> Scenario:
    alg = xor_response(epsilon)
    a = np.zeros((3, 2))
    b = a.copy()
    a[0, 0] = 1.0
    return Scenario("xor", alg, a, b, events or ActionAt((0, 1, 2), 2), 3, learned=learned)


def test_known_epsilon_within_ten_percent_at_a_million_runs():
    """ε = 1 exactly; 10⁶ runs per side (5·10⁵ held out), 100 000 + 100 000
    training runs (a tenth of the audit's runs).  ε_lb ≤ 1 fails with probability ≤ 1 − confidence = 0.05
    (the audit's guarantee); the held-out counts of {I_2 ≠ I_3} have relative
    s.d. < 0.2%, so E[ε_lb] ≈ 0.99 and ε_lb < 0.9 is > 10 s.d. away
    (probability < 1e-20).  With this fixed seed the test is deterministic;
    over random seeds it would fail with probability ≤ 0.05."""
    r = audit_scenarios([toy_pair(1.0, True)], Claim(1.0, 0.0, "actions", "t"),
                        trials=1_000_000, seed=0)[0]
    assert r.learned_event and r.test.event.startswith("score(logistic, trained on 100000+100000")
    assert 0.9 <= r.epsilon_lower_bound <= 1.0
    assert r.witness["training_runs_per_side"] == [100000, 100000]


def test_training_runs_are_a_tenth_of_the_audit_between_the_limits():
    """The witness trains on a tenth of the audit's runs a side, at least
    20 000 (all of them below that) and at most 100 000: the default budget
    (200 000) keeps its 20 000."""
    assert [training_runs(n) for n in (5, 20_000, 200_000, 500_000, 9_000_000)] == \
        [5, 20_000, 20_000, 50_000, 100_000]


def test_a_joint_leak_is_caught_by_the_witness_and_missed_by_single_rounds():
    """ε = 2 spread over two rounds, each uniform on both sides.  Without the
    witness every event of the family has the same probability on both
    sides, so ε_lb > 0.2 would need a bound to fail (probability ≤ 0.05).
    With it, {I_2 ≠ I_3} at 10⁴ held-out runs per side gives E[ε_lb] ≈ 1.9
    (s.d. ≈ 0.03); < 1.5 is > 10 s.d. away."""
    claim = Claim(0.5, 0.0, "actions", "t")
    blind = audit_scenarios([toy_pair(2.0, False)], claim, trials=20_000, seed=1)[0]
    seen = audit_scenarios([toy_pair(2.0, True)], claim, trials=20_000, seed=1)[0]
    assert blind.witness is None and blind.epsilon_lower_bound < 0.2 and not blind.violation
    assert seen.learned_event and seen.epsilon_lower_bound > 1.5 and seen.violation
    lines = "\n".join(seen.summary_lines(0.95))
    assert "score(logistic, trained on 20000+20000 runs)" in lines
    assert "the chosen event is learned" in lines
    assert seen.as_dict()["learned_witness"]["chosen"] is True


class RecordingSampler(Sampler):
    """Records, for every chunk run, its request's tag and stream and the
    SeedSequence (entropy, spawn key) it draws from (jobs = 1: in process)."""

    def __init__(self, seed):
        super().__init__(seed, Executor(jobs=1))
        self.log = []

    def sample(self, phase, requests, unit="runs", **kw):
        def recording(r):
            def task(runs, rng):
                ss = rng.bit_generator.seed_seq
                self.log.append((r.tag, r.stream, tuple(ss.entropy), ss.spawn_key, runs))
                return r.task(runs, rng)
            return dataclasses.replace(r, task=task)
        return super().sample(phase, [recording(r) for r in requests], unit, **kw)


def test_training_selection_and_holdout_runs_are_disjoint():
    """Every chunk of runs draws from one (entropy, spawn key); if a run fed
    both the training and the audit's counts, a key would appear twice.
    Within a counted chunk, selection and held-out are the even and odd runs,
    so their sizes add up to the chunk."""
    sc = toy_pair(1.0, True, standard_events(3, 2))
    sampler = RecordingSampler(seed=5)
    ev = EventTestEvidence(sc, 2, sc.algorithm.claim)
    [r] = collect([ev], 30_000, 0.95, sampler)
    keys = [(e, k) for _, _, e, k, _ in sampler.log]
    assert len(keys) == len(set(keys))
    train = [x for x in sampler.log if x[0] == "witness-training"]
    count = [x for x in sampler.log if x[0].startswith("black-box")]
    assert {x[1] for x in train} == {(2, s) for s in TRAINING_STREAMS}
    assert {x[1] for x in count} == {(2, 0), (2, 1)}
    assert {x[2] for x in train}.isdisjoint({x[2] for x in count})
    assert sum(x[4] for x in train) == 2 * training_runs(30_000) == 40_000
    assert sum(x[4] for x in count) == 2 * 30_000
    assert r.n_selection + r.n_holdout == 30_000 and r.n_selection == 15_000


def test_validity_over_many_seeds():
    """ε = 1 exactly and the claim is ε = 1, so the witness finds events with
    ratio exactly e: the worst case the guarantee allows.  Each audit reports
    ε_lb > 1 with probability ≤ 1 − confidence = 0.05 (2 bounds at α = 0.025).
    Even at exactly that rate, more than ``limit`` of 500 audits exceed 1
    with probability < 1e-6 (binom.sf), so this test fails only if the rate is
    clearly above 1 − confidence."""
    claim = Claim(1.0, 0.0, "actions", "t")
    n = 500
    limit = next(k for k in range(n) if stats.binom.sf(k, n, 0.05) < 1e-6)
    results = [audit_scenarios([toy_pair(1.0, True)], claim, trials=1000, seed=s)[0]
               for s in range(n)]
    over = sum(r.epsilon_lower_bound > 1.0 for r in results)
    assert limit <= 0.12 * n
    assert over <= limit
    # The witness is what the audits chose: the test exercises its events.
    assert sum(r.learned_event for r in results) > n / 2


def test_same_result_for_any_number_of_workers_dask_and_resume(tmp_path):
    """A registered algorithm's pairs with the witness forced on: jobs = 1,
    jobs = 2 (the witness is pickled into the loky workers), a Dask cluster
    (when the extra is installed) and a second run on a store that resumes
    every chunk give the same document."""
    alg = build("tbe-svt")
    scs = [dataclasses.replace(sc, learned=True) for sc in ATTACKS["tbe-window-tail"].scenarios(alg)]

    def run(**kw):
        out = audit_scenarios(scs, alg.claim, trials=20_000, seed=3, **kw)
        return [r.as_dict() for r in out]

    one = run(jobs=1)
    assert run(jobs=2) == one
    try:
        import distributed
    except ImportError:
        distributed = None
    if distributed is not None:
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None) as cluster, \
                distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
            assert run(executor=Executor(client=client)) == one
    store = Store(str(tmp_path / "s.sqlite"))
    first = Executor(store=store, fingerprint="fp")
    assert run(executor=first) == one
    again = Executor(store=store, fingerprint="fp")
    assert run(executor=again) == one
    # The training chunks are kept out of the store (bulky features): a
    # rerun reads back the results (and trained witnesses) derived from the
    # chunks, and every counting chunk counts as reused.
    n_training = len(scs) * 2 * len(chunk_sizes(training_runs(20_000)))
    assert again.computed == 0
    assert again.reused == first.computed - n_training > 0
    # Without what was derived, a resumed run recomputes the training chunks
    # bit-for-bit from their streams and reuses every counting chunk.
    store._db.execute("DELETE FROM derived")
    resumed = Executor(store=store, fingerprint="fp")
    assert run(executor=resumed) == one
    assert resumed.computed == n_training
    assert resumed.reused == first.computed - n_training
    assert all(d["learned_witness"] is not None for d in one)


def test_when_the_witness_runs_by_default():
    alg = build("private-exp3")
    declared = ATTACKS["first-round"].scenarios(alg)[0]
    assert not wants_witness(declared)
    assert wants_witness(dataclasses.replace(declared, label="search:arm-1"))
    bare = dataclasses.replace(alg, default_attacks=())
    assert wants_witness(dataclasses.replace(declared, algorithm=bare))
    assert not wants_witness(dataclasses.replace(declared, algorithm=bare, learned=False))
    assert wants_witness(dataclasses.replace(declared, learned=True))


def test_features_stay_bounded_whatever_the_horizon():
    for T, K in ((3, 2), (1000, 2), (100_000, 2), (5000, 50)):
        a = np.zeros((T, K))
        b = a.copy()
        b[T // 3, 0] = 1.0
        f = for_pair(a, b, T, K, plays_points=True, point_rounds=(T // 3 + 1,))
        assert f.changed == T // 3 and 0 < f.dimension <= MAX_DIM
        acts = np.random.default_rng(0).integers(0, K, (7, T))
        pts = {r: np.ones((7, 3)) for r in f.point_rounds}
        assert f(acts, pts).shape == (7, f.dimension)


def test_thresholds_reach_both_tails():
    """Not a fixed top fraction: the grid reaches the most extreme training
    scores on both sides, and never sits on a score."""
    s = np.random.default_rng(0).normal(size=40_000)
    t = thresholds_from(s)
    srt = np.sort(s)
    assert t.min() < srt[1] and t.max() > srt[-2]
    assert not np.isin(t, s).any()
    assert np.array_equal(thresholds_from(np.array([0.0, 1, 1, 2])), [0.5, 1.5])


def test_witness_switch_on_the_command_line(tmp_path):
    """``--witness on`` adds the learned witness to a hand-written pair that
    runs without it by default, ``--witness off`` removes it from the
    search's pairs; the reproduce command carries the switch (deterministic
    given the seed)."""
    import json
    from tests.cli import audit_here
    common = ["--horizon", "12", "--trials", "4000", "--seed", "0", "--no-store", "--jobs", "1"]
    on = tmp_path / "on.json"
    r = audit_here("run", "private-exp3", "--attack", "canary", "--witness", "on",
                  "--mode", "black-box", "--json", on, *common)
    assert r.returncode == 0, r.stderr
    doc = json.loads(on.read_text())
    assert doc["reproduce"].count("--witness on") == 1
    assert all(a["learned_witness"] for a in doc["attacks"])
    off = tmp_path / "off.json"
    r = audit_here("run", "private-exp3", "--attack", "search", "--witness", "off",
                  "--mode", "black-box", "--json", off, *common)
    assert r.returncode == 0, r.stderr
    doc = json.loads(off.read_text())
    assert "--witness off" in doc["reproduce"]
    assert doc["attacks"] and not any(a["learned_witness"] for a in doc["attacks"])
    r = audit_here("run", "private-exp3", "--witness", "maybe", *common)
    assert r.returncode == 2 and "--witness" in r.stderr
