"""Declaration checks and the soundness of the white-box modes: correct
algorithms, declared plausibly but wrongly, must never get a violation; a
leak visible in only one direction must be found; no mode may return NaN.

Every audit here uses a fixed seed.  The identity checks (a release's
noise is one of the code's own recorded draws) are deterministic and never
refuse a correct declaration; the statistical ones (finite laws) refuse a
correct declaration with probability ≤ 1e-6 each; the black-box
bounds hold at 95%, and the algorithms below sit far from their claims
where a test needs them to (said in each test)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms import build
from attacks import ATTACKS
from audit.engine.models import FALSE_REFUSAL, check_declarations
from audit.engine import audit_algorithm
from audit.engine.privacy_loss import action_loss, search_worst_output
from algorithms.core import Finite, Gaussian, Laplace
from tests.wb_algos import noisy_feedback_exp3, noisy_releases, shared_hedge, three_rounds


def _white(result):
    return [r for r in result.results if r.kind != "black-box"]


def _checks(result):
    return {c.check: c for c in result.declaration_checks}


def _finite_doc(doc):
    """No NaN anywhere in a result document (inf only where it means 'none')."""
    def walk(x):
        if isinstance(x, float):
            assert not math.isnan(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
    walk(doc)


# --------------------------------------------------- declared wrongly
def test_noise_drawn_in_feed_is_refused_and_the_verdict_is_consistent():
    """The issue's case: a correct ε = 0.5 algorithm whose noise is drawn in
    feed() but which declares probs/commit.  Before the checks: an 'exact'
    violation with ε_lb ≈ 3.5.  Now same-losses-replay fails (deterministic
    check), white-box is off, and the black-box audit (95%, 20 000 runs)
    decides: consistent, because the algorithm is 0.5-DP."""
    alg = noisy_feedback_exp3(epsilon=0.5)
    r = audit_algorithm(alg, trials=20_000, seed=0)
    c = _checks(r)
    assert c["same-losses-replay"].outcome == "fail"
    assert "feed" in c["same-losses-replay"].advice
    assert not _white(r)
    assert r.refused and "same-losses-replay" in r.refused[0]
    assert r.verdict == "consistent" and r.epsilon_lower_bound <= 0.5
    doc = r.as_dict()
    assert any(d["check"] == "same-losses-replay" and d["outcome"] == "fail"
               for d in doc["declaration_checks"])
    assert "white-box modes not used" in r.summary()


def test_only_white_box_modes_with_a_failed_check_is_bad_input():
    alg = noisy_feedback_exp3(epsilon=0.5)
    with pytest.raises(ValueError, match="refused: declaration check same-losses-replay"):
        audit_algorithm(alg, trials=2000, seed=0, modes=["search", "pld"])


def test_wrong_declared_scale_is_refused():
    """private-exp3 declaring half its true Laplace scale would make the exact
    loss formula report 2ε ('exact' violation).  noise-identity refuses it
    (no release minus its mean is b/2 times a recorded Laplace draw;
    deterministic); the black-box audit then finds the algorithm consistent
    at 95%."""
    alg = build("private-exp3", epsilon=0.5, horizon=200)
    model = alg.learner.transcript
    alg.learner = alg.learner._replace(transcript=model._replace(scale=model.scale / 2))
    r = audit_algorithm(alg, attacks=["first-round"], trials=20_000, seed=1)
    c = _checks(r)
    assert c["noise-identity"].outcome == "fail" and c["noise-identity"].rests_on == "identity"
    assert "not ±" in c["noise-identity"].what
    assert not _white(r) and r.verdict == "consistent"


def _transcript_checks(alg):
    sc = ATTACKS["first-round"].scenarios(alg)[0]
    return {c.check: c for c in check_declarations(sc, seed=0, index=0)}


def test_declared_noise_laws_are_checked_for_every_law():
    """Correct Gaussian, Laplace and randomized-response declarations pass
    (identity for the continuous laws; each statistical check of the finite
    law refuses a correct one w.p. ≤ 1e-6).  A Gaussian declared at half or
    twice its σ matches none of its recorded normal draws (deterministic);
    a randomized response declared at ε′ = 1
    when it keeps the value w.p. e²/(1 + e²) (0.88 vs 0.73 declared: about
    17 standard errors at 2 000 runs) and a table under which a drawn output
    is impossible are refused, and so is a Laplace law of the Gaussian's
    variance.  The loss formula of a refused law is never
    used."""
    for alg in (noisy_releases(noise="gaussian", scale=0.7), noisy_releases(noise="laplace"),
                noisy_releases(noise="rr", scale=2.0)):
        checks = _transcript_checks(alg)
        assert checks and all(c.passed for c in checks.values()), (alg.name, checks)
    for wrong in (Gaussian(0.35), Gaussian(1.4)):
        c = _transcript_checks(noisy_releases(noise="gaussian", scale=0.7, declared=wrong))
        assert c["noise-identity"].outcome == "fail" and "gaussian draw" in c["noise-identity"].what
    c = _transcript_checks(noisy_releases(noise="rr", scale=2.0,
                                          declared=Finite.randomized_response(1.0)))
    assert c["noise-law"].outcome == "fail" and "binomial" in c["noise-law"].what
    never_flips = Finite(((1.0, 0.0), (0.0, 1.0)))
    c = _transcript_checks(noisy_releases(noise="rr", scale=2.0, declared=never_flips))
    assert c["noise-law"].outcome == "fail" and "probability 0" in c["noise-law"].what
    # A Gaussian declared Laplace of the same variance (b = σ/√2) is another
    # law: the code drew no Laplace noise at all.
    c = _transcript_checks(noisy_releases(noise="gaussian", scale=0.7,
                                          declared=Laplace(0.7 / math.sqrt(2))))
    assert c["noise-identity"].outcome == "fail" and "drew no laplace" in c["noise-identity"].what


def test_history_free_declared_for_action_dependent_means_is_refused():
    """Means that depend on the played arm (ℓ_t(I_t) released) declared
    history-free: means-history-free fails (deterministic), so no pair
    ceiling is computed from a wrong premise.  Declared correctly (False),
    the check does not run and the other checks pass."""
    from attacks.base import Scenario
    rows = np.random.default_rng(0).random((8, 2))      # the arms' losses differ every round

    def checks(alg):
        sc = Scenario("random-rows", alg, rows, rows[::-1].copy(), None, 8)
        return {c.check: c for c in check_declarations(sc, seed=0, index=0)}

    c = checks(noisy_releases(noise="gaussian", bandit=True, history_free=True))
    assert c["means-history-free"].outcome == "fail"
    ok = checks(noisy_releases(noise="gaussian", bandit=True, history_free=False))
    assert "means-history-free" not in ok and all(x.passed for x in ok.values())
    assert checks(noisy_releases(noise="gaussian"))["means-history-free"].outcome == "pass"


def test_reused_noise_is_refused_by_the_identity_check():
    """A transcript model whose releases share one noise draw (a declared
    independent-noise model would multiply densities that are not
    independent): each release alone is Laplace(1), but noise-identity sees
    one recorded draw carrying two releases and refuses (deterministic)."""
    from algorithms.core import Algorithm, Learner, TranscriptModel

    def init(runs, rng):
        return {"z": rng.laplace(0, 1.0, runs), "y": np.full(runs, np.nan), "t": 0}

    def act(state, advice, rng):
        return state, np.zeros(state["z"].shape[0], dtype=np.int64)

    def feed(state, actions, losses, rng):
        return {**state, "y": losses + state["z"], "t": state["t"] + 1}

    def means(actions, losses, aux=None, advice=None):
        T = actions.shape[1]
        return np.broadcast_to(losses[np.arange(T), actions], actions.shape).astype(float)

    learner = Learner(init=init, act=act, feed=feed, n_arms=2,
                      transcript=TranscriptModel(released=lambda s: s["y"], means=means, scale=1.0))
    alg = Algorithm("reused-noise", learner, None, 6, 2, {})
    sc = ATTACKS["first-round"].scenarios(alg)[0]
    checks = {c.check: c for c in check_declarations(sc, seed=0, index=0)}
    assert checks["noise-identity"].outcome == "fail"
    assert "same recorded draw" in checks["noise-identity"].what


def test_undeclared_shared_state_is_refused_declared_shared_state_is_replayed_right():
    """Hedge keeping its cumulative losses in one array for all runs (the
    style of tracking_experts/lazy.py).  Undeclared: state-runs-axis refuses
    the white-box modes (before: L = 0 silently).  Declared in
    Learner(shared=...): replay keeps one state per side and the exact loss
    matches the closed form."""
    bad = audit_algorithm(shared_hedge(), trials=4000, seed=0)
    assert _checks(bad)["state-runs-axis"].outcome == "fail"
    assert "'L'" in _checks(bad)["state-runs-axis"].what
    assert not _white(bad)
    alg = shared_hedge(declare_shared=True)
    good = audit_algorithm(alg, trials=4000, seed=0)
    assert all(c.passed for c in good.declaration_checks)
    sc = ATTACKS["first-round"].scenarios(alg)[0]
    hist = np.random.default_rng(0).integers(0, 2, (50, alg.horizon))
    got = action_loss(alg, sc.losses_a, sc.losses_b, hist)
    eta = alg.params["eta"]
    # ℓ has ℓ_1 = (1, 0), ℓ′ all zeros: from round 2 on P(1) = 1/(1 + e^η) vs ½.
    p1 = 1 / (1 + math.exp(eta))
    want = np.where(hist[:, 1:] == 0, math.log(p1 / 0.5), math.log((1 - p1) / 0.5)).sum(axis=1)
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert np.abs(got).max() > 0.1
    assert good.verdict == "consistent"


def test_correct_declarations_pass_on_built_in_algorithms():
    """Every built-in white-box algorithm passes every check (deterministic
    checks: probability 0 of a false refusal; statistical ones: ≤ 1e-6 each)."""
    for name, kw in [("exp3", dict(horizon=300)), ("private-exp3", dict(horizon=200)),
                     ("ldp-exp4", dict(horizon=100)), ("as-ftrl-experts", dict(horizon=32)),
                     ("tbe-adaptive-fixed", dict(horizon=50)), ("as-ftpl", dict(horizon=32)),
                     ("pfb-gaussian", {}), ("pfb-gaussian-derived", {}), ("pfb-laplace", {}),
                     ("private-batched-exp4", {})]:
        alg = build(name, **kw)
        sc = ATTACKS[alg.default_attacks[0]].scenarios(alg)[0]
        checks = check_declarations(sc, seed=3, index=0)
        assert checks and all(c.passed for c in checks), (name, checks)


# ------------------------------------------ per-round and both directions
def test_conditional_per_round_ratio_above_epsilon_is_no_violation():
    """three_rounds(c=1.2) is 0.762-DP on every pair (docstring), claim ε = 1,
    no per-round claim.  The per-round ratio at round 3 along the g1 history
    is 1.2 > 1: shown for information, never a violation.  search and the
    pure-ε pld certificate find exactly the worst output, 0.762."""
    alg = three_rounds(c=1.2)
    r = audit_algorithm(alg, trials=20_000, seed=0)
    w = {x.kind: x for x in _white(r)}
    assert w["per-round"].informational and w["per-round"].epsilon_lower_bound == pytest.approx(1.2)
    assert not w["per-round"].violation and w["per-round"].per_record_lower_bound == 0
    true = alg.extra["true_epsilon"]
    assert w["search"].epsilon_lower_bound == pytest.approx(true, rel=1e-6)
    assert w["pld"].exact and w["pld"].epsilon_lower_bound == pytest.approx(true, rel=1e-6)
    assert r.verdict == "consistent" and r.epsilon_lower_bound <= true * (1 + 1e-9)
    _finite_doc(r.as_dict())


def test_per_round_claim_survives_a_claim_override():
    """exp3 audited with --claim-epsilon keeps its per-round claim ε_t, and the
    per-round mode is judged against ε_t, not the total."""
    from algorithms.core import Claim
    alg = build("exp3", horizon=20_000)
    claim = Claim.override(alg.claim, 1e9, None, "test override")
    assert claim.per_round_epsilon == alg.claim.per_round_epsilon
    r = audit_algorithm(alg, trials=2000, seed=0, claim=claim, modes=["per-round"])
    (pr,) = _white(r)
    assert not pr.informational and pr.claim_value == alg.claim.per_round_epsilon


def test_a_leak_only_in_the_reverse_direction_is_found():
    """three_rounds(c=2): ln P_ℓ/P_ℓ′ ≤ 0.815 for every output but
    ln P_ℓ′/P_ℓ = 1.5 for x = (1, 1, 2).  Both search and pld find 1.5
    (exact), in direction l'>l."""
    alg = three_rounds(c=2.0)
    r = audit_algorithm(alg, trials=20_000, seed=0, modes=["search", "pld"])
    w = {x.kind: x for x in _white(r)}
    assert w["search"].violation and w["search"].details["direction"] == "l'>l"
    assert w["search"].epsilon_lower_bound == pytest.approx(1.5, rel=1e-6)
    assert w["search"].details["directions"]["l>l'"]["epsilon_lower_bound"] < 1
    assert w["pld"].exact and w["pld"].epsilon_lower_bound == pytest.approx(1.5, rel=1e-6)
    assert r.verdict == "violation"


