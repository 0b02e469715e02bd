"""Validation of every input, each a one-line error naming the flag, key or
field and what is allowed: suite keys and types, ``--scale``, ``Claim``
fields, ``--param`` for user factories, how a user factory gets ε and δ,
``--seed``/``--confidence``, ``--audit-scale``, output locations checked
before any simulation; and the interface contract checked directly
(``audit.engine.contract.check_interface``) and in ``simulate``."""
from __future__ import annotations

import dataclasses
import math
import os
import pickle
import textwrap

import numpy as np
import pytest

from algorithms import REGISTRY, Algorithm, Claim, Learner, build
from algorithms.errors import UserCodeError
from algorithms.simulate import simulate
from audit.engine.contract import check_interface
from tests import user_algos
from tests.cli import audit_here
from tests.test_exit_codes import FAST, one_error_line


# ----------------------------------------------------------------- suites

def _suite(tmp_path, text, *extra):
    cfg = tmp_path / "audit.toml"
    cfg.write_text(textwrap.dedent(text))
    return audit_here("check", "--config", cfg, "--jobs", 1, "--no-store", *extra)


ENTRY = '[[audit]]\nalgorithm = "private-exp3"\n'


@pytest.mark.parametrize("top,entry,words", [
    ("trials = 0", "", ["key 'trials' must be a positive integer, got 0"]),
    ("trials = -5", "", ["key 'trials' must be a positive integer, got -5"]),
    ("trials = 1.5", "", ["key 'trials' must be a positive integer, got 1.5"]),
    ('trials = "lots"', "", ["key 'trials' must be a positive integer, got 'lots'"]),
    ("seed = -1", "", ["key 'seed' must be a non-negative integer"]),
    ("jobs = 0", "", ["key 'jobs' must be a positive integer"]),
    ("alpha = 1", "", ["key 'alpha' must be a number in (0, 1)"]),
    ("", "trials = 0", ["audit[0]", "key 'trials' must be a positive integer"]),
    ("", "trials = true", ["audit[0]", "key 'trials' must be a positive integer"]),
    ("", "seed = -1", ["audit[0]", "key 'seed' must be a non-negative integer"]),
    ("", 'attacks = ["nope"]', ["audit[0]", "unknown attack 'nope'", "canary"]),
    ("", 'modes = ["blackbox"]', ["audit[0]", "unknown mode 'blackbox'", "black-box"]),
    ("", 'epsilon = "lots"', ["key 'epsilon' must be a finite number > 0"]),
    ("", "epsilon = -1", ["key 'epsilon' must be a finite number > 0"]),
    ("", "delta = 1", ["key 'delta' must be a number in [0, 1)"]),
    ("", "claim_epsilon = 0", ["key 'claim_epsilon' must be a finite number > 0"]),
    ("", "claim_delta = -0.1", ["key 'claim_delta' must be a number in [0, 1)"]),
    ("", "claim_per_round_epsilon = -1", ["key 'claim_per_round_epsilon'"]),
    ("", "horizon = 0", ["key 'horizon' must be a positive integer"]),
    ("", "arms = 2.5", ["key 'arms' must be a positive integer"]),
    ("", "experts = 'four'", ["key 'experts' must be a positive integer"]),
    ("", 'expect = "maybe"', ["key 'expect'", "consistent"]),
    ("", "params = { tau = [1] }", ["params.tau must be a number, a string or a boolean"]),
])
def test_bad_suite_values_exit_2_one_line(tmp_path, top, entry, words):
    """Each malformed key or value is refused before anything runs (never
    clamped): exit 2, one line naming the file, the entry and the key, and
    what is allowed."""
    r = _suite(tmp_path, f"{top}\n{ENTRY}{entry}\n")
    assert r.returncode == 2, r.stdout + r.stderr
    line = one_error_line(r)
    assert "audit.toml" in line
    for w in words:
        assert w in line, line
    assert r.stdout == ""


