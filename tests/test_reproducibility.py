"""A learner should draw all its randomness from the generator it is handed
(``audit.engine.reproducibility``): one that draws from numpy's global
functions, from Python's ``random`` or from an unseeded generator of its
own is still audited black-box (its runs are independent draws), in one
process, and the result says no seed reproduces it and what to change;
one whose runs are copies from one seed to the next (a generator seeded
with a constant) is refused before any evidence is used — ``audit run``
exits 2 with one line naming the algorithm and what to change — while a
correct learner and a deterministic one are audited as before.  Every
built-in algorithm passes."""
from __future__ import annotations

import numpy as np
import pytest

from algorithms import REGISTRY, Algorithm, Claim, Learner, build
from algorithms.core import TranscriptModel
from attacks import ATTACKS
from audit.engine import audit as engine_audit
from audit.engine.reproducibility import RandomnessError, check_own_randomness
from tests.cli import audit_here
from tests.test_exit_codes import FAST, one_error_line

OUTSIDE = "draws randomness outside the generator it is given"
WHAT_TO_CHANGE = "draw every random number from the rng argument of init/act/feed"


def _user(attr: str, T: int = 20) -> Algorithm:
    return build(f"tests.user_algos:{attr}", horizon=T)


def test_audit_run_refuses_runs_that_are_copies():
    """A generator seeded with a constant makes every chunk the same runs:
    exit 2, exactly one line on stderr (no traceback) naming the
    algorithm, what is wrong and what to change."""
    r = audit_here("run", "tests.user_algos:own_fixed_generator", "--horizon", 20,
                   "--trials", 200, *FAST)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_error_line(r)
    assert line.startswith(f"audit: error: algorithm own-fixed-generator {OUTSIDE}: "), line
    assert "not from one seed to another" in line and WHAT_TO_CHANGE in line, line
    assert r.stdout == ""


@pytest.mark.parametrize("attr", ["numpy_global", "python_random"])
def test_audit_run_audits_unseeded_randomness_black_box_and_says_so(attr):
    """Randomness the audit cannot seed: a verdict all the same (exit 0 or
    1), and the summary says it is not reproducible, where it showed, and
    what to change."""
    r = audit_here("run", f"tests.user_algos:{attr}", "--horizon", 20, "--trials", 200, *FAST)
    assert r.returncode in (0, 1), (r.stdout, r.stderr)
    assert "VERDICT" in r.stdout
    assert ("not reproducible: this code draws randomness the audit cannot seed (two "
            "simulations with the same seed differ at round 1)") in r.stdout
    assert WHAT_TO_CHANGE in r.stdout and "rerun (not reproducible" in r.stdout


@pytest.mark.parametrize("attr", ["from_given_generator", "deterministic"])
def test_audit_run_accepts_the_given_generator_and_no_randomness(attr):
    """A learner drawing from its rng argument, and one drawing nothing, are
    audited (a verdict, exit 0 or 1), nothing on stderr."""
    r = audit_here("run", f"tests.user_algos:{attr}", "--horizon", 20, "--trials", 200, *FAST)
    assert r.returncode in (0, 1), (r.stdout, r.stderr)
    assert "VERDICT" in r.stdout and r.stderr == ""


def test_refused_before_any_evidence(monkeypatch):
    """The check comes before the declaration pilots and the sampling: a
    refused learner is never simulated for evidence."""
    def never(*args, **kwargs):
        raise AssertionError("evidence was gathered for a refused learner")
    monkeypatch.setattr(engine_audit, "check_declarations", never)
    monkeypatch.setattr(engine_audit, "collect", never)
    with pytest.raises(RandomnessError, match=OUTSIDE):
        engine_audit.audit_algorithm(_user("own_fixed_generator"), ["first-round"], trials=200)
    assert issubclass(RandomnessError, ValueError)   # bad input: exit 2


@pytest.mark.parametrize("attr", ["numpy_global", "python_random", "own_unseeded_generator"])
def test_the_check_names_each_kind_of_outside_randomness(attr):
    msg = check_own_randomness(_user(attr), np.zeros((20, 2)))
    assert "\n" not in msg and "same seed differ at round 1" in msg and WHAT_TO_CHANGE in msg
    alg = _user("own_fixed_generator")
    with pytest.raises(RandomnessError) as info:
        check_own_randomness(alg, np.zeros((20, 2)))
    msg = str(info.value)
    assert "\n" not in msg and alg.name in msg and "not from one seed to another" in msg
    assert WHAT_TO_CHANGE in msg


@pytest.mark.parametrize("attr", ["from_given_generator", "deterministic"])
def test_the_check_passes_a_correct_and_a_deterministic_learner(attr):
    assert check_own_randomness(_user(attr), np.zeros((20, 2))) is None


def _uniform_arms(K: int = 2, **fields) -> Learner:
    """Plays uniform arms from the given generator; ``fields`` replace parts."""
    def init(runs, rng):
        return {"runs": runs, "y": np.full(runs, np.nan)}

    def act(state, advice, rng):
        return state, rng.integers(0, K, state["runs"])

    def feed(state, actions, losses, rng):
        return state
    return Learner(init, act, feed, K)._replace(**fields)


def _alg(learner: Learner, T: int = 10) -> Algorithm:
    return Algorithm("probe", learner, Claim(1.0, 0.0, "actions", "test"), T, learner.n_arms, {})


def test_points_drawn_outside_the_generator_are_seen():
    """Actions from the generator, points from np.random: the points differ."""
    alg = _alg(_uniform_arms(point=lambda state: np.random.normal(size=(state["runs"], 2))))
    assert "same seed differ at round 1" in check_own_randomness(alg, np.zeros((10, 2)))


def test_transcript_releases_drawn_outside_the_generator_are_seen():
    """Releases (NaN on the rounds that release nothing, compared NaN-equal)
    drawn from np.random in feed, actions from the generator."""
    def feed(state, actions, losses, rng):
        t = state.get("t", 0) + 1
        y = np.random.laplace(size=state["runs"]) if t % 2 else np.full(state["runs"], np.nan)
        return {**state, "t": t, "y": y}
    model = TranscriptModel(released=lambda state: state["y"], means=lambda *a: None, scale=1.0)
    learner = _uniform_arms(feed=feed, transcript=model)
    assert "in their transcript releases" in check_own_randomness(_alg(learner),
                                                                  np.zeros((10, 2)))
    # The same releases from the generator pass, NaN rounds included.
    def good_feed(state, actions, losses, rng):
        t = state.get("t", 0) + 1
        y = rng.laplace(size=state["runs"]) if t % 2 else np.full(state["runs"], np.nan)
        return {**state, "t": t, "y": y}
    assert check_own_randomness(_alg(learner._replace(feed=good_feed)), np.zeros((10, 2))) is None


def test_every_built_in_algorithm_draws_from_its_generator():
    """On the loss sequence (and advice) the neighbour search simulates first."""
    for name in REGISTRY:
        alg = build(name)
        losses, advice = ATTACKS["search"].interface_input(alg)
        assert check_own_randomness(alg, losses, advice) is None, name
