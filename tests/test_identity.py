"""Exact evidence rests only on what the code was seen to draw.

A *correct* algorithm whose hand-written declaration is slightly off must
never get a violation from a white-box mode: each route below used to print
"VIOLATION … exactly" and is now refused by a deterministic identity check
(false-refusal probability 0; the black-box audits that remain hold at
95 %).  Correct declarations still give today's exact figures.

Routes (Step 13): a sparse vector whose declared scales are a common factor
f of the code's; a history-free Laplace release declared at 0.9× its scale
or 1.05× its means; a Laplace mixture declared as one Laplace; a scalar
state model with its monotone direction flipped; and the recording
generator itself (same stream as the plain one)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from algorithms import build
from algorithms.core import Algorithm, Claim, Laplace, Learner, TranscriptModel
from attacks import ATTACKS
from audit.engine import audit_algorithm
from audit.engine.models import check_declarations
from audit.engine.models.recording import RecordingGenerator, observe


def _checks(alg, attack=None, index=0):
    if attack is None:
        # The first pair of the algorithm's first default attack, built
        # alone: the scenario an audit checks first, without the optimiser
        # or the other attacks' pilots.
        from audit.engine.scenarios import attack_names, scenarios_for
        first = attack_names(alg, None, search=False)[:1]
        sc = scenarios_for(alg, first, search=False)[0][index]
    else:
        sc = ATTACKS[attack].scenarios(alg)[index]
    return {c.check: c for c in check_declarations(sc, seed=0, index=0)}


def _no_white_violation(result):
    return not any(r.violation for r in result.results if r.kind != "black-box")


# ------------------------------------------------------------ the generator
def test_recording_generator_yields_the_plain_stream_and_keeps_every_draw():
    ss = np.random.SeedSequence([3, 1, 4])
    rec, plain = RecordingGenerator(ss), np.random.default_rng(ss)
    a = [rec.laplace(0.0, 2.0, 5), rec.random(3), rec.normal(1.0, 0.5, (2, 2)),
         rec.integers(0, 7, 4), rec.standard_normal(3)]
    b = [plain.laplace(0.0, 2.0, 5), plain.random(3), plain.normal(1.0, 0.5, (2, 2)),
         plain.integers(0, 7, 4), plain.standard_normal(3)]
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    assert [d.method for d in rec.draws] == ["laplace", "random", "normal", "integers",
                                             "standard_normal"]
    assert rec.draws[0].constant("scale") == 2.0
    assert np.allclose(rec.draws[2].standardized(), (a[2] - 1.0) / 0.5)


def test_observe_tags_draws_with_the_call_and_round():
    alg = build("laplace")
    rec = RecordingGenerator(np.random.SeedSequence(0))
    lr = observe(alg.learner, rec)
    state = lr.init(5, rec)
    for t in range(2):
        state = lr.feed(state, None, np.array([0.5]), rec)
        state, _ = lr.act(state, None, rec)
    assert [d.phase for d in rec.draws] == [("feed", 0), ("feed", 1)]


# ---------------------------------------------------------- sparse vector
@pytest.mark.parametrize("factor", [0.5, 0.8])
def test_sparse_vector_declared_at_a_common_factor_is_refused(factor):
    """svt1 declaring both Laplace scales f× what the code draws (f = 0.5 is
    "forgot the ε/2 split"): no draw has the declared scale, refused; the
    integral mode is never used, so no exact violation."""
    alg = build("svt1")
    model = alg.extra["sparse_vector"]
    alg.extra = {**alg.extra, "sparse_vector": dataclasses.replace(
        model, threshold_scale=model.threshold_scale * factor,
        query_scale=model.query_scale * factor)}
    c = _checks(alg)["sparse-vector-identity"]
    assert not c.passed and c.rests_on == "identity" and "no Laplace draw" in c.what
    with pytest.raises(ValueError, match="refused: declaration check sparse-vector-identity"):
        audit_algorithm(alg, trials=2000, seed=0, modes=["integral"])


def test_sparse_vector_with_a_wrong_cutoff_or_resampling_is_refused():
    """svt1 declared with cutoff 2 (the code stops at 1), svt2 declared
    without resampling at cutoff c = 2 (the code resamples ρ after each ⊤;
    at c = 1 the two are the same mechanism): the replay of the declared
    model on the code's own draws differs from the code."""
    for name, c, change in (("svt1", 1, lambda m: {"cutoff": m.cutoff + 1}),
                            ("svt2", 2, lambda m: {"resample": False})):
        alg = build(name, params={"c": c})
        model = alg.extra["sparse_vector"]
        alg.extra = {**alg.extra, "sparse_vector": dataclasses.replace(model, **change(model))}
        c = _checks(alg)["sparse-vector-identity"]
        assert not c.passed and "replaying the declared model" in c.what, c.what


