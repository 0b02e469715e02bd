"""Regret estimates and the one-line errors for bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from algorithms import build
from algorithms.simulate import simulate
from attacks.instances import default_advice
from audit.engine.regret import estimate_regret
from tests.cli import audit_here

PRIVATE = ["private-exp3", "private-ftpl", "private-htinf", "private-experts", "ldp-exp4",
           "private-batched-exp4"]


@pytest.mark.parametrize("name", PRIVATE)
def test_regret_per_round_falls_on_the_gap_instance(name):
    """Sublinear regret, as far as a test can see it: the per-round regret at
    T = 4000 is significantly below that at T = 500 (95% intervals disjoint)
    and below what uniform play pays (0.1 per round for two arms; 0.06 for the
    default experts, whose uniform mixture plays arm 1 with probability ½).
    With the corollaries' constants EXP3 and FTPL learn slowly, so this is a
    trend, not a rate.  Fixed seed; at these gaps (≥ 5 half-widths in every
    case measured) a false failure is not a practical possibility."""
    short = estimate_regret(build(name, horizon=500), runs=200, seed=1, jobs=1)
    long = estimate_regret(build(name, horizon=4000), runs=200, seed=1, jobs=1)
    assert long.regret_ci[1] / 4000 < short.regret_ci[0] / 500
    uniform = 0.06 if build(name).n_experts else 0.1
    assert long.regret_mean / 4000 < uniform


def test_regret_result_fields_and_reproducibility():
    a = estimate_regret(build("private-exp3", horizon=300), runs=3000, seed=4, jobs=1)
    b = estimate_regret(build("private-exp3", horizon=300), runs=3000, seed=4, jobs=2)
    assert a.regret_mean == b.regret_mean and a.regret_ci == b.regret_ci
    d = a.as_dict()
    for key in ("algorithm", "horizon", "runs", "regret_mean", "regret_ci", "claim",
                "run_rounds_per_second", "jobs"):
        assert key in d
    assert d["claim"]["epsilon"] == 1.0


def test_lemma51_instance_regret_matches_arm_two_plays():
    """On Section 5.2's instance regret is ½ × (expected plays of arm 2)."""
    alg = build("private-htinf", horizon=200)
    r = estimate_regret(alg, runs=500, instance="lemma51", seed=0, jobs=1)
    tr = simulate(alg, np.tile([0.5, 1.0], (200, 1)), 500, np.random.default_rng(0))
    assert r.regret_mean > 0
    assert abs(r.regret_mean - 0.5 * (tr.actions == 1).sum(1).mean()) < 5


BAD = [
    (dict(name="private-exp3", arms=1), "K (arms)"),
    (dict(name="exp3", horizon=0), "T (horizon)"),
    (dict(name="private-htinf", epsilon=0.0), "epsilon"),
    (dict(name="private-ftpl", epsilon=-1.0), "epsilon"),
    (dict(name="private-batched-exp4", delta=1.0), "delta"),
    (dict(name="private-batched-exp4", delta=-0.1), "delta"),
    (dict(name="private-exp3", horizon=10, params={"tau": 11}), "tau"),
    (dict(name="ldp-exp4", experts=1), "N (experts)"),
    (dict(name="exp3", params={"eta": 0.0}), "eta"),
    (dict(name="private-exp3", params={"nonsense": 1}), "nonsense"),
]


@pytest.mark.parametrize("kw,word", BAD, ids=[w for _, w in BAD])
def test_bad_parameters_raise_value_error_naming_the_parameter(kw, word):
    name = kw.pop("name")
    with pytest.raises(ValueError, match=word.replace("(", r"\(").replace(")", r"\)")):
        build(name, **kw)


def test_bad_losses_and_advice_are_refused():
    alg = build("private-exp3", horizon=10)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"losses must lie in \[0, 1\]"):
        simulate(alg, np.full((10, 2), 1.5), 3, rng)
    # a [0, 1] algorithm refuses the negative losses of the [−1, 1] class,
    # in one line naming its range and the offending value
    signed = np.zeros((10, 2))
    signed[2, 0] = -0.5
    with pytest.raises(ValueError, match=r"losses must lie in \[0, 1\] \(the algorithm's loss "
                                         r"range\), got -0.5$") as info:
        simulate(alg, signed, 3, rng)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="losses must have shape"):
        simulate(alg, np.zeros((10, 3)), 3, rng)
    with pytest.raises(ValueError, match="losses must be an array of shape"):
        simulate(alg, np.zeros(10), 3, rng)
    experts = build("ldp-exp4", horizon=10, experts=3)
    bad = default_advice(10, 3, 2)
    bad[4, 1] = [0.7, 0.7]
    with pytest.raises(ValueError, match="advice rows must be probability distributions"):
        simulate(experts, np.zeros((10, 2)), 3, rng, advice=bad)
    with pytest.raises(ValueError, match="advice must have shape"):
        simulate(experts, np.zeros((10, 2)), 3, rng, advice=default_advice(10, 2, 2))