# ------------------------------------------------------- δ > 0 and zeros
def test_one_rare_output_proves_nothing_about_delta():
    """rare = 1e-8: an output of mass 1e-8 on ℓ that is impossible on ℓ′.
    Against (1, 1e-6) the algorithm is consistent (it is (0, 1e-8)-DP): the
    search certificate counts only through its mass.  Against pure ε = 1 the
    same output refutes the claim exactly; its loss is reported as a finite
    lower bound (P′ = 0 is read as ≤ the smallest double), never inf/NaN."""
    r = audit_algorithm(three_rounds(rare=1e-8, delta=1e-6), trials=20_000, seed=0)
    w = {x.kind: x for x in _white(r)}
    assert w["search"].epsilon_lower_bound == 0 and not w["search"].violation
    assert r.verdict == "consistent"
    _finite_doc(r.as_dict())
    pure = three_rounds(rare=1e-8)
    sc = ATTACKS["g1"].scenarios(pure)[0]
    certs = search_worst_output(pure, sc.losses_a, sc.losses_b, pure.claim)
    fwd = [c for c in certs if c.direction == "l>l'"][0]
    assert math.isfinite(fwd.loss) and fwd.loss > 700 and fwd.violation


def test_deterministic_rounds_give_no_nan_in_any_mode():
    """Round 1 of three_rounds plays arm 1 with probability 1 (zeros in
    probs on both sides): per-round, search and pld stay finite."""
    r = audit_algorithm(three_rounds(c=1.2), trials=4000, seed=2)
    for x in _white(r):
        assert math.isfinite(x.epsilon_lower_bound)
    _finite_doc(r.as_dict())
