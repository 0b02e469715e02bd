"""Regret estimates and the one-line errors for bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from algorithms import build
from attacks.instances import default_advice
from audit.engine.regret import estimate_regret
from audit.execution.runs import simulate

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


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "audit.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args,word", [
    (["regret", "private-exp3", "--arms", "1"], "K (arms)"),
    (["regret", "private-exp3", "--epsilon", "abc"], "--epsilon"),
    (["regret", "private-exp3", "--epsilon", "0"], "--epsilon"),
    (["regret", "no-such-algo"], "private-exp3"),
    (["regret", "no.such.module:thing"], "cannot import"),
    (["regret", "private-exp3", "--param", "tau"], "NAME=VALUE"),
    (["regret", "private-exp3", "--instance", "moon"], "gap"),
    (["frobnicate"], "invalid choice"),
])
def test_cli_bad_input_is_one_line_exit_2(args, word, tmp_path):
    out = tmp_path / "r.json"
    r = _cli(*args, "--json", str(out)) if args[0] == "regret" else _cli(*args)
    assert r.returncode == 2, r
    assert len(r.stderr.strip().splitlines()) == 1 and word in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_cli_regret_json(tmp_path):
    out = tmp_path / "r.json"
    r = _cli("regret", "private-exp3", "--runs", "500", "--horizon", "200", "--jobs", "1",
             "--json", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["runs"] == 500 and doc["horizon"] == 200 and doc["jobs"] == 1
    assert doc["regret_ci"][0] <= doc["regret_mean"] <= doc["regret_ci"][1]
    assert "run-rounds/s" in r.stdout
