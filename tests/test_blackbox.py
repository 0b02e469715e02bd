"""The black-box engine: validity, tightness, reproducibility, refusals and
the `audit run` contract."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from algorithms import build
from attacks import ATTACKS, Scenario
from attacks.events import standard_events
from audit.engine.audit import audit_scenarios
from audit.engine import audit_algorithm
from tests.cli import audit_here


def test_canary_validity_over_many_seeds():
    """A correct Algorithm 1 at ε = 1 audited with the canary: the rate of
    audits reporting ε_lb > 1 must be ≤ 1 − confidence = 0.05.  ε_lb > 1
    needs the numerator's lower bound or the denominator's upper bound to
    fail (α_each = 0.025 each, 2 bounds per pair), so each audit's chance is
    ≤ 0.05.  Even at exactly that rate, more than ``limit`` of 2000 audits
    exceed 1 with probability < 1e-9 (binom.sf), so this test fails only if
    the rate is clearly above 1 − confidence.

    Black-box mode only: the canary's white-box result is on the proof's
    intermediate object (the noisy losses), which never counts toward
    ε_lb, so leaving it out changes no audit's ε_lb — and its loss
    distribution would take two of the four α shares: with the black-box
    pair alone its one bound on coupled runs (the default) gets all of
    α = 0.05 (the harder test), at a twentieth of the time."""
    alg = build("private-exp3", epsilon=1.0, horizon=50)
    n = 2000
    limit = next(k for k in range(n) if stats.binom.sf(k, n, 0.05) < 1e-9)
    audits = (audit_algorithm(alg, ["canary"], trials=4000, seed=s, modes=["black-box"])
              for s in range(n))
    over = 0
    for r in audits:
        assert abs(r.results[0].alpha - 0.05) < 1e-12     # 1 bound on coupled runs, the default
        over += r.epsilon_lower_bound > 1.0
    assert limit < 0.09 * n
    assert over <= limit


def test_canary_is_tight_at_moderate_budget():
    """E[ε_lb] ≈ 0.966 at 2·10⁵ runs per side (s.d. ≈ 0.01): 0.93 is > 3 s.d. away."""
    r = audit_algorithm(build("private-exp3", epsilon=1.0), ["canary"], trials=200_000, seed=3)
    assert 0.93 <= r.epsilon_lower_bound <= 1.0
    assert r.verdict == "consistent"
    assert "replaced" in " ".join(r.results[0].notes)


def test_batch_sum_mutant_is_a_violation():
    # The white-box pld evidence (the released noisy sums' exact privacy
    # loss) gives ε_lb = 1, four times the claim, at any budget: 2 000 runs
    # a side are enough and no bound of it is statistical.
    r = audit_algorithm(build("mutant-batch-sum"), trials=2_000, seed=0)
    assert r.verdict == "violation"
    assert r.epsilon_lower_bound > 0.5  # claim 0.25, truth τε = 1


def test_same_result_whatever_the_number_of_workers():
    alg = build("private-htinf", epsilon=0.5, horizon=40)
    a = audit_algorithm(alg, ["canary", "first-round"], trials=30_000, seed=11, jobs=1)
    b = audit_algorithm(alg, ["canary", "first-round"], trials=30_000, seed=11, jobs=2)
    da, db = a.as_dict(), b.as_dict()
    for key in ("runtime_seconds",):
        da.pop(key), db.pop(key)
    assert da == db
    c = audit_algorithm(alg, ["canary", "first-round"], trials=30_000, seed=12, jobs=1)
    assert c.as_dict()["attacks"] != da["attacks"]


def test_engine_refuses_pairs_that_are_not_neighbours():
    alg = build("private-exp3")
    a = np.zeros((alg.horizon, 2))
    b = a.copy()
    b[3, 0] = b[7, 1] = 1.0
    sc = Scenario("bad", alg, a, b, standard_events(10, 2), 10)
    with pytest.raises(ValueError, match="differ at 2 rounds"):
        audit_scenarios([sc], alg.claim, 100, 0.95, 0)
    sc = Scenario("same", alg, a, a.copy(), standard_events(10, 2), 10)
    with pytest.raises(ValueError, match="differ at 0 rounds"):
        audit_scenarios([sc], alg.claim, 100, 0.95, 0)


def test_every_attack_builds_valid_pairs():
    for name in ("private-exp3", "private-experts", "private-batched-exp4", "exp3", "ldp-exp4"):
        alg = build(name, horizon=400 if name != "exp3" else 1000)
        for attack in ATTACKS.values():
            try:
                scenarios = attack.scenarios(alg)
            except ValueError as exc:
                assert name in str(exc) or "needs" in str(exc)
                continue
            for sc in scenarios:
                sc.check()
                assert sc.rounds <= alg.horizon
                assert len(sc.events.labels) == len(sc.events.count(
                    np.zeros((3, sc.rounds), dtype=np.int16)))


def test_group_attack_scales_the_claim():
    alg = build("private-exp3", epsilon=0.5, horizon=200)
    r = audit_algorithm(alg, ["lemma51"], trials=20_000, seed=0)
    res = r.results[0]
    assert res.group_size == 2 and res.claim.epsilon == pytest.approx(1.0)
    assert r.as_dict()["attacks"][0]["group_size"] == 2


def test_delta_enters_the_bound():
    """With δ large enough that no event probability can exceed it, ε_lb is 0."""
    alg = build("private-exp3", epsilon=1.0)
    from algorithms import Claim
    r = audit_algorithm(alg, ["canary"], trials=20_000, seed=0,
                        claim=Claim(1.0, 0.6, "transcript", "test"))
    assert r.epsilon_lower_bound == 0.0


def test_run_json_document(tmp_path):
    out = tmp_path / "r.json"
    r = audit_here("run", "private-exp3", "--attack", "canary", "--epsilon", "1", "--trials", "100000",
             "--jobs", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    for key in ("schema", "tool_version", "algorithm", "claim", "budget", "attacks",
                "epsilon_lower_bound", "max_detectable_epsilon", "verdict", "runtime_seconds"):
        assert key in doc
    assert doc["schema"] == "audit-result/1" and doc["verdict"] == "consistent"
    assert doc["budget"] == {"trials": 100000, "confidence": 0.95, "seed": 0}
    att = doc["attacks"][0]
    for key in ("name", "mode", "epsilon_lower_bound", "event", "counts", "bounds"):
        assert key in att
    assert att["mode"] == "black-box"
    assert 0.9 < doc["epsilon_lower_bound"] <= 1.0 < doc["max_detectable_epsilon"]
    assert "audit run private-exp3" in r.stdout and "--seed 0" in r.stdout


def test_run_violation_exits_1():
    r = audit_here("run", "mutant-batch-sum", "--trials", "2000", "--quiet")   # exact: ε_lb = 1
    assert r.returncode == 1, r.stderr
    assert "VIOLATION" in r.stdout


def test_claim_override_and_user_algorithm(tmp_path):
    r = audit_here("run", "tests.user_algos:noisy_greedy", "--trials", "5000", "--horizon", "30",
             "--claim-epsilon", "0.01", "--quiet")
    assert r.returncode in (0, 1) and "claim: ε = 0.01" in r.stdout, r.stderr
    r = audit_here("run", "tests.user_algos:claimless", "--trials", "5000", "--quiet")
    assert r.returncode == 2 and "--claim-epsilon" in r.stderr
    # Fresh Laplace(1/ε) noise on the cumulative losses every round composes
    # over the rounds: a change at round 1 leaks far more than ε = 1.
    r = audit_here("run", "tests.user_algos:claimless", "--trials", "5000", "--claim-epsilon", "1",
             "--quiet")
    assert r.returncode == 1 and "VIOLATION" in r.stdout, r.stderr
    r = audit_here("run", "tests.user_algos:claimless", "--trials", "5000", "--claim-epsilon", "1000",
             "--quiet")
    assert r.returncode == 0 and "consistent" in r.stdout, r.stderr


def test_one_pair_rerun_alone(tmp_path):
    """``--pair`` keeps one pair of the default attacks: the result has that
    pair alone, its two bounds share the whole 10% (α = 0.05 each, where
    every pair of the full audit takes a smaller share), the neighbour
    search runs only for a label of its own, and the reproduce command and
    the store's fingerprint name the pair."""
    out = tmp_path / "r.json"
    r = audit_here("run", "laplace", "--pair", "patterns:one-above", "--pair",
                   "patterns:one-above", "--mode", "black-box", "--trials", "4000",
                   "--confidence", "0.9", "--jobs", "1", "--no-store", "--json", str(out),
                   "--runs", "independent",
                   "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert [a["scenario"] for a in doc["attacks"]] == ["patterns:one-above"]
    assert doc["attacks"][0]["bounds"]["alpha_each"] == pytest.approx(0.05)
    assert doc["reproduce"].count("--pair patterns:one-above") == 1
    # No label names a search pair: the search (and its pilot) did not run.
    assert "--attack search" not in doc["reproduce"]
    alg = build("laplace")
    full = audit_algorithm(alg, trials=4000, confidence=0.9, modes=["black-box"])
    assert len(full.results) > 1 and "patterns:one-above" in [x.label for x in full.results]
    from audit.execution.store import audit_fingerprint
    prints = {audit_fingerprint(alg, alg.claim, ["patterns"], 4000, 0.9, 0, None, None, p)
              for p in (None, ["patterns:one-above"], ["patterns:one-below"])}
    assert len(prints) == 3


def test_a_pair_rerun_alone_draws_runs_of_its_own():
    """A pair picked from a full audit and rerun alone at the same seed must
    not be tested on the runs that picked it: ``--pair`` audits draw from a
    stream namespace of their own, one per set of labels (any order, repeats
    once).  Deterministic: the first pair's counts in the full audit and in
    the rerun differ (equal only if 20 000 fresh Laplace draws happened to
    give the same two counts, probability < 1%), and the same labels in
    another order give the same counts."""
    from audit.engine.sampling import pairs_namespace
    alg = build("laplace")
    kw = dict(trials=20000, confidence=0.9, modes=["black-box"], witness=False)
    full = audit_algorithm(alg, **kw)
    first = full.results[0].label
    alone = audit_algorithm(alg, pairs=[first], **kw)
    counts = lambda t: (t.numerator.count, t.denominator.count)
    assert counts(alone.results[0].test) != counts(full.results[0].test)
    again = audit_algorithm(alg, pairs=[first, first], **kw)
    assert counts(again.results[0].test) == counts(alone.results[0].test)
    assert pairs_namespace(["b", "a"]) == pairs_namespace(["a", "b", "a"]) != pairs_namespace(["a"])
    assert pairs_namespace(None) == pairs_namespace([]) == ()


@pytest.mark.parametrize("args,word", [
    (["run", "private-exp3", "--attack", "nope"], "canary"),
    (["run", "exp3", "--attack", "canary"], "applies only to conversions"),
    (["run", "private-exp3", "--trials", "many"], "--trials"),
    (["run", "private-exp3", "--trials", "0"], "--trials"),
    (["run", "private-exp3", "--confidence", "1.5"], "--confidence"),
    (["run", "private-exp3", "--delta", "2"], "--delta"),
    (["run", "private-exp3", "--claim-epsilon", "-1"], "--claim-epsilon"),
    (["run", "nosuchpkg.mod:thing"], "cannot import"),
    (["run", "tests.user_algos:missing"], "no attribute"),
    (["run", "tests.user_algos:not_an_algorithm"], "neither an Algorithm"),
    (["run", "exp3", "--epsilon", "1"], "epsilon is not a parameter of exp3"),
    (["run", "laplace", "--pair", "nope", "--trials", "1000"], "patterns:one-above"),
])
def test_run_bad_input_one_line_exit_2_no_json(args, word, tmp_path):
    out = tmp_path / "r.json"
    r = audit_here(*args, "--json", str(out))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and word in r.stderr, r.stderr
    assert not out.exists()
    assert not list(tmp_path.iterdir())