@pytest.mark.parametrize("name", ["svt1", "svt2", "svt3", "svt4", "svt5", "svt6", "numerical-svt"])
def test_correct_sparse_vectors_pass_and_pin_the_threshold(name):
    c = _checks(build(name))["sparse-vector-identity"]
    assert c.passed, (name, c.what)
    assert "pin the threshold" in c.what


# -------------------------------------------------------- transcript laws
def _laplace_with(declared_scale=None, mean_factor=1.0):
    alg = build("laplace")
    model = alg.learner.transcript
    b = model.noise.scale
    means = model.means
    new = model._replace(law=Laplace(b if declared_scale is None else declared_scale),
                         means=lambda *a, **k: means(*a, **k) * mean_factor)
    alg.learner = alg.learner._replace(transcript=new)
    return alg


def test_laplace_release_declared_at_0_9_scale_or_1_05_means_is_refused():
    """The pld mode's exact worst case of a history-free Laplace release is
    ‖Δ‖₁/b: a declared b 10 % small, or means 5 % off, would certify more
    than the code's ε.  Neither is one of the code's own draws: refused."""
    b = build("laplace").learner.transcript.noise.scale
    for alg in (_laplace_with(declared_scale=0.9 * b), _laplace_with(mean_factor=1.05)):
        c = _checks(alg)["noise-identity"]
        assert not c.passed and "not ±" in c.what
        r = audit_algorithm(alg, trials=4000, seed=0)
        assert _no_white_violation(r) and r.refused


def _mixture(epsilon=0.1, T=1):
    """A release of q + (0.9·Lap(1/ε) + 0.1·Lap(10/ε)): more private than
    Lap(1/ε), declared as Lap(1/ε)."""
    b = 1.0 / epsilon

    def init(runs, rng):
        return {"n": runs, "y": np.zeros((runs, 1))}

    def feed(state, actions, row, rng):
        n = state["n"]
        wide = rng.random(n) < 0.1
        z = np.where(wide, rng.laplace(0.0, 10 * b, n), rng.laplace(0.0, b, n))
        return {**state, "y": (float(row[0]) + z)[:, None]}

    def act(state, advice, rng):
        return state, np.zeros(state["n"], dtype=np.int64)

    def means(actions, losses, aux=None, advice=None):
        m = np.asarray(losses, dtype=float)[:actions.shape[1], :1]
        return np.broadcast_to(m, (actions.shape[0],) + m.shape)

    model = TranscriptModel(released=lambda s: s["y"], means=means, law=Laplace(b),
                            history_free=True)
    learner = Learner(init, act, feed, 1, feedback="stream", transcript=model)
    claim = Claim(epsilon, 0.0, "transcript", "test: declared Lap(1/ε)",
                  relation="bounded-all", max_change=1.0)
    return Algorithm("laplace-mixture", learner, claim, T, 1, {"epsilon": epsilon},
                     loss_range=(-10.0, 10.0))