@pytest.mark.parametrize("algo,entry,words", [
    ("bad_claim_scope", "", ["your bad_claim_scope() raised ValueError",
                             "Claim.scope must be one of actions, transcript, per-round, "
                             "got 'action'"]),
    ("bad_claim_epsilon", "", ["Claim.epsilon must be a finite number >= 0, got -1.0"]),
    ("bad_claim_delta", "", ["Claim.delta must be in [0, 1), got 1.0"]),
    ("needs_epsilon", "", ["its factory needs epsilon: pass epsilon = E",
                           "or claim_epsilon = E"]),
    ("named_params", 'params = { tau = "abc" }', ["params.tau = 'abc': "]),
    ("named_params", "params = { foo = 1 }", ["params.foo: ", "does not accept it",
                                              "(its parameters: tau)"]),
])
def test_bad_user_algorithms_in_a_suite_exit_2(tmp_path, algo, entry, words):
    """A suite entry whose user algorithm cannot be built (a bad claim, a
    factory needing ε, a parameter it rejects or does not take) is a malformed
    suite: exit 2, one line in the suite's own key names."""
    r = _suite(tmp_path, f'[[audit]]\nalgorithm = "tests.user_algos:{algo}"\n{entry}\n')
    assert r.returncode == 2, r.stdout + r.stderr
    line = one_error_line(r)
    assert f"audit[0] (tests.user_algos:{algo})" in line
    for w in words:
        assert w in line, line


def test_scale_that_leaves_fewer_than_two_runs_is_an_error(tmp_path):
    """--scale is never clamped: 100 trials × 0.01 = 1 run per side is an
    error naming --scale and the smallest scale that works (0.02)."""
    r = _suite(tmp_path, "trials = 100\n" + ENTRY, "--scale", "0.01")
    assert r.returncode == 2
    line = one_error_line(r)
    assert "--scale 0.01" in line and "1 runs per side" in line and ">= 0.02" in line


# ----------------------------------------------------------------- claims

@pytest.mark.parametrize("kw,message", [
    (dict(scope="action"), "Claim.scope must be one of actions, transcript, per-round, "
                           "got 'action'"),
    (dict(epsilon=-1.0), "Claim.epsilon must be a finite number >= 0"),
    (dict(epsilon=math.inf), "Claim.epsilon must be a finite number >= 0"),
    (dict(epsilon="1"), "Claim.epsilon must be a number"),
    (dict(delta=1.0), r"Claim.delta must be in \[0, 1\)"),
    (dict(delta=-0.1), r"Claim.delta must be in \[0, 1\)"),
    (dict(per_round_epsilon=-0.5), "Claim.per_round_epsilon must be None or a finite number"),
    (dict(per_round_epsilon=math.nan), "Claim.per_round_epsilon must be None or a finite"),
])
def test_claim_fields_are_checked(kw, message):
    """A Claim refuses a bad field on construction, naming it."""
    fields = dict(epsilon=1.0, delta=0.0, scope="actions", source="test")
    fields.update(kw)
    with pytest.raises(ValueError, match=message):
        Claim(**fields)


def test_claim_edge_values_are_accepted():
    """ε = 0, δ just below 1 and every scope are valid claims; group scaling
    that pushes δ to 1 gives a (vacuous) claim instead of an error."""
    for scope in ("actions", "transcript", "per-round"):
        Claim(0.0, 0.999, scope, "edge")
    g = Claim(1.0, 0.5, "actions", "s").scaled_for_group(3)
    assert g.delta == 1.0 and g.epsilon == 3.0
    assert Claim(1.0, 1e-6, "actions", "s").scaled_for_group(2).delta == pytest.approx(
        2 * math.e * 1e-6)


def test_claim_override_keeps_the_per_round_epsilon():
    """Overriding ε keeps the base claim's per-round ε_t (EXP3's 2ηK/γ) and
    scope; the per-round ε_t can be overridden on its own; nothing set gives
    None; an algorithm without a claim needs an ε."""
    base = build("exp3", horizon=200).claim
    assert base.per_round_epsilon == 4.0
    c = Claim.override(base, 5.0, None, "user")
    assert (c.epsilon, c.per_round_epsilon, c.scope, c.delta) == (5.0, 4.0, base.scope, 0.0)
    c = Claim.override(base, None, None, "user", per_round_epsilon=0.5)
    assert (c.epsilon, c.per_round_epsilon) == (base.epsilon, 0.5)
    assert Claim.override(base, None, None, "user") is None
    with pytest.raises(ValueError, match="needs an epsilon"):
        Claim.override(None, None, None, "user", per_round_epsilon=0.5)
    assert Claim.override(None, 2.0, None, "user").per_round_epsilon is None


