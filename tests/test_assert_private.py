"""``assert_private`` as polished as the command line: the reproduce command
of a failure runs as printed and gives the same audit; a string is one
attack or mode; every bad argument is one ``ValueError`` naming it."""
from __future__ import annotations

import shlex

import pytest

from algorithms import build
from audit.cli.main import main
from audit.testing import PLACEHOLDER, assert_private
from tests import user_algos


def _failure(**kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        assert_private(**kwargs)
    return str(info.value)


def _reproduce_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("reproduce: ")]
    assert len(lines) == 1, text
    return lines[0][len("reproduce: "):]


def _summary(text: str) -> str:
    """An audit summary (in an assertion message: after its first line,
    without the notes about the reproduce command), with the claim's source
    left out: a claim override says where it came from (claim_epsilon= or
    --claim-epsilon)."""
    if text.startswith("privacy claim violated\n"):
        text = text.split("\n", 1)[1]
    lines = [ln for ln in text.strip().splitlines() if not ln.startswith("  note: ")]
    return "\n".join(ln.split(" — ")[0] if ln.startswith("  claim: ") else ln for ln in lines)


def _run_printed(line: str, capsys) -> tuple[int, str]:
    """Run a printed ``audit run ...`` line in this process (without the
    store, on one core: neither changes the result)."""
    argv = shlex.split(line)
    assert argv[:2] == ["audit", "run"], line
    code = main(argv[1:] + ["--no-store", "--jobs", "1"])
    return code, capsys.readouterr().out