def test_a_laplace_mixture_declared_as_laplace_is_refused():
    from attacks.base import Scenario
    alg = _mixture()
    sc = Scenario("one-above", alg, np.zeros((1, 1)), np.ones((1, 1)), None, 1)
    c = {c.check: c for c in check_declarations(sc, seed=0, index=0)}["noise-identity"]
    assert not c.passed and "not ±10 times" in c.what


# ------------------------------------------------------------ scalar state
def test_flipped_monotone_direction_is_refused_deterministically():
    """tbe-adaptive-n2's state model with its monotone directions flipped:
    the recursion's rounding bounds would cross (a bracket whose lower end
    lies above its upper end).  state-monotone reads the code's own
    action_probs on the grid and refuses."""
    alg = build("tbe-adaptive-n2")
    model = alg.extra["state_model"]
    alg.extra = {**alg.extra, "state_model": dataclasses.replace(
        model, monotone=tuple(-m for m in model.monotone))}
    sc = ATTACKS["tbe-expert-run"].scenarios(alg)[0]
    c = {c.check: c for c in check_declarations(sc, seed=0, index=0, modes=["recursion"])}
    assert not c["state-monotone"].passed and "declared increasing" in c["state-monotone"].what \
        or "declared decreasing" in c["state-monotone"].what
    assert "state-recursion" not in c          # nothing statistical runs on a refused model
    with pytest.raises(ValueError, match="refused: declaration check state-monotone"):
        audit_algorithm(alg, attacks=["tbe-expert-run"], trials=2000, seed=0,
                        modes=["recursion"])


def test_a_state_model_with_the_wrong_noise_scale_is_refused():
    alg = build("tbe-adaptive-n2")
    model = alg.extra["state_model"]
    alg.extra = {**alg.extra, "state_model": dataclasses.replace(
        model, noise=type(model.noise)(model.noise.scale * 0.9))}
    sc = ATTACKS["tbe-expert-run"].scenarios(alg)[0]
    c = {c.check: c for c in check_declarations(sc, seed=0, index=0, modes=["recursion"])}
    assert not c["state-draw-identity"].passed
    assert "u_(t+1) is not clip" in c["state-draw-identity"].what


# ------------------------------------------------------------ actions
def test_act_not_drawing_from_probs_is_refused():
    """EXP3 whose act() samples its arm from the uniform law while probs()
    says otherwise: act-is-inverse-cdf refuses (identity)."""
    alg = build("exp3")
    lr = alg.learner

    def act(state, advice, rng):
        runs = lr.probs(state, advice).shape[0]
        a = rng.integers(0, lr.n_arms, runs)
        return lr.commit(state, advice, a), a

    alg.learner = lr._replace(act=act)
    c = _checks(alg, attack="g1")["act-is-inverse-cdf"]
    assert not c.passed and "not the inverse CDF" in c.what


def test_a_bracket_out_of_order_is_an_internal_error_never_a_result():
    """Run the recursion on a flipped model directly (state-monotone would
    refuse it first): its rounding chains bound the wrong sides, and the
    crossed bracket raises instead of being reported."""
    from audit.engine.models.scalar_state.recursion import grid_for, marginal_bounds, run_bounds
    alg = build("tbe-adaptive-n2")
    model = alg.extra["state_model"]
    flipped = dataclasses.replace(model, monotone=tuple(-m for m in model.monotone))
    sc = ATTACKS["tbe-expert-run"].scenarios(alg)[0]
    grid = grid_for(flipped, sc.rounds, passes=8)
    with pytest.raises(ArithmeticError, match="out of order"):
        run_bounds(flipped, sc.losses_a, sc.rounds, 1, 0, grid)
    with pytest.raises(ArithmeticError, match="out of order"):
        marginal_bounds(flipped, sc.losses_a, sc.rounds, grid)
    run_bounds(model, sc.losses_a, sc.rounds, 1, 0, grid)      # the declared one is ordered