def test_store_fingerprint_follows_the_per_round_claim():
    """The store's audit fingerprint includes the per-round ε_t, so an audit
    against another ε_t never resumes from the chunks of this one."""
    from audit.execution.store import audit_fingerprint
    alg = build("exp3", horizon=200)
    fp = [audit_fingerprint(alg, c, ["g1"], 2000, 0.95, 0, None) for c in
          (alg.claim, Claim.override(alg.claim, None, None, "u", 0.5),
           Claim.override(alg.claim, None, None, "u", 0.5))]
    assert fp[0] != fp[1] and fp[1] == fp[2]


def test_claim_per_round_epsilon_flag(tmp_path):
    """`audit run --claim-per-round-epsilon` sets the per-round ε_t of the
    claim in the result document; --claim-epsilon alone keeps EXP3's own ε_t
    (2ηK/γ = 4 at η = γ = ½), and a bad value is refused naming the flag."""
    out = tmp_path / "a.json"
    common = ["run", "exp3", "--horizon", 200, "--attack", "g1", "--mode", "black-box",
              "--trials", 2000, *FAST, "--json", out]
    r = audit_here(*common, "--claim-epsilon", 5)
    assert r.returncode in (0, 1), r.stderr
    import json
    claim = json.loads(out.read_text())["claim"]
    assert claim["epsilon"] == 5 and claim["per_round_epsilon"] == 4
    r = audit_here(*common, "--claim-epsilon", 5, "--claim-per-round-epsilon", 0.5)
    assert r.returncode in (0, 1), r.stderr
    claim = json.loads(out.read_text())["claim"]
    assert claim["epsilon"] == 5 and claim["per_round_epsilon"] == 0.5
    assert "--claim-per-round-epsilon 0.5" in r.stdout   # in the reproduce command
    r = audit_here("run", "exp3", "--claim-per-round-epsilon", "-1")
    assert r.returncode == 2 and "--claim-per-round-epsilon" in one_error_line(r)


def test_assert_private_takes_claim_per_round_epsilon():
    """assert_private(claim_per_round_epsilon=...) audits against that ε_t."""
    from audit.testing import assert_private
    result = assert_private("exp3", horizon=200, trials=2000, attacks=["g1"],
                            modes=["black-box"], claim_epsilon=1e6, claim_per_round_epsilon=1e4)
    assert result.claim.per_round_epsilon == 1e4 and result.claim.epsilon == 1e6


# ----------------------------------------------- user factories: ε, δ, --param

def test_factory_epsilon_and_delta_rule():
    """A user factory gets ε = --epsilon, else --claim-epsilon, else its own
    default (not passed at all); δ likewise, else its default, else 0."""
    name = "tests.user_algos:returns_kwargs"
    assert build(name, epsilon=0.3, claim_epsilon=0.7).params == {"epsilon": 0.3, "delta": None}
    assert build(name, claim_epsilon=0.7).params == {"epsilon": 0.7, "delta": None}
    assert build(name).params == {"epsilon": None, "delta": None}
    assert build(name, delta=1e-5, claim_delta=1e-3).params["delta"] == 1e-5
    assert build(name, claim_delta=1e-3).params["delta"] == 1e-3
    assert build("tests.user_algos:needs_epsilon", claim_epsilon=0.7).claim.epsilon == 0.7
    assert build("tests.user_algos:needs_epsilon", epsilon=0.2).claim.delta == 0.0


def test_factory_called_by_its_own_parameter_names():
    """The five slots are passed by keyword under the factory's own names; its
    default ε applies when none is given."""
    alg = build("tests.user_algos:own_names", horizon=30, arms=3)
    assert alg.horizon == 30 and alg.n_arms == 3 and alg.params == {"eps": 0.25, "dlt": 0.0}
    assert build("tests.user_algos:own_names", claim_epsilon=2.0).params["eps"] == 2.0


def test_factory_needing_epsilon_names_both_flags():
    """Without --epsilon or --claim-epsilon a factory whose epsilon has no
    default cannot be built; the message says which flags give it (only
    --epsilon for `audit regret`, which has no claim flags)."""
    with pytest.raises(ValueError) as info:
        build("tests.user_algos:needs_epsilon")
    assert str(info.value) == ("tests.user_algos:needs_epsilon: its factory needs epsilon: pass "
                               "--epsilon E (the ε it is built with) or --claim-epsilon E")
    r = audit_here("regret", "tests.user_algos:needs_epsilon", "--runs", 10)
    assert r.returncode == 2
    line = one_error_line(r)
    assert line.endswith("pass --epsilon E (the ε it is built with)"), line


