"""The Agarwal & Singh instances added for the findings (Corollary 3.2's
sphere and cube, Lemma 4.2's reduction): the vectorised learners against
the per-run references of tests/reference_agarwal_singh_olo.py on one
random stream, their loss classes, and the closed forms the findings quote."""
from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.registry import build
from algorithms.simulate import simulate
from attacks import ATTACKS
from attacks.canary import threshold_canary
from tests.reference_agarwal_singh import laplace, laplace_pad, play_bandit
from tests.reference_agarwal_singh_olo import (RefCanary, RefEXP2, RefReduction, RefTreeOLO)


def _ball_losses(seed, T, N, p):
    """Rows spread over the unit ℓ_p ball, signs included."""
    rng = np.random.default_rng(seed)
    raw = rng.uniform(-1, 1, (T, N))
    norms = np.linalg.norm(raw, ord=p, axis=1, keepdims=True)
    return raw / np.maximum(norms, 1.0) * rng.uniform(0.2, 1.0, (T, 1))


@pytest.mark.parametrize("T", [2, 13, 16])
@pytest.mark.parametrize("name,body,p", [("as-ftrl-sphere", "sphere", 2),
                                         ("as-ftrl-cube", "cube", 1)])
def test_olo_learners_match_reference_on_same_stream(name, body, p, T):
    """Same points and released nodes, bit for bit up to rounding, for the
    same seed; small λ and a large η so that both the interior and the
    boundary of 𝒳 (projection, clipping) are exercised."""
    N = 3
    alg = build(name, horizon=T, arms=N, params={"lam": 0.3, "eta": 3.0})
    losses = _ball_losses(7, T, N, p)
    projected = 0
    for seed in range(5):
        tr = simulate(alg, losses, 1, np.random.default_rng(seed), record_transcript=True,
                      point_rounds=range(T))
        rng = np.random.default_rng(seed)
        ref = RefTreeOLO(N, T, alg.params["draws"], laplace(0.3), laplace_pad(0.3), body, 3.0)
        for t, row in enumerate(losses):
            ref.act(rng)
            np.testing.assert_allclose(tr.points[t][0], ref.x, rtol=1e-10, atol=1e-12)
            projected += (np.linalg.norm(ref.x) > 0.999) if body == "sphere" else \
                (np.max(np.abs(ref.x)) >= 1.0)
            ref.feed(row, rng)
        n_rel = alg.extra["tree"]["released_until"]
        np.testing.assert_allclose(tr.releases[0], np.array(ref.released[:n_rel]),
                                   rtol=1e-12, atol=1e-12)
    assert projected > 0


@pytest.mark.parametrize("N", [2, 3])
def test_reduction_matches_reference_on_same_stream(N):
    """Algorithm 4 around EXP2, and around the canary, against the per-run
    reference on losses over [−1, 1]^N."""
    alg = build("as-reduction", horizon=40, arms=N, params={"eta": 0.2, "gamma": 0.1})
    losses = np.random.default_rng(3).uniform(-1, 1, (40, N))
    canary = alg.rebuild(threshold_canary(N, 0.3))
    for audited, make_base in ((alg, lambda: RefEXP2(N, 0.2, 0.1)),
                               (canary, lambda: RefCanary(0.3))):
        for seed in range(5):
            tr = simulate(audited, losses, 1, np.random.default_rng(seed), record_transcript=True)
            rng = np.random.default_rng(seed)
            acts, rel = play_bandit(RefReduction(make_base(), alg.params["lam"]), losses, rng)
            np.testing.assert_array_equal(tr.actions[0], acts)
            np.testing.assert_allclose(tr.releases[0], rel, rtol=1e-12)


def test_loss_classes_are_the_papers_balls():
    """Section 2: the sphere's losses are the unit ℓ₂ ball, the cube's the
    unit ℓ₁ ball; a row outside is refused with one line, a row inside (of
    either sign) is accepted."""
    sphere = build("as-ftrl-sphere", horizon=4, arms=2)
    cube = build("as-ftrl-cube", horizon=4, arms=2)
    inside = np.array([[0.6, -0.8]] + [[0.0, 0.0]] * 3)
    sphere.check_losses(inside)
    with pytest.raises(ValueError, match="ℓ1 norm"):
        cube.check_losses(inside)
    cube.check_losses(np.array([[0.5, -0.5]] + [[0.0, 0.0]] * 3))
    with pytest.raises(ValueError, match="ℓ2 norm"):
        sphere.check_losses(np.array([[1.0, 1.0]] + [[0.0, 0.0]] * 3))


def test_parameters_follow_corollary_32():
    """λ = √N⌈log₂T⌉/ε (sphere), ⌈log₂T⌉/ε (cube), Lemma 4.2's λ = B/ε."""
    for T, N, eps in [(2, 2, 1.0), (17, 3, 0.5), (64, 4, 2.0)]:
        d = (T - 1).bit_length()
        assert build("as-ftrl-sphere", horizon=T, arms=N, epsilon=eps).params["lam"] == \
            pytest.approx(math.sqrt(N) * d / eps)
        assert build("as-ftrl-cube", horizon=T, arms=N, epsilon=eps).params["lam"] == \
            pytest.approx(d / eps)
    assert build("as-reduction", epsilon=0.5).params["lam"] == pytest.approx(2.0)


def test_the_olo_attack_pairs_are_neighbours_in_the_loss_class():
    for name in ("as-ftrl-sphere", "as-ftrl-cube"):
        alg = build(name, horizon=2, arms=3)
        ATTACKS["as-olo-round1"].applies(alg)
        for sc in ATTACKS["as-olo-round1"].scenarios(alg):
            sc.check()
            alg.check_losses(sc.losses_a)
            alg.check_losses(sc.losses_b)
    with pytest.raises(ValueError, match="as-ftrl-sphere"):
        ATTACKS["as-olo-round1"].applies(build("as-ftrl-experts"))
    with pytest.raises(ValueError, match="as-reduction"):
        ATTACKS["as-reduction-canary"].applies(build("as-bandit-exp2"))


@pytest.mark.parametrize("T", [2, 16])
def test_lemma33_paper_matches_reference_on_same_stream(T):
    """as-ftrl-lemma33-paper is Algorithm 1 + 2 on [−1, 1]^N releasing every
    node through t = T: the per-run PrivateSum reference gives the same
    experts, points and released nodes (all T of them) on one stream."""
    from tests.reference_agarwal_singh import RefTreeFTRL
    alg = build("as-ftrl-lemma33-paper", horizon=T, arms=3, params={"lam": 0.3})
    assert alg.loss_range == (-1.0, 1.0)
    assert alg.extra["tree"]["released_until"] == T
    losses = np.random.default_rng(11).uniform(-1, 1, (T, 3))
    for seed in range(3):
        tr = simulate(alg, losses, 1, np.random.default_rng(seed), record_transcript=True,
                      point_rounds=range(T))
        rng = np.random.default_rng(seed)
        ref = RefTreeFTRL(3, T, alg.params["draws"], laplace(0.3), laplace_pad(0.3), "ftrl",
                          alg.params["eta"])
        acts = []
        for t, row in enumerate(losses):
            acts.append(ref.act(rng))
            np.testing.assert_allclose(tr.points[t][0], ref.x, rtol=1e-10, atol=1e-12)
            ref.feed(row, rng)
        np.testing.assert_array_equal(tr.actions[0], acts)
        np.testing.assert_allclose(tr.releases[0], np.array(ref.released), rtol=1e-12,
                                   atol=1e-12)