CASES = {
    # a registered name with build flags: ε, the horizon and a parameter
    "registered": dict(algorithm="mutant-batch-sum", epsilon=0.25, horizon=400,
                       params={"tau": 3}, attacks="canary", modes="black-box", trials=20_000,
                       seed=7, confidence=0.9),
    # a user factory by import path, with arms, a claim override and two modes
    "user factory": dict(algorithm="tests.user_algos:named_params", epsilon=0.5, horizon=12,
                         arms=3, params={"tau": 2}, claim_epsilon=0.2,
                         attacks=["first-round"], modes=["black-box", "pld"], trials=6_000),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_the_reproduce_line_runs_as_printed_and_reproduces_the_failure(case, capsys):
    kwargs = CASES[case]
    text = _failure(**kwargs)
    line = _reproduce_line(text)
    for flag in ("--epsilon", "--horizon", "--param", "--attack", "--mode", "--trials", "--seed"):
        assert flag in line, (flag, line)
    if "claim_epsilon" in kwargs:
        assert f"--claim-epsilon {kwargs['claim_epsilon']}" in line
    code, out = _run_printed(line, capsys)
    assert code == 1, out
    # The same audit: the same summary, bound for bound, down to the
    # reproduce command the command line prints for itself.
    assert _summary(out) == _summary(text)


def test_an_algorithm_object_gets_a_placeholder_for_its_import_path(capsys):
    alg = build("mutant-batch-sum", epsilon=0.25)
    text = _failure(algorithm=alg, attacks="canary", modes="black-box", trials=20_000)
    line = _reproduce_line(text)
    assert line.startswith(f"audit run {shlex.quote(PLACEHOLDER)} ")
    assert f"replace {PLACEHOLDER} with 'package.module:attribute'" in text
    # With the placeholder replaced by a name for the same algorithm it runs.
    code, out = _run_printed(line.replace(shlex.quote(PLACEHOLDER), "mutant-batch-sum"), capsys)
    assert code == 1
    # The verdict line names the deciding evidence and its bound.
    bound = [ln for ln in out.splitlines() if "VERDICT:" in ln]
    assert bound and "ε ≥ " in bound[0] and bound[0] in text


def test_a_string_is_one_attack_and_one_mode():
    one = assert_private("private-exp3", attacks="canary", modes="black-box", trials=2_000)
    listed = assert_private("private-exp3", attacks=["canary"], modes=["black-box"], trials=2_000)
    assert [r.attack for r in one.results] == ["canary"]
    assert one.as_dict()["attacks"] == listed.as_dict()["attacks"]
    assert "--attack canary --mode black-box" in one.command


@pytest.mark.parametrize("key,value,words", [
    ("attacks", "search-x", "unknown attack 'search-x'; did you mean search?"),
    ("attacks", "canery", "did you mean canary?"),
    ("attacks", [], "a name or a non-empty list of names"),
    ("attacks", 3, "a name or a non-empty list of names"),
    ("modes", "blackbox", "modes: unknown mode 'blackbox'; did you mean black-box?"),
    ("modes", ["pld", 1], "a name or a non-empty list of names"),
])
def test_attacks_and_modes_are_checked_by_name(key, value, words):
    with pytest.raises(ValueError) as info:
        assert_private("private-exp3", trials=100, **{key: value})
    text = str(info.value)
    assert "\n" not in text and words in text and text.startswith("assert_private(): "), text


@pytest.mark.parametrize("key", ["epsilon", "delta", "claim_epsilon", "claim_delta",
                                 "claim_per_round_epsilon", "confidence"])
def test_a_number_given_as_a_string_names_its_argument(key):
    with pytest.raises(ValueError) as info:
        assert_private("private-exp3", trials=100, **{key: "0.5"})
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(f"assert_private(): {key} must be a number in ")
    assert f"got '0.5' (a str): pass {key}=0.5, a number, not a string" in text


@pytest.mark.parametrize("key,value,words", [
    ("seed", "3", "seed must be a non-negative integer, got '3' (a str)"),
    ("seed", -1, "seed must be a non-negative integer"),
    ("trials", 10.0, "trials must be a positive integer, got 10.0 (a float)"),
    ("jobs", 0, "jobs must be a positive integer, or -1 for one per CPU"),
    ("epsilon", -1, "epsilon must be a finite number in (0, inf), got -1"),
    ("delta", 1, "delta must be a finite number in [0, 1), got 1"),
    ("confidence", 0.3, "confidence must be a finite number in [0.5, 1), got 0.3"),
    ("epsilon", True, "epsilon must be a number in (0, inf), got True (a bool)"),
    ("horizon", "100", "horizon must be a positive integer, got '100' (a str)"),
    ("arms", 0, "arms must be a positive integer, got 0"),
    ("params", {1: 2}, "params must be a dict of parameter names to values"),
])
def test_bad_values_name_their_argument(key, value, words):
    with pytest.raises(ValueError) as info:
        assert_private("private-exp3", **{"trials": 100, key: value})
    assert words in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_an_unknown_keyword_is_named_with_what_is_allowed():
    with pytest.raises(ValueError) as info:
        assert_private("private-exp3", epsilonn=1, trials=100)
    text = str(info.value)
    assert text.startswith("assert_private() got an unknown argument 'epsilonn' "
                           "(did you mean epsilon")
    assert "; allowed: algorithm, epsilon, delta, " in text
    assert "horizon, arms, experts, params" in text and "\n" not in text


@pytest.mark.parametrize("obj,path", [(user_algos.noisy_greedy, "tests.user_algos:noisy_greedy"),
                                      (build, "algorithms.registry:build")])
def test_a_factory_object_is_refused_with_its_import_path(obj, path):
    with pytest.raises(ValueError) as info:
        assert_private(obj, epsilon=1, trials=100)
    text = str(info.value)
    assert text.startswith("assert_private(): algorithm must be the import path of your "
                           "factory as a string")
    assert f"pass {path!r}" in text and "\n" not in text


def test_a_factory_without_an_import_path_says_how_to_get_one():
    def local_factory(T, K, N, epsilon, delta):
        return user_algos.noisy_greedy(T, K, N, epsilon, delta)

    class Maker:
        def __call__(self, T, K, N, epsilon, delta):
            return user_algos.noisy_greedy(T, K, N, epsilon, delta)
    for obj, name in ((local_factory, "local_factory"), (lambda *a: None, "<lambda>"),
                      (Maker(), "Maker")):
        with pytest.raises(ValueError) as info:
            assert_private(obj, trials=100)
        text = str(info.value)
        assert "algorithm must be the import path" in text, text
        assert "at the top level of an importable module" in text and name in text, text


def test_an_algorithm_object_is_accepted_but_not_rebuilt():
    alg = build("private-exp3")
    result = assert_private(alg, attacks="canary", modes="black-box", trials=2_000)
    assert result.command.startswith(f"audit run {shlex.quote(PLACEHOLDER)} ")
    with pytest.raises(ValueError) as info:
        assert_private(alg, horizon=100, trials=100)
    assert "horizon= builds an algorithm from its name" in str(info.value)
    with pytest.raises(ValueError) as info:
        assert_private(42, trials=100)
    assert "algorithm must be a registered name" in str(info.value)