@pytest.mark.parametrize("algo,param,message", [
    ("named_params", "foo=1", "--param foo: tests.user_algos:named_params does not accept it "
                              "(its parameters: tau)"),
    ("default_epsilon", "x=1", "--param x: tests.user_algos:default_epsilon does not accept it "
                               "(its parameters: none)"),
    ("uses_some_params", "foo=1", "--param foo: tests.user_algos:uses_some_params does not use "
                                  "it (its parameters: eta)"),
    ("named_params", "tau=abc", "--param tau=abc: invalid literal for int()"),
    ("uses_some_params", "eta=abc", "--param eta=abc: could not convert string to float"),
    ("named_params", "epsilon=1", "--param epsilon: epsilon is set with --epsilon"),
    ("named_params", "T=5", "--param T: T is set with --horizon"),
    ("named_params", "tau=0", "tests.user_algos:named_params: your named_params() raised "
                              "ValueError: tau must be an integer >= 1, got 0"),
])
def test_param_for_user_factories(algo, param, message):
    """--param must be a parameter the factory names (or, with **params, one
    it reports using); a word it rejects names the parameter; its own
    ValueError is the user's (exit 2, one line)."""
    r = audit_here("run", f"tests.user_algos:{algo}", "--param", param, "--trials", 2000, *FAST)
    assert r.returncode == 2, r.stdout + r.stderr
    line = one_error_line(r)
    assert message in line, line


def test_param_accepted_when_used():
    """A named parameter, and a **params one the factory reports, are taken."""
    assert build("tests.user_algos:named_params", params={"tau": 3}).params["tau"] == 3
    assert build("tests.user_algos:uses_some_params", params={"eta": 0.5}).params["eta"] == 0.5


@pytest.mark.parametrize("args,message", [
    (["private-exp3", "--param", "tau=abc"], "--param tau=abc: could not convert string"),
    (["exp3", "--param", "eta=abc"], "--param eta=abc: could not convert string"),
    (["pfb-laplace", "--param", "domain=cube"], "--param domain=cube: domain must be one of"),
    (["private-exp3", "--param", "nonsense=1"], "unknown parameter 'nonsense' for private-exp3; "
                                                "allowed: tau, eta, gamma"),
])
def test_param_for_registered_algorithms(args, message):
    """Registered algorithms: a word the factory rejects names the --param;
    an unknown name keeps the list of allowed parameters."""
    r = audit_here("run", *args, "--trials", 2000, *FAST)
    assert r.returncode == 2
    assert message in one_error_line(r)


# ------------------------------------------------------------ flags

@pytest.mark.parametrize("args,message", [
    (["--seed", "-1"], "--seed must be a non-negative integer, got -1"),
    (["--seed", "1.5"], "--seed must be a non-negative integer, got '1.5'"),
    (["--confidence", "0.4"], "--confidence must be in [0.5, 1), got 0.4"),
    (["--confidence", "1"], "--confidence must be in [0.5, 1), got 1"),
    (["--epsilon", "nan"], "--epsilon must be a finite number, got nan"),
    (["--epsilon", "inf"], "--epsilon must be a finite number, got inf"),
])
def test_flag_values(args, message):
    """--seed is a non-negative integer, --confidence in [0.5, 1) (the DKW band
    needs α ≤ ½), numbers are finite: one line naming the flag once."""
    r = audit_here("run", "private-exp3", *args)
    assert r.returncode == 2
    assert one_error_line(r) == f"audit: error: {message}"


def _unwritable_dir(tmp_path):
    """A folder no file can be created in (a read-only folder, or /proc when
    running as root, which ignores permissions)."""
    if os.geteuid() != 0:
        d = tmp_path / "ro"
        d.mkdir()
        d.chmod(0o500)
        return d
    return "/proc"


@pytest.mark.parametrize("flag,name", [("--report", "rep"), ("--json", "r.json")])
def test_unwritable_output_is_refused_before_any_simulation(tmp_path, flag, name):
    """An output location that cannot be written is refused first: the error
    names the flag (not the algorithm that would raise at round 3 once
    simulated), and nothing is printed on stdout."""
    target = os.path.join(_unwritable_dir(tmp_path), name)
    r = audit_here("run", "tests.user_algos:raises_at_round_3", flag, target, "--trials", 2000,
                  *FAST)
    assert r.returncode == 2 and r.stdout == ""
    line = one_error_line(r)
    assert line.startswith(f"audit: error: {flag}: cannot write in "), line