@pytest.mark.parametrize("args,word", [
    (["regret", "private-exp3", "--arms", "1"], "K (arms)"),
    (["regret", "private-exp3", "--epsilon", "abc"], "--epsilon"),
    (["regret", "private-exp3", "--epsilon", "0"], "--epsilon"),
    (["regret", "no-such-algo"], "unknown algorithm 'no-such-algo' (a registered name, see "
                                 "'audit list'"),
    (["regret", "no.such.module:thing"], "cannot import"),
    (["regret", "private-exp3", "--param", "tau"], "NAME=VALUE"),
    (["regret", "private-exp3", "--instance", "moon"], "gap"),
    (["frobnicate"], "invalid choice"),
])
def test_cli_bad_input_is_one_line_exit_2(args, word, tmp_path):
    out = tmp_path / "r.json"
    r = audit_here(*args, "--json", str(out)) if args[0] == "regret" else audit_here(*args)
    assert r.returncode == 2, r
    assert len(r.stderr.strip().splitlines()) == 1 and word in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_cli_regret_json(tmp_path):
    out = tmp_path / "r.json"
    r = audit_here("regret", "private-exp3", "--runs", "500", "--horizon", "200", "--jobs", "1",
             "--json", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["runs"] == 500 and doc["horizon"] == 200 and doc["jobs"] == 1
    assert doc["regret_ci"][0] <= doc["regret_mean"] <= doc["regret_ci"][1]
    assert "run-rounds/s" in r.stdout


def test_loss_range_must_be_an_interval():
    """Algorithm.loss_range is (lo, hi), finite, lo < hi: one line naming it."""
    from algorithms import Algorithm, Claim
    alg = build("private-exp3", horizon=10)
    for bad in ((1.0, 0.0), (0.0, float("inf")), (0.0,), "01", (0.0, True)):
        with pytest.raises(ValueError, match=r"^Algorithm.loss_range must be a pair \(lo, hi\)"):
            Algorithm("x", alg.learner, Claim(1, 0, "actions", "x"), 10, 2, {}, loss_range=bad)
    ok = Algorithm("x", alg.learner, Claim(1, 0, "actions", "x"), 10, 2, {}, loss_range=(-1, 2))
    assert ok.loss_range == (-1.0, 2.0)
    assert alg.loss_range == (0.0, 1.0)


def test_unit_range_pairs_and_instances_are_the_literal_ones():
    """On [0, 1] (every algorithm that does not declare a loss range) the
    pairs and instances are exactly those built from the literals 0 and 1,
    bit for bit, so their audits are unchanged; on [−1, 1] the same
    constructions span the range (0 → −1, 1 → +1).  Deterministic."""
    import dataclasses
    from attacks import ATTACKS
    from attacks.instances import gap, make_instance
    T = 100
    exp3 = build("private-exp3", horizon=T)
    first = ATTACKS["first-round"].scenarios(exp3)[0]
    want = np.zeros((T, 2))
    want[0, 0] = 1.0
    assert np.array_equal(first.losses_a, want) and np.array_equal(first.losses_b, np.zeros((T, 2)))
    canary = ATTACKS["canary"].scenarios(exp3)[0]
    assert np.array_equal(canary.losses_a, want)
    edge = ATTACKS["batch-edge"].scenarios(exp3)[0]
    want = np.zeros((T, 2))
    want[exp3.params["tau"] - 1, :] = 1.0
    assert np.array_equal(edge.losses_a, want)
    rare = ATTACKS["rare-arm"].scenarios(exp3)[0]
    want = np.ones((T, 2))
    want[:, 0] = 0.0
    assert np.array_equal(rare.losses_b, want)
    g1 = ATTACKS["g1"].scenarios(exp3)[0]
    assert np.array_equal(g1.losses_b, np.ones((T, 2))) and g1.losses_a[0, 1] == 0.0
    l51 = ATTACKS["lemma51"].scenarios(exp3)[0]
    assert np.array_equal(l51.losses_a, np.tile([0.5, 1.0], (T, 1)))
    raw = (np.random.default_rng(0).random((T, 3)) < [0.3, 0.5, 0.5]).astype(float)
    assert np.array_equal(gap(T, 3).losses, raw)
    assert np.array_equal(make_instance("lemma51", T, 2).losses, np.tile([0.5, 1.0], (T, 1)))
    # the same constructions on a [−1, 1] algorithm
    signed = dataclasses.replace(exp3, loss_range=(-1.0, 1.0))
    a = ATTACKS["first-round"].scenarios(signed)[0].losses_a
    assert a[0, 0] == 1.0 and np.all(a.ravel()[1:] == -1.0)
    assert np.array_equal(gap(T, 3, loss_range=(-1, 1)).losses, 2 * raw - 1)
    assert np.array_equal(ATTACKS["lemma51"].scenarios(signed)[0].losses_a,
                          np.tile([0.0, 1.0], (T, 1)))


def test_regret_instances_follow_the_loss_range():
    """The regret of the paper's [−1, 1] algorithm is measured on the gap
    instance mapped onto {−1, +1} (accepted by the validator); its best arm's
    loss is −T + 2·(number of ones), exactly (deterministic)."""
    from attacks.instances import make_instance
    alg = build("as-bandit-exp2", horizon=200)
    inst = make_instance("gap", 200, 2, None, alg.loss_range)
    assert set(np.unique(inst.losses)) == {-1.0, 1.0} and "mapped onto [-1, 1]" in inst.description
    res = estimate_regret(alg, runs=50, seed=0, jobs=1)
    assert np.isfinite(res.regret_mean)
    assert inst.best_loss() == -200 + 2 * (make_instance("gap", 200, 2).losses.sum(0).min())
