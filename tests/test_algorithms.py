"""The vectorised algorithms against the per-run references, and the
invariants every algorithm must keep."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from algorithms import build
from algorithms.private_bandits.catalog import htinf_sigma
from algorithms.simulate import simulate
from attacks.instances import default_advice
from tests import reference as ref

T_SMALL = 48


def _losses(seed, T=T_SMALL, K=3):
    return np.random.default_rng(1000 + seed).random((T, K))


def _advice(seed, T, N, K):
    return np.random.default_rng(2000 + seed).dirichlet(np.ones(K), size=(T, N))


def _vectorised(alg, losses, seed, advice=None):
    return simulate(alg, losses, 1, np.random.default_rng(seed), advice=advice).actions[0].tolist()


def _reference(name, alg, losses, seed, advice=None):
    rng = np.random.default_rng(seed)
    p, K, T = alg.params, alg.n_arms, alg.horizon
    if name == "exp3":
        learner, actions = ref.RefEXP3(K, p["eta"], p["gamma"]), []
        for t in range(T):
            i = learner.act(rng)
            actions.append(i)
            learner.feed(i, losses[t][i], rng)
        return actions
    if name == "private-exp3":
        return ref.RefAlg1(ref.RefEXP3(K, p["eta"], p["gamma"]), p["tau"], p["epsilon"], T).run(losses, rng)
    if name == "private-ftpl":
        return ref.RefAlg1(ref.RefFTPL(K, p["eta"], p["M"]), p["tau"], p["epsilon"], T).run(losses, rng)
    if name == "private-htinf":
        return ref.RefAlg1(ref.RefHTINF(K, p["sigma"]), p["tau"], p["epsilon"], T).run(losses, rng)
    if name == "private-experts":
        inner = ref.BatchedBase(ref.RefHTINF(alg.n_experts, p["sigma"]), p["tau"], p["epsilon"], T)
        return ref.RefAlg5(inner).run(losses, advice, rng)
    if name == "ldp-exp4":
        return ref.ref_ldp_exp4(losses, advice, K, alg.n_experts, p["eta"], p["gamma"], p["epsilon"], rng)
    if name == "private-batched-exp4":
        return ref.ref_batched_exp4(losses, advice, K, alg.n_experts, p["eta"], p["gamma"],
                                    p["tau"], p["noise_scale"], rng)
    raise AssertionError(name)


# Parameters chosen so that the learners actually move within T_SMALL rounds
# (the theorem defaults at tiny T barely update), and τ ∤ T so leftover
# rounds are exercised.
CASES = [
    ("exp3", dict(arms=3, params={"eta": 0.3, "gamma": 0.1})),
    ("exp3", dict(arms=2, params={"eta": 0.3, "gamma": 0.1})),
    ("private-exp3", dict(arms=3, epsilon=0.3, params={"eta": 0.5, "gamma": 0.1})),
    ("private-exp3", dict(arms=2, epsilon=0.5, params={"eta": 0.5, "gamma": 0.2, "tau": 5})),
    ("private-ftpl", dict(arms=3, epsilon=0.4, params={"eta": 0.5, "M": 6})),
    ("private-htinf", dict(arms=3, epsilon=0.3, params={"sigma": 0.5})),
    ("private-experts", dict(arms=3, experts=4, epsilon=0.3, params={"sigma": 0.5})),
    ("ldp-exp4", dict(arms=3, experts=4, epsilon=1.0, params={"eta": 0.3, "gamma": 0.2})),
    ("private-batched-exp4", dict(arms=3, experts=4, epsilon=1.0, delta=1e-3,
                                  params={"eta": 0.5, "gamma": 0.3, "tau": 5})),
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_vectorised_matches_reference_on_same_stream(name, kw):
    alg = build(name, horizon=T_SMALL, **kw)
    distinct = set()
    for seed in range(12):
        losses = _losses(seed, K=alg.n_arms)
        advice = _advice(seed, T_SMALL, alg.n_experts, alg.n_arms) if alg.n_experts else None
        got = _vectorised(alg, losses, seed, advice)
        want = _reference(name, alg, losses, seed, advice)
        assert got == want, f"seed {seed}: first difference at round {next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)}"
        distinct.add(tuple(got))
    assert len(distinct) > 6, "the comparison is only meaningful if runs differ"


@pytest.mark.parametrize("name,kw", CASES[::2], ids=[c[0] for c in CASES[::2]])
def test_many_runs_have_the_reference_distribution(name, kw):
    """Vectorised runs (one shared generator, many runs) against independent
    reference runs: the arm played in the last round, chi-square test.
    False-failure probability: 1e-4 per case."""
    alg = build(name, horizon=T_SMALL, **kw)
    losses = _losses(7, K=alg.n_arms)
    advice = _advice(7, T_SMALL, alg.n_experts, alg.n_arms) if alg.n_experts else None
    n = 1500
    vec = simulate(alg, losses, n, np.random.default_rng(99), advice=advice).actions[:, -1]
    refs = [_reference(name, alg, losses, 10_000 + s, advice)[-1] for s in range(n)]
    table = np.array([np.bincount(vec, minlength=alg.n_arms), np.bincount(refs, minlength=alg.n_arms)])
    table = table[:, table.sum(0) > 0]
    if table.shape[1] > 1:
        p = stats.chi2_contingency(table).pvalue
        assert p > 1e-4, table


@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] in ("exp3", "ldp-exp4", "private-batched-exp4")],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_probabilities_valid_and_respect_mixing_floor(name, kw):
    alg = build(name, horizon=T_SMALL, **kw)
    gamma, K = alg.params["gamma"], alg.n_arms
    losses = _losses(3, K=K)
    advice = _advice(3, T_SMALL, alg.n_experts, K) if alg.n_experts else None
    rng = np.random.default_rng(0)
    learner = alg.learner
    state = learner.init(500, rng)
    for t in range(T_SMALL):
        ctx = None if advice is None else advice[t]
        P = learner.probs(state, ctx)
        assert np.allclose(P.sum(axis=1), 1.0, atol=1e-12)
        assert P.min() >= gamma / K - 1e-12
        state, a = learner.act(state, ctx, rng)
        state = learner.feed(state, a, losses[t][a], rng)


@pytest.mark.parametrize("name,kw", [
    ("private-exp3", dict(epsilon=0.2, params={"eta": 0.5, "gamma": 0.2})),
    ("private-ftpl", dict(epsilon=0.3, params={"eta": 0.5, "M": 4})),
    ("private-htinf", dict(epsilon=0.25)),
    ("private-experts", dict(epsilon=0.25, experts=3)),
    ("private-batched-exp4", dict(epsilon=1.0, params={"tau": 6})),
])
def test_batched_algorithms_hold_their_action_within_a_batch(name, kw):
    T = 53  # not a multiple of τ: leftover rounds keep the last action
    alg = build(name, horizon=T, **kw)
    tau = alg.params["tau"]
    advice = default_advice(T, alg.n_experts, alg.n_arms) if alg.n_experts else None
    if name == "private-batched-exp4":
        # Alg 2 batches its expert distribution, not the action: P_r is constant.
        learner, rng = alg.learner, np.random.default_rng(0)
        state = learner.init(200, rng)
        losses = _losses(1, T=T, K=alg.n_arms)
        for t in range(T):
            state, a = learner.act(state, advice[t], rng)
            if t % tau == 0:
                P_batch = state["P"].copy()
            assert np.array_equal(state["P"], P_batch)
            state = learner.feed(state, a, losses[t][a], rng)
        return
    if name == "private-experts":
        # Algorithm 5 re-samples the action from the chosen expert each round;
        # with one-hot advice (expert j plays arm j) the action is the expert,
        # which Algorithm 1 holds for a batch.
        alg = build(name, horizon=T, arms=3, **kw)
        advice = np.broadcast_to(np.eye(3), (T, 3, 3)).copy()
    acts = simulate(alg, _losses(2, T=T, K=alg.n_arms), 300, np.random.default_rng(1), advice=advice).actions
    full = (T // tau) * tau
    for j in range(T // tau):
        block = acts[:, j * tau:(j + 1) * tau]
        assert (block == block[:, :1]).all()
    assert (acts[:, full:] == acts[:, full - 1:full]).all()
    assert len(np.unique(acts[:, ::tau])) > 1


def test_released_noise_has_the_stated_scale():
    """Alg 1: noisy batch mean − true mean ~ Lap(1/(τε)), variance 2/(τε)²;
    Alg 6: ℓ′ − ℓ ~ Lap(1/ε); Alg 2: Lap(3K√(N log 1/δ)/(γτε)).  With 2·10⁵
    draws the sample variance of a Laplace is within 5% with probability
    > 1 − 1e-20 (relative s.d. √(5/n) ≈ 0.5%, 5% is 10 s.d.)."""
    T, c = 40, 0.3
    checks = []
    alg = build("private-exp3", horizon=T, epsilon=0.5, params={"tau": 4})
    losses = np.full((T, 2), c)
    learner, rng = alg.learner, np.random.default_rng(5)
    state = learner.init(20_000, rng)
    got = []
    for t in range(T):
        state, a = learner.act(state, None, rng)
        state = learner.feed(state, a, losses[t][a], rng)
        if (t + 1) % 4 == 0:
            got.append(state["noisy"] - c)
    checks.append((np.concatenate(got), 2 * (1 / (4 * 0.5)) ** 2))

    alg = build("ldp-exp4", horizon=T, epsilon=0.7, experts=3)
    advice = default_advice(T, 3, 2)
    learner = alg.learner
    state, got = learner.init(20_000, rng), []
    for t in range(T // 4):
        state, a = learner.act(state, advice[t], rng)
        state = learner.feed(state, a, losses[t][a], rng)
        got.append(state["noisy"] - c)
    checks.append((np.concatenate(got), 2 / 0.7 ** 2))

    alg = build("private-batched-exp4", horizon=T, epsilon=1.0, experts=3, delta=1e-3,
                params={"tau": 5, "gamma": 0.5})
    learner = alg.learner
    state, got = learner.init(7_000, rng), []
    for t in range(T):
        state, a = learner.act(state, advice[t], rng)
        mean_before = state["acc"] + state["mu_played"] * (c / state["q_played"])[:, None]
        state = learner.feed(state, a, losses[t][a], rng)
        if (t + 1) % 5 == 0:
            got.append((state["noisy"] - mean_before / 5).ravel())
    checks.append((np.concatenate(got), 2 * alg.params["noise_scale"] ** 2))
    for sample, var in checks:
        assert sample.size >= 150_000
        assert abs(sample.var() / var - 1) < 0.05, (sample.var(), var)


def test_tsallis_step_solves_the_ftrl_condition():
    from algorithms.private_bandits.htinf import tsallis_weights
    L = np.random.default_rng(0).normal(0, 30, (1000, 5))
    x = tsallis_weights(L)
    assert np.allclose(x.sum(1), 1, atol=1e-12)
    # First-order condition: 1/√x_i − L_i is the same for every arm.
    c = 1 / np.sqrt(x) - L
    assert np.allclose(c, c[:, :1], atol=1e-7)


def test_htinf_sigma_from_the_moment_bound():
    assert htinf_sigma(1, 1.0) == pytest.approx(6 ** 0.5)
    assert htinf_sigma(10, 0.1) == pytest.approx(6 ** 0.5)
    assert htinf_sigma(2, 1.0) == pytest.approx((2 + 1) ** 0.5)


def _probs_along(alg, losses, advice, rounds, seed):
    """The sampling law of 8 runs at each of the first ``rounds`` rounds."""
    lr, rng = alg.learner, np.random.default_rng(seed)
    state, out = lr.init(8, rng), []
    for t in range(rounds):
        adv = None if advice is None else advice[t]
        out.append(lr.probs(state, adv))
        state, a = lr.act(state, adv, rng)
        state = lr.feed(state, a, losses[t] if lr.feedback == "full" else losses[t][a], rng)
    return np.array(out)


@pytest.mark.parametrize("name,kw", [
    *[(n, {}) for n in ("exp3", "private-exp3", "private-htinf", "private-experts", "ldp-exp4",
                        "private-batched-exp4", "mutant-batch-sum", "mutant-overlap",
                        "mutant-ldp-after", "mutant-exp4-noise")],
    ("private-batched-exp4", dict(horizon=1000)), ("exp3", dict(horizon=50))])
def test_data_independent_flag_says_whether_the_law_moves(name, kw):
    """``extra["data_independent"]`` is set exactly when the action law does
    not depend on the losses: on all-zero losses and on uniform random
    losses, with the same random stream, the laws over three batches (300
    rounds unbatched) are identical iff the flag is set.  Deterministic."""
    alg = build(name, **kw)
    assert alg.learner.probs is not None
    rounds = min(alg.horizon, 3 * alg.params["tau"] + 1 if alg.params.get("tau", 1) > 1 else 300)
    K = alg.n_arms
    zero = np.zeros((rounds, K))
    rand = np.random.default_rng(5).random((rounds, K))
    advice = default_advice(rounds, alg.n_experts, K) if alg.needs_advice else None
    same = np.array_equal(_probs_along(alg, zero, advice, rounds, 0),
                          _probs_along(alg, rand, advice, rounds, 0))
    assert same == ("data_independent" in alg.extra), (name, kw)