@pytest.mark.parametrize("args,message", [
    (["run", "private-exp3", "--json", "{tmp}/missing/r.json"], "--json: directory"),
    (["run", "private-exp3", "--json", "{tmp}"], "is a directory"),
    (["run", "private-exp3", "--report", "{tmp}/file"], "exists and is not a directory"),
    (["regret", "private-exp3", "--json", "{tmp}/missing/r.json"], "--json: directory"),
    (["check", "--config", "{tmp}/audit.toml", "--junit", "{tmp}/missing/j.xml"],
     "--junit: directory"),
    (["check", "--config", "{tmp}/audit.toml", "--report", "{tmp}/file"],
     "--report: "),
])
def test_bad_output_locations(tmp_path, args, message):
    """Output files in missing folders, a folder given for a file and a file
    given for a folder are refused before anything runs."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "audit.toml").write_text(ENTRY)
    r = audit_here(*[a.format(tmp=tmp_path) for a in args])
    assert r.returncode == 2 and "audit check:" not in r.stdout
    assert message in one_error_line(r)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "lots"])
def test_audit_scale_option_is_checked(pytester, value):
    """pytest --audit-scale must be a finite number > 0: a usage error with
    one message line, never INTERNALERROR."""
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--audit-scale", value, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "INTERNALERROR" not in err and "Traceback" not in err
    assert f"--audit-scale must be a finite number > 0, got {value!r}" in err


@pytest.mark.parametrize("value", [0, -1.0, math.nan, math.inf, "0.5", True])
def test_set_budget_scale_rejects_non_positive_and_non_finite(value):
    """set_budget_scale takes only a finite number > 0."""
    from audit.testing import _SCALE, set_budget_scale
    before = _SCALE["value"]
    with pytest.raises(ValueError, match="finite number > 0"):
        set_budget_scale(value)
    assert _SCALE["value"] == before


# ------------------------------------------------ the interface contract

def _alg(name, **kw):
    return getattr(user_algos, name)(20, 2, None, **kw)


@pytest.mark.parametrize("name,function,round,detail", [
    ("wrong_shape", "act", 1, "returned actions of shape (3,), expected (5,)"),
    ("float_actions", "act", 1, "dtype float64"),
    ("not_a_tuple", "act", 1, "must return (state, actions)"),
    ("out_of_range", "act", 1, "outside [0, 2)"),
    ("init_not_dict", "init", None, "must return the state as a dict"),
    ("feed_not_dict", "feed", 1, "must return the state as a dict"),
    ("bad_probs", "probs", 1, "summing to 0.9"),
    ("bad_point", "point", 1, "non-finite"),
    ("bad_incurred", "incurred", 1, "expected (5,)"),
    ("raises_at_round_3", "act", 3, "raised ValueError: boom at the third round"),
    ("feed_raises", "feed", 1, "raised KeyError"),
    ("init_raises", "init", None, "raised ZeroDivisionError"),
])
def test_check_interface_names_the_function_and_round(name, function, round, detail):
    """check_interface raises UserCodeError naming the function and round of
    the first broken promise."""
    with pytest.raises(UserCodeError) as info:
        check_interface(_alg(name), np.ones((20, 2)))
    e = info.value
    assert (e.function, e.round) == (function, round) and detail in e.detail, str(e)


def test_check_interface_uses_fewer_rounds_on_a_short_horizon():
    """With two rounds of losses only two rounds are run: a learner failing
    at round 3 passes."""
    check_interface(_alg("raises_at_round_3"), np.ones((2, 2)))
    with pytest.raises(UserCodeError):
        check_interface(_alg("raises_at_round_3"), np.ones((3, 2)))


def _search_pairs(alg):
    """Every kind of pair the neighbour search can choose for ``alg``, built
    without its pilot: the probe pair of every candidate round and every
    variant (coordinates changed, background, advice) of the first one —
    a finalist is one of these kinds at one of these rounds.  Falls back
    to the search itself (its pilot: seconds an algorithm) should its
    internals change."""
    from attacks import search
    space_of, probes_of = getattr(search, "_Space", None), getattr(search, "_probes", None)
    if space_of is None or probes_of is None:
        from audit.engine.scenarios import scenarios_for
        return [(sc.algorithm, sc.losses_a, sc.advice)
                for sc in scenarios_for(alg, ["search"])[0]]
    space = space_of(alg)
    probes = probes_of(space)
    found = probes + [c for c in space.variants(probes[0].round) if space.accepts(c)]
    return [(alg, *(lambda a, _b, adv: (a, adv))(*space.pair(c))) for c in found]


def test_check_interface_passes_every_registered_algorithm():
    """Every registered algorithm, on every pair its default attacks build
    (including conversions around the canary) and every kind of pair the
    neighbour search can choose, keeps the interface."""
    from attacks import ATTACKS
    from audit.engine.scenarios import scenarios_for
    for name in REGISTRY:
        alg = build(name)
        if alg.learner.reads_first:
            # The testers' mechanisms keep the suite's sizes; their pairs are
            # the patterns (the stream search draws from the same shapes).
            found = [(sc.algorithm, sc.losses_a, sc.advice)
                     for sc in ATTACKS["patterns"].scenarios(alg, events=False)]
        else:
            alg = alg if name == "exp3" else build(name, horizon=100)
            found = [(sc.algorithm, sc.losses_a, sc.advice)
                     for sc in scenarios_for(alg, None, search=False)[0]]
            found += _search_pairs(alg)
        assert found, name
        for learner_alg, losses, advice in found:
            check_interface(learner_alg, losses, advice)


def test_check_interface_feeds_rows_or_played_losses():
    """feed gets the whole loss row for a full-information learner, the
    played arm's losses (one per run) otherwise."""
    seen = []

    def make(feedback):
        def feed(state, actions, losses, rng):
            seen.append((feedback, np.shape(losses)))
            return state
        return Learner(lambda runs, rng: {"n": runs},
                       lambda s, adv, rng: (s, np.zeros(s["n"], dtype=np.int64)), feed, 3,
                       feedback=feedback)
    for feedback in ("full", "bandit"):
        alg = Algorithm("t", make(feedback), Claim(1, 0, "actions", "t"), 4, 3, {})
        check_interface(alg, np.full((4, 3), 0.5))
    assert seen == [("full", (3,))] * 3 + [("bandit", (5,))] * 3


