"""Full-information feedback and point outputs through the black-box engine,
on a toy Laplace mechanism whose true ε is known."""
from __future__ import annotations

import numpy as np
import pytest

from algorithms.core import Algorithm, Claim, Learner
from algorithms.simulate import simulate
from attacks.base import Scenario
from attacks.events import CoordinateAbove, SwitchAt, Union, pilot_thresholds, unique_rows
from audit.engine.audit import audit_scenarios


def _toy(epsilon: float, T: int = 4) -> Algorithm:
    """Plays the point x_t = (noisy running sum of coordinate 1 of the rows,
    0); Laplace(1/ε) noise drawn once in round 1, so the whole output is one
    Laplace mechanism of sensitivity 1: exactly ε-DP."""

    def init(runs, rng):
        return {"s": np.zeros(runs), "z": np.zeros(runs), "t": 0}

    def act(state, advice, rng):
        return state, np.zeros(state["s"].shape[0], dtype=np.int64)

    def feed(state, actions, row, rng):
        assert row.shape == (2,)  # full information: the whole row
        z = rng.laplace(0.0, 1.0 / epsilon, state["s"].shape[0]) if state["t"] == 0 else state["z"]
        return {"s": state["s"] + row[0], "z": z, "t": state["t"] + 1}

    def point(state):
        return np.stack([state["s"] + state["z"], np.zeros_like(state["s"])], axis=1)

    learner = Learner(init, act, feed, 2, feedback="full", point=point,
                      incurred=lambda state, row: np.full(state["s"].shape[0], row[1]))
    return Algorithm("toy-laplace", learner, Claim(epsilon, 0.0, "actions", "Laplace mechanism"),
                     T, 2, {"epsilon": epsilon})


def test_simulate_records_points_only_where_asked_and_uses_incurred():
    alg = _toy(1.0)
    losses = np.zeros((4, 2))
    losses[:, 1] = 0.25
    tr = simulate(alg, losses, 5, np.random.default_rng(0), point_rounds=(1, 3))
    assert set(tr.points) == {1, 3} and tr.points[1].shape == (5, 2)
    np.testing.assert_allclose(tr.total_loss, 1.0)
    np.testing.assert_allclose(tr.points[1], tr.points[3])  # rows' coordinate 1 are all 0


def test_points_refused_for_a_learner_that_plays_arms():
    from algorithms import build
    alg = build("private-exp3")
    with pytest.raises(ValueError, match="plays arms"):
        simulate(alg, np.zeros((alg.horizon, 2)), 2, np.random.default_rng(0), rounds=2,
                 point_rounds=(1,))


def test_coordinate_threshold_events_measure_the_laplace_epsilon():
    """ε_lb must not exceed the true ε = 1 (a false failure has probability at
    most 1 − confidence = 0.05 over seeds; this seed is fixed), and threshold
    events on a Laplace output should get most of the way there at 2·10^5
    runs per side (power, checked at this seed)."""
    alg = _toy(1.0)
    a = np.zeros((4, 2))
    b = a.copy()
    a[0, 0] = 1.0
    thresholds = pilot_thresholds(alg, (a, b), rounds=(1,), coords=(0,), n_thresholds=25)
    events = Union((CoordinateAbove((1,), (0,), thresholds), SwitchAt((1,))))
    assert events.point_rounds == (1,)
    sc = Scenario("toy:first-round", alg, a, b, events, rounds=2)
    (res,) = audit_scenarios([sc], alg.claim, trials=200_000, confidence=0.95, seed=3)
    assert res.test.event.startswith("x_2[1] >")
    assert 0.7 < res.epsilon_lower_bound <= 1.0
    # Reproducible whatever the number of workers.
    (res2,) = audit_scenarios([sc], alg.claim, trials=200_000, confidence=0.95, seed=3, jobs=2)
    assert res2.epsilon_lower_bound == res.epsilon_lower_bound


def _hedge(eta: float, K: int = 3, T: int = 6) -> Algorithm:
    """Non-private Hedge (full information, sampling is its only randomness),
    so the white-box replay applies."""
    from algorithms.core import sample_categorical, softmax_rows

    def init(runs, rng):
        return {"L": np.zeros((runs, K))}

    def probs(state, advice):
        return softmax_rows(-eta * state["L"])

    def commit(state, advice, actions):
        return state

    def act(state, advice, rng):
        return state, sample_categorical(probs(state, advice), rng.random(state["L"].shape[0]))

    def feed(state, actions, row, rng):
        return {"L": state["L"] + row}

    learner = Learner(init, act, feed, K, probs=probs, commit=commit, feedback="full")
    return Algorithm("hedge", learner, Claim(1.0, 0.0, "actions", "none"), T, K, {"eta": eta})


def test_whitebox_replay_feeds_each_side_its_own_row():
    """Exact L(x) of a fixed history for Hedge, against the closed form: after
    the change at round 1 (expert 1's loss 1 vs 0), every later round adds
    ln P_t(x_t) − ln P′_t(x_t)."""
    from audit.engine.privacy_loss import action_loss
    from algorithms.core import softmax_rows
    eta, K, T = 0.7, 3, 6
    alg = _hedge(eta, K, T)
    a = np.random.default_rng(1).random((T, K))
    b = a.copy()
    b[0, 0] = 1.0 - a[0, 0]
    hist = np.array([[0, 1, 2, 0, 0, 1]])
    got = action_loss(alg, a, b, hist)[0]
    want = 0.0
    for t in range(T):
        pa = softmax_rows(-eta * a[:t].sum(axis=0))
        pb = softmax_rows(-eta * b[:t].sum(axis=0))
        want += np.log(pa[hist[0, t]]) - np.log(pb[hist[0, t]])
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64, np.uint8])
def test_unique_rows_is_numpys_row_unique(dtype):
    """The pilots' fast row count gives numpy's rows, order and counts,
    whatever the integer dtype and sign (int8 codes spanning −100..100
    overflow if shifted before widening).  Deterministic."""
    rng = np.random.default_rng(0)
    lo, hi = (0, 200) if dtype == np.uint8 else (-100, 101)
    for shape in [(500, 1), (500, 3), (2000, 6), (1, 4)]:
        a = rng.integers(lo, hi, shape).astype(dtype)
        a[: shape[0] // 2] = a[0]           # repeated rows, so counts above 1
        want_rows, want_counts = np.unique(a, axis=0, return_counts=True)
        rows, counts = unique_rows(a)
        assert rows.dtype == a.dtype
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(counts, want_counts)