def test_bool_actions_are_arm_indices():
    """Bool actions (K = 2) pass the contract and are simulated as arms 0/1,
    not as a mask over the runs."""
    alg = _alg("bool_actions")
    check_interface(alg, np.ones((20, 2)))
    tr = simulate(alg, np.tile([0.0, 1.0], (20, 1)), 7, np.random.default_rng(0))
    assert tr.actions.shape == (7, 20) and set(np.unique(tr.actions)) <= {0, 1}
    assert np.allclose(tr.total_loss, tr.actions.sum(axis=1))


def test_simulate_reports_the_function_and_round():
    """simulate turns a learner's exception, or an unusable result, into a
    UserCodeError naming the function and the 1-based round; it pickles (it
    crosses worker processes) with its fields."""
    with pytest.raises(UserCodeError) as info:
        simulate(user_algos.raises_late(20, 2, None, at=12), np.ones((20, 2)), 50,
                 np.random.default_rng(0))
    e = info.value
    assert (e.function, e.round) == ("act", 12) and "RuntimeError: late failure" in e.detail
    copy = pickle.loads(pickle.dumps(e))
    assert (copy.function, copy.round, copy.detail) == (e.function, e.round, e.detail)
    with pytest.raises(UserCodeError) as info:
        simulate(_alg("wrong_shape"), np.ones((20, 2)), 50, np.random.default_rng(0))
    assert (info.value.function, info.value.round) == ("act", 1)
    assert "returned something unusable" in info.value.detail
    with pytest.raises(UserCodeError) as info:
        simulate(_alg("init_raises"), np.ones((20, 2)), 50, np.random.default_rng(0))
    assert (info.value.function, info.value.round) == ("init", None)


@pytest.mark.parametrize("parts", [(2, 2), (3, 0), (1.5, 2)])
def test_code_parts_must_multiply_to_the_number_of_codes(parts):
    """``Learner.code_parts`` declares a round's code as several codes; parts
    that are not positive integers multiplying to ``n_arms`` are refused
    before any run, naming the field and what is allowed."""
    alg = build("svt34-parallel")
    bad = dataclasses.replace(alg, learner=alg.learner._replace(code_parts=parts))
    with pytest.raises(UserCodeError) as info:
        check_interface(bad, np.ones((alg.horizon, alg.n_arms)))
    assert "code_parts must be positive integers whose product is n_arms = 9" in str(info.value)
    assert str(info.value).count("\n") == 0
